#!/usr/bin/env python3
"""Does --metrics-listen slow a run? A run's throughput without the endpoint, with it idle, and
with it under hostile scrapers: 200 connections that send nothing, 50 that send a request and
never read (the kernel's smallest receive buffer, set before connecting), and one client
scraping in a loop as fast as it goes. Median of RUNS runs each, the three conditions taken in
turn (each round starting with the next one) so that the machine's drift hits all alike. Not a timed test: run it by
hand and record the table in BENCHMARKS.md.

The attackers run on this machine, in this script's process: under "hostile" they take CPU of
their own beside the endpoint's. The endpoint thread's own CPU is printed apart (read from
/proc/PID/task, the thread named "metrics"), and a fourth condition, "busy", is the control:
no endpoint, this script spinning a thread for the length of the run.

Usage: scripts/metrics-attack.py [--runs 3] [--duration 10s] [--connections 50] [--threads 2]
                                 [--respbench target/release/respbench] [-- EXTRA FLAGS]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

GET = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(workdir):
    port = free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", workdir, "--logfile", "redis.log"])
    for _ in range(500):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                s.sendall(b"PING\r\n")
                if s.recv(16):
                    return server, port
        except OSError:
            time.sleep(0.02)
    sys.exit("metrics-attack: redis-server did not start")


def metrics_thread_cpu_secs(pid):
    """utime + stime of the thread named "metrics", in seconds, or None."""
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if f.read().strip() != "metrics":
                    continue
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return None
    return None


class Attack:
    """The hostile scrapers against host:port until stop()."""

    def __init__(self, host, port):
        self.addr = (host, port)
        self.stopped = threading.Event()
        self.held = []
        self.answered = 0
        self.loop = threading.Thread(target=self.scrape_loop, daemon=True)

    def start(self):
        for _ in range(200):
            self.held.append(socket.create_connection(self.addr))
        for _ in range(50):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
            s.connect(self.addr)
            s.sendall(GET)
            self.held.append(s)
        self.loop.start()

    def scrape_loop(self):
        while not self.stopped.is_set():
            try:
                with socket.create_connection(self.addr, timeout=5) as s:
                    s.sendall(GET)
                    reply = b""
                    while chunk := s.recv(65536):
                        reply += chunk
                    if reply.startswith(b"HTTP/1.1 200"):
                        self.answered += 1
            except OSError:
                time.sleep(0.01)

    def stop(self):
        self.stopped.set()
        self.loop.join()
        for s in self.held:
            s.close()


def one_run(args, port, condition, workdir):
    """ops/s of one run; with the endpoint under attack, also the scrapes answered and the
    endpoint thread's CPU seconds."""
    out = os.path.join(workdir, "r.json")
    cmd = [args.respbench, "-p", str(port), "--duration", args.duration, "-c", str(args.connections),
           "--threads", str(args.threads), "-q", "--json", out] + args.extra
    if condition in ("idle", "hostile"):
        cmd += ["--metrics-listen", "127.0.0.1:0"]
    spinning = threading.Event()
    if condition == "busy":
        # The control: no endpoint, but this process spins as the attackers keep it busy.
        threading.Thread(target=lambda: [None for _ in iter(spinning.is_set, True)], daemon=True).start()
    bench = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    attack, cpu = None, None
    if condition in ("idle", "hostile"):
        for line in bench.stderr:
            if "metrics on http://" in line:
                host, mport = line.split("http://")[1].strip().removesuffix("/metrics").rsplit(":", 1)
                break
        if condition == "hostile":
            attack = Attack(host, int(mport))
            attack.start()
        # The endpoint thread's CPU, sampled until the run ends (its last sample is kept).
        while bench.poll() is None:
            cpu = metrics_thread_cpu_secs(bench.pid) or cpu
            time.sleep(0.2)
    err = bench.communicate()[1]
    spinning.set()
    if attack:
        attack.stop()
    if bench.returncode != 0:
        sys.exit(f"metrics-attack: respbench failed ({condition}): {err}")
    with open(out) as f:
        doc = json.load(f)
    return doc["totals"]["ops_per_sec"], attack.answered if attack else None, cpu


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--duration", default="10s")
    p.add_argument("--connections", type=int, default=50)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--respbench", default="target/release/respbench")
    p.add_argument("extra", nargs="*", help="more respbench flags (after --)")
    args = p.parse_args()
    if not os.access(args.respbench, os.X_OK):
        sys.exit(f"metrics-attack: {args.respbench} is not built (cargo build --release)")
    conditions = ["none", "idle", "hostile", "busy"]
    results = {c: [] for c in conditions}
    with tempfile.TemporaryDirectory() as workdir:
        server, port = start_redis(workdir)
        try:
            for run in range(args.runs):
                # Each round starts with a different condition: no condition always follows another.
                for condition in conditions[run % 4:] + conditions[:run % 4]:
                    ops, answered, cpu = one_run(args, port, condition, workdir)
                    results[condition].append((ops, answered, cpu))
                    extra = "" if answered is None else f", {answered} scrapes answered"
                    extra += "" if cpu is None else f", metrics thread {cpu:.2f} s CPU"
                    print(f"run {run + 1} {condition:8} {ops:12,.0f} ops/s{extra}", file=sys.stderr)
        finally:
            server.terminate()
            server.wait()
    base = statistics.median(r[0] for r in results["none"])
    print("| endpoint | ops/s (median of %d) | runs | vs none | scrapes answered | metrics thread CPU |" % args.runs)
    print("|---|---|---|---|---|---|")
    for c in conditions:
        ops = [r[0] for r in results[c]]
        median = statistics.median(ops)
        answered = [r[1] for r in results[c] if r[1] is not None]
        cpu = [r[2] for r in results[c] if r[2] is not None]
        print(f"| {c} | {median:,.0f} | {', '.join(f'{o:,.0f}' for o in ops)} | {100 * (median / base - 1):+.1f} % | "
              f"{statistics.median(answered) if answered else '-'} | "
              f"{f'{statistics.median(cpu):.2f} s' if cpu else '-'} |")


if __name__ == "__main__":
    main()
