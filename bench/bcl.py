#!/usr/bin/env python3
"""Runs bench/mpi/bcl_rate.cpp (BCL's hash table: atomic vs buffered
inserts, atomic vs find_only finds) per --one-sided backend at 1 x 2 and
2 x 1 (processes x cores), at several sizes, REPS rounds with the
configurations interleaved (a slow spell of the machine hits them all
alike), and writes the medians to bench/results/bcl.md (and prints them).

Each configuration runs twice per round, back to back: with the tables'
automatic path choice (bcl/path.hpp: under am and rma the atomic find is
one delegate round trip) and with SHOAL_BCL_PATH=onesided (the atomic
find is BCL's 2A + R, the comparison the thesis makes). The file's
sections from its first "## " heading on (earlier results) are kept below
the new table.

Each phase also says whether two cores of the job ended it on one CPU
(bcl-rate's cpus=shared): the OS then ran them in turns, and the phase
measured that, not the table. The table counts such phases per row; with
--c2c (a build of tools/c2c_probe.cpp) it also gives the placement of the
two vCPUs before and after the rounds.

    python3 bench/bcl.py --build build [--reps 3] [--c2c /path/to/c2c_probe]
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
LINE = re.compile(
    r"bcl backend=(\S+) shape=(\S+) op=(\S+) keys=(\d+) seconds=\S+ ops_per_s=(\d+) path=(\S+)"
    r"(?: cpus=(\S+))?")  # cpus: absent from a bcl-rate built before it (counted apart)


def run_one(exe, backend, np, cores, keys, forced):
    cmd = [exe, "--cores", str(cores), "--one-sided", backend, "--keys", keys]
    if backend == "rma":
        cmd += ["--stack-kb", "256"]  # what MPICH needs (one_sided.cpp); same for OpenMPI
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("SHOAL_BCL_PATH", None)
    if forced:
        env["SHOAL_BCL_PATH"] = "onesided"
    if backend in ("shm", "rma") or np > 1:
        launcher = ["mpirun", "--oversubscribe", "-np", str(np)]
        if forced:
            launcher += ["-x", "SHOAL_BCL_PATH"]
        cmd = launcher + cmd + ["--transport", "mpi"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        sys.exit(f"bcl.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return [m.groups() for m in LINE.finditer(out.stdout)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="bench/results/bcl.md")
    ap.add_argument("--c2c", help="a c2c_probe binary, run before and after the rounds")
    args = ap.parse_args()
    exe = os.path.join(args.build, "bin", "bcl-rate")
    if not os.access(exe, os.X_OK):
        sys.exit(f"bcl.py: {exe} not built (cmake --build {args.build} --target bcl-rate)")
    rate = collections.defaultdict(list)  # (shape, backend, keys, op) -> ops/s per round
    paths = {}  # (shape, backend, keys, op) -> the path the automatic choice took
    rows = []  # (shape, backend, keys) in first-seen order
    shared = collections.Counter()  # (shape, backend, keys) -> phases two cores ran on one CPU
    phases = collections.Counter()  # (shape, backend, keys) -> phases run

    def probe():
        if not args.c2c:
            return None
        out = subprocess.run([args.c2c], capture_output=True, text=True)
        return out.stdout.strip() or f"failed ({out.returncode})"

    placement = [probe()]
    for rep in range(args.reps):
        for backend, np, cores, keys in CONFIGS:
            # Auto and forced back to back, their order alternating per round.
            for forced in ((False, True) if rep % 2 == 0 else (True, False)):
                for b, shape, op, k, per_s, path, cpus in run_one(exe, backend, np, cores, keys,
                                                                  forced):
                    if (shape, b, int(k)) not in rows:
                        rows.append((shape, b, int(k)))
                    phases[(shape, b, int(k))] += 1
                    shared[(shape, b, int(k))] += cpus == "shared"
                    if forced:
                        op += "_onesided"
                    else:
                        paths[(shape, b, int(k), op)] = path
                    rate[(shape, b, int(k), op)].append(int(per_s))
    placement.append(probe())
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
        "BCL's targets: buffer/atomic at least 10x, find_only/atomic 2-3x (thesis 6.3, 8). "
        "Atomic operations under the automatic path choice (auto; `d` marks a row where it "
        "took the delegate path, one round trip per call) and forced one-sided "
        "(SHOAL_BCL_PATH=onesided, the next run: BCL's 2A + W + F insert and 2A + R find); "
        "find_only is the automatic run's. Both find phases follow an untimed find_only pass.",
        "",
        f"Load average when the rounds ended: {os.getloadavg()[0]:.1f} (1 min), on "
        f"{os.cpu_count()} hardware threads; a shared machine makes single rounds noisy."
        + (f" c2c probe before and after the rounds: {placement[0]}, {placement[1]}."
           if args.c2c else ""),
        "",
        "one CPU: of the row's timed phases (4 per run, both runs of every round), those in "
        "which two cores ended on the same CPU (the OS ran them in turns: at 1 x 2 each "
        "barrier then waits out a 50 us spin; read such rows as the OS's placement).",
        "",
        "| shape | backend | keys/core | insert atomic auto | insert atomic one-sided "
        "| insert buffer | buffer/atomic auto | buffer/atomic one-sided | find atomic auto "
        "| find atomic one-sided | find_only | find_only/atomic auto "
        "| find_only/atomic one-sided | one CPU |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]

    def cell(row, op):
        mark = " d" if paths.get(row + (op,)) == "delegate" else ""
        return f"{med(row, op):.3g}{mark}"

    def ratio_cell(row, top, bottom):
        r, lo, hi = ratios(row, top, bottom)
        return f"{r:.1f}x ({lo:.1f}..{hi:.1f})"

    for row in rows:
        shape, b, k = row
        lines.append(
            f"| {shape} | {b} | {k} | {cell(row, 'insert_atomic')} | "
            f"{cell(row, 'insert_atomic_onesided')} | {cell(row, 'insert_buffer')} | "
            f"{ratio_cell(row, 'insert_buffer', 'insert_atomic')} | "
            f"{ratio_cell(row, 'insert_buffer', 'insert_atomic_onesided')} | "
            f"{cell(row, 'find_atomic')} | {cell(row, 'find_atomic_onesided')} | "
            f"{cell(row, 'find_only')} | {ratio_cell(row, 'find_only', 'find_atomic')} | "
            f"{ratio_cell(row, 'find_only', 'find_atomic_onesided')} | "
            f"{shared[row]}/{phases[row]} |")
    text = "\n".join(lines) + "\n"
    if os.path.exists(args.out):
        with open(args.out) as f:
            old = f.read()
        kept = old.find("\n## ")
        if kept >= 0:
            text += "\nEarlier sections, kept (bench/bcl.py rewrites the table above):\n" + old[kept:]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
