#!/usr/bin/env python3
"""Side-by-side benchmark: respbench against redis-benchmark (and memtier_benchmark and
valkey-benchmark when on PATH), on one redis-server, server pinned to one core and every
client to another. Prints throughput and client CPU per request (user + sys from the OS,
measured with getrusage on the child), medians of several runs, and the ratios to respbench.

Usage: scripts/bench.py [--requests N] [--runs N] [--pipelines 1,16] [--markdown]
"""

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESPBENCH = os.path.join(ROOT, "target", "release", "respbench")
# The floor client (examples/floor.rs): the least a closed-loop client does per request.
FLOOR = os.path.join(ROOT, "target", "release", "examples", "floor")
IO_PATHS = [("epoll", "epoll")]
KEYS = 100_000
VALUE = 100
CONNECTIONS = 50


def io_paths():
    """respbench's I/O paths to measure: epoll always, io_uring where this kernel allows it."""
    paths = [("epoll", "epoll")]
    probe = subprocess.run([RESPBENCH, "--io", "uring", "-p", "1", "-n", "1", "--connect-timeout", "1ms"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if "io_uring is not available" not in probe.stderr:
        paths.append(("uring", "io_uring"))
    return paths


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cores():
    n = os.cpu_count() or 1
    return ("0", "1") if n >= 2 else ("0", "0")


def start_server(port, core, workdir, extra=()):
    proc = subprocess.Popen(
        ["taskset", "-c", core, "redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
         "--dir", workdir, "--logfile", os.path.join(workdir, "redis.log"), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    sys.exit("bench: redis-server did not start")


def prefill(port):
    # respbench's keys (key:N) and redis-benchmark's (key:%012d), so every client hits.
    subprocess.run([RESPBENCH, "-p", str(port), "-n", "allkeys", "--key-min", "0", "--key-max", str(KEYS - 1),
                    "-d", str(VALUE), "-q"], check=True, stdout=subprocess.DEVNULL)
    script = ("for i=0,%d do redis.call('SET', string.format('key:%%012d', i), string.rep('x', %d)) end return 1"
              % (KEYS - 1, VALUE))
    subprocess.run(["redis-cli", "-p", str(port), "EVAL", script, "0"], check=True, stdout=subprocess.DEVNULL)


def measure(argv):
    """Runs argv; returns (wall seconds, user + sys CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.monotonic() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = after.ru_utime - before.ru_utime
    sys_ = after.ru_stime - before.ru_stime
    return wall, user, sys_


def clients(port, requests, pipeline, core):
    pin = ["taskset", "-c", core]
    ours = [RESPBENCH, "-p", str(port), "-c", str(CONNECTIONS), "--threads", "1", "-n", str(requests),
            "-P", str(pipeline), "--ratio", "0:1", "--key-max", str(KEYS - 1), "-d", str(VALUE), "-q"]
    out = {
        # Each I/O path on its own row (io_uring only where this kernel allows it).
        **{f"respbench ({name})": pin + ours + ["--io", io] for io, name in IO_PATHS},
        # The floor of each I/O path: not a peer, the kernel's cost for any client of its kind.
        **{f"floor ({name})": pin + [FLOOR, io, str(port), str(CONNECTIONS), str(requests), str(pipeline),
                                     str(VALUE), str(KEYS)] for io, name in IO_PATHS},
        "redis-benchmark": pin + ["redis-benchmark", "-p", str(port), "-c", str(CONNECTIONS), "-n", str(requests),
                                  "-P", str(pipeline), "-t", "get", "-r", str(KEYS), "-d", str(VALUE), "-q"],
    }
    if shutil.which("valkey-benchmark"):
        out["valkey-benchmark"] = [*out["redis-benchmark"]]
        out["valkey-benchmark"][len(pin)] = "valkey-benchmark"
    if shutil.which("memtier_benchmark"):
        out["memtier_benchmark"] = pin + [
            "memtier_benchmark", "-p", str(port), "-t", "1", "-c", str(CONNECTIONS),
            "-n", str(requests // CONNECTIONS), "--pipeline", str(pipeline), "--ratio", "0:1",
            "--key-prefix", "key:", "--key-minimum", "1", "--key-maximum", str(KEYS - 1), "-d", str(VALUE),
            "--distinct-client-seed", "--hide-histogram"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_REQUESTS", 2_000_000)))
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 3)))
    ap.add_argument("--pipelines", default=os.environ.get("BENCH_PIPELINES", "1,16"))
    args = ap.parse_args()
    for tool in ("redis-server", "redis-benchmark", "redis-cli", "taskset"):
        if not shutil.which(tool):
            sys.exit(f"bench: {tool} is not installed (make bench installs redis-server and redis-tools)")
    global IO_PATHS
    IO_PATHS = io_paths()
    server_core, client_core = cores()
    workdir = tempfile.mkdtemp(prefix="respbench-bench-")
    port = free_port()
    server = start_server(port, server_core, workdir)
    try:
        prefill(port)
        print(f"GETs of {VALUE}-byte values over {KEYS} prefilled keys, {CONNECTIONS} connections, "
              f"{args.requests} requests, median of {args.runs} runs; server on core {server_core}, "
              f"clients on core {client_core}")
        for pipeline in [int(p) for p in args.pipelines.split(",")]:
            results = {}
            for run in range(args.runs):
                # Alternate the order so no tool always runs on a warmer server.
                tools = list(clients(port, args.requests, pipeline, client_core).items())
                if run % 2:
                    tools.reverse()
                for name, argv in tools:
                    wall, user, sys_ = measure(argv)
                    results.setdefault(name, []).append((args.requests / wall, (user + sys_) / args.requests * 1e6,
                                                         user / args.requests * 1e6, sys_ / args.requests * 1e6))
            print(f"\npipeline {pipeline}")
            print(f"{'client':<22}{'ops/s':>12}{'CPU us/req':>12}{'user':>8}{'sys':>8}")
            medians = {}
            for name, rows in results.items():
                ops, cpu, user, sys_ = (statistics.median(r[i] for r in rows) for i in range(4))
                medians[name] = (ops, cpu)
                print(f"{name:<22}{ops:>12.0f}{cpu:>12.2f}{user:>8.2f}{sys_:>8.2f}")
            peers = {n: m for n, m in medians.items() if not n.startswith(("respbench", "floor"))}
            cheapest = min(peers, key=lambda n: peers[n][1])
            for name in (n for n in medians if n.startswith("respbench")):
                ops, cpu = medians[name]
                vs = "  ".join(f"{cpu / peers[p][1]:.2f}x {p}" for p in peers)
                kind = name.replace("respbench", "floor")
                floors = "  ".join(f"{cpu / medians[f][1]:.2f}x {f}" for f in dict.fromkeys((kind, "floor (epoll)")) if f in medians)
                print(f"{name}: CPU per request {floors}; {cpu / peers[cheapest][1]:.2f}x the cheapest peer "
                      f"({cheapest}); against each: {vs}; throughput {ops / peers[cheapest][0]:.2f}x {cheapest}'s")
        print("\nCPU per request is the client process's user + system time (getrusage) over the requests; "
              "below 1x respbench is cheaper. The floor rows are examples/floor.rs: per request only the "
              "system calls a closed-loop client of that I/O path cannot avoid (no latency, no parsing, no "
              "key choice); the target is at most 0.9x the epoll floor at pipeline 1 and at most the floor at 16.")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
