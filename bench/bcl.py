#!/usr/bin/env python3
"""Runs bench/mpi/bcl_rate.cpp (BCL's hash table: atomic vs buffered
inserts, atomic vs find_only finds) per --one-sided backend at 1 x 2 and
2 x 1 (processes x cores), at several sizes, REPS rounds with the
configurations interleaved (a slow spell of the machine hits them all
alike), and writes the medians to bench/results/bcl.md (and prints them).

    python3 bench/bcl.py --build build [--reps 3]
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import time

# (backend, processes, cores per process, keys per core at each size): the
# slow paths (am inside one process waits on a sleeping core) get fewer keys.
CONFIGS = [
    ("direct", 1, 2, "4096,16384,65536"),
    ("am", 1, 2, "256,512,1024"),
    ("shm", 2, 1, "4096,16384,65536"),
    ("rma", 2, 1, "1024,4096,8192"),
    ("am", 2, 1, "1024,4096,8192"),
]
OPS = ["insert_atomic", "insert_buffer", "find_atomic", "find_only"]
LINE = re.compile(r"bcl backend=(\S+) shape=(\S+) op=(\S+) keys=(\d+) seconds=\S+ ops_per_s=(\d+)")


def run_one(exe, backend, np, cores, keys):
    cmd = [exe, "--cores", str(cores), "--one-sided", backend, "--keys", keys]
    if backend == "rma":
        cmd += ["--stack-kb", "256"]  # what MPICH needs (one_sided.cpp); same for OpenMPI
    if backend in ("shm", "rma") or np > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + cmd + ["--transport", "mpi"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"bcl.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return [m.groups() for m in LINE.finditer(out.stdout)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="bench/results/bcl.md")
    args = ap.parse_args()
    exe = os.path.join(args.build, "bin", "bcl-rate")
    if not os.access(exe, os.X_OK):
        sys.exit(f"bcl.py: {exe} not built (cmake --build {args.build} --target bcl-rate)")
    rate = collections.defaultdict(list)  # (shape, backend, keys, op) -> ops/s per round
    rows = []  # (shape, backend, keys) in first-seen order
    for _ in range(args.reps):
        for backend, np, cores, keys in CONFIGS:
            for b, shape, op, k, per_s in run_one(exe, backend, np, cores, keys):
                if (shape, b, int(k)) not in rows:
                    rows.append((shape, b, int(k)))
                rate[(shape, b, int(k), op)].append(int(per_s))
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if "Model name" in l), "?")

    def med(row, op):
        return statistics.median(rate[row + (op,)])

    def ratios(row, top, bottom):
        # Per-round ratios (the rounds are interleaved, so each pair shares a spell).
        r = [a / b for a, b in zip(rate[row + (top,)], rate[row + (bottom,)]) if b > 0]
        return statistics.median(r), min(r), max(r)

    lines = [
        "# BCL hash table: buffered vs atomic inserts, find_only vs atomic finds",
        "",
        f"Written by `bench/bcl.py` (`make bench-bcl`; program `bench/mpi/bcl_rate.cpp`) on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. CPU: {model}; "
        f"{os.cpu_count()} hardware threads. Medians of {args.reps} interleaved rounds.",
        "",
        "Every core inserts `keys` distinct keys of its own at once (then finds the next "
        "core's): ops/s are all cores' operations over the wall time between two barriers. "
        "insert_buffer goes through `hash_map_buffer` (message 256) into a fresh table, its "
        "flush included. Ratios are medians of the per-round ratios (min..max). "
        "BCL's targets: buffer/atomic at least 10x, find_only/atomic 2-3x (thesis 6.3, 8).",
        "",
        f"Load average when the rounds ended: {os.getloadavg()[0]:.1f} (1 min), on "
        f"{os.cpu_count()} hardware threads; a shared machine makes single rounds noisy.",
        "",
        "| shape | backend | keys/core | insert atomic | insert buffer | buffer/atomic "
        "| find atomic | find_only | find_only/atomic |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        shape, b, k = row
        bi, bl, bh = ratios(row, "insert_buffer", "insert_atomic")
        fi, fl, fh = ratios(row, "find_only", "find_atomic")
        lines.append(
            f"| {shape} | {b} | {k} | {med(row, 'insert_atomic'):.3g} | "
            f"{med(row, 'insert_buffer'):.3g} | {bi:.1f}x ({bl:.1f}..{bh:.1f}) | "
            f"{med(row, 'find_atomic'):.3g} | {med(row, 'find_only'):.3g} | "
            f"{fi:.1f}x ({fl:.1f}..{fh:.1f}) |")
    text = "\n".join(lines) + "\n"
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
