#!/usr/bin/env python3
"""Runs the UPC queues microbenchmark (bench/mpi/queue_rate.cpp: every core
enqueues to core 0, which enqueues each item back) for its three designs
(shoal::queue, a lock-protected buffer, a notification array) at 2, 4 and 8
cores, REPS rounds with the shapes interleaved (a slow spell of the machine
hits all of them alike; the three designs share each run), and writes the
medians to bench/results/upc_queues.md (and prints them).

    python3 bench/queues.py --build build [--reps 3] [--items 1000]
"""
import argparse
import collections
import os
import re
import statistics
import sys
import time

from bench_run import cpu_model, run_program

# (processes, cores per process): 2, 4 and 8 cores; above 2 processes of one
# core, or 1 of two, the processes time-share this machine's CPUs.
SHAPES = [(1, 2), (2, 1), (2, 2), (4, 1), (4, 2), (8, 1)]
DESIGNS = ["queue", "lock", "notify"]
LINE = re.compile(
    r"upc_queues shape=(\S+) cores=(\d+) design=(\S+) items=(\d+) bytes=(\d+) "
    r"us_per_op=([\d.]+) ops_per_s=(\d+)")


def run_one(exe, np, cores, items, timeout, backend):
    cmd = [exe, "--cores", str(cores), "--items", str(items), "--block-bytes", "4096"]
    if np > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + cmd + ["--one-sided", backend]
        if backend in ("shm", "rma"):
            cmd += ["--transport", "mpi"]
    out = run_program(cmd, "queues.py", timeout)
    return None if out is None else [m.groups() for m in LINE.finditer(out)]

    for line in out.splitlines():
        if line.startswith("Model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--items", type=int, default=1000, help="round trips per sending core")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run")
    ap.add_argument("--one-sided", default="shm", choices=["shm", "am", "rma"],
                    help="backend of the baselines' one-sided operations across processes")
    ap.add_argument("--out", default="bench/results/upc_queues.md")
    args = ap.parse_args()
    exe = os.path.join(args.build, "bin", "queue-rate")
    if not os.access(exe, os.X_OK):
        sys.exit(f"queues.py: {exe} not built (cmake --build {args.build} --target queue-rate)")
    us = collections.defaultdict(list)
    rate = collections.defaultdict(list)
    missing = collections.Counter()
    started = time.time()
    for rep in range(args.reps):
        for np, cores in SHAPES:
            rows = run_one(exe, np, cores, args.items, args.timeout, args.one_sided)
            if rows is None:
                missing[(np, cores)] += 1
                continue
            for shape, _, design, _, _, u, r in rows:
                us[(np, cores, design)].append(float(u))
                rate[(np, cores, design)].append(float(r))
            print(f"rep {rep + 1}/{args.reps} {np}x{cores} done", file=sys.stderr)
    load = os.getloadavg()
    lines = [
        "# UPC queues microbenchmark (issue 13)",
        "",
        f"Produced by `python3 bench/queues.py --build {args.build} --reps {args.reps} "
        f"--items {args.items} --one-sided {args.one_sided}` (Release build, {time.strftime('%Y-%m-%d', time.gmtime())}, "
        f"{time.time() - started:.0f} s), `lscpu | grep 'Model name'` = {cpu_model()}, "
        f"{os.cpu_count()} CPUs; load average at the end {load[0]:.1f}.",
        "",
        "The paper's pattern (Jose et al., PGAS 2011, section 7.2): every core but 0 "
        f"enqueues a 128-byte item to core 0, which enqueues it back to its sender; each "
        f"sender does {args.items} round trips, one at a time. `us/op`: the run's wall "
        "time / round trips per sender (one enqueue-dequeue round trip as a sender sees "
        "it); `round trips/s`: all senders' round trips through core 0 per second. "
        "Medians of the runs (each run measures the three designs one after the other; "
        "shapes interleaved, rep by rep); the samples follow.",
        "",
        "Designs: `queue` = shoal::queue (containers/queue.hpp), coalescing off; `lock` = "
        "a lock-protected buffer per core (compare_and_swap lock, count, slots, by "
        "one-sided operations); `notify` = one slot and one flag per sender per core "
        "(put, rflush, fetch_add on the flag; the receiver polls its flags), on regions "
        "in the global heap. One-sided operations: direct loads, stores and atomics in "
        f"one process; across processes `--one-sided {args.one_sided}` (shm: node-shared "
        "memory, what UPC threads on one node share; am: each operation a delegate).",
        "",
        "| cores | processes x cores | design | us/op (median) | round trips/s (median) | us/op samples |",
        "|---|---|---|---|---|---|",
    ]
    for np, cores in sorted(SHAPES, key=lambda s: (s[0] * s[1], s[0])):
        for design in DESIGNS:
            key = (np, cores, design)
            if not us[key]:
                lines.append(f"| {np * cores} | {np} x {cores} | {design} | - | - | no run finished |")
                continue
            samples = ", ".join(f"{x:.1f}" for x in us[key])
            lines.append(
                f"| {np * cores} | {np} x {cores} | {design} | {statistics.median(us[key]):.1f} | "
                f"{statistics.median(rate[key]):.0f} | {samples} |")
    if missing:
        lines.append("")
        for (np, cores), n in sorted(missing.items()):
            lines.append(f"- {np} x {cores}: {n} of {args.reps} runs did not finish within "
                         f"{args.timeout} s.")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
