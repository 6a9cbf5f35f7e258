"""Write the package data that the book's cells read, from the repository's sources.

The package reads no file of the repository (a downloaded notebook runs where only the package is
installed), so what a cell needs ships inside it, under ``code/attention_graph/data/``:

- ``results.json``: the index of citable results, parsed from ``_toc.yml`` and ``book/*.md``;
- ``CITATION.cff``: a copy of the repository's ``CITATION.cff``, the one source of the citation.

``make book`` runs this before every build, so the packaged files follow the sources; commit them
with the change that moved them. ``--check`` writes nothing and fails when a file is out of date
(``tests/test_packaging.py`` runs that check).

    python tools/package_data.py [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from attention_graph import citable

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "code" / "attention_graph" / "data"


def book_results(root: Path = ROOT) -> list[citable.Citable]:
    """Every citable result of the book at ``root``, in the order of its ``_toc.yml``."""
    stems = citable.toc_pages((root / "_toc.yml").read_text(encoding="utf-8"))
    return citable.citables((s, (root / "book" / f"{s}.md").read_text(encoding="utf-8")) for s in stems)


def expected(root: Path = ROOT) -> dict[str, str]:
    """The text each packaged file must hold, by file name under ``data/``."""
    return {
        "results.json": citable.results_json(book_results(root)),
        "CITATION.cff": (root / "CITATION.cff").read_text(encoding="utf-8"),
    }


def stale(root: Path = ROOT, data: Path = DATA) -> list[str]:
    """Names of the packaged files that differ from what the sources give."""
    return [name for name, text in expected(root).items()
            if not (data / name).exists() or (data / name).read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail if out of date")
    args = parser.parse_args(argv)
    names = stale()
    if args.check:
        for name in names:
            print(f"code/attention_graph/data/{name} is out of date: run python tools/package_data.py",
                  file=sys.stderr)
        return 1 if names else 0
    DATA.mkdir(parents=True, exist_ok=True)
    for name in names:
        (DATA / name).write_text(expected()[name], encoding="utf-8")
        print(f"package data: wrote code/attention_graph/data/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
