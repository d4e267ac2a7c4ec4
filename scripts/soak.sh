#!/usr/bin/env bash
# Soak: a long run at a high fixed rate while a loop kills the run's connections every few
# seconds (CLIENT KILL), sampling respbench's RSS and open descriptors from /proc. Not a timed
# test: run it by hand (30 minutes by default) and record its figures in BENCHMARKS.md.
#
# Pass: after the first minute, RSS grows under 5 % (its level, the median of each minute's
# samples, against the level of the first minute past the warm-up; the largest single sample
# is printed beside it) and the open descriptors stay constant. Descriptors are sampled just before a
# kill, when every connection has had the whole kill period to come back, so a sample never
# falls inside a reconnect.
#
# Usage: scripts/soak.sh [OUT_DIR]     (env: DURATION=30m RATE=50000 CONNECTIONS=50
#        KILL_EVERY=2 SAMPLE_EVERY=10 THREADS=2 RESPBENCH=target/release/respbench)
set -euo pipefail

out=${1:-soak-$(date +%Y%m%d-%H%M%S)}
duration=${DURATION:-30m}
rate=${RATE:-50000}
connections=${CONNECTIONS:-50}
threads=${THREADS:-2}
kill_every=${KILL_EVERY:-2}
sample_every=${SAMPLE_EVERY:-10}
respbench=${RESPBENCH:-target/release/respbench}
warm_secs=60

mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -x "$respbench" ] || { echo "soak: $respbench is not built (cargo build --release)" >&2; exit 2; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$out" \
    --logfile redis.log --daemonize no &
redis_pid=$!
cleanup() {
    [ -n "${bench_pid:-}" ] && kill "$bench_pid" 2>/dev/null || true
    kill "$redis_pid" 2>/dev/null || true
}
trap cleanup EXIT
until redis-cli -p "$port" PING >/dev/null 2>&1; do sleep 0.1; done

# A filled key range, so that reads are hits and replies carry values.
"$respbench" fill -p "$port" --key-max 99999 -d 100 -q >/dev/null
redis-cli -p "$port" CONFIG RESETSTAT >/dev/null

"$respbench" -p "$port" --duration "$duration" --rate "$rate" -c "$connections" --threads "$threads" \
    --key-max 99999 -d 100 --ratio 1:4 --reconnect-backoff 10ms --request-timeout 1s \
    --json "$out/soak.json" -q >"$out/respbench.out" 2>"$out/respbench.err" &
bench_pid=$!

echo "elapsed_s,rss_kb,fds,killed" >"$out/samples.csv"
start=$(date +%s)
killed_total=0
tick=0
while kill -0 "$bench_pid" 2>/dev/null; do
    sleep "$kill_every"
    tick=$((tick + kill_every))
    if [ $((tick % sample_every)) -eq 0 ]; then
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$bench_pid/status" 2>/dev/null || true)
        fds=$(ls "/proc/$bench_pid/fd" 2>/dev/null | wc -l || true)
        [ -n "$rss" ] && echo "$(($(date +%s) - start)),$rss,$fds,$killed_total" >>"$out/samples.csv"
    fi
    # Every normal client but redis-cli itself: respbench's connections.
    n=$(redis-cli -p "$port" CLIENT KILL TYPE normal SKIPME yes 2>/dev/null || echo 0)
    killed_total=$((killed_total + ${n:-0}))
done
wait "$bench_pid" && status=0 || status=$?
calls=$(redis-cli -p "$port" INFO commandstats | tr -d '\r' |
    awk -F'[:=,]' '/^cmdstat_(get|set):/ {s += $3} END {print s + 0}')

python3 - "$out" "$warm_secs" "$status" "$killed_total" "$calls" "$duration" "$sample_every" <<'EOF'
import csv, json, sys
out, warm, status, killed, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
sample_every = int(sys.argv[7])
unit = {"s": 1, "m": 60, "h": 3600}
run_secs = float(sys.argv[6].rstrip("smh")) * unit.get(sys.argv[6][-1], 1)
rows = [(int(r["elapsed_s"]), int(r["rss_kb"]), int(r["fds"])) for r in csv.DictReader(open(f"{out}/samples.csv"))]
# The criterion is about the run; samples after its duration are the results being written.
ending = [r for r in rows if r[0] > run_secs]
if ending:
    print(f"after the run, writing the results: RSS up to {max(r[1] for r in ending)} kB for "
          f"{ending[-1][0] - run_secs:.0f} s, {ending[-1][2]} descriptors")
rows = [r for r in rows if r[0] <= run_secs]
after = [r for r in rows if r[0] >= warm]
doc = json.load(open(f"{out}/soak.json"))
t = doc["totals"]
server_errors = sum(v for k, v in doc["errors"].items() if k.startswith("server:"))
lost = t["errors"] - server_errors
print(f"respbench exit status {status}; {len(rows)} samples during the run, {killed} connections killed")
print(f"replies {t['count']:,} (server's get+set calls {calls:,}); requests failed {lost:,}; "
      f"errors by kind {json.dumps(doc['errors'])}; outages {len(doc['faults']['outages'])}")
ok = status == 0 and len(after) >= 2
if after:
    # The level, minute by minute: the median of each minute's samples. A single sample above
    # it is a transient (the collector a second behind on a busy machine holds a window or
    # two more for that second, then lets them go); growth is the level rising.
    per_minute = max(1, 60 // sample_every)
    minutes = [sorted(r[1] for r in after[i:i + per_minute]) for i in range(0, len(after), per_minute)]
    minutes = [m for m in minutes if len(m) == per_minute] or minutes[:1]
    levels = [m[len(m) // 2] for m in minutes]
    base, top = levels[0], max(levels)
    growth = (top - base) / base * 100
    fds = sorted({r[2] for r in after})
    peak = max(after, key=lambda r: r[1])
    print(f"RSS level (median of each minute's samples) from {after[0][0]} s: first minute {base} kB, "
          f"highest minute {top} kB, last minute {levels[-1]} kB: growth {growth:.2f} % (limit 5 %)")
    print(f"largest single sample {peak[1]} kB at {peak[0]} s ({(peak[1] - base) / base * 100:+.1f} % against the "
          f"first minute's level); last sample {after[-1][1]} kB")
    print(f"open descriptors after the first minute: {fds} (must be one value)")
    ok = ok and growth < 5 and len(fds) == 1
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
EOF
