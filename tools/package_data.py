"""Write the package data that the book's cells read, from the repository's sources.

The package reads no file of the repository (a downloaded notebook runs where only the package is
installed), so what a cell needs ships inside it, under ``code/attention_graph/data/``:

- ``results.json``: the index of citable results, parsed from ``_toc.yml`` and ``book/*.md``;
- ``CITATION.cff``: a copy of the repository's ``CITATION.cff``, the one source of the citation;
- ``checks.json``: the class of every registered check (``registry.strength``) and the line the book
  shows under its result (``registry.badge``), read by ``book/_ext/check_strength.py``: a Sphinx
  extension does not import the package.

``make book`` runs this before every build, so the packaged files follow the sources; commit them
with the change that moved them. ``--check`` writes nothing and fails when a file is out of date
(``tests/test_packaging.py`` runs that check).

    python tools/package_data.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import mystsource
from attention_graph import citable
from buildpaths import DATA, ROOT


def book_results(root: Path = ROOT) -> list[citable.Citable]:
    """Every citable result of the book at ``root``, in the order of its ``_toc.yml``."""
    stems = mystsource.toc_pages((root / "_toc.yml").read_text(encoding="utf-8"))
    return mystsource.citables((s, (root / "book" / f"{s}.md").read_text(encoding="utf-8")) for s in stems)


def checks_json() -> str:
    """{label: {"strength", "scope", "badge"}} of every registered check, as JSON."""
    import attention_graph  # noqa: F401 - registers every check
    from attention_graph import registry

    checks = {}
    for label in registry.labels():
        kind, scope = registry.strength(label)
        checks[label] = {"strength": kind, "scope": scope, "badge": registry.badge(label)}
    return json.dumps(checks, indent=1, ensure_ascii=False) + "\n"


def expected(root: Path = ROOT) -> dict[str, str]:
    """The text each packaged file must hold, by file name under ``data/``."""
    return {
        "results.json": citable.results_json(book_results(root)),
        "CITATION.cff": (root / "CITATION.cff").read_text(encoding="utf-8"),
        "checks.json": checks_json(),
    }


def stale(root: Path = ROOT, data: Path = DATA) -> list[str]:
    """Names of the packaged files that differ from what the sources give."""
    return [name for name, text in expected(root).items()
            if not (data / name).exists() or (data / name).read_text(encoding="utf-8") != text]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail if out of date")
    args = parser.parse_args(argv)
    texts = expected()
    names = [name for name, text in texts.items()
             if not (DATA / name).exists() or (DATA / name).read_text(encoding="utf-8") != text]
    if args.check:
        for name in names:
            print(f"code/attention_graph/data/{name} is out of date: run python tools/package_data.py",
                  file=sys.stderr)
        return 1 if names else 0
    DATA.mkdir(parents=True, exist_ok=True)
    for name in names:
        (DATA / name).write_text(texts[name], encoding="utf-8")
        print(f"package data: wrote code/attention_graph/data/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
