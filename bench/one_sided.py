#!/usr/bin/env python3
"""Runs bench/mpi/one_sided_rate.cpp for every --one-sided backend at 1 x 2
and 2 x 1 (processes x cores), REPS rounds with the configurations
interleaved (so a slow spell of the machine hits all of them alike), and
writes the medians to bench/results/one_sided.txt (and prints them).

    python3 bench/one_sided.py --build build [--reps 5]
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import time

# (backend, processes, cores per process, operations per measurement): the
# slow paths get fewer operations so one round stays within a minute.
CONFIGS = [
    ("direct", 1, 2, 200000),
    ("shm", 1, 2, 200000),
    ("rma", 1, 2, 5000),
    ("am", 1, 2, 5000),
    ("shm", 2, 1, 200000),
    ("rma", 2, 1, 2000),
    ("am", 2, 1, 5000),
    # MPI driven by a thread of its own: rma progresses while the target
    # core computes (R_busy), am still waits for the core to run the handler.
    ("rma", 2, 1, 2000, "--progress-thread"),
    ("am", 2, 1, 5000, "--progress-thread"),
]
LINE = re.compile(r"one_sided backend=(\S+) shape=(\S+) op=(\S+) latency_ns=(\d+) ops_per_s=(\d+)")


def run_one(exe, backend, np, cores, ops, *extra):
    cmd = [exe, "--cores", str(cores), "--one-sided", backend, "--ops", str(ops), *extra]
    if backend == "rma":
        cmd += ["--stack-kb", "256"]  # what MPICH needs (one_sided.cpp); same for OpenMPI
    if backend in ("shm", "rma") or np > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + cmd + ["--transport", "mpi"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"one_sided.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return [m.groups() for m in LINE.finditer(out.stdout)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="bench/results/one_sided.txt")
    args = ap.parse_args()
    exe = os.path.join(args.build, "bin", "one-sided-rate")
    if not os.access(exe, os.X_OK):
        sys.exit(f"one_sided.py: {exe} not built (cmake --build {args.build} --target one-sided-rate)")
    lat = collections.defaultdict(list)
    rate = collections.defaultdict(list)
    order = []
    for rep in range(args.reps):
        for backend, np, cores, ops, *extra in CONFIGS:
            for b, shape, op, ns, per_s in run_one(exe, backend, np, cores, ops, *extra):
                if extra:
                    b += "+pt"  # with --progress-thread
                key = (shape, b, op)
                if key not in lat:
                    order.append(key)
                lat[key].append(int(ns))
                rate[key].append(int(per_s))
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if "Model name" in l), "?")
    lines = [
        "# One-sided operations per backend (bench/one_sided.py; bench/mpi/one_sided_rate.cpp)",
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {model}; "
        f"{os.cpu_count()} hardware threads; medians of {args.reps} interleaved rounds",
        "# latency_ns: one task, blocking ops back to back; ops_per_s: 64 tasks on core 0",
        "# W = rput then rflush (remote completion); W_local = rput alone; delegate = delegate::call",
        "# Qpush/Qpop = bcl::fast_queue, Cpush/Cpop = circular_queue, Kpush/Kpop = checksum_queue "
        "(the path auto picks; bench/bcl_costs.py forces each)",
        "# R_busy/FAO_busy = one op while the target core spins 100 ms",
        "# backend+pt = with --progress-thread",
        f"{'shape':<6} {'backend':<7} {'op':<9} {'latency_ns':>11} {'ops_per_s':>12}  (min..max latency)",
    ]
    for key in order:
        shape, b, op = key
        lines.append(
            f"{shape:<6} {b:<7} {op:<9} {statistics.median(lat[key]):>11.0f} "
            f"{statistics.median(rate[key]):>12.0f}  ({min(lat[key])}..{max(lat[key])})")
    # BCL table 5.1 for fast_queue from the measured primitives: push = A + W
    # (here CAS + W_local: shoal's queue reserves by compare_and_swap, and
    # the put is remotely completed by the phase's rflush), pop = A + R.
    lines.append("# fast_queue: predicted (push = CAS + W_local, pop = CAS + R, one task, from the rows")
    lines.append("# above) vs measured latency_ns")
    lines.append(f"{'shape':<6} {'backend':<7} {'op':<9} {'predicted':>11} {'measured':>12}")
    for shape, b in dict.fromkeys((k[0], k[1]) for k in order):
        if b.endswith("+pt"):
            continue
        med = {op: statistics.median(lat[(shape, b, op)]) for (sh, bb, op) in order
               if sh == shape and bb == b}
        if "Qpush" not in med:
            continue
        lines.append(f"{shape:<6} {b:<7} {'push':<9} {med['CAS'] + med['W_local']:>11.0f} "
                     f"{med['Qpush']:>12.0f}")
        lines.append(f"{shape:<6} {b:<7} {'pop':<9} {med['CAS'] + med['R']:>11.0f} "
                     f"{med['Qpop']:>12.0f}")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
