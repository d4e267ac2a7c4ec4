#!/usr/bin/env bash
# Installs the servers and tools the tests, the demo and the benchmark use, when missing:
# Debian's redis-server and redis-tools (redis-cli, redis-benchmark), memcached, and chromium, in which
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
if ! command -v kubernetes-validate >/dev/null; then
    echo "installing: kubernetes-validate (PyPI)" >&2
    pip3 install -q kubernetes-validate 2>/dev/null || pip3 install -q --break-system-packages kubernetes-validate
fi
if ! python3 -c 'import prometheus_client' 2>/dev/null; then
    echo "installing: prometheus-client (PyPI), whose parser the live-metrics test reads with" >&2
    pip3 install -q prometheus-client 2>/dev/null || pip3 install -q --break-system-packages prometheus-client
fi
