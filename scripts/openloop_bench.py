#!/usr/bin/env python3
"""Open-loop (paced) cost against closed loop: client CPU per request, late sends (and of them
those late by the client's own delay, with their connection free to send), the worker's
wake-ups the machine made over 1 ms late, and the bottleneck verdict at several connection
counts, one client thread, on one redis-server.

The server is pinned to core 0 and respbench to core 1 (taskset). Each connection count runs
closed loop for DURATION, then paced at --of-closed (default 0.9) of that path's closed-loop
throughput (the median of its runs), or at a fixed `--rate RATE`, for the same duration;
both GET:SET 4:1 (`--ratio 1:4`) with 100-byte values over 100k prefilled keys. Client CPU is
user + sys of the child from getrusage (connecting included) and, separately, the worker
thread's CPU from respbench's JSON (the event loop alone). Medians of --runs.

With --callgrind, instead counts instructions (valgrind) of a short paced run per connection
count: Ir of the whole process and of the worker's event loop (inclusive), per request.

Several builds can be compared in one go, alternating run by run so that the machine's
drift hits them alike: --binary before=/tmp/old,after=target/release/respbench.

Each I/O path runs on its own rows (--io epoll,uring; io_uring only where the kernel allows it).

Beside them, the open-loop floor (examples/floor.rs on epoll, `rate=R`): GETs at pipeline 1 that
do nothing but keep their schedule, closed loop and then paced at the rate respbench's epoll
rows were paced at, waking on the grid of ticks a paced respbench worker wakes on. Its
paced / closed ratio is what pacing itself costs any client on this kernel and machine (its
sends wake an idle server, its replies an idle client); respbench's ratio is read against it.

Usage: scripts/openloop_bench.py [--binary [LABEL=]PATH,...] [--io epoll,uring] [--conns 50,1000,10000]
                                 [--runs 3] [--of-closed 0.9 | --rate N [--no-closed]] [--duration 6s]
                                 [--callgrind]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the closed-loop benchmark's server and port helpers)
from bench import free_port  # noqa: E402
KEYS = 100_000
VALUE = 100


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def start_server(port, workdir):
    return bench.start_server(port, "0", workdir, ["--maxclients", "20000"])


def common(binary, port, conns, io="auto"):
    return [binary, "--io", io, "-p", str(port), "-c", str(conns), "--threads", "1", "--ratio", "1:4", "-d", str(VALUE),
            "--key-max", str(KEYS - 1), "-q"]


def measure(argv, json_path):
    """Runs argv; returns a dict of what one run measured."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv + ["--json", json_path], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    with open(json_path) as f:
        doc = json.load(f)
    count = doc["totals"]["count"]
    loop_cpu = sum(t["cpu_secs"] for t in doc["client"]["threads"])
    rate = doc.get("rate") or {}
    return {
        "count": count,
        "ops": doc["totals"]["ops_per_sec"],
        "us": cpu / count * 1e6,
        "loop_us": loop_cpu / count * 1e6,
        "late": rate.get("late_sends", 0),
        # Late by the client's own delay (its connection free to send), where measured.
        "own": rate.get("late_sends_own", 0),
        # The worker's waits the machine ended over 1 ms late (its host or a neighbour).
        "wakeups": rate.get("late_wakeups", 0),
        "sends": rate.get("sends", 0),
        "verdict": doc["bottleneck"]["verdict"],
    }


def seconds(duration):
    """A --duration's seconds: "6s", "6000ms" or "6"."""
    return float(duration[:-2]) / 1000 if duration.endswith("ms") else float(duration.rstrip("s"))


def floor(pin, port, conns, requests, rate=None):
    """Runs the floor (GET, pipeline 1, epoll), closed loop or paced at `rate`: its throughput
    and CPU per request once connected (what it prints), and the process's CPU per request."""
    argv = pin + [bench.FLOOR, "epoll", str(port), str(conns), str(requests), "1", str(VALUE), str(KEYS), "get"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(argv + ([f"rate={rate}"] if rate else []), check=True, capture_output=True, text=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # "N replies; after connecting W s, C s of CPU[; L sends over 1 ms late]"
    words = out.split()
    wall, loop_cpu, late = float(words[4]), float(words[6]), int(words[10]) if rate else 0
    return {"ops": requests / wall, "us": cpu / requests * 1e6, "loop_us": loop_cpu / requests * 1e6, "late": late}


def floor_rows(args, where, rate, requests):
    """The floor's closed and paced rows at `rate` (`args.runs` of each, alternating); prints
    them; returns their ratios of CPU per request, the process's and once connected."""
    pin, port, conns, _ = where
    runs = {"closed": [], "paced": []}
    for _ in range(args.runs):
        runs["closed"].append(floor(pin, port, conns, requests))
        runs["paced"].append(floor(pin, port, conns, requests, rate))
    med = {mode: {k: statistics.median(r[k] for r in rs) for k in ("ops", "us", "loop_us", "late")}
           for mode, rs in runs.items()}
    for mode, asked in (("closed", None), ("paced", rate)):
        each = " ".join(f"{r['us']:.1f}" for r in runs[mode])
        achieved = f"{100 * med[mode]['ops'] / asked:>8.1f}%" if asked else f"{'-':>9}"
        # The floor's late sends are all its own: it sleeps until they are due.
        late = f"{med[mode]['late']:.0f} ({100 * med[mode]['late'] / requests:.2f}%)" if asked else "-"
        print(f"{'floor':<10}{conns:>7} {mode:<7}{asked or '-':>9}{med[mode]['ops']:>9.0f}{achieved}"
              f"{med[mode]['us']:>8.2f}{med[mode]['loop_us']:>12.2f}{late:>16}{late:>16}{'-':>10}  -  [us/req: {each}]",
              flush=True)
    return (med["paced"]["us"] / med["closed"]["us"], med["paced"]["loop_us"] / med["closed"]["loop_us"])


def callgrind(binary, port, conns, requests, rate, workdir, io):
    out = os.path.join(workdir, f"callgrind.{conns}.out")
    argv = ["taskset", "-c", "1", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    argv += common(binary, port, conns, io) + ["-n", str(requests), "--rate", str(rate)]
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], check=True, capture_output=True,
                          text=True).stdout
    total, loop = None, None
    for line in text.splitlines():
        if total is None and "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
        if loop is None and "respbench::engine::worker::run" in line:
            loop = int(line.split()[0].replace(",", ""))
    return total / requests, (loop or 0) / requests


def run_mode(args, binaries, where, name, rate_of):
    """Runs each build `args.runs` times, alternating; prints a row per build; returns each
    build's median ops/s. `rate_of(label)` is the paced rate, None for closed loop."""
    pin, port, conns, workdir = where
    runs = {label: [] for label, _, _ in binaries}
    for _ in range(args.runs):
        for label, binary, io in binaries:
            rate = rate_of(label)
            extra = ["--duration", args.duration] + (["--rate", str(rate)] if rate else [])
            runs[label].append(measure(pin + common(binary, port, conns, io) + extra, os.path.join(workdir, "run.json")))
    medians = {}
    for label, rs in runs.items():
        med = {k: statistics.median(r[k] for r in rs) for k in ("ops", "us", "loop_us", "late", "own", "sends", "wakeups")}
        medians[label] = med["ops"]
        rate = rate_of(label)
        asked = f"{rate:>9}" if rate else f"{'-':>9}"
        achieved = f"{100 * med['ops'] / rate:>8.1f}%" if rate else f"{'-':>9}"
        verdicts = ",".join(r["verdict"] for r in rs)
        late = f"{med['late']:.0f} ({100 * med['late'] / med['sends']:.2f}%)" if med["sends"] else "-"
        own = f"{med['own']:.0f} ({100 * med['own'] / med['sends']:.2f}%)" if med["sends"] else "-"
        each = " ".join(f"{r['us']:.1f}" for r in rs)
        print(f"{label:<10}{conns:>7} {name:<7}{asked}{med['ops']:>9.0f}{achieved}{med['us']:>8.2f}"
              f"{med['loop_us']:>12.2f}{late:>16}{own:>16}{med['wakeups'] if rate else '-':>10}  {verdicts}"
              f"  [us/req: {each}]", flush=True)
    return medians


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "respbench"))
    ap.add_argument("--conns", default="50,1000,10000")
    ap.add_argument("--io", default="epoll,uring", help="the I/O paths to measure")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--rate", type=int, help="pace at this fixed rate instead of a share of closed loop")
    ap.add_argument("--of-closed", type=float, default=0.9,
                    help="pace at this share of the path's closed-loop throughput (default 0.9)")
    ap.add_argument("--duration", default="6s")
    ap.add_argument("--no-closed", action="store_true", help="skip the closed-loop runs (with --rate only)")
    ap.add_argument("--callgrind", action="store_true", help="count instructions instead of timing")
    ap.add_argument("--cg-requests", type=int, default=20000)
    ap.add_argument("--cg-rate", type=int, default=5000)
    args = ap.parse_args()
    if args.no_closed and args.rate is None:
        ap.error("--no-closed needs --rate (paced runs otherwise take their rate from the closed-loop runs)")
    nofile = raise_nofile()
    conn_counts = [int(c) for c in args.conns.split(",")]
    if max(conn_counts) + 100 > nofile:
        sys.exit(f"openloop_bench: open-file limit {nofile} is too low for {max(conn_counts)} connections")
    workdir = tempfile.mkdtemp(prefix="respbench-openloop-")
    port = free_port()
    server = start_server(port, workdir)
    try:
        builds = [b.split("=", 1) if "=" in b else [os.path.basename(b), b] for b in args.binary.split(",")]
        paths = [io for io in args.io.split(",") if io != "uring" or "uring" in [p for p, _ in bench.io_paths()]]
        names = {"epoll": "epoll", "uring": "io_uring"}
        # Each build on each path: (label, binary, io).
        binaries = [(names[io] if len(builds) == 1 else f"{label}/{names[io]}", binary, io)
                    for label, binary in builds for io in paths]
        subprocess.run([builds[-1][1], "-p", str(port), "-n", "allkeys", "--key-min", "0", "--key-max", str(KEYS - 1),
                        "-d", str(VALUE), "-q"], check=True, stdout=subprocess.DEVNULL)
        if args.callgrind:
            print(f"callgrind: -n {args.cg_requests} --rate {args.cg_rate}")
            print(f"{'build':<10}{'conns':>7}{'Ir/req (process)':>18}{'Ir/req (event loop)':>21}")
            for conns in conn_counts:
                for label, binary, io in binaries:
                    total, loop = callgrind(binary, port, conns, args.cg_requests, args.cg_rate, workdir, io)
                    print(f"{label:<10}{conns:>7}{total:>18,.0f}{loop:>21,.0f}", flush=True)
            return
        pin = ["taskset", "-c", "1"]
        asked = f"--rate {args.rate}" if args.rate else f"paced at {args.of_closed:.0%} of closed loop"
        print(f"{asked}, --duration {args.duration} --threads 1 --ratio 1:4 -d {VALUE}, median of {args.runs}")
        print(f"{'build':<10}{'conns':>7} {'mode':<7}{'asked/s':>9}{'ops/s':>9}{'achieved':>9}{'us/req':>8}"
              f"{'loop us/req':>12}{'late sends':>16}{'client own':>16}{'late wake':>10}  verdicts")
        for conns in conn_counts:
            ticks = bench.cpu_ticks()
            closed = {}
            if not args.no_closed:
                closed = run_mode(args, binaries, (pin, port, conns, workdir), "closed", lambda label: None)
            rate = (lambda label: args.rate) if args.rate else (lambda label: int(args.of_closed * closed[label]))
            run_mode(args, binaries, (pin, port, conns, workdir), "paced", rate)
            # The floor, paced at the rate the first epoll row was: its requests about a run's worth.
            epoll = next((label for label, _, io in binaries if io == "epoll"), None)
            if epoll is not None and os.path.exists(bench.FLOOR):
                floor_rate = rate(epoll)
                requests = int(floor_rate * seconds(args.duration))
                whole, loop = floor_rows(args, (pin, port, conns, workdir), floor_rate, requests)
                print(f"the floor's paced / closed at {conns} connections: {whole:.2f}x (process), {loop:.2f}x (once connected)")
            print(bench.steal_line(ticks))
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
