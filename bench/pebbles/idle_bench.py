#!/usr/bin/env python3
"""--idle (issue 14, item 1): two builds of the driver, interleaved run by run.

  python3 bench/pebbles/idle_bench.py --base OLD/bin/shoal --new build/bin/shoal [--reps 5]
                                      [--part all|dedicated|oversubscribed] [--limit 40]

Dedicated CPUs (the default policy must not lose speed there): gups and bfs at
1 process x 2 cores (no launcher) and 2 processes x 1 core (mpirun binds each
to a CPU); each figure is the median of --reps rates from the apps' --json.
Oversubscribed: gups --log-table 12 at P = 8, 12, 16 processes x 2 cores,
wall seconds of the whole job (start-up to exit), median of --reps, a run cut
at --limit seconds counted as the limit (shown as ">limit").
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import time

ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def mpi(np_, cmd):
    return cmd if np_ == 1 else ["mpirun", "--oversubscribe", "-np", str(np_)] + cmd


def rate(cmd):
    out = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=300)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            d = json.loads(line)
            assert d["validated"], cmd
            return d["rate"]
    raise RuntimeError(f"no JSON from {' '.join(cmd)}:\n{out.stderr}")


def wall(cmd, limit):
    t = time.monotonic()
    p = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGTERM)  # mpirun ends its ranks on SIGTERM
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        return float("inf")
    assert p.returncode == 0, cmd
    return time.monotonic() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--limit", type=float, default=40)
    ap.add_argument("--part", choices=["all", "dedicated", "oversubscribed"], default="all")
    a = ap.parse_args()
    cases = [("gups --log-table 20", ["gups", "--log-table", "20"]),
             ("bfs --scale 16", ["bfs", "--scale", "16"])]
    print("| case | shape | base | new | new/base |\n|---|---|---|---|---|")
    if a.part == "oversubscribed":
        cases = []
    for name, args in cases:
        for np_, cores in ((1, 2), (2, 1)):
            got = {"base": [], "new": []}
            for _ in range(a.reps):
                for which in ("base", "new"):
                    b = getattr(a, which)
                    got[which].append(rate(mpi(np_, [b] + args + ["--cores", str(cores), "--json"])))
            mb, mn = statistics.median(got["base"]), statistics.median(got["new"])
            print(f"| {name} (rate) | {np_} x {cores} | {mb:.4g} | {mn:.4g} | {mn / mb:.2f} |",
                  flush=True)
    for np_ in (8, 12, 16) if a.part != "dedicated" else ():
        got = {"base": [], "new": []}
        for _ in range(a.reps):
            for which in ("base", "new"):
                b = getattr(a, which)
                got[which].append(wall(mpi(np_, [b, "gups", "--log-table", "12", "--cores", "2"]),
                                       a.limit))
        show = lambda v: f">{a.limit:.0f} s" if v == float("inf") else f"{v:.1f} s"
        mb, mn = statistics.median(got["base"]), statistics.median(got["new"])
        print(f"| gups --log-table 12 (wall) | {np_} x 2 | {show(mb)} | {show(mn)} | |", flush=True)


if __name__ == "__main__":
    main()
