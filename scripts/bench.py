#!/usr/bin/env python3
"""Side-by-side benchmark: respbench against redis-benchmark (and memtier_benchmark and
valkey-benchmark when on PATH), on one redis-server, server pinned to one core and every
client to another. Prints throughput and client CPU per request (user + sys from the OS,
measured with getrusage on the child), medians of several runs, and the ratios to respbench.

Then the same GETs against a cluster of 3 primaries (redis-server --cluster-enabled, all three
pinned to the server's core), each client in its cluster mode: respbench --cluster,
memtier_benchmark --cluster-mode, valkey-benchmark --cluster; each round of that table also
runs respbench and the peers against the standalone server, so a client's cluster cost is
divided by its standalone cost met on the same machine in the same round.

Usage: scripts/bench.py [--requests N] [--runs N] [--pipelines 1,16] [--cluster-requests N]
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


def cpu_ticks():
    """(steal, all) of this machine's CPU time so far, in ticks (/proc/stat); None where unknown."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    return fields[7], sum(fields)


def steal_line(since):
    """A line saying how much of this VM's CPU time its host took (steal) since `since`
    (`cpu_ticks()`): above a few percent, a table's figures move by more than the clients
    differ, and compare only within it. Empty where the kernel does not count steal."""
    now = cpu_ticks()
    if since is None or now is None or now[1] <= since[1]:
        return ""
    share = 100 * (now[0] - since[0]) / (now[1] - since[1])
    return f"host steal while this ran: {share:.1f} % of the VM's CPU time (/proc/stat)"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_ports(nodes):
    """Free ports for a cluster's nodes, each with its bus port (10000 above it) valid and free,
    none another's bus port: an ephemeral port above 55535 has no bus port, and its node
    would not start."""
    ports = []
    while len(ports) < nodes:
        port = free_port()
        taken = {q for p in ports for q in (p, p + 10000)}
        if port + 10000 > 65535 or port in taken or port + 10000 in taken:
            continue
        try:
            with socket.socket() as s:
                s.bind(("127.0.0.1", port + 10000))
        except OSError:
            continue
        ports.append(port)
    return ports


def cores():
    n = os.cpu_count() or 1
    return ("0", "1") if n >= 2 else ("0", "0")


def start_server(port, core, workdir, extra=()):
    proc = subprocess.Popen(
        ["taskset", "-c", core, "redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
         "--dir", workdir, "--logfile", os.path.join(workdir, "redis.log"), *extra],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):  # a loaded machine may take seconds
        if proc.poll() is not None:
            break
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


def start_cluster(core, workdir, nodes=3):
    """A cluster of `nodes` primaries, no replicas, every slot assigned; returns (procs, ports)."""
    ports = cluster_ports(nodes)
    procs = []
    for port in ports:
        node_dir = os.path.join(workdir, f"node-{port}")
        os.makedirs(node_dir)
        try:
            procs.append(start_server(port, core, node_dir, ["--cluster-enabled", "yes", "--cluster-config-file",
                                                             "nodes.conf"]))
        except SystemExit:
            for proc in procs:  # the nodes started already go too
                proc.kill()
            raise
    subprocess.run(["redis-cli", "--cluster", "create", *[f"127.0.0.1:{p}" for p in ports],
                    "--cluster-replicas", "0", "--cluster-yes"], check=True, stdout=subprocess.DEVNULL,
                   stdin=subprocess.DEVNULL)
    for _ in range(200):
        infos = [subprocess.run(["redis-cli", "-p", str(p), "CLUSTER", "INFO"], capture_output=True,
                                text=True).stdout for p in ports]
        if all("cluster_state:ok" in i for i in infos):
            return procs, ports
        time.sleep(0.1)
    for proc in procs:
        proc.kill()
    sys.exit("bench: the cluster did not settle")


# The word respbench takes for each peer's command line.
SHORT = {"memtier_benchmark": "memtier", "valkey-benchmark": "valkey-benchmark"}


def cluster_clients(port, requests, pipeline, core):
    """Each client in its cluster mode, the same GETs: respbench and memtier_benchmark keep a
    connection per primary for each of the 50 clients, each with its whole pipeline;
    valkey-benchmark binds each of its 50 clients to one primary. Each peer's command line is
    also run by respbench under that peer's name (`respbench memtier ...`), the same work
    as the peer's to the key."""
    pin = ["taskset", "-c", core]
    ours = [RESPBENCH, "-p", str(port), "--cluster", "-c", str(CONNECTIONS), "--threads", "1", "-n", str(requests),
            "-P", str(pipeline), "--ratio", "0:1", "--key-max", str(KEYS - 1), "-d", str(VALUE), "-q"]
    out = {f"respbench ({name})": pin + ours + ["--io", io] for io, name in IO_PATHS}
    peers = {
        "memtier_benchmark": [
            "-p", str(port), "--cluster-mode", "-t", "1", "-c", str(CONNECTIONS),
            "-n", str(requests // CONNECTIONS), "--pipeline", str(pipeline), "--ratio", "0:1",
            "--key-prefix", "key:", "--key-minimum", "1", "--key-maximum", str(KEYS - 1), "-d", str(VALUE),
            "--distinct-client-seed", "--hide-histogram"],
        # Its cluster keys carry a slot tag drawn per request (key:{tag}:N), which no prefill
        # can cover: its GETs miss.
        "valkey-benchmark": [
            "-p", str(port), "--cluster", "-c", str(CONNECTIONS), "-n", str(requests),
            "-P", str(pipeline), "-t", "get", "-r", str(KEYS), "-d", str(VALUE), "-q"],
    }
    for peer, args in peers.items():
        if shutil.which(peer):
            out[peer] = pin + [peer] + args
            out[f"respbench as {SHORT[peer]}"] = pin + [RESPBENCH, SHORT[peer]] + args
    return out


def run_table(title, make_clients, args, pipelines):
    """Runs every client `args.runs` times per pipeline (alternating their order, so no tool
    always runs on a warmer server); returns ({pipeline: {client: (ops/s, CPU us/request)}} of
    medians, {pipeline: [each run's {client: CPU us/request}]}), each pipeline printed as a
    table headed `{title}, pipeline N` (`pipeline N` without a title)."""
    tables, rounds = {}, {}
    for pipeline in pipelines:
        results = {}
        rounds[pipeline] = []
        requests = make_clients.requests
        ticks = cpu_ticks()
        for run in range(args.runs):
            tools = list(make_clients(pipeline).items())
            if run % 2:
                tools.reverse()
            for name, argv in tools:
                wall, user, sys_ = measure(argv)
                results.setdefault(name, []).append((requests / wall, (user + sys_) / requests * 1e6,
                                                     user / requests * 1e6, sys_ / requests * 1e6))
            rounds[pipeline].append({name: rows[-1][1] for name, rows in results.items()})
        print(f"\n{title + ', ' if title else ''}pipeline {pipeline}")
        print(f"{'client':<30}{'ops/s':>12}{'CPU us/req':>12}{'user':>8}{'sys':>8}")
        medians = {}
        for name, rows in results.items():
            ops, cpu, user, sys_ = (statistics.median(r[i] for r in rows) for i in range(4))
            medians[name] = (ops, cpu)
            print(f"{name:<30}{ops:>12.0f}{cpu:>12.2f}{user:>8.2f}{sys_:>8.2f}")
        print(steal_line(ticks))
        tables[pipeline] = medians
    return tables, rounds


def paired(rounds, name, other):
    """The median over runs of `name`'s CPU per request over `other`'s in the same run. The
    machine's pace drifts between runs by more than the clients differ (BENCHMARKS.md), so a
    ratio is taken within each run, where both met the same machine, and its median printed."""
    return statistics.median(r[name] / r[other] for r in rounds)


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
    ap.add_argument("--cluster-requests", type=int, default=int(os.environ.get("BENCH_CLUSTER_REQUESTS", 1_000_000)),
                    help="requests of each cluster run (0: no cluster rows)")
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
        def make(pipeline):
            return clients(port, args.requests, pipeline, client_core)
        make.requests = args.requests
        pipelines = [int(p) for p in args.pipelines.split(",")]
        # Each pipeline's table is printed with its ratios below it.
        for pipeline in pipelines:
            tables, rounds = run_table(None, make, args, [pipeline])
            medians, rounds = tables[pipeline], rounds[pipeline]
            peers = {n: m for n, m in medians.items() if not n.startswith(("respbench", "floor"))}
            cheapest = min(peers, key=lambda n: peers[n][1])
            for name in (n for n in medians if n.startswith("respbench")):
                ops = medians[name][0]
                vs = "  ".join(f"{paired(rounds, name, p):.2f}x {p}" for p in peers)
                kind = name.replace("respbench", "floor")
                floors = "  ".join(f"{paired(rounds, name, f):.2f}x {f}"
                                   for f in dict.fromkeys((kind, "floor (epoll)")) if f in medians)
                print(f"{name}: CPU per request {floors}; {paired(rounds, name, cheapest):.2f}x the cheapest peer "
                      f"({cheapest}); against each: {vs}; throughput {ops / peers[cheapest][0]:.2f}x {cheapest}'s")
        print("\nCPU per request is the client process's user + system time (getrusage) over the requests; "
              "below 1x respbench is cheaper; each ratio is the median of the ratios within each run. The "
              "floor rows are examples/floor.rs: per request only the system calls a closed-loop client of that "
              "I/O path cannot avoid (no latency, no parsing, no key choice); the target is at most 0.9x the "
              "epoll floor at pipeline 1 and at most the floor at 16.")
        if args.cluster_requests > 0:
            cluster_rows(args, server_core, client_core, port)
    finally:
        server.terminate()
        server.wait()
        shutil.rmtree(workdir, ignore_errors=True)


# The prefix of a cluster table's row that runs a client against the standalone server.
ALONE = "standalone: "


def cluster_rows(args, server_core, client_core, standalone_port):
    """The cluster table: each client's CPU per request against the cheapest peer's, and each
    client's against its own standalone cost, run in the same rounds against the standalone
    server on `standalone_port` (still up, on the same core as the cluster)."""
    workdir = tempfile.mkdtemp(prefix="respbench-bench-cluster-")
    procs, ports = start_cluster(server_core, workdir)
    try:
        subprocess.run([RESPBENCH, "-p", str(ports[0]), "--cluster", "-n", "allkeys", "--key-min", "0", "--key-max",
                        str(KEYS - 1), "-d", str(VALUE), "-q"], check=True, stdout=subprocess.DEVNULL)

        def make(pipeline):
            ours = cluster_clients(ports[0], args.cluster_requests, pipeline, client_core)
            alone = clients(standalone_port, args.cluster_requests, pipeline, client_core)
            return {**ours, **{ALONE + name: argv for name, argv in alone.items() if name in ours}}
        make.requests = args.cluster_requests
        pipelines = [int(p) for p in args.pipelines.split(",")]
        print(f"\nThe same GETs over a cluster of {len(ports)} primaries on core {server_core} (keys prefilled "
              f"through respbench --cluster), {args.cluster_requests} requests, median of {args.runs} runs")
        tables, rounds = run_table(f"cluster of {len(ports)} primaries", make, args, pipelines)
        for pipeline, medians in tables.items():
            peers = {n: m for n, m in medians.items() if not n.startswith(("respbench", ALONE))}
            for name in (n for n in medians if n.startswith("respbench (")):
                parts = []
                if peers:
                    cheapest = min(peers, key=lambda n: peers[n][1])
                    parts.append(f"{paired(rounds[pipeline], name, cheapest):.2f}x the cheapest peer ({cheapest})")
                parts.append(f"{paired(rounds[pipeline], name, ALONE + name):.2f}x its own standalone cost "
                             f"({medians[ALONE + name][1]:.2f} us)")
                print(f"cluster, pipeline {pipeline}, {name}: CPU per request " + "; ".join(parts))
            for peer in peers:
                print(f"cluster, pipeline {pipeline}, {peer}: CPU per request "
                      f"{paired(rounds[pipeline], peer, ALONE + peer):.2f}x its own standalone cost "
                      f"({medians[ALONE + peer][1]:.2f} us)")
                same_name = f"respbench as {SHORT[peer]}"
                if same_name in medians:
                    print(f"cluster, pipeline {pipeline}, respbench as {SHORT[peer]}: CPU per request "
                          f"{paired(rounds[pipeline], same_name, peer):.2f}x {peer}'s on its own command line")
        print("Targets: at most 0.6x the cheapest peer at pipeline 1 and 0.7x at 16, and at most 1.3x respbench's "
              "own standalone cost at 16 (the standalone rows: the same client, requests and rounds against the "
              "standalone server). valkey-benchmark's cluster keys carry a slot tag drawn per request, so its "
              "GETs miss.")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
