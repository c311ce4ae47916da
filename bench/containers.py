#!/usr/bin/env python3
"""Runs the distributed containers' rates (bench/bench_containers.cpp:
counting_set async_insert of random 8-byte keys, array async_visit
increments, map async_reduce on 8-byte keys and on 16-byte string keys) at
1 x 2 and 2 x 1
(processes x cores), ROUNDS rounds with the shapes interleaved (a slow
spell of the machine hits both alike; the three kernels share each run,
interleaved inside it), and writes the medians, with the packet size and
the load, to bench/results/containers.md (and prints them).

    python3 bench/containers.py --build build [--rounds 3] [--ops 2000000] [--key-bits 20]
        [--baseline OTHER/bench-containers] [--append]

--baseline: a second bench-containers binary (say, main's) run in the same
rounds, alternating which goes first round by round, so that a before/after
comparison sees the same machine; the table gains a `build` column.
--append: adds the section to the results file instead of replacing it.

The issue's target: 75 M operations/s at 2 x 1 for 8-byte keys.
"""
import argparse
import collections
import os
import re
import statistics
import sys
import time

from bench_run import cpu_model, run_program

SHAPES = [(1, 2), (2, 1)]  # (processes, cores per process)
KERNELS = ["counting_set_u64", "array_visit_increment", "map_u64_reduce", "map_string16_reduce"]
LINE = re.compile(
    r"containers/(\S+)\s+(\d+) x (\d+)\s+N=(\d+)/core keys=2\^(\d+)\s+median\s+([\d.]+) M ops/s"
    r".*packet (\d+) B, (\d+) msgs(?:\s+cpu (\d+)%)?")
TARGET = 75.0  # M ops/s at 2 x 1 (issue 13, item 5)


def run_one(exe, np, cores, ops, key_bits, timeout):
    cmd = [exe, "--cores", str(cores), "--ops-per-core", str(ops), "--key-bits", str(key_bits),
           "--reps", "1"]
    if np > 1:
        cmd = ["mpirun", "--oversubscribe", "-np", str(np)] + cmd
    out = run_program(cmd, "containers.py", timeout)
    return None if out is None else [m.groups() for m in LINE.finditer(out)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", type=int, default=2000000, help="operations per core per kernel")
    ap.add_argument("--key-bits", type=int, default=20, help="keys drawn from 2^B values")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--out", default="bench/results/containers.md")
    ap.add_argument("--baseline", default=None, help="another bench-containers to interleave")
    ap.add_argument("--append", action="store_true", help="append to --out")
    args = ap.parse_args()
    if args.rounds < 1 or args.ops < 1 or not 1 <= args.key_bits <= 40:
        sys.exit("containers.py: --rounds >= 1, --ops >= 1, --key-bits in [1, 40]")
    exe = os.path.join(args.build, "bin", "bench-containers")
    if not os.access(exe, os.X_OK):
        sys.exit(f"containers.py: {exe} not built "
                 f"(cmake --build {args.build} --target bench-containers)")
    builds = [("this", exe)]
    if args.baseline:
        if not os.access(args.baseline, os.X_OK):
            sys.exit(f"containers.py: --baseline {args.baseline}: not an executable")
        builds = [("baseline", args.baseline), ("this", exe)]
    rate = collections.defaultdict(list)
    packet = collections.defaultdict(list)
    msgs = collections.defaultdict(list)
    cpu = collections.defaultdict(list)
    missing = collections.Counter()
    runs = collections.Counter()  # runs that finished, per (build, np, cores)
    load_start = os.getloadavg()
    started = time.time()
    for rnd in range(args.rounds):
        for np, cores in SHAPES:
            order = builds if rnd % 2 == 0 else list(reversed(builds))
            for build, path in order:
                rows = run_one(path, np, cores, args.ops, args.key_bits, args.timeout)
                if rows is None:
                    missing[(build, np, cores)] += 1
                    continue
                runs[(build, np, cores)] += 1
                for name, _, _, _, _, r, b, m, c in rows:
                    rate[(build, np, cores, name)].append(float(r))
                    if c is not None:
                        cpu[(build, np, cores, name)].append(int(c))
                    packet[(build, np, cores, name)].append(int(b))
                    msgs[(build, np, cores, name)].append(int(m))
                print(f"round {rnd + 1}/{args.rounds} {build} {np}x{cores} done", file=sys.stderr)
    load = os.getloadavg()
    flags = (f" --baseline {args.baseline}" if args.baseline else "") + (
        " --append" if args.append else "")
    lines = [
        "# Distributed containers' operation rates (issue 13, item 5)"
        if not args.append else
        f"## Rates, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC",
        "",
        f"Produced by `python3 bench/containers.py --build {args.build} --rounds {args.rounds} "
        f"--ops {args.ops} --key-bits {args.key_bits}{flags}` (`make bench-containers`; Release build, "
        f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC, {time.time() - started:.0f} s), "
        f"`lscpu | grep 'Model name'` = {cpu_model()}, {os.cpu_count()} CPUs; load average "
        f"{load_start[0]:.1f} at the start, {load[0]:.1f} at the end (wall-clock rates on a "
        "loaded machine are noise: compare shapes within one run only).",
        "",
        f"Each core makes {args.ops} operations per kernel on keys drawn from 2^{args.key_bits} "
        "values; the rate is all cores' operations / the time from the first operation to the "
        "barrier after the last (every operation applied). `packet`: the average aggregated "
        "packet on rank 0's process during the kernel (bytes, operations). Medians of the "
        "rounds (shapes interleaved round by round, kernels interleaved inside each run); the "
        f"samples follow. Target: {TARGET:.0f} M ops/s at 2 x 1 for 8-byte keys. `cpu`: the "
        "median share of their CPUs that rank 0's core threads got in the timed part (their "
        "CPU time / (time x cores); under 100% they slept or the machine's other load had the "
        "CPUs); `per busy core`: the median rate / (cpu x every core of the job), taking rank "
        "0's share for every rank (- where the build does not print cpu).",
        "",
        "| kernel | build | processes x cores | M ops/s (median) | packet B | ops/packet | target "
        "| cpu | per busy core | samples |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in KERNELS:
        for np, cores in SHAPES:
            for build, _ in builds:
                key = (build, np, cores, name)
                if not rate[key]:
                    why = ("kernel not in this build" if runs[(build, np, cores)]
                           else "no run finished")
                    lines.append(
                        f"| {name} | {build} | {np} x {cores} | - | - | - | - | - | - | {why} |")
                    continue
                med = statistics.median(rate[key])
                target = "-"
                if (np, cores) == (2, 1) and name != "map_string16_reduce":
                    target = "met" if med >= TARGET else f"{med / TARGET:.0%} of it"
                samples = ", ".join(f"{x:.2f}" for x in rate[key])
                share = "-"
                busy = "-"
                if cpu[key]:
                    c = statistics.median(cpu[key])
                    share = f"{c:.0f}%"
                    if c > 0:
                        busy = f"{med / (c / 100 * np * cores):.2f}"
                lines.append(
                    f"| {name} | {build} | {np} x {cores} | {med:.2f} | "
                    f"{statistics.median(packet[key]):.0f} | {statistics.median(msgs[key]):.0f} | "
                    f"{target} | {share} | {busy} | {samples} |")
    if missing:
        lines.append("")
        for (build, np, cores), n in sorted(missing.items()):
            lines.append(f"- {build}, {np} x {cores}: {n} of {args.rounds} runs did not finish "
                         f"within {args.timeout} s.")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "a" if args.append else "w") as f:
        f.write(("\n" if args.append else "") + text)


if __name__ == "__main__":
    main()
