#!/usr/bin/env python3
"""Large values and connection storms, side by side: client CPU per request of GET and SET of
100 KB and 1 MB values (respbench on each I/O path, the floor, memtier_benchmark,
valkey-benchmark and redis-benchmark where on PATH), then the cost of opening 10,000
connections that each make one request (wall time, client CPU and peak resident set).

The server is pinned to one core and every client to the other (taskset), as in bench.py.
CPU per request is the client's user + system time from wait4's rusage over the requests;
the peak resident set is wait4's ru_maxrss of that one client process. Medians of --runs.

The floor rows are examples/floor.rs on the epoll path: the same reads and writes of the
same values, nothing parsed, no latency recorded (a SET waits in poll while the socket's
buffer is full, as any client writing large values must).

Usage: scripts/bench_sizes.py [--runs N] [--sizes 100000,1000000] [--requests-mb 4000]
                              [--connections 10000] [--no-storm]
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (server start, ports, cores, the binaries' paths)

CONNECTIONS = 10
KEYS = 100


def run(argv):
    """Runs argv; returns (wall s, user s, sys s, peak RSS in MB) of that process alone."""
    t0 = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - t0
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"bench_sizes: {' '.join(argv)} exited {proc.returncode}: {err.strip()[-300:]}")
    return wall, usage.ru_utime, usage.ru_stime, usage.ru_maxrss / 1024


def prefill(port, value, keys=KEYS, tls=()):
    """respbench's keys (key:0..keys-1) and redis-/valkey-benchmark's (key:%012d), each VALUE
    bytes; `tls`: the connection options both respbench and redis-cli take (`--tls --cacert CA`)."""
    subprocess.run([bench.RESPBENCH, "-p", str(port), *tls, "-n", "allkeys", "--key-min", "0", "--key-max",
                    str(keys - 1), "-d", str(value), "-q", "-c", "4"], check=True, stdout=subprocess.DEVNULL)
    script = ("for i=0,%d do redis.call('SET', string.format('key:%%012d', i), string.rep('x', %d)) end return 1"
              % (keys - 1, value))
    subprocess.run(["redis-cli", *tls, "-p", str(port), "EVAL", script, "0"], check=True,
                   stdout=subprocess.DEVNULL)


def size_clients(port, op, value, requests, core):
    pin = ["taskset", "-c", core]
    ratio = "1:0" if op == "set" else "0:1"
    out = {f"respbench ({name})": pin + [
        bench.RESPBENCH, "-p", str(port), "-c", str(CONNECTIONS), "--threads", "1", "-n", str(requests),
        "--ratio", ratio, "--key-max", str(KEYS - 1), "-d", str(value), "-q", "--io", io]
        for io, name in bench.IO_PATHS}
    out["floor (epoll)"] = pin + [bench.FLOOR, "epoll", str(port), str(CONNECTIONS), str(requests), "1", str(value),
                                  str(KEYS), op]
    for tool in ("redis-benchmark", "valkey-benchmark"):
        if shutil.which(tool):
            out[tool] = pin + [tool, "-p", str(port), "-c", str(CONNECTIONS), "-n", str(requests), "-t", op,
                               "-r", str(KEYS), "-d", str(value), "-q"]
    if shutil.which("memtier_benchmark"):
        out["memtier_benchmark"] = pin + [
            "memtier_benchmark", "-p", str(port), "-t", "1", "-c", str(CONNECTIONS),
            "-n", str(requests // CONNECTIONS), "--ratio", ratio, "--key-prefix", "key:", "--key-minimum", "1",
            "--key-maximum", str(KEYS - 1), "-d", str(value), "--hide-histogram"]
    return out


def storm_clients(port, connections, core):
    pin = ["taskset", "-c", core]
    out = {f"respbench ({name})": pin + [
        bench.RESPBENCH, "-p", str(port), "-c", str(connections), "--threads", "1", "-n", str(connections),
        "--ratio", "0:1", "--key-max", str(KEYS - 1), "-d", "100", "-q", "--io", io]
        for io, name in bench.IO_PATHS}
    if shutil.which("memtier_benchmark"):
        out["memtier_benchmark"] = pin + [
            "memtier_benchmark", "-p", str(port), "-t", "1", "-c", str(connections), "-n", "1", "--ratio", "0:1",
            "--key-prefix", "key:", "--key-minimum", "1", "--key-maximum", str(KEYS - 1), "-d", "100",
            "--hide-histogram"]
    if shutil.which("valkey-benchmark"):
        out["valkey-benchmark"] = pin + [
            "valkey-benchmark", "-p", str(port), "-c", str(connections), "-n", str(connections), "-t", "get",
            "-r", str(KEYS), "-d", "100", "-q"]
    return out


def medians_of(clients, runs, requests, rounds=None):
    """{client: (ops/s, CPU us/request, wall s, CPU s, peak MB)}: medians over `runs`, the order
    alternating run by run so no client always meets a warmer server. `rounds`, a list, is given
    each run's {client: CPU us/request} too, for ratios paired within a run."""
    rows = {}
    for r in range(runs):
        tools = list(clients.items())
        if r % 2:
            tools.reverse()
        for name, argv in tools:
            wall, user, sys_, rss = run(argv)
            rows.setdefault(name, []).append((requests / wall, (user + sys_) / requests * 1e6, wall, user + sys_, rss))
        if rounds is not None:
            rounds.append({name: v[-1][1] for name, v in rows.items()})
    return {n: tuple(statistics.median(x[i] for x in v) for i in range(5)) for n, v in rows.items()}


def storm_table(make_clients, connections, runs, hard, how=""):
    """Opening `connections` connections (`how`: " over TLS"), one GET on each: the clients'
    wall time, CPU and peak resident set, and respbench's CPU against memtier_benchmark's."""
    need = connections + 200
    if hard < need:
        print(f"\nOpening {connections} connections{how}: skipped, {need} descriptors needed and the hard limit is "
              f"{hard}")
        return
    ticks = bench.cpu_ticks()
    medians = medians_of(make_clients(), runs, connections)
    print(f"\nOpening {connections:,} connections{how}, one GET on each, one client thread, median of {runs} runs")
    print(f"{'client':<28}{'wall s':>8}{'CPU s':>8}{'peak MB':>9}")
    for name, (_ops, _cpu, wall, cpu_s, rss) in medians.items():
        print(f"{name:<28}{wall:>8.2f}{cpu_s:>8.2f}{rss:>9.0f}")
    print(bench.steal_line(ticks))
    if "memtier_benchmark" in medians:
        for name in (n for n in medians if n.startswith("respbench")):
            print(f"opening{how}, {name}: {medians[name][3] / medians['memtier_benchmark'][3]:.2f}x "
                  "memtier_benchmark's CPU (target: at most 0.5x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 3)))
    ap.add_argument("--sizes", default=os.environ.get("BENCH_SIZES", "100000,1000000"))
    ap.add_argument("--requests-mb", type=int, default=int(os.environ.get("BENCH_SIZES_MB", 4000)),
                    help="megabytes of values each run moves (requests = this over the value size)")
    ap.add_argument("--connections", type=int, default=int(os.environ.get("BENCH_STORM", 10000)))
    ap.add_argument("--no-storm", action="store_true")
    args = ap.parse_args()
    for tool in ("redis-server", "redis-cli", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"bench_sizes: {tool} is not installed")
    bench.IO_PATHS = bench.io_paths()
    server_core, client_core = bench.cores()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    workdir = tempfile.mkdtemp(prefix="respbench-bench-sizes-")
    port = bench.free_port()
    server = bench.start_server(port, server_core, workdir, ["--maxclients", str(args.connections + 100)])
    try:
        for value in (int(v) for v in args.sizes.split(",")):
            prefill(port, value)
            requests = max(CONNECTIONS * 10, args.requests_mb * 1_000_000 // value // CONNECTIONS * CONNECTIONS)
            for op in ("get", "set"):
                ticks = bench.cpu_ticks()
                rounds = []
                medians = medians_of(size_clients(port, op, value, requests, client_core), args.runs, requests, rounds)
                print(f"\n{op.upper()} of {value:,}-byte values, {CONNECTIONS} connections, pipeline 1, "
                      f"{requests} requests, median of {args.runs} runs")
                print(f"{'client':<22}{'ops/s':>10}{'CPU us/req':>12}")
                for name, (ops, cpu, *_rest) in medians.items():
                    print(f"{name:<22}{ops:>10.0f}{cpu:>12.2f}")
                print(bench.steal_line(ticks))
                peers = {n: m for n, m in medians.items() if not n.startswith(("respbench", "floor"))}
                for name in (n for n in medians if n.startswith("respbench")):
                    parts = [f"{bench.paired(rounds, name, 'floor (epoll)'):.2f}x the floor (epoll)"]
                    if peers:
                        cheapest = min(peers, key=lambda n: peers[n][1])
                        parts.append(f"{bench.paired(rounds, name, cheapest):.2f}x the cheapest peer ({cheapest})")
                    print(f"{op.upper()} {value:,} B, {name}: CPU per request " + "; ".join(parts))
        print("Ratios: medians of the ratios within each run. Targets: within 1.1x the floor and at most 0.8x the "
              "cheapest peer.")
        if not args.no_storm:
            prefill(port, 100)  # one GET of a 100-byte value per connection, not of the last large size
            storm_table(lambda: storm_clients(port, args.connections, client_core), args.connections, args.runs, hard)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
