#!/usr/bin/env python3
"""The application benchmark harness (`make bench`).

Runs each bundled app and its reference, interleaved, for
two job shapes of this 2-core machine -- 1 process x 2 cores and 2 processes x
1 core -- and writes bench/results/latest.{md,json} and one PNG plot per app
(rate by configuration, shoal next to its reference).

References: gups, bfs, pagerank, intsort, isx, kmer, histogram, indexgather and
pointerchase against their plain-MPI baselines (build/bin/shoal-baseline-*) on
as many ranks as shoal has cores; uts, randomwalk, chma and permutation against
the app's sequential implementation (`--impl sequential`, one core): the ratio
is then the speedup, or for uts the parallel efficiency t_seq / (cores * t_par).

Method (../shared/BENCHMARKING.md): runs are paired, shoal and reference
back to back with the order alternating (A B, B A, ...), and each figure is the
median over repetitions; ratios are medians of the per-pair ratios. When the
core-to-core probe (tools/c2c_probe.cpp of the shared tools) is found, each
pair is tagged near/far by a probe run before it.

Only the Python standard library and gnuplot are used.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Per app: the problem (shoal and reference take the same flags), the reference,
# the target on the ratio shoal / reference, and how the ratio is formed.
def bench_app(app, args, what, target=1.0, reference="baseline", ratio="rate"):
    """One row of APPS: `app` run with `args` (shoal and reference alike),
    `what` its title; `reference` baseline (the plain-MPI program) or
    sequential (`--impl sequential`); `ratio` rate, speedup or efficiency;
    `target` None where the issue names none."""
    return {"app": app, "args": args, "reference": reference, "target": target, "ratio": ratio,
            "what": what}


def against_sequential(app, args, what, target=None, ratio="speedup"):
    """A row whose reference is the app's one-core implementation."""
    return bench_app(app, args, what, target, reference="sequential", ratio=ratio)


APPS = {
    "gups": bench_app("gups", ["--log-table", "26"],
                      "HPCC RandomAccess, 2^26 words (issue 15: at least 1.5x; 2x the aim)", 1.5),
    "bfs": bench_app("bfs", ["--scale", "20", "--roots", "16"], "Graph500 BFS, scale 20, 16 roots"),
    # Smaller problems, where fixed costs per level and per phase weigh most
    # (issue 15 item 1).
    "gups-22": bench_app("gups", ["--log-table", "22"], "HPCC RandomAccess, 2^22 words (fixed costs)"),
    "gups-24": bench_app("gups", ["--log-table", "24"], "HPCC RandomAccess, 2^24 words (fixed costs)"),
    "bfs-16": bench_app("bfs", ["--scale", "16", "--roots", "16"],
                        "Graph500 BFS, scale 16, 16 roots (fixed costs)"),
    "bfs-18": bench_app("bfs", ["--scale", "18", "--roots", "16"],
                        "Graph500 BFS, scale 18, 16 roots (fixed costs)"),
    "bfs-hybrid": bench_app("bfs", ["--scale", "20", "--roots", "16", "--impl", "hybrid"],
                            "Graph500 BFS, scale 20, 16 roots, direction-optimising (TEPS counts input edges, as Graph500)"),
    "uts": against_sequential("uts", ["--tree", "T1"], "UTS T1 (geometric, 4,130,071 nodes)", 0.9,
                              ratio="efficiency"),
    # T1 takes a fraction of a second here; T1L (102,181,082 nodes) gives
    # the same measurement at the harness's 5-30 s scale.
    "uts-T1L": against_sequential("uts", ["--tree", "T1L"], "UTS T1L (geometric, 102,181,082 nodes)", 0.9,
                                  ratio="efficiency"),
    "intsort": bench_app("intsort", ["--class", "B"], "NPB IS class B (2^25 keys, 10 rankings), Mop/s"),
    "isx": bench_app("isx", ["--keys-per-core", "4194304"],
                     "ISx bucket sort, 2^22 keys per core, 5 sorts, bcl::fast_queue (auto one-sided backend)"),
    "isx-channel": bench_app("isx", ["--keys-per-core", "4194304", "--impl", "channel"],
                             "ISx bucket sort, 2^22 keys per core, the keys as channel values"),
    "isx-mid": bench_app("isx", ["--keys-per-core", "1048576"],
                         "ISx bucket sort, 2^20 keys per core, 5 sorts (issue 12's remaining gap: 0.96x at 2x1)"),
    "isx-small": bench_app("isx", ["--keys-per-core", "65536", "--iterations", "50"],
                           "ISx bucket sort, 2^16 keys per core (fixed costs), 50 sorts"),
    "kmer": bench_app("kmer", ["--impl", "bcl-buffer", "--read-count", "200000", "--genome-length", "2000000"],
                      "k-mer counting, 200,000 generated reads of 100 bases (16M 21-mers), bloom_filter + hash_map_buffer, exact counts",
                      None),
    # Blocking remote operations one at a time: on 2 processes the auto
    # backend (am) makes each a round trip (~25 us here), so a small problem.
    "kmer-bcl": bench_app("kmer", ["--impl", "bcl", "--read-count", "5000", "--genome-length", "50000"],
                          "k-mer counting, 5,000 generated reads (400,000 21-mers), bloom_filter + hash_map add/add_existing one at a time",
                          None),
    "pointerchase": bench_app("pointerchase", ["--rounds", "1000000"],
                              "Active Pebbles PointerChase, 10^6 laps of a random ring of all cores (hops/s = 1/latency)",
                              None),
    "permutation": against_sequential("permutation", ["--elements", "33554432"],
                                      "Active Pebbles Permutation, 2^25 elements"),
    "histogram": bench_app("histogram", ["--requests-per-core", "500000000"],
                           "bale histogram, 1000 counters per core, 5*10^8 increments per core"),
    "indexgather": bench_app("indexgather", ["--requests-per-core", "250000000"],
                             "bale index gather, 1000 entries per core, 2.5*10^8 reads per core"),
    "pagerank": bench_app("pagerank", ["--scale", "22"],
                          "PageRank by streaming increments, Kronecker scale 22, to L1 change < 1e-7"),
    "pagerank-combining": bench_app("pagerank", ["--scale", "22", "--impl", "combining"],
                                    "PageRank, increments combined per (core, target) first; the baseline combines too"),
    "pagerank-pull": bench_app("pagerank", ["--scale", "22", "--impl", "pull"],
                               "PageRank by pull over in-links, contributions gathered per iteration; the baseline pushes"),
    "randomwalk": against_sequential("randomwalk", ["--scale", "19", "--length", "128"],
                                     "GMT random walks, 2^18 walkers x 128 steps on a 2^19-vertex random graph"),
    "chma": against_sequential("chma", ["--tasks", "16384", "--length", "512"],
                               "GMT concurrent hash-map access, 16384 tasks x 512 lookups (reversed hits inserted)"),
}

CONFIGS = [("1x2", 1, 2), ("2x1", 2, 1)]  # name, processes, cores per process

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def mpirun(np):
    return ["mpirun", "--oversubscribe", "-np", str(np)]


def shoal_command(build, app, args, procs, cores):
    cmd = [os.path.join(build, "bin", "shoal"), APPS[app]["app"]] + args + ["--cores", str(cores), "--json"]
    return (mpirun(procs) + cmd) if procs > 1 else cmd


def reference_command(build, app, spec, procs, cores):
    if spec["reference"] == "sequential":
        return shoal_command(build, app, spec["args"] + ["--impl", "sequential"], 1, 1)
    exe = os.path.join(build, "bin", "shoal-baseline-" + spec["app"])
    return mpirun(procs * cores) + [exe] + spec["args"] + ["--json"]


def run_json(cmd, timeout):
    """Runs cmd; returns its JSON object, or raises with what went wrong."""
    env = dict(os.environ, **MPI_ENV)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise RuntimeError("%s exited %d:\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("%s printed no JSON object:\n%s" % (" ".join(cmd), p.stdout))
    result = json.loads(lines[-1])
    result["wall_s"] = wall
    return result


def build_probe(build):
    """Compiles the shared core-to-core probe if it is on this machine."""
    source = os.path.join(ROOT, "..", "shared", "tools", "c2c_probe.cpp")
    if not os.path.exists(source) or shutil.which("g++") is None:
        return None
    exe = os.path.join(build, "c2c_probe")
    if not os.path.exists(exe):
        subprocess.run(["g++", "-O2", "-pthread", "-o", exe, source], check=True)
    return exe


def probe(exe):
    if exe is None:
        return "untagged"
    out = subprocess.run([exe], capture_output=True, text=True).stdout.split()
    return out[0] if out else "untagged"


def ratio_of(spec, shoal, ref, cores):
    """rate: shoal's rate over the reference's (same problem; for a latency app
    the rate is hops per second); speedup: the same against the sequential
    run; efficiency: speedup per core."""
    if spec["ratio"] == "efficiency":
        return ref["time_s"] / (cores * shoal["time_s"])
    return shoal["rate"] / ref["rate"]


def met(row):
    if row["target"] is None:
        return "-"
    return "yes" if row["ratio"] >= row["target"] else "NO"


def measure(build, app, spec, config, reps, probe_exe, timeout):
    name, procs, cores = config
    pairs = []
    for rep in range(reps):
        tag = probe(probe_exe)
        runs = {}
        order = ["shoal", "reference"] if rep % 2 == 0 else ["reference", "shoal"]
        for side in order:
            cmd = (shoal_command(build, app, spec["args"], procs, cores) if side == "shoal"
                   else reference_command(build, app, spec, procs, cores))
            print("  [%s %s rep %d/%d %s] %s" % (app, name, rep + 1, reps, tag, " ".join(cmd)),
                  file=sys.stderr, flush=True)
            runs[side] = run_json(cmd, timeout)
        pairs.append({"probe": tag, "shoal": runs["shoal"], "reference": runs["reference"],
                      "ratio": ratio_of(spec, runs["shoal"], runs["reference"], procs * cores)})
    return summarise(app, spec, name, pairs)


def summarise(app, spec, config, pairs):
    med = lambda xs: statistics.median(xs)
    shoal_runs = [p["shoal"] for p in pairs]
    ref_runs = [p["reference"] for p in pairs]
    packet = [r.get("stats", {}).get("average_packet_bytes", 0.0) for r in shoal_runs]
    by_tag = {}
    for p in pairs:
        by_tag.setdefault(p["probe"], []).append(p["ratio"])
    return {
        "app": app, "config": config, "what": spec["what"],
        "impl": shoal_runs[0]["impl"], "reference_impl": ref_runs[0]["impl"],
        "rate_unit": shoal_runs[0]["rate_unit"],
        "shoal_rate": med([r["rate"] for r in shoal_runs]),
        "reference_rate": med([r["rate"] for r in ref_runs]),
        "shoal_time_s": med([r["time_s"] for r in shoal_runs]),
        "reference_time_s": med([r["time_s"] for r in ref_runs]),
        "ratio": med([p["ratio"] for p in pairs]),
        "ratio_kind": spec["ratio"], "target": spec["target"],
        "ratio_by_probe": {k: med(v) for k, v in by_tag.items()},
        "average_packet_kib": med(packet) / 1024.0,
        "validated": all(r["validated"] for r in shoal_runs + ref_runs),
        "pairs": pairs,
    }


def cpu_model():
    """The host's CPU as lscpu names it, so that a reader can tell machines apart."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown (lscpu failed)"
    fields = dict(line.split(":", 1) for line in out.splitlines() if ":" in line)
    model = fields.get("Model name", "unknown").strip()
    return "%s, %s CPUs" % (model, fields.get("CPU(s)", "?").strip())


def write_markdown(path, rows, started, reps):
    lines = ["# shoal application benchmarks", "",
             "Run %s, %d interleaved pairs per row, medians (Release build)." % (started, reps), "",
             "Host: %s. Placement: each pair is tagged near or far by the core-to-core probe "
             "(../shared/BENCHMARKING.md); the near/far column gives the ratio per tag." % cpu_model(), "",
             "| app | config | shoal impl | shoal rate | reference | reference rate | ratio | target"
             " | met | avg packet KiB | near/far ratios | validated |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        tags = ", ".join("%s %.2f" % (k, v) for k, v in sorted(r["ratio_by_probe"].items()))
        target = "-" if r["target"] is None else "%.2f" % r["target"]
        lines.append("| %s | %s | %s | %.4g %s | %s | %.4g %s | %.2f (%s) | %s | %s | %.1f | %s | %s |" % (
            r["app"], r["config"], r["impl"], r["shoal_rate"], r["rate_unit"], r["reference_impl"],
            r["reference_rate"], r["rate_unit"], r["ratio"], r["ratio_kind"], target,
            met(r), r["average_packet_kib"], tags, "yes" if r["validated"] else "NO"))
    lines += ["", "Configurations: 1x2 = 1 process x 2 cores, 2x1 = 2 processes x 1 core (mpirun).",
              "References: mpi-* are the plain-MPI baselines (build/bin/shoal-baseline-<app>) on 2",
              "ranks; sequential is the app's one-core implementation (ratio = speedup, or parallel",
              "efficiency = speedup / cores). Target '-': the issue names none for that app.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def plot(out_dir, rows):
    """One PNG per app: rate by configuration, shoal and reference side by side."""
    if shutil.which("gnuplot") is None:
        print("harness: gnuplot not found, no plots (make bench installs gnuplot-nox)", file=sys.stderr)
        return []
    made = []
    for app in sorted({r["app"] for r in rows}):
        mine = [r for r in rows if r["app"] == app]
        data = os.path.join(out_dir, app + ".dat")
        with open(data, "w") as f:
            for r in mine:
                f.write('"%s" %g %g\n' % (r["config"], r["shoal_rate"], r["reference_rate"]))
        png = os.path.join(out_dir, app + ".png")
        script = "\n".join([
            "set terminal png size 640,400",
            "set output '%s'" % png,
            "set title '%s: %s'" % (app, mine[0]["what"].replace("'", "")),
            "set ylabel '%s'" % mine[0]["rate_unit"],
            "set style data histograms", "set style histogram clustered gap 1",
            "set style fill solid 0.8 border -1", "set yrange [0:*]", "set key below",
            "plot '%s' using 2:xtic(1) title 'shoal (%s)', '' using 3 title '%s'" % (
                data, mine[0]["impl"], mine[0]["reference_impl"]),
        ])
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
        made.append(png)
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--apps", default=",".join(APPS))
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run")
    ap.add_argument("--replot", action="store_true", help="redraw the plots of OUT/latest.json only")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.replot:
        with open(os.path.join(args.out, "latest.json")) as f:
            print("\n".join(plot(args.out, json.load(f)["rows"])))
        return 0
    probe_exe = build_probe(args.build)
    started = time.strftime("%Y-%m-%d %H:%M:%S")
    rows = []
    for app in args.apps.split(","):
        if app not in APPS:
            sys.exit("harness: unknown app '%s' (known: %s)" % (app, ", ".join(APPS)))
        for config in CONFIGS:
            rows.append(measure(args.build, app, APPS[app], config, args.reps, probe_exe, args.timeout))
    with open(os.path.join(args.out, "latest.json"), "w") as f:
        json.dump({"started": started, "reps": args.reps, "rows": rows}, f, indent=1)
    write_markdown(os.path.join(args.out, "latest.md"), rows, started, args.reps)
    plots = plot(args.out, rows)
    with open(os.path.join(args.out, "latest.md")) as f:
        print(f.read())
    print("wrote %s/latest.md, latest.json%s" % (args.out, "".join(", " + os.path.basename(p) for p in plots)))
    return 0 if all(r["validated"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
