#!/usr/bin/env python3
"""Interleaved runs of one app problem under several programs, with ratios.

    ab.py ROUNDS NP CORES "APP ARGS" SPEC [SPEC ...]

SPEC is `base:EXE` (a plain-MPI baseline: mpirun -np NP*CORES EXE ARGS --json),
`raw:COMMAND` (run as given; it must print one JSON object with "rate"), or
`EXE[|EXTRA FLAGS]` (a shoal driver: mpirun -np NP EXE APP ARGS EXTRA --cores
CORES --json). Each round runs every SPEC once, the order rotating by one each
round, after a core-to-core probe (../shared/tools/c2c_probe.cpp, compiled into
build/c2c_probe if absent; "near"/"far" per ../shared/BENCHMARKING.md). Prints
each round's rates and ratios to the first SPEC, then per SPEC the median of
the per-round ratios (min..max) and the median rates. Standard library only.
"""
import json
import os
import shlex
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def probe_exe():
    exe = os.path.join(ROOT, "build", "c2c_probe")
    src = os.path.join(ROOT, "..", "shared", "tools", "c2c_probe.cpp")
    if not os.path.exists(exe) and os.path.exists(src):
        subprocess.run(["g++", "-O2", "-pthread", "-o", exe, src], check=True)
    return exe if os.path.exists(exe) else None


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    rounds, np_, cores = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    args = shlex.split(sys.argv[4])[1:]
    app = shlex.split(sys.argv[4])[0]
    specs = sys.argv[5:]

    def command(spec):
        mpi = ["mpirun", "--oversubscribe", "-np"]
        if spec.startswith("raw:"):
            return shlex.split(spec[4:])
        if spec.startswith("base:"):
            return mpi + [str(np_ * cores), spec[5:]] + args + ["--json"]
        exe, _, extra = spec.partition("|")
        return mpi + [str(np_), exe, app] + args + shlex.split(extra) + ["--cores", str(cores), "--json"]

    probe = probe_exe()
    ratios = [[] for _ in specs]
    rates = [[] for _ in specs]
    for r in range(rounds):
        tag = subprocess.run([probe], capture_output=True, text=True).stdout.strip() if probe else "untagged"
        order = list(range(len(specs)))
        order = order[r % len(specs):] + order[:r % len(specs)]
        got = {}
        for i in order:
            p = subprocess.run(command(specs[i]), capture_output=True, text=True, env=ENV)
            lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
            if p.returncode != 0 or not lines:
                sys.exit("%s failed (status %d):\n%s%s" % (specs[i], p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
            got[i] = json.loads(lines[-1])["rate"]
        for i in range(len(specs)):
            rates[i].append(got[i])
            ratios[i].append(got[i] / got[0])
        print("round", r, tag, " ".join("%.4g" % got[i] for i in range(len(specs))),
              " ".join("%.3f" % (got[i] / got[0]) for i in range(1, len(specs))), flush=True)
    for i in range(1, len(specs)):
        print(specs[i], "median ratio %.3f (%.2f..%.2f)" % (statistics.median(ratios[i]), min(ratios[i]), max(ratios[i])),
              "median rate %.4g vs %.4g" % (statistics.median(rates[i]), statistics.median(rates[0])))


if __name__ == "__main__":
    main()
