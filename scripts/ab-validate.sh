#!/usr/bin/env bash
# Validates `respbench ab`'s verdicts (not a timed test): how often it claims a difference
# where there is none (A against A on one server: the false-positive rate, which must be at or
# under 100 - confidence, 5 % by default), and how often it finds a real slowdown (A against
# the same workload with 4 KB values, a modest slowdown, and against a server that fsyncs every
# write, a gross one). A trial claims a difference when any of its four verdicts (throughput,
# p50, p99, p99.9) says faster or slower: the stated confidence is the set's. A slowdown is
# found when the headline (throughput) says slower. Prints one line per trial and each rate
# with its exact (Clopper-Pearson) 95 % interval; the figures go in BENCHMARKS.md.
#
#   scripts/ab-validate.sh [TRIALS] [ROUNDS] [DETECT_TRIALS]
#     defaults: 20 A/A trials of 10 round pairs, DETECT_TRIALS = TRIALS for each slowdown (0: none);
#     ROUND and WARMUP (500ms, 200ms) set the rounds' length.
#   RESPBENCH=target/release/respbench nice -n 19 scripts/ab-validate.sh 40 10 20
set -euo pipefail

TRIALS=${1:-20}
ROUNDS=${2:-10}
DETECT_TRIALS=${3:-$TRIALS}
RESPBENCH=${RESPBENCH:-target/release/respbench}
ROUND=${ROUND:-500ms}
WARMUP=${WARMUP:-200ms}
SIDE="-c 4 --threads 1 --ratio 1:0 --key-max 10000"

dir=$(mktemp -d)
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
A_PORT=$(port)
B_PORT=$(port)
redis-server --port "$A_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" --logfile a.log \
  --daemonize yes --pidfile "$dir/a.pid"
redis-server --port "$B_PORT" --bind 127.0.0.1 --save '' --appendonly yes --appendfsync always \
  --appendfilename b.aof --dir "$dir" --logfile b.log --daemonize yes --pidfile "$dir/b.pid"
cleanup() {
  redis-cli -p "$A_PORT" shutdown nosave >/dev/null 2>&1 || true
  redis-cli -p "$B_PORT" shutdown nosave >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT
until redis-cli -p "$A_PORT" ping >/dev/null 2>&1 && redis-cli -p "$B_PORT" ping >/dev/null 2>&1; do :; done

# Clopper-Pearson 95 % interval of K successes in N, in percent (the binomial tails by bisection).
interval() {
  python3 - "$1" "$2" <<'PY'
import math, sys
k, n = int(sys.argv[1]), int(sys.argv[2])
def cdf(k, n, p):  # P(X <= k)
    return sum(math.comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k + 1))
def solve(f, target):  # the p in (0, 1) where the decreasing f crosses target
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) > target else (lo, mid)
    return (lo + hi) / 2
# low: P(X >= k) = 2.5 %; high: P(X <= k) = 2.5 %.
low = 0.0 if k == 0 else solve(lambda p: cdf(k - 1, n, p), 0.975)
high = 1.0 if k == n else solve(lambda p: cdf(k, n, p), 0.025)
print(f"{100 * k / n:.1f} % (95 % CI {100 * low:.1f}-{100 * high:.1f} %)")
PY
}

# trial NAME COUNT A_FLAGS B_FLAGS: runs COUNT comparisons, prints each verdict and the rates.
trial() {
  local name=$1 count=$2 a=$3 b=$4 claimed=0 slower=0 none=0 i verdict any change low high
  for i in $(seq 1 "$count"); do
    "$RESPBENCH" ab --a "$a" --b "$b" --rounds "$ROUNDS" --round-duration "$ROUND" --warmup "$WARMUP" \
      --json "$dir/ab.json" >/dev/null 2>&1
    read -r verdict any change low high < <(jq -r '[(.verdict | gsub(" "; "_")),
        ([.changes[] | select(.verdict == "faster" or .verdict == "slower") | .metric] | join(",") | if . == "" then "-" else . end),
        (.changes[0] | .change // 0, .change_low // 0, .change_high // 0)] | @tsv' "$dir/ab.json")
    printf '%s trial %2d: %-22s ops/sec %+.1f %% [%+.1f %%, %+.1f %%]; claims: %s\n' "$name" "$i" "$verdict" \
      "$(echo "$change * 100" | bc -l)" "$(echo "$low * 100" | bc -l)" "$(echo "$high * 100" | bc -l)" "$any"
    [ "$any" != "-" ] && claimed=$((claimed + 1))
    case $verdict in
      slower) slower=$((slower + 1)) ;;
      no_verdict) none=$((none + 1)) ;;
    esac
  done
  echo "$name: a difference claimed (any of the four verdicts) in $claimed of $count trials: $(interval "$claimed" "$count")"
  echo "$name: B slower by throughput in $slower of $count trials: $(interval "$slower" "$count"); no verdict in $none"
}

echo "respbench ab validation: $ROUNDS round pairs a trial ($ROUND rounds after $WARMUP warm-up), $SIDE"
trial "A/A" "$TRIALS" "-p $A_PORT $SIDE" "-p $A_PORT $SIDE"
if [ "$DETECT_TRIALS" -gt 0 ]; then
  trial "4KB" "$DETECT_TRIALS" "-p $A_PORT $SIDE" "-p $A_PORT $SIDE -d 4096"
  trial "fsync" "$DETECT_TRIALS" "-p $A_PORT $SIDE" "-p $B_PORT $SIDE"
fi
