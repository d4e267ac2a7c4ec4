#!/usr/bin/env bash
# `make install` and `make uninstall`: puts respbench, its manual pages, its bash, zsh and fish
# completions, its docs, example scenarios and deployment examples under $DESTDIR$PREFIX, and
# with FRONT_ENDS=1 the links memtier_benchmark, redis-benchmark and valkey-benchmark beside
# the binary (it answers to the name it is run as). Install lists what it added, the files and
# the directories it had to create, in share/doc/respbench/installed-files; uninstall removes
# exactly those, each directory only when it is left empty.
#
#   scripts/install.sh install|uninstall
#   environment: PREFIX (/usr/local), DESTDIR, FRONT_ENDS (1: the links), BIN (the binary,
#   target/release/respbench), MANUAL (where `make man completions` wrote, target/manual),
#   MANIFEST=0 (no list: for a package, whose manager keeps its own)
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:-}
PREFIX=${PREFIX:-/usr/local}
BIN=${BIN:-target/release/respbench}
MANUAL=${MANUAL:-target/manual}
FRONT_ENDS=${FRONT_ENDS:-}
MANIFEST=${MANIFEST:-1}
root="${DESTDIR:-}${PREFIX}"
list_path=share/doc/respbench/installed-files
manifest="$root/$list_path"
FRONT_END_NAMES=(memtier_benchmark redis-benchmark valkey-benchmark)

fail() {
    echo "install: $*" >&2
    exit 1
}

uninstall() {
    [ -f "$manifest" ] || fail "no respbench installed under $root (expected its list $manifest)"
    local lines line
    mapfile -t lines <"$manifest"
    for line in "${lines[@]}"; do
        case "$line" in
        "f "*) rm -f -- "$root/${line#f }" ;;
        esac
    done
    rm -f -- "$manifest"
    # Directories install created, deepest (latest created) first, each only when empty.
    local i
    for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
        line=${lines[i]}
        case "$line" in
        "d "*) rmdir -- "$root/${line#d }" 2>/dev/null || true ;;
        esac
    done
}

added=()
# A directory under $root, recording each one created.
dir() {
    local rel=$1
    [ -d "$root/$rel" ] && return
    [ "$rel" = . ] && { mkdir -p "$root"; return; }
    dir "$(dirname "$rel")"
    mkdir "$root/$rel"
    added+=("d $rel")
}
put() { # put SRC REL MODE
    dir "$(dirname "$2")"
    install -m "$3" "$1" "$root/$2"
    added+=("f $2")
}

install_all() {
    [ -x "$BIN" ] || fail "no binary at $BIN (make release builds it)"
    [ -f "$MANUAL/man/respbench.1" ] || fail "no manual pages in $MANUAL (make man completions writes them)"
    # Nothing is installed when a front-end's name is taken by a file that is not our link.
    if [ "$FRONT_ENDS" = 1 ]; then
        local name
        for name in "${FRONT_END_NAMES[@]}"; do
            local at="$root/bin/$name"
            if { [ -e "$at" ] || [ -L "$at" ]; } && [ "$(readlink "$at" 2>/dev/null)" != respbench ]; then
                fail "$at exists and is not a link to respbench: not replaced (install without FRONT_ENDS=1)"
            fi
        done
    fi
    # A reinstall keeps the list of the install before it (the directories it created).
    if [ -f "$manifest" ]; then
        mapfile -t added <"$manifest"
    fi
    put "$BIN" bin/respbench 755
    local f
    for f in "$MANUAL"/man/*.1; do
        put "$f" "share/man/man1/$(basename "$f")" 644
    done
    put "$MANUAL/completions/respbench.bash" share/bash-completion/completions/respbench 644
    put "$MANUAL/completions/_respbench" share/zsh/site-functions/_respbench 644
    put "$MANUAL/completions/respbench.fish" share/fish/vendor_completions.d/respbench.fish 644
    local doc=share/doc/respbench
    for f in README.md BENCHMARKS.md LICENSE-MIT LICENSE-APACHE docs/*; do
        if [ -f "$f" ]; then put "$f" "$doc/$(basename "$f")" 644; fi
    done
    for f in examples/scenarios/* deploy/*/*; do
        put "$f" "$doc/$f" 644
    done
    if [ "$FRONT_ENDS" = 1 ]; then
        local name
        for name in "${FRONT_END_NAMES[@]}"; do
            ln -sfn respbench "$root/bin/$name"
            added+=("f bin/$name")
        done
    fi
    if [ "$MANIFEST" = 1 ]; then
        dir "$(dirname "$list_path")"
        printf '%s\n' "${added[@]}" "f $list_path" | awk '!seen[$0]++' >"$manifest"
        chmod 644 "$manifest"
    fi
}

case "$action" in
install) install_all ;;
uninstall) uninstall ;;
*)
    echo "usage: scripts/install.sh install|uninstall, got '$action'" >&2
    exit 2
    ;;
esac
