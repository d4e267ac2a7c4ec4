#!/usr/bin/env bash
# Memory at many connections: one redis-server with room for the clients,
# then respbench on one thread with CONNECTIONS connections, closed loop and paced, on each
# I/O path. Prints the peak (VmHWM) and last (VmRSS) resident set read from /proc/PID/status
# while the run lives. Not a timed test: run it by hand and record its figures in BENCHMARKS.md.
#
# Pass: every row under 100 MB at 10,000 connections.
#
# Usage: scripts/conn_memory.sh      (env: CONNECTIONS=10000 DURATION=4s RATE=20000
#        RESPBENCH=target/release/respbench)
set -euo pipefail

connections=${CONNECTIONS:-10000}
duration=${DURATION:-4s}
rate=${RATE:-20000}
respbench=${RESPBENCH:-target/release/respbench}
[ -x "$respbench" ] || { echo "conn_memory: $respbench is not built (cargo build --release)" >&2; exit 2; }

# Each connection takes a descriptor here and one in the server.
ulimit -n "$(ulimit -Hn)"
need=$((connections + 100))
[ "$(ulimit -n)" -ge "$need" ] || { echo "conn_memory: $need descriptors needed, the hard limit is $(ulimit -Hn)" >&2; exit 2; }

dir=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" \
    --maxclients $((connections + 100)) --daemonize yes --logfile "$dir/redis.log"
trap 'redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done

printf '| path | mode | VmHWM (MB) | VmRSS at the end (MB) | requests/s |\n|---|---|---|---|---|\n'
for io in epoll uring; do
    for mode in closed paced; do
        extra=()
        [ "$mode" = paced ] && extra=(--rate "$rate")
        "$respbench" -p "$port" -c "$connections" --threads 1 --ratio 1:4 -d 100 --key-max 99999 \
            --duration "$duration" --io "$io" -q "${extra[@]}" >"$dir/out" 2>&1 &
        pid=$!
        hwm=0 rss=0
        while kill -0 "$pid" 2>/dev/null; do
            # Sampled until the process goes: VmHWM only grows, the last VmRSS is the end's.
            if status=$(cat "/proc/$pid/status" 2>/dev/null); then
                h=$(awk '/^VmHWM:/{print $2}' <<<"$status")
                r=$(awk '/^VmRSS:/{print $2}' <<<"$status")
                [ -n "$h" ] && hwm=$h
                [ -n "$r" ] && rss=$r
            fi
            sleep 0.2
        done
        wait "$pid" || { echo "conn_memory: respbench --io $io ($mode) failed:" >&2; cat "$dir/out" >&2; exit 1; }
        rps=$(grep -o '[0-9.]* requests per second' "$dir/out" | cut -d' ' -f1)
        awk -v io="$io" -v mode="$mode" -v h="$hwm" -v r="$rss" -v rps="$rps" \
            'BEGIN { printf "| %s | %s | %.1f | %.1f | %s |\n", io, mode, h / 1000, r / 1000, rps }'
    done
done
