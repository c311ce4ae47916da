"""What the single-program bench scripts (containers.py, queues.py) share:
running one measurement program, under mpirun as root where needed, and
naming the CPU for the results' header. Standard library only."""

import os
import subprocess
import sys


def run_program(cmd, who, timeout):
    """Runs cmd; its stdout, or None when it did not finish in `timeout`
    seconds (said on stderr). A failed run ends the script with its stderr."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    try:
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"{who}: {' '.join(cmd)} did not finish in {timeout} s", file=sys.stderr)
        return None
    if out.returncode != 0:
        sys.exit(f"{who}: {' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    return out.stdout


def cpu_model():
    """lscpu's model name, or "unknown"."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        return "unknown"
    for line in out.splitlines():
        if line.startswith("Model name"):
            return line.split(":", 1)[1].strip()
    return "unknown"
