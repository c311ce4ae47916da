#!/usr/bin/env python3
"""Soak test (issue 16, `make soak`): mixed bundled apps on 2 and 3 processes
for a given time, one validated run after another, recording every run's
exit status, validation, wall time and peak memory per rank.

It fails (exit 1) on any failed or timed-out run, on a rank process left
behind after its job, and on peak-RSS growth: for each configuration, the
largest peak of its later half of runs may exceed the median peak of its
first three by at most --rss-growth (a fraction) plus --rss-slack-mb. A run is a fresh set of
processes, so growth there means memory that depends on history (files,
shared-memory segments, a launcher's state) or on luck (a queue that can
grow without bound); within one run, the RSS of every rank is sampled and
the growth between the run's second quarter and its last is reported for
runs of 3 s or more (shorter ones are mostly start-up).

Output: one line per run on stdout, a summary at the end, and every run as
a JSON object per line in --log (default soak-<time>.jsonl).
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

# (processes, app and arguments): a few seconds each on 2 cores. Every app
# validates its own result; --json gives one object whose "validated" says.
MIX = [
    (2, ["gups", "--log-table", "23"]),
    (3, ["bfs", "--scale", "17", "--roots", "16", "--impl", "async"]),
    (2, ["histogram", "--requests-per-core", "4000000"]),
    (3, ["indexgather", "--requests-per-core", "2000000"]),
    (2, ["pagerank", "--scale", "16"]),
    (3, ["uts", "--tree", "T3"]),
    (2, ["chma", "--tasks", "8192", "--length", "128"]),
    (3, ["gups", "--log-table", "22", "--impl", "delegate"]),
    (2, ["intsort", "--class", "W"]),
    (3, ["permutation", "--elements", "4000000"]),
    (2, ["randomwalk", "--scale", "16", "--length", "64"]),
    (3, ["pointerchase", "--rounds", "20000"]),
    (2, ["bfs", "--scale", "17", "--roots", "16"]),
    (3, ["histogram", "--requests-per-core", "2000000", "--impl", "delegate"]),
]


def rank_pids(launcher_pid):
    """Processes below the launcher (the ranks, and anything they start)."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [launcher_pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.append(c)
            todo.append(c)
    return found


def memory_kb(pid):
    """(VmRSS, VmHWM) of a process in KiB, or None once it is gone."""
    rss = hwm = None
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        return None
    return (rss, hwm) if rss is not None and hwm is not None else None


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""


class sampler(threading.Thread):
    """Samples the ranks' memory every `period` seconds until stopped."""

    def __init__(self, launcher_pid, rank_name, period=0.05):
        super().__init__(daemon=True)
        self.launcher_pid, self.rank_name, self.period = launcher_pid, rank_name, period
        self.peak_kb = {}  # pid -> VmHWM last seen (the peak so far)
        self.series = []  # (seconds, summed VmRSS of the ranks)
        self.stop = threading.Event()

    def run(self):
        start = time.monotonic()
        while not self.stop.is_set():
            total = 0
            for pid in rank_pids(self.launcher_pid):
                if comm(pid) != self.rank_name:
                    continue
                m = memory_kb(pid)
                if m is None:
                    continue
                total += m[0]
                self.peak_kb[pid] = max(self.peak_kb.get(pid, 0), m[1])
            if total:
                self.series.append((time.monotonic() - start, total))
            self.stop.wait(self.period)


def in_run_growth(series):
    """Summed RSS, median of the run's last quarter over its second quarter."""
    if len(series) < 8 or series[-1][0] < 3.0:
        return None
    n = len(series)
    second = sorted(v for _, v in series[n // 4:n // 2])
    last = sorted(v for _, v in series[3 * n // 4:])
    return last[len(last) // 2] / max(1, second[len(second) // 2])


def run_one(args, np, app_args):
    shoal = os.path.join(args.build, "bin", "shoal")
    cmd = [args.mpirun, "--oversubscribe", "-np", str(np), shoal] + app_args + [
        "--cores", str(args.cores), "--json"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               SOAK_RUN=args.marker)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            text=True, start_new_session=True)
    watch = sampler(proc.pid, os.path.basename(shoal)[:15])
    watch.start()
    timed_out = False
    try:
        out, err = proc.communicate(timeout=args.run_timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        os.killpg(proc.pid, 9)
        out, err = proc.communicate()
    wall = time.monotonic() - start
    watch.stop.set()
    watch.join()
    validated = False
    try:
        validated = bool(json.loads(out.strip().splitlines()[-1]).get("validated"))
    except (ValueError, IndexError, AttributeError):
        pass
    peaks = sorted(watch.peak_kb.values(), reverse=True)
    return {
        "np": np, "args": app_args, "rc": proc.returncode, "timed_out": timed_out,
        "validated": validated, "wall_s": round(wall, 3),
        "peak_rss_kb": peaks, "max_peak_rss_kb": peaks[0] if peaks else 0,
        "in_run_growth": in_run_growth(watch.series),
        "stderr_tail": err[-600:] if (proc.returncode != 0 or not validated) else "",
    }


def leftover_ranks(rank_name, marker):
    """Rank processes of this soak still alive: named like the driver and
    carrying the soak's SOAK_RUN marker (the launcher passes its environment
    to the ranks), so that other jobs on the machine are left alone."""
    me, found = os.getpid(), []
    tag = f"SOAK_RUN={marker}".encode()
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) == me or comm(int(p)) != rank_name:
            continue
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                if tag in f.read().split(b"\0"):
                    found.append(int(p))
        except OSError:
            pass
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", 20)))
    p.add_argument("--build", default="build")
    p.add_argument("--mpirun", default="mpirun")
    p.add_argument("--cores", type=int, default=1, help="--cores of every rank")
    p.add_argument("--run-timeout", type=float, default=180)
    p.add_argument("--rss-growth", type=float, default=0.25)
    p.add_argument("--rss-slack-mb", type=float, default=16)
    p.add_argument("--log", default=None)
    args = p.parse_args()
    if args.minutes <= 0:
        sys.exit(f"soak: error: --minutes/SOAK_MINUTES {args.minutes}: must be positive")
    shoal = os.path.join(args.build, "bin", "shoal")
    if not os.access(shoal, os.X_OK):
        sys.exit(f"soak: error: {shoal} not found (build the driver first: make build)")
    rank_name = os.path.basename(shoal)[:15]
    args.marker = f"{os.getpid()}-{time.time_ns()}"
    log_path = args.log or time.strftime("soak-%Y%m%dT%H%M%S.jsonl")
    deadline = time.monotonic() + args.minutes * 60
    runs, problems, i = [], [], 0
    with open(log_path, "w") as log:
        while time.monotonic() < deadline:
            np, app_args = MIX[i % len(MIX)]
            i += 1
            r = run_one(args, np, app_args)
            r["run"] = i
            r["leftover"] = leftover_ranks(rank_name, args.marker)
            runs.append(r)
            log.write(json.dumps(r) + "\n")
            log.flush()
            name = f"np{np} {' '.join(app_args)}"
            ok = r["rc"] == 0 and r["validated"] and not r["timed_out"] and not r["leftover"]
            growth = r["in_run_growth"]
            print(f"[{i:4d}] {'ok  ' if ok else 'FAIL'} {name:58s} {r['wall_s']:7.2f} s  "
                  f"peak {r['max_peak_rss_kb'] / 1024:7.1f} MiB"
                  + (f"  in-run x{growth:.2f}" if growth else ""), flush=True)
            if not ok:
                problems.append(f"run {i} ({name}): rc {r['rc']}, validated {r['validated']}, "
                                f"timed out {r['timed_out']}, leftover {r['leftover']}: "
                                f"{r['stderr_tail'].strip()[-300:]}")
                for pid in r["leftover"]:
                    try:
                        os.kill(pid, 9)
                    except OSError:
                        pass
    by_config = {}
    for r in runs:
        by_config.setdefault((r["np"], tuple(r["args"])), []).append(r["max_peak_rss_kb"])
    print(f"\nsoak: {len(runs)} runs in {args.minutes:g} min, {len(problems)} failed; log {log_path}")
    print(f"{'config':62s} {'runs':>4s} {'early MiB':>9s} {'min':>7s} {'max':>7s} {'last':>7s}")
    for (np, a), peaks in by_config.items():
        # The first runs' median is the reference (one sample can miss a
        # peak); the later half of the runs is held to it.
        early = sorted(peaks[:3])
        first = early[len(early) // 2]
        later = peaks[len(peaks) // 2:] if len(peaks) > 3 else []
        print(f"{'np' + str(np) + ' ' + ' '.join(a):62s} {len(peaks):4d} {first / 1024:9.1f} "
              f"{min(peaks) / 1024:7.1f} {max(peaks) / 1024:7.1f} {peaks[-1] / 1024:7.1f}")
        bound = first * (1 + args.rss_growth) + args.rss_slack_mb * 1024
        if later and max(later) > bound:
            problems.append(f"np{np} {' '.join(a)}: peak RSS grew from {first / 1024:.1f} MiB to "
                            f"{max(later) / 1024:.1f} MiB (bound {bound / 1024:.1f})")
    growths = [r["in_run_growth"] for r in runs if r["in_run_growth"]]
    if growths:
        print(f"in-run RSS growth (last quarter / second quarter): median x"
              f"{sorted(growths)[len(growths) // 2]:.2f}, max x{max(growths):.2f}")
    for msg in problems:
        print(f"soak: FAILED: {msg}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
