#!/usr/bin/env python3
"""TLS side by side: client CPU per request of GETs over TLS at pipeline 1 and 16 (respbench
on each I/O path, the TLS floor, memtier_benchmark, and valkey-/redis-benchmark where built
with TLS), then the cost of handshakes: a reconnect every 10 requests, full handshakes and
resumed ones (respbench's default; `--no-tls-resumption` makes every one full), beside
memtier_benchmark's `--reconnect-interval 10`; then opening 10,000 TLS connections with one
request each (a handshake per connection: wall time, client CPU and peak resident set).

One redis-server with TLS only (`--port 0 --tls-port P`, `--tls-auth-clients no`), a
certificate made here with openssl for 127.0.0.1; the server pinned to one core and every
client to the other (taskset). CPU per request is the client's user + system time over the
requests (wait4's rusage). Medians of --runs.

The TLS floor is examples/floor.rs with `tls=CA`: per request only the encryption, the
writes and reads and the decryption rustls (with ring, as respbench) needs, nothing parsed.

Usage: scripts/bench_tls.py [--runs N] [--requests N] [--pipelines 1,16] [--handshake-requests N]
                            [--connections 10000] [--no-storm]
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (ports, cores, the binaries' paths)
from bench_sizes import medians_of, prefill, storm_table  # noqa: E402  (shared with the sizes table)

KEYS = 100_000
VALUE = 100
CONNECTIONS = 50


def certificates(workdir):
    """A CA and a server certificate for 127.0.0.1 signed by it; returns (ca, cert, key)."""
    ca, ca_key = os.path.join(workdir, "ca.crt"), os.path.join(workdir, "ca.key")
    cert, key = os.path.join(workdir, "server.crt"), os.path.join(workdir, "server.key")
    csr, ext = os.path.join(workdir, "server.csr"), os.path.join(workdir, "san.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    quiet = {"check": True, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
                    "-days", "2", "-subj", "/CN=respbench-bench-ca"], **quiet)
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
                    "-subj", "/CN=localhost"], **quiet)
    subprocess.run(["openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
                    "-out", cert, "-days", "2", "-extfile", ext], **quiet)
    return ca, cert, key


def start_tls_server(port, core, workdir, ca, cert, key, maxclients):
    proc = subprocess.Popen(
        ["taskset", "-c", core, "redis-server", "--port", "0", "--tls-port", str(port), "--tls-cert-file", cert,
         "--tls-key-file", key, "--tls-ca-cert-file", ca, "--tls-auth-clients", "no", "--save", "",
         "--appendonly", "no", "--dir", workdir, "--logfile", os.path.join(workdir, "redis.log"),
         "--maxclients", str(maxclients)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        ping = subprocess.run(["redis-cli", "--tls", "--cacert", ca, "-p", str(port), "PING"],
                              capture_output=True, text=True)
        if ping.stdout.strip() == "PONG":
            return proc
        time.sleep(0.05)
    proc.kill()
    sys.exit("bench_tls: redis-server with TLS did not start (is it built with TLS?)")


def has_tls(tool):
    """Whether a peer on PATH was built with TLS (its help names --tls)."""
    if not shutil.which(tool):
        return False
    helptext = subprocess.run([tool, "--help"], capture_output=True, text=True)
    return "--tls" in helptext.stdout + helptext.stderr


def get_clients(port, ca, requests, pipeline, core):
    pin = ["taskset", "-c", core]
    out = {f"respbench ({name})": pin + [
        bench.RESPBENCH, "-p", str(port), "--tls", "--cacert", ca, "-c", str(CONNECTIONS), "--threads", "1",
        "-n", str(requests), "-P", str(pipeline), "--ratio", "0:1", "--key-max", str(KEYS - 1), "-d", str(VALUE),
        "-q", "--io", io] for io, name in bench.IO_PATHS}
    out["TLS floor (epoll)"] = pin + [bench.FLOOR, "epoll", str(port), str(CONNECTIONS), str(requests),
                                      str(pipeline), str(VALUE), str(KEYS), "get", f"tls={ca}"]
    for tool in ("redis-benchmark", "valkey-benchmark"):
        if has_tls(tool):
            out[tool] = pin + [tool, "-p", str(port), "--tls", "--cacert", ca, "-c", str(CONNECTIONS),
                               "-n", str(requests), "-P", str(pipeline), "-t", "get", "-r", str(KEYS),
                               "-d", str(VALUE), "-q"]
    if has_tls("memtier_benchmark"):
        out["memtier_benchmark"] = pin + [
            "memtier_benchmark", "-p", str(port), "--tls", "--cacert", ca, "-t", "1", "-c", str(CONNECTIONS),
            "-n", str(requests // CONNECTIONS), "--pipeline", str(pipeline), "--ratio", "0:1",
            "--key-prefix", "key:", "--key-minimum", "1", "--key-maximum", str(KEYS - 1), "-d", str(VALUE),
            "--distinct-client-seed", "--hide-histogram"]
    return out


def handshake_clients(port, ca, requests, core):
    """A reconnect (and so a handshake) every 10 requests on each of 10 connections."""
    pin = ["taskset", "-c", core]
    ours = [bench.RESPBENCH, "-p", str(port), "--tls", "--cacert", ca, "-c", "10", "--threads", "1",
            "-n", str(requests), "--reconnect-every", "10", "--ratio", "0:1", "--key-max", str(KEYS - 1),
            "-d", str(VALUE), "-q", "--io", "epoll"]
    out = {"respbench, resumed": pin + ours, "respbench, full": pin + ours + ["--no-tls-resumption"]}
    for versions, label in (("1.2", "TLS 1.2"), ("1.3", "TLS 1.3")):
        out[f"respbench, full, {label}"] = pin + ours + ["--no-tls-resumption", "--tls-versions", versions]
    if has_tls("memtier_benchmark"):
        out["memtier_benchmark"] = pin + [
            "memtier_benchmark", "-p", str(port), "--tls", "--cacert", ca, "-t", "1", "-c", "10",
            "-n", str(requests // 10), "--reconnect-interval", "10", "--ratio", "0:1", "--key-prefix", "key:",
            "--key-minimum", "1", "--key-maximum", str(KEYS - 1), "-d", str(VALUE), "--hide-histogram"]
    return out


def storm_clients(port, ca, connections, core):
    """`connections` new TLS connections, one GET on each: a handshake per connection. Full
    handshakes for all (`--no-tls-resumption`) beside respbench's default, which resumes a
    session its earlier connections were given, as memtier_benchmark does not."""
    pin = ["taskset", "-c", core]
    ours = [bench.RESPBENCH, "-p", str(port), "--tls", "--cacert", ca, "-c", str(connections), "--threads", "1",
            "-n", str(connections), "--ratio", "0:1", "--key-max", str(KEYS - 1), "-d", str(VALUE), "-q"]
    out = {}
    for io, name in bench.IO_PATHS:
        out[f"respbench ({name}), full"] = pin + ours + ["--io", io, "--no-tls-resumption"]
        out[f"respbench ({name})"] = pin + ours + ["--io", io]
    if has_tls("memtier_benchmark"):
        out["memtier_benchmark"] = pin + [
            "memtier_benchmark", "-p", str(port), "--tls", "--cacert", ca, "-t", "1", "-c", str(connections),
            "-n", "1", "--ratio", "0:1", "--key-prefix", "key:", "--key-minimum", "1", "--key-maximum",
            str(KEYS - 1), "-d", str(VALUE), "--hide-histogram"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=int(os.environ.get("BENCH_RUNS", 3)))
    ap.add_argument("--requests", type=int, default=int(os.environ.get("BENCH_TLS_REQUESTS", 1_000_000)))
    ap.add_argument("--pipelines", default=os.environ.get("BENCH_PIPELINES", "1,16"))
    ap.add_argument("--handshake-requests", type=int, default=int(os.environ.get("BENCH_HANDSHAKES", 50_000)))
    ap.add_argument("--connections", type=int, default=int(os.environ.get("BENCH_STORM", 10000)))
    ap.add_argument("--no-storm", action="store_true")
    args = ap.parse_args()
    for tool in ("redis-server", "redis-cli", "taskset", "openssl"):
        if not shutil.which(tool):
            sys.exit(f"bench_tls: {tool} is not installed")
    bench.IO_PATHS = bench.io_paths()
    server_core, client_core = bench.cores()
    workdir = tempfile.mkdtemp(prefix="respbench-bench-tls-")
    ca, cert, key = certificates(workdir)
    port = bench.free_port()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = start_tls_server(port, server_core, workdir, ca, cert, key, args.connections + 100)
    try:
        prefill(port, VALUE, KEYS, ("--tls", "--cacert", ca))
        for pipeline in (int(p) for p in args.pipelines.split(",")):
            ticks = bench.cpu_ticks()
            rounds = []
            m = medians_of(get_clients(port, ca, args.requests, pipeline, client_core), args.runs, args.requests,
                           rounds)
            print(f"\nGETs over TLS, {VALUE}-byte values, {CONNECTIONS} connections, pipeline {pipeline}, "
                  f"{args.requests} requests, median of {args.runs} runs")
            print(f"{'client':<22}{'ops/s':>12}{'CPU us/req':>12}")
            for name, (ops, cpu, *_rest) in m.items():
                print(f"{name:<22}{ops:>12.0f}{cpu:>12.2f}")
            print(bench.steal_line(ticks))
            peers = {n: v for n, v in m.items() if not n.startswith(("respbench", "TLS floor"))}
            for name in (n for n in m if n.startswith("respbench")):
                parts = [f"{bench.paired(rounds, name, 'TLS floor (epoll)'):.2f}x the TLS floor"]
                if peers:
                    cheapest = min(peers, key=lambda n: peers[n][1])
                    parts.append(f"{bench.paired(rounds, name, cheapest):.2f}x the cheapest peer ({cheapest})")
                print(f"TLS, pipeline {pipeline}, {name}: CPU per request " + "; ".join(parts))
        print("Targets: at most 0.6x the cheapest peer at pipeline 1 and 16, and within 1.15x the TLS floor.")
        ticks = bench.cpu_ticks()
        rounds = []
        m = medians_of(handshake_clients(port, ca, args.handshake_requests, client_core), args.runs,
                       args.handshake_requests, rounds)
        print(f"\nA reconnect every 10 requests over TLS (a handshake each), 10 connections, "
              f"{args.handshake_requests} requests, median of {args.runs} runs")
        print(f"{'client':<28}{'handshakes/s':>14}{'CPU us/req':>12}")
        for name, (ops, cpu, *_rest) in m.items():
            print(f"{name:<28}{ops / 10:>14.0f}{cpu:>12.2f}")
        print(bench.steal_line(ticks))
        if "memtier_benchmark" in m:
            for name in (n for n in m if n.startswith("respbench")):
                ratio = bench.paired(rounds, name, "memtier_benchmark")
                print(f"handshakes, {name}: {ratio:.2f}x memtier_benchmark's CPU "
                      "(target: at most 0.5x)")
        if not args.no_storm:
            storm_table(lambda: storm_clients(port, ca, args.connections, client_core), args.connections, args.runs,
                        hard, " over TLS")
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
