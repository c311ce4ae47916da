#!/usr/bin/env python3
"""Interleaved runs of one app problem under several programs, with ratios.

    ab.py ROUNDS NP CORES "APP ARGS" SPEC [SPEC ...]

SPEC is `base:EXE` (a plain-MPI baseline: mpirun -np NP*CORES EXE ARGS --json),
`raw:COMMAND` (run as given; it must print one JSON object with "rate"), or
`EXE[|EXTRA FLAGS]` (a shoal driver: mpirun -np NP EXE APP ARGS EXTRA --cores
CORES --json). Each round runs every SPEC once, the order rotating by one each
round, after a core-to-core probe ("near"/"far" per ../shared/BENCHMARKING.md).
Running, the probe and the JSON reading are harness.py's. Prints
each round's rates and ratios to the first SPEC, then per SPEC the median of
the per-round ratios (min..max) and the median rates. Standard library only.
"""
import os
import shlex
import statistics
import sys

import harness  # run_json, build_probe, probe, mpirun: the same runs as `make bench-apps`

ROOT = harness.ROOT


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    rounds, np_, cores = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    args = shlex.split(sys.argv[4])[1:]
    app = shlex.split(sys.argv[4])[0]
    specs = sys.argv[5:]

    def command(spec):
        if spec.startswith("raw:"):
            return shlex.split(spec[4:])
        if spec.startswith("base:"):
            return harness.mpirun(np_ * cores) + [spec[5:]] + args + ["--json"]
        exe, _, extra = spec.partition("|")
        return harness.mpirun(np_) + [exe, app] + args + shlex.split(extra) + ["--cores", str(cores), "--json"]

    probe = harness.build_probe(os.path.join(ROOT, "build"))
    ratios = [[] for _ in specs]
    rates = [[] for _ in specs]
    for r in range(rounds):
        tag = harness.probe(probe)
        order = list(range(len(specs)))
        order = order[r % len(specs):] + order[:r % len(specs)]
        got = {}
        for i in order:
            try:
                got[i] = harness.run_json(command(specs[i]), 3600)["rate"]
            except RuntimeError as e:
                sys.exit(str(e))
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
