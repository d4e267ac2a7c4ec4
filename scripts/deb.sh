#!/usr/bin/env bash
# `make deb`: two Debian packages in target/deb, built with dpkg-deb from the release binary and
# the generated manual (`make man`):
# - respbench: /usr/bin/respbench, its manual pages, completions, docs and examples (what
#   `make install PREFIX=/usr` installs). Its Depends are the libraries the binary loads, as
#   dpkg-shlibdeps finds them.
# - respbench-frontends: the links /usr/bin/memtier_benchmark and /usr/bin/valkey-benchmark to
#   respbench. redis-benchmark is left out: Debian's redis-tools ships /usr/bin/redis-benchmark
#   (`respbench redis-benchmark ARGS` runs that front-end). valkey-tools ships valkey-benchmark,
#   so the package declares the conflict rather than meeting it at unpacking.
#
#   environment: VERSION (Cargo.toml's), MANUAL (target/manual), BIN (target/release/respbench)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${VERSION:?VERSION must be set (make deb sets it from Cargo.toml)}"
BIN=${BIN:-target/release/respbench}
MANUAL=${MANUAL:-target/manual}
out=target/deb
arch=$(dpkg --print-architecture)
rm -rf "$out"
mkdir -p "$out"

# The binary's shared-library dependencies, in Debian's words.
shlibs=$(
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    mkdir "$work/debian"
    printf 'Source: respbench\n\nPackage: respbench\nArchitecture: any\n' >"$work/debian/control"
    bin=$(realpath "$BIN")
    cd "$work" && dpkg-shlibdeps -O "$bin" 2>/dev/null | sed -n 's/^shlibs:Depends=//p'
)
[ -n "$shlibs" ] || {
    echo "deb: dpkg-shlibdeps found no dependencies for $BIN" >&2
    exit 1
}

control() { # control DIR PACKAGE DEPENDS EXTRA DESCRIPTION...
    local dir=$1 package=$2 depends=$3 extra=$4
    shift 4
    mkdir -p "$dir/DEBIAN"
    local size
    size=$(du -sk --exclude=DEBIAN "$dir" | cut -f1)
    {
        echo "Package: $package"
        echo "Version: $VERSION"
        echo "Architecture: $arch"
        echo "Maintainer: respbench developers <respbench@localhost>"
        echo "Installed-Size: $size"
        echo "Depends: $depends"
        [ -n "$extra" ] && echo "$extra"
        echo "Section: utils"
        echo "Priority: optional"
        printf 'Description: %s\n' "$1"
        shift
        local line
        for line in "$@"; do
            echo " $line"
        done
    } >"$dir/DEBIAN/control"
}

main=$out/respbench
PREFIX=/usr DESTDIR=$main MANIFEST=0 BIN=$BIN MANUAL=$MANUAL scripts/install.sh install
install -m 644 /dev/stdin "$main/usr/share/doc/respbench/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: respbench

Files: *
License: MIT or Apache-2.0
 See /usr/share/doc/respbench/LICENSE-MIT and /usr/share/doc/respbench/LICENSE-APACHE.
EOF
control "$main" respbench "$shlibs" "" \
    "load generator and benchmark for Redis-protocol servers" \
    "respbench measures Redis, Valkey, Dragonfly, KeyDB and memcached servers:" \
    "closed and open loop, latency from the intended send, reports as text, JSON" \
    "and HTML, A/B comparisons and capacity searches."

fronts=$out/respbench-frontends
mkdir -p "$fronts/usr/bin" "$fronts/usr/share/doc"
ln -s respbench "$fronts/usr/bin/memtier_benchmark"
ln -s respbench "$fronts/usr/bin/valkey-benchmark"
ln -s respbench "$fronts/usr/share/doc/respbench-frontends"
control "$fronts" respbench-frontends "respbench (= $VERSION)" "Conflicts: valkey-tools" \
    "respbench as memtier_benchmark and valkey-benchmark" \
    "The commands memtier_benchmark and valkey-benchmark, run by respbench with" \
    "those tools' options and outputs. redis-benchmark is not among them: Debian's" \
    "redis-tools ships it; run respbench redis-benchmark ARGS instead."

for dir in "$main" "$fronts"; do
    dpkg-deb --root-owner-group -Zxz --build "$dir" "$out" >/dev/null
done
ls "$out"/*.deb
