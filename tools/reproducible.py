"""A second build of the book must give the checkout's build byte for byte: ``make reproducible``.

``make reproducible`` first brings the checkout's build up to date (``make book``: the tree the tests
then check). This script copies the book's sources into a fresh folder at another path and builds
them there from scratch, with the strict flags of ``make book``, another hash seed and another date
(see ``VARIANT``), in the reader's environment (``tools/reader.py``): the ``jupyter-book`` of a fresh
venv outside the checkout where the package is the wheel the checkout's site offers (byte for byte
the one the copy's site offers, as the comparison shows), installed with its ``book`` extra at the
lock's versions, so every page executes where a reader's downloaded notebook does (only the
installed wheel to import, an empty folder). Then every file of the two
``_build/html`` trees is compared byte for byte. Any difference in an HTML, SVG or PNG file, in the
search index or in any other output fails the check, with the first lines of the difference shown.
When they match, what the copy executed and glued is kept in ``_build/reader`` for
``tests/test_notebooks.py`` (``make notebooks``). So CI builds the book twice, and tests both builds:
the checkout's as a site, the copy's as the reader's run of every notebook.

    python tools/reproducible.py [--keep]
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import reader as rd
from buildpaths import BUILD, HTML, ROOT

# Never copied: build outputs, the virtual environment, caches and version control.
SKIP = {".venv", "_build", ".git", "__pycache__", ".pytest_cache", ".hypothesis",
        ".ipynb_checkpoints", ".jupyter_cache"}
# Every output file is compared, Sphinx's .buildinfo (a hash of the configuration) included.
NOT_COMPARED: set[str] = set()
# Compared with one line masked. Sphinx's .buildinfo hashes the configuration values that need an HTML
# rebuild, and extensions put their own folders in two of them (html_static_path, templates_path: a
# package's folder under site-packages), so a build in another environment hashes to another value;
# the file serves Sphinx's next incremental build, never a reader. Its other lines are compared.
MASKED = {".buildinfo": re.compile(rb"^config: [0-9a-f]+$", re.M)}
JB_FLAGS = os.environ.get("JB_FLAGS", "-n -W --keep-going").split()  # the Makefile passes its own


def copy_sources(dest: Path) -> None:
    shutil.copytree(ROOT, dest, ignore=lambda _d, names: [n for n in names if n in SKIP
                                                          or n.endswith(".egg-info")])


# The copy's build differs from the checkout's in everything that must not matter: the folder,
# Python's hash seed (set and dict ordering: the checkout's build has a random one, or the caller's)
# and the date that date-aware tools read (Sphinx and Matplotlib honour SOURCE_DATE_EPOCH): the
# checkout builds "now", the copy on 1 January 2000.
VARIANT = {"PYTHONHASHSEED": "2", "SOURCE_DATE_EPOCH": "946684800"}


def start_build(src: Path, log: Path, variant: dict[str, str], reader: rd.Reader) -> subprocess.Popen:
    """The copy's build, by the reader's ``jupyter-book``: its pages import the reader's installed wheel."""
    env = {k: v for k, v in reader.env.items() if k != "SOURCE_DATE_EPOCH"}
    env.update(variant)
    out = log.open("w")
    return subprocess.Popen([reader.exe("jupyter-book"), "build", str(src), *JB_FLAGS], cwd=src, env=env,
                            stdout=out, stderr=subprocess.STDOUT)


def tree(html: Path) -> dict[str, Path]:
    return {p.relative_to(html).as_posix(): p for p in sorted(html.rglob("*"))
            if p.is_file() and p.name not in NOT_COMPARED}


def compare(a: Path, b: Path, *, context: int = 12) -> list[str]:
    """Human-readable differences between two output trees; empty when they are identical."""
    ta, tb = tree(a), tree(b)
    problems = [f"only in the first build: {n}" for n in sorted(ta.keys() - tb.keys())]
    problems += [f"only in the second build: {n}" for n in sorted(tb.keys() - ta.keys())]
    for name in sorted(ta.keys() & tb.keys()):
        x, y = ta[name].read_bytes(), tb[name].read_bytes()
        if name in MASKED:
            x, y = (MASKED[name].sub(b"config: (masked)", z) for z in (x, y))
        if x == y:
            continue
        msg = f"differs: {name} ({len(x)} vs {len(y)} bytes)"
        try:
            lx, ly = x.decode().splitlines(), y.decode().splitlines()
        except UnicodeDecodeError:
            problems.append(msg + ", binary")
            continue
        diff = list(difflib.unified_diff(lx, ly, "first", "second", lineterm="", n=0))
        shown = "\n".join("    " + line[:200] for line in diff[2:2 + context])
        problems.append(f"{msg}\n{shown}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--keep", action="store_true", help="keep the copy's folder")
    args = ap.parse_args(argv)
    if os.environ.get("PYTHONHASHSEED") == VARIANT["PYTHONHASHSEED"]:
        print(f"make reproducible: PYTHONHASHSEED={VARIANT['PYTHONHASHSEED']} is the copy's own seed", file=sys.stderr)
        return 1
    if not (HTML / "book").is_dir():
        print(f"make reproducible: {HTML} has no book: run `make book` first", file=sys.stderr)
        return 1
    work = Path(tempfile.mkdtemp(prefix="book-repro-"))
    src = work / "second-copy" / "book"  # another path than the checkout's, on purpose
    t0 = time.monotonic()
    try:
        copy_sources(src)
        # The wheel the checkout's site offers; the copy's build offers its own, compared with it below.
        reader = rd.make(work / "reader", rd.offered_wheel(HTML), src / "requirements.txt")
        print(f"make reproducible: the reader's environment made ({time.monotonic() - t0:.0f} s)")
        if start_build(src, work / "build.log", VARIANT, reader).wait() != 0:
            print((work / "build.log").read_text()[-6000:], file=sys.stderr)
            print(f"make reproducible: the build in {src} failed", file=sys.stderr)
            return 1
        problems = compare(HTML, src / "_build" / "html")
        n = len(tree(HTML))
        if problems:
            print("\n".join(problems), file=sys.stderr)
            print(f"make reproducible: {len(problems)} of {n} files differ between the checkout's build "
                  "(first) and a clean build of a copy (second)", file=sys.stderr)
            if any(p.startswith("only in the first build: _images/") for p in problems):
                print("make reproducible: Sphinx never removes an image that no page uses any more, so an "
                      "incremental build keeps those of earlier builds: `make clean reproducible` compares "
                      "a fresh checkout build", file=sys.stderr)
            return 1
        kept = rd.record(BUILD, reader, src / "_build", HTML)
        print(f"make reproducible: a clean build of a copy in the reader's environment gave the checkout's "
              f"{n} files byte for byte ({time.monotonic() - t0:.0f} s); what it executed is kept in {kept}")
        return 0
    finally:
        if args.keep:
            print(f"the copy's folder kept in {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
