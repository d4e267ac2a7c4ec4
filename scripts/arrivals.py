#!/usr/bin/env python3
"""Paced arrivals as they leave the client: the gaps between a paced run's commands on the
loopback device (a packet socket's kernel stamps, taken in the client's own send), as
tests/open_loop.rs's arrival tests measure them, for any build (the tests run the debug one).

Runs, --runs times each: Poisson at 2,000/s (one connection, pipeline 32, 3 s) and constant at
1,000/s (one connection, pipeline 8, 2 s), respbench pinned to core 1 and redis-server to core
0; prints per run the Kolmogorov-Smirnov distance of the Poisson gaps above half the mean
against the exponential (the test's bound: 0.04), their coefficient of variation, and the share
of constant-rate gaps within 0.2 ms of 1 ms (the test's bound: over 0.9). Needs CAP_NET_RAW.

Usage: scripts/arrivals.py [--binary target/release/respbench] [--runs 5] [--io uring|epoll]
"""

import argparse
import math
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (the server and port helpers)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SO_TIMESTAMPNS = 35
COMMANDS = (b"*2\r\n$3\r\nGET\r\n", b"*3\r\n$3\r\nSET\r\n")


def capture(port, stop, stamps):
    """Appends (kernel time, commands) for each segment sent to `port` on lo until `stop`."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind(("lo", 0))
    s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.settimeout(0.05)
    while not stop.is_set():
        try:
            data, anc, _, addr = s.recvmsg(65536, 64)
        except socket.timeout:
            continue
        if addr[2] != PACKET_OUTGOING or len(data) < 14 + 20 + 20:
            continue
        ip = data[14:]
        ihl = (ip[0] & 15) * 4
        if ip[9] != 6:
            continue
        tcp = ip[ihl:]
        if struct.unpack("!H", tcp[2:4])[0] != port:
            continue
        payload = tcp[(tcp[12] >> 4) * 4:]
        n = sum(payload.count(c) for c in COMMANDS)
        for level, kind, value in anc:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and n:
                sec, nsec = struct.unpack("qq", value[:16])
                stamps.append((sec + nsec * 1e-9, n))
    s.close()


def gaps_of(binary, port, args, io):
    stamps, stop = [], threading.Event()
    t = threading.Thread(target=capture, args=(port, stop, stamps))
    t.start()
    time.sleep(0.2)
    subprocess.run(["taskset", "-c", "1", binary, "-p", str(port), "--io", io, "-q"] + args,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stop.set()
    t.join()
    gaps, last = [], None
    for at, n in stamps:
        if last is not None:
            gaps.append(at - last)
        gaps.extend([0.0] * (n - 1))
        last = at
    return gaps


def poisson_figures(gaps):
    mean = statistics.fmean(gaps)
    kept = [g for g in gaps if g <= 20 * mean]
    mean = statistics.fmean(kept)
    cv = statistics.pstdev(kept) / mean
    threshold = 0.5 * mean
    tail = sorted(g - threshold for g in kept if g > threshold)
    n = len(tail)
    d = max(max(abs(1 - math.exp(-g / mean) - i / n), abs(1 - math.exp(-g / mean) - (i + 1) / n))
            for i, g in enumerate(tail))
    return d, cv, len(gaps) - len(kept)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--binary", default=os.path.join(ROOT, "target", "release", "respbench"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--io", default="uring")
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="respbench-arrivals-")
    port = bench.free_port()
    server = bench.start_server(port, "0", workdir, [])
    try:
        print(f"{args.binary} --io {args.io}")
        print(f"{'run':>4}{'poisson KS':>12}{'CV':>7}{'stalls':>8}{'constant within 0.2 ms':>24}")
        for run in range(args.runs):
            p = gaps_of(args.binary, port, ["--rate", "2000", "--arrival", "poisson", "--duration", "3s", "-c", "1",
                                            "-P", "32"], args.io)
            d, cv, stalls = poisson_figures(p)
            c = gaps_of(args.binary, port, ["--rate", "1000", "--duration", "2s", "-c", "1", "-P", "8"], args.io)
            close = sum(1 for g in c if abs(g - 0.001) < 0.0002) / len(c)
            print(f"{run + 1:>4}{d:>12.3f}{cv:>7.2f}{stalls:>8}{100 * close:>23.1f}%", flush=True)
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
