#!/usr/bin/env bash
# `make image`: the container image $IMAGE from deploy/container/Containerfile, built FROM
# scratch with podman (or buildah) and nothing pulled from a registry. Its root is staged in
# target/image from this machine's own files: the release binary, the shared libraries it and
# /bin/sh load (as ldd finds them), the CA certificates, and passwd and group lines for the
# user respbench (10001) it runs as.
#
#   environment: IMAGE (localhost/respbench:VERSION), VERSION, BIN (target/release/respbench)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${IMAGE:?IMAGE must be set (make image sets it)}"
: "${VERSION:?VERSION must be set (make image sets it)}"
BIN=${BIN:-target/release/respbench}
if command -v podman >/dev/null; then
    build=(podman build --pull=never)
elif command -v buildah >/dev/null; then
    build=(buildah bud --pull=never)
else
    echo "image: neither podman nor buildah is installed (apt-get install podman)" >&2
    exit 1
fi
[ -x "$BIN" ] || { echo "image: no binary at $BIN (make release builds it)" >&2; exit 1; }

ctx=target/image
rm -rf "$ctx"
root=$ctx/root
mkdir -p "$root/usr/bin" "$root/bin" "$root/etc" "$ctx/home/respbench"
install -m 755 "$BIN" "$root/usr/bin/respbench"
for name in memtier_benchmark redis-benchmark valkey-benchmark; do
    ln -s respbench "$root/usr/bin/$name"
done
# A shell, for entry points such as the Kubernetes example's `sh -c`.
install -m 755 "$(realpath /bin/sh)" "$root/bin/sh"
# Every library the two programs load, at the path the loader looks for it.
for lib in $( (ldd "$BIN"; ldd /bin/sh) | grep -o '/[^ ]*' | sort -u); do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nrespbench:x:10001:10001:respbench:/home/respbench:/sbin/nologin\n' >"$root/etc/passwd"
printf 'root:x:0:\nrespbench:x:10001:\n' >"$root/etc/group"
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    mkdir -p "$root/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
fi
mkdir -m 1777 "$root/tmp"
cp deploy/container/Containerfile "$ctx/"
"${build[@]}" --build-arg VERSION="$VERSION" -t "$IMAGE" -f "$ctx/Containerfile" "$ctx" >&2
echo "$IMAGE"
