#!/usr/bin/env bash
# Validates `respbench ab`'s verdicts (not a timed test): how often it claims a difference
# where there is none (A against A on one server: the false-positive rate, which must be at or
# under 100 - confidence, 5 % by default), and how often it finds a real slowdown (A against
# the same workload with 4 KB values, a modest slowdown, and against a server that fsyncs every
# write, a gross one). Prints one line per trial and the rates; the figures go in BENCHMARKS.md.
#
#   scripts/ab-validate.sh [TRIALS] [ROUNDS]     (defaults: 20 trials of 10 round pairs)
#   RESPBENCH=target/release/respbench nice -n 19 scripts/ab-validate.sh 20
set -euo pipefail

TRIALS=${1:-20}
ROUNDS=${2:-10}
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

# trial NAME A_FLAGS B_FLAGS: runs TRIALS comparisons, prints each verdict and the count of each.
trial() {
  local name=$1 a=$2 b=$3 claimed=0 slower=0 none=0 i verdict change low high
  for i in $(seq 1 "$TRIALS"); do
    "$RESPBENCH" ab --a "$a" --b "$b" --rounds "$ROUNDS" --round-duration "$ROUND" --warmup "$WARMUP" \
      --json "$dir/ab.json" >/dev/null 2>&1
    read -r verdict change low high < <(jq -r '.changes[0] | [(.verdict | gsub(" "; "_")), .change // 0, .change_low // 0, .change_high // 0] | @tsv' "$dir/ab.json")
    printf '%s trial %2d: %-22s ops/sec %+.1f %% [%+.1f %%, %+.1f %%]\n' "$name" "$i" "$verdict" \
      "$(echo "$change * 100" | bc -l)" "$(echo "$low * 100" | bc -l)" "$(echo "$high * 100" | bc -l)"
    case $verdict in
      faster) claimed=$((claimed + 1)) ;;
      slower) claimed=$((claimed + 1)); slower=$((slower + 1)) ;;
      no_verdict) none=$((none + 1)) ;;
    esac
  done
  echo "$name: a difference claimed in $claimed of $TRIALS trials; B slower in $slower; no verdict in $none"
}

echo "respbench ab validation: $TRIALS trials of $ROUNDS round pairs ($ROUND rounds after $WARMUP warm-up), $SIDE"
trial "A/A" "-p $A_PORT $SIDE" "-p $A_PORT $SIDE"
trial "4KB" "-p $A_PORT $SIDE" "-p $A_PORT $SIDE -d 4096"
trial "fsync" "-p $A_PORT $SIDE" "-p $B_PORT $SIDE"
