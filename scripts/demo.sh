#!/usr/bin/env bash
# A real benchmark on a fresh machine: starts a private redis-server on a free port, fills
# 100k keys, runs a 1:10 SET:GET mix for 5 seconds, and stops the server.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=target/release/respbench
dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --logfile redis.log &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do redis-cli -p "$port" PING >/dev/null 2>&1 && break; sleep 0.1; done
echo "== fill: every key of 0..99999 once, 100-byte values"
echo "\$ respbench -p $port -n allkeys --key-max 99999 -d 100 -q"
"$bin" -p "$port" -n allkeys --key-max 99999 -d 100 -q
echo
echo "== 5 seconds of 1:10 SET:GET on random keys, 50 connections, pipeline 4"
echo "\$ respbench -p $port --duration 5s --key-max 99999 -d 100 -P 4 --json $dir/result.json"
"$bin" -p "$port" --duration 5s --key-max 99999 -d 100 -P 4 --json "$dir/result.json"
echo
echo "JSON result: $(wc -c < "$dir/result.json") bytes, $(grep -c '"index"' "$dir/result.json") timeline points"
