#!/usr/bin/env python3
"""BCL's cost model on this machine (thesis table 5.1 style; issue 12,
items 5 and 6): measures the one-sided operations (R, W, CAS, FAO, rflush)
and a delegate round trip (D) per --one-sided backend with
bench/mpi/one_sided_rate.cpp, predicts each container method's cost from
its header's cost table, and sets that against the method measured with
bench/mpi/bcl_rate.cpp (hash_map) and one_sided_rate (fast_queue,
circular_queue, checksum_queue), on both paths of bcl/path.hpp
(SHOAL_BCL_PATH=onesided and =delegate). REPS rounds,
the configurations interleaved; medians. Writes bench/results/bcl_costs.md
and the calibration file that SHOAL_BCL_CALIBRATION reads
(bench/results/bcl_calibration.txt), and prints the table.

    python3 bench/bcl_costs.py --build build [--reps 3]

Measured method costs: one_sided_rate's Qpush/Qpop are one task's blocking
operations back to back (latency); bcl_rate's are every core's operations
at once, so a method's cost there is cores / (ops per second): the time one
core spends per operation with the others running theirs (contention and,
on a loaded machine, time slices included).
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys
import time

# (backend, processes, cores, ops for one_sided_rate, keys per core for bcl_rate)
CONFIGS = [
    ("direct", 1, 2, 20000, 16384),
    ("am", 1, 2, 2000, 512),
    ("shm", 2, 1, 20000, 16384),
    ("rma", 2, 1, 2000, 2048),
    ("am", 2, 1, 2000, 1024),
]
OS_LINE = re.compile(r"one_sided backend=(\S+) shape=(\S+) op=(\S+) latency_ns=(\d+)")
BCL_LINE = re.compile(r"bcl backend=(\S+) shape=(\S+) op=(\S+) keys=\d+ seconds=\S+ ops_per_s=(\d+)")

# Method -> (prediction on the one-sided path as a function of the costs,
# its formula as the header's cost table writes it). The delegate path of
# every hash_map method is one round trip, D.
METHODS = [
    ("hash_map insert (new key)", lambda c: c["CAS"] + c["W"] + c["F"] + c["FAO"], "2A + W + F"),
    ("hash_map find (atomic)", lambda c: 2 * c["FAO"] + c["R"], "2A + R"),
    ("hash_map find (find_only)", lambda c: c["R"], "R"),
    ("fast_queue push(v)", lambda c: c["CAS"] + c["W"], "A + W"),
    ("fast_queue pop(v)", lambda c: c["CAS"] + c["R"], "A + R"),
    ("circular_queue push(v)", lambda c: 2 * c["CAS"] + c["W"] + c["F"], "2A + W + F"),
    ("circular_queue pop(v)", lambda c: 2 * c["CAS"] + c["R"], "2A + R"),
    ("checksum_queue push(v)", lambda c: c["CAS"] + c["R"] + c["W"] + c["F"], "A + R + W + F"),
    ("checksum_queue pop(v)", lambda c: c["CAS"] + c["R"] + c["W"] + c["F"], "A + R + W + F"),
]
BCL_OP = {
    "hash_map insert (new key)": "insert_atomic",
    "hash_map find (atomic)": "find_atomic",
    "hash_map find (find_only)": "find_only",
}
QUEUE_OP = {"fast_queue push(v)": "Qpush", "fast_queue pop(v)": "Qpop",
            "circular_queue push(v)": "Cpush", "circular_queue pop(v)": "Cpop",
            "checksum_queue push(v)": "Kpush", "checksum_queue pop(v)": "Kpop"}


def run(cmd, np, backend, env_extra=None):
    if backend == "rma":
        cmd += ["--stack-kb", "256"]  # what MPICH needs (one_sided.cpp)
    if backend in ("shm", "rma") or np > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + cmd + ["--transport", "mpi"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("SHOAL_BCL_CALIBRATION", None)
    env.update(env_extra or {})
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        sys.exit(f"bcl_costs.py: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", default="bench/results/bcl_costs.md")
    ap.add_argument("--calibration", default="bench/results/bcl_calibration.txt")
    args = ap.parse_args()
    os_exe = os.path.join(args.build, "bin", "one-sided-rate")
    bcl_exe = os.path.join(args.build, "bin", "bcl-rate")
    for exe in (os_exe, bcl_exe):
        if not os.access(exe, os.X_OK):
            sys.exit(f"bcl_costs.py: {exe} not built "
                     f"(cmake --build {args.build} --target one-sided-rate bcl-rate)")
    ops = collections.defaultdict(list)  # (shape, backend, op) -> latency ns per round
    qdel = collections.defaultdict(list)  # (shape, backend, op) -> queue latency, delegate path
    meth = collections.defaultdict(list)  # (shape, backend, path, op) -> ns per op per core
    for _ in range(args.reps):
        for backend, np, cores, n_ops, keys in CONFIGS:
            shape = f"{np}x{cores}"
            out = run([os_exe, "--cores", str(cores), "--one-sided", backend, "--ops", str(n_ops)],
                      np, backend, {"SHOAL_BCL_PATH": "onesided"})
            for b, s, op, ns in OS_LINE.findall(out):
                ops[(s, b, op)].append(int(ns))
            out = run([os_exe, "--cores", str(cores), "--one-sided", backend, "--ops", str(n_ops)],
                      np, backend, {"SHOAL_BCL_PATH": "delegate"})
            for b, s, op, ns in OS_LINE.findall(out):
                qdel[(s, b, op)].append(int(ns))
            for path in ("onesided", "delegate"):
                out = run([bcl_exe, "--cores", str(cores), "--one-sided", backend, "--keys",
                           str(keys)], np, backend, {"SHOAL_BCL_PATH": path})
                for b, s, op, per_s in BCL_LINE.findall(out):
                    meth[(s, b, path, op)].append(np * cores * 1e9 / max(int(per_s), 1))

    def med(values):
        return statistics.median(values) if values else float("nan")

    rows = []
    calibration = {}
    for backend, np, cores, _, _ in CONFIGS:
        shape = f"{np}x{cores}"
        c = {op: med(ops[(shape, backend, op)])
             for op in ("R", "W", "W_local", "CAS", "FAO", "delegate") + tuple(QUEUE_OP.values())}
        costs = {"R": c["R"], "W": c["W_local"], "F": max(c["W"] - c["W_local"], 0.0),
                 "CAS": c["CAS"], "FAO": c["FAO"], "D": c["delegate"]}
        # The file keeps the multi-process shape of a backend when it has one.
        if backend not in calibration or np > 1:
            calibration[backend] = (shape, costs)
        for name, predict, formula in METHODS:
            p1 = predict(costs)
            if name in BCL_OP:
                m1 = med(meth[(shape, backend, "onesided", BCL_OP[name])])
                m2 = med(meth[(shape, backend, "delegate", BCL_OP[name])])
                p2 = costs["D"]
            else:
                m1 = c[QUEUE_OP[name]]
                m2 = med(qdel[(shape, backend, QUEUE_OP[name])])
                p2 = costs["D"]
            rows.append((shape, backend, name, formula, p1, m1, p2, m2, costs))

    load = os.getloadavg()
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass

    def fmt(x):
        if x != x:
            return "-"
        return f"{x:.0f}" if x < 1e5 else f"{x:.3g}"

    def winner(m1, m2):
        if m1 != m1 or m2 != m2:
            return "onesided (only path)"
        return f"{'onesided' if m1 <= m2 else 'delegate'} ({max(m1, m2) / max(min(m1, m2), 1e-9):.1f}x)"

    lines = [
        "# BCL cost model: predicted vs measured, one-sided vs delegate",
        "",
        f"Written by `bench/bcl_costs.py` (`make bench-bcl`) on "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}. CPU: {cpu}; "
        f"{os.cpu_count()} hardware threads. Medians of {args.reps} interleaved rounds. "
        f"Load average when the rounds ended: {load[0]:.1f} (1 min) on {os.cpu_count()} hardware "
        "threads: on a loaded machine the measured costs of the multi-core runs include time "
        "slices, so read ratios, not absolute figures.",
        "",
        "Operation costs (ns, one task, blocking, back to back; bench/mpi/one_sided_rate.cpp): "
        "R = rget, W = rput alone, F = rflush after a put (W then rflush, less W), "
        "CAS, FAO = remote atomics, D = delegate::call round trip.",
        "",
        "| shape | backend | R | W | F | CAS | FAO | D |",
        "|---|---|---|---|---|---|---|---|",
    ]
    seen = set()
    for shape, backend, *_, costs in rows:
        if (shape, backend) in seen:
            continue
        seen.add((shape, backend))
        lines.append(f"| {shape} | {backend} | " +
                     " | ".join(fmt(costs[k]) for k in ("R", "W", "F", "CAS", "FAO", "D")) + " |")
    lines += [
        "",
        "Methods (ns per operation). predicted: the header's cost table with the figures above "
        "(A = CAS for a compare-and-swap, FAO for a fetch-op; no probing beyond the first "
        "bucket); measured: hash_map methods by bench/mpi/bcl_rate.cpp with every core "
        "running them at once (cores / ops per second), the queues by one_sided_rate (one "
        "task, pushes then as many pops), each forced each way with SHOAL_BCL_PATH. Delegate "
        "path predicted: D (a queue run of one element travels in its delegate).",
        "",
        "| shape | backend | method | formula | one-sided predicted | one-sided measured | "
        "delegate predicted | delegate measured | faster (measured) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for shape, backend, name, formula, p1, m1, p2, m2, _ in rows:
        lines.append(f"| {shape} | {backend} | {name} | {formula} | {fmt(p1)} | {fmt(m1)} | "
                     f"{fmt(p2)} | {fmt(m2)} | {winner(m1, m2)} |")
    text = "\n".join(lines) + "\n"
    with open(args.out, "w") as f:
        f.write(text)
    print(text)

    cal = ["# shoal BCL calibration (bench/bcl_costs.py): backend op nanoseconds",
           "# R rget, W rput, A remote atomic, F rflush, D delegate round trip; read by",
           "# SHOAL_BCL_CALIBRATION (include/shoal/bcl/path.hpp). "
           f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load[0]:.1f}"]
    for backend, (shape, costs) in calibration.items():
        cal.append(f"# {backend}: shape {shape}")
        a = max(costs["CAS"], costs["FAO"])
        for op, v in (("R", costs["R"]), ("W", costs["W"]), ("A", a), ("F", costs["F"]),
                      ("D", costs["D"])):
            cal.append(f"{backend} {op} {v:.0f}")
    with open(args.calibration, "w") as f:
        f.write("\n".join(cal) + "\n")
    print(f"calibration: {args.calibration}")


if __name__ == "__main__":
    main()
