#!/usr/bin/env python3
"""gups, bfs and histogram across the emulated hosts (cluster.sh must be up):
shoal against its plain-MPI baseline (build/bin/shoal-baseline-<app>, same
flags), one rank per host, interleaved, median of --reps runs each. Prints a
table; every run must validate.

    tools/cluster/cluster.sh up
    tools/cluster/bench-cluster.py [--build build] [--reps 3] [--np 3] [--cores 1] [--local]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
APPS = {
    "gups": ["--log-table", "20"],
    "bfs": ["--scale", "16", "--roots", "16"],
    "histogram": ["--requests-per-core", "2000000"],
}


def run(args, exe, app, flags):
    launch = ["mpirun", "--oversubscribe"] if args.local else [
        os.path.join(HERE, "cluster.sh"), "run", "mpirun"]
    cmd = launch + ["-np", str(args.np), exe]
    if exe.endswith("/shoal"):  # the baselines are one app each, one core per rank
        cmd += [app] + flags + ["--cores", str(args.cores)]
    else:
        cmd += flags
    cmd.append("--json")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    try:
        j = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"bench-cluster: {' '.join(cmd)}: no JSON (exit {p.returncode}):\n"
                 f"{p.stderr[-1500:]}")
    if p.returncode != 0 or not j.get("validated"):
        sys.exit(f"bench-cluster: {' '.join(cmd)}: not validated (exit {p.returncode})")
    return j


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--np", type=int, default=3)
    p.add_argument("--cores", type=int, default=1)
    p.add_argument("--local", action="store_true",
                   help="the same runs on this machine without the cluster (shared memory)")
    args = p.parse_args()
    bindir = os.path.abspath(os.path.join(args.build, "bin"))
    print(f"{'app':10s} {'shoal rate':>12s} {'baseline':>12s} {'unit':10s} {'ratio':>6s} "
          f"{'shoal s':>8s} {'base s':>8s}   (median of {args.reps}, np {args.np}, shoal "
          f"--cores {args.cores}, "
          f"{'one machine, shared memory' if args.local else 'one rank per host'})")
    for app, flags in APPS.items():
        shoal, base = [], []
        for _ in range(args.reps):  # interleaved: drift hits both alike
            shoal.append(run(args, f"{bindir}/shoal", app, flags))
            base.append(run(args, f"{bindir}/shoal-baseline-{app}", app, flags))
        rs = statistics.median(r["rate"] for r in shoal)
        rb = statistics.median(r["rate"] for r in base)
        ts = statistics.median(r["time_s"] for r in shoal)
        tb = statistics.median(r["time_s"] for r in base)
        print(f"{app:10s} {rs:12.5g} {rb:12.5g} {shoal[0]['rate_unit']:10s} {rs / rb:6.2f} "
              f"{ts:8.3f} {tb:8.3f}   {' '.join(flags)}", flush=True)


if __name__ == "__main__":
    main()
