"""How long each page takes to execute: the benchmark of the rule "a page executes in 20 s or less".

``make page-times`` runs after ``make book``. Each page's notebook, as the build wrote it
(``_build/jupyter_execute/book/<page>.ipynb``), is copied alone into an empty temporary folder and
executed there by ``jupyter execute`` in a fresh kernel, as a reader's downloaded notebook runs. The
time counted is the wall time of that whole run, kernel start included, and each page's figure is the
median of ``--repeat`` runs. The pages run one after another, never side by side, so a page does not
pay for another's work; the machine's load before and after is written down with the times, because a
busy machine (other builds, a browser) slows every page and its figure is then not the page's own.

The record goes to ``_build/page_times.json`` (or ``--out``), and a table, slowest page first, to
standard output. The exit status is 1 if a page's median is over ``--limit`` seconds (20 by default).
This is a benchmark, not a test: no test reads a clock.

    python tools/page_times.py [--repeat 3] [--limit 20] [--only training language_model]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from buildpaths import BUILD, EXECUTED

JUPYTER = Path(sys.executable).with_name("jupyter")  # the venv's, beside this Python


def execute_once(notebook: Path) -> float:
    """Wall seconds of one run of ``notebook`` in a fresh kernel, alone in an empty folder."""
    with tempfile.TemporaryDirectory(prefix="page-time-") as folder:
        copy = Path(folder) / notebook.name
        shutil.copyfile(notebook, copy)
        start = time.perf_counter()
        run = subprocess.run([str(JUPYTER), "execute", "--timeout=600", copy.name], cwd=folder,
                             capture_output=True, text=True)
        seconds = time.perf_counter() - start
    if run.returncode != 0:
        raise SystemExit(f"{notebook.name} failed to execute:\n{run.stderr[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per page; the median is kept")
    parser.add_argument("--limit", type=float, default=20.0, help="the most seconds a page may take")
    parser.add_argument("--only", nargs="*", default=None, help="page stems (default: every page)")
    parser.add_argument("--out", type=Path, default=BUILD / "page_times.json")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    notebooks = sorted((EXECUTED / "book").glob("*.ipynb"))
    if args.only is not None:
        notebooks = [nb for nb in notebooks if nb.stem in set(args.only)]
        missing = set(args.only) - {nb.stem for nb in notebooks}
        if missing:
            parser.error(f"--only names pages with no executed notebook: {sorted(missing)}")
    if not notebooks:
        raise SystemExit(f"no executed notebook in {EXECUTED / 'book'}: run `make book` first")
    load_before = os.getloadavg()
    seconds = {nb.stem: [execute_once(nb) for _ in range(args.repeat)] for nb in notebooks}
    median = {stem: statistics.median(runs) for stem, runs in seconds.items()}
    record = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "python": platform.python_version(),
                          "load_average_before": load_before, "load_average_after": os.getloadavg()},
              "repeat": args.repeat, "limit_s": args.limit, "runs_s": seconds, "median_s": median}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    over = {stem: t for stem, t in median.items() if t > args.limit}
    for stem, t in sorted(median.items(), key=lambda item: -item[1]):
        print(f"{t:7.1f} s  {stem}{'  OVER THE LIMIT' if stem in over else ''}")
    print(f"load average before {load_before[0]:.2f}, after {os.getloadavg()[0]:.2f}; record: {args.out}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
