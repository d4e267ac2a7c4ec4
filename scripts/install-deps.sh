#!/usr/bin/env bash
# Installs the servers and tools the tests, the demo and the benchmark use, when missing:
# Debian's redis-server and redis-tools (redis-cli, redis-benchmark), valkey-server and valkey-tools
# (valkey-cli), the second server the role tests run against, memcached, and chromium, in which
# the report tests open the HTML reports; Slurm and munge, which the shard test starts as a
# private one-node cluster; PyPI's kubernetes-validate, which checks deploy/kubernetes, and
# prometheus-client, whose parser reads --metrics-listen's text in the tests; Debian's prometheus
# and prometheus-pushgateway, which tests/prometheus.rs scrapes --metrics-listen with and
# --metrics-push pushes to. For the install and package tests: man-db (man renders the pages),
# dpkg-dev (dpkg-shlibdeps finds the .deb's dependencies), podman and runc (make image builds the
# container image, and the test runs it).
set -euo pipefail
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
command -v redis-cli >/dev/null || missing+=(redis-tools)
command -v redis-benchmark >/dev/null || missing+=(redis-tools)
command -v memcached >/dev/null || missing+=(memcached)
# saslpasswd2 writes the SASL password database the memcached SASL test starts memcached with.
command -v saslpasswd2 >/dev/null || missing+=(sasl2-bin)
command -v taskset >/dev/null || missing+=(util-linux)
command -v chromium >/dev/null || missing+=(chromium)
command -v slurmctld >/dev/null || missing+=(slurm-wlm)
command -v munged >/dev/null || missing+=(munge)
command -v prometheus >/dev/null || missing+=(prometheus)
command -v prometheus-pushgateway >/dev/null || missing+=(prometheus-pushgateway)
command -v pip3 >/dev/null || missing+=(python3-pip)
command -v man >/dev/null || missing+=(man-db)
command -v dpkg-shlibdeps >/dev/null || missing+=(dpkg-dev)
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# Debian 12 has Valkey in bookworm-backports only: that suite is added beside the machine's own
# Debian sources (the mirror they name) and only Valkey's packages are taken from it. Later releases
# have it in their own main.
if ! command -v valkey-server >/dev/null || ! command -v valkey-cli >/dev/null; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
    from=()
    if [ "$codename" = bookworm ]; then
        from=(-t bookworm-backports)
        if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
            # The URI of the machine's own bookworm source: a deb822 paragraph whose Suites name
            # bookworm, or a one-line entry (options in brackets skipped).
            mirror=$({ cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } | awk 'BEGIN { RS = "" }
                /(^|\n)Suites:[^\n]*[ \t]bookworm([ \t\n]|$)/ {
                    n = split($0, lines, "\n")
                    for (i = 1; i <= n; i++) if (lines[i] ~ /^URIs:/) { split(lines[i], f, /[ \t]+/); print f[2]; exit }
                }')
            [ -n "$mirror" ] || mirror=$({ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } | awk '
                $1 == "deb" { i = 2; if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == "bookworm") { print $i; exit } }')
            if [ -z "$mirror" ]; then
                echo "install-deps: no Debian bookworm source in /etc/apt to add bookworm-backports beside (for valkey-server)" >&2
                exit 1
            fi
            printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$mirror" | $sudo tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
        fi
    fi
    echo "installing: valkey-server valkey-tools${from:+ (from ${from[1]})}" >&2
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${from[@]}" valkey-server valkey-tools >/dev/null
    # The package enables and, where an init system runs, starts a service on 6379: the tests
    # start their own servers, so it is stopped and kept from starting at boot.
    $sudo systemctl stop valkey-server >/dev/null 2>&1 || $sudo service valkey-server stop >/dev/null 2>&1 || true
    $sudo systemctl disable valkey-server >/dev/null 2>&1 || true
fi
if ! command -v kubernetes-validate >/dev/null; then
    echo "installing: kubernetes-validate (PyPI)" >&2
    pip3 install -q kubernetes-validate 2>/dev/null || pip3 install -q --break-system-packages kubernetes-validate
fi
if ! python3 -c 'import prometheus_client' 2>/dev/null; then
    echo "installing: prometheus-client (PyPI), whose parser the live-metrics test reads with" >&2
    pip3 install -q prometheus-client 2>/dev/null || pip3 install -q --break-system-packages prometheus-client
fi
