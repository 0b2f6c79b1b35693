"""Wall time of building the course: ``run`` (cold), a first ``site`` after it, a cached ``site``.

Usage (from the repository root, in the course's environment)::

    python benchmarks/bench_course.py              # every notebook, one worker per core
    python benchmarks/bench_course.py --jobs 2 03  # two workers, notebooks whose name contains "03"

What is measured (``time.perf_counter`` around each command, run as a subprocess exactly as
``course.py`` runs it, without the environment check):

1. ``run``: ``tools/build_course.py``, with ``build/executed-editions/`` and ``build/site/`` removed
   first (cold: every notebook executed, bilingual edition, and its pages rendered);
2. first ``site``: ``tools/website.py`` right after: reuses ``run``'s bilingual executions, executes
   the Korean and English editions, renders the three editions;
3. cached ``site``: ``tools/website.py`` again: nothing executed, pages rendered again.

Targets: the whole course (``run``) within 2.5 minutes on a 2-core machine, and the
first ``site`` after ``run`` within 2 times ``run``. The ratios printed are ``site / run``. Times
depend on the machine and on what else runs on it; say which machine (cores, load) with numbers.
This script removes ``build/executed-editions/`` and ``build/site/`` (build outputs, not sources).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_RUN_SECONDS = 150.0  # on 2 cores
TARGET_SITE_RATIO = 2.0


def _timed(label: str, command: list[str]) -> float:
    print(f"--- {label}: {' '.join(command[1:])}", flush=True)
    start = time.perf_counter()
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    failures = [line.strip() for line in result.stdout.splitlines() if "FAILED" in line or "problem:" in line]
    if result.returncode != 0:  # keep timing the other steps; a failed notebook makes the step shorter
        print(f"    exit {result.returncode}:", *failures[:10], sep="\n      ")
    print(f"    {seconds:.1f} s", flush=True)
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pattern", nargs="?", default="", help="only notebooks whose file name contains this")
    parser.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per core)")
    args = parser.parse_args(argv)
    extra = [args.pattern] if args.pattern else []
    if args.jobs:
        extra += ["--jobs", str(args.jobs)]
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{cores} core(s), load average {load:.1f} at start, jobs {args.jobs or cores}")
    for folder in ("executed-editions", "site"):
        shutil.rmtree(ROOT / "build" / folder, ignore_errors=True)
    python = sys.executable
    run = _timed("run (cold)", [python, "tools/build_course.py", *extra])
    site = _timed("first site after run", [python, "tools/website.py", *extra])
    cached = _timed("cached site", [python, "tools/website.py", *extra])
    print("\n| step | seconds | / run |\n|---|---:|---:|")
    for label, seconds in (("run (cold)", run), ("first site after run", site), ("cached site", cached)):
        print(f"| {label} | {seconds:.1f} | {seconds / run:.2f} |")
    print(
        f"\nrun: {run:.0f} s (target <= {TARGET_RUN_SECONDS:.0f} s on 2 cores); "
        f"first site / run = {site / run:.2f} (target <= {TARGET_SITE_RATIO:.1f}); "
        f"cached site / run = {cached / run:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
