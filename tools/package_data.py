"""Write the package data that the book's cells read, from the repository's sources.

The package reads no file of the repository (a downloaded notebook runs where only the package is
installed), so what a cell needs ships inside it, under ``code/attention_graph/data/``:

- ``results.json``: the index of citable results, parsed from ``_toc.yml`` and ``book/*.md``;
- ``CITATION.cff``: a copy of the repository's ``CITATION.cff``, the one source of the citation;
- ``checks.json``: the class of every registered check (``registry.strength``) and the line the book
  shows under its result (``registry.badge``), read by ``book/_ext/check_strength.py``: a Sphinx
  extension does not import the package;
- ``api.json``: each chapter's public names (its concept module's ``__all__``), in the order of
  ``_toc.yml``, with each class's documented members, read by ``book/_ext/api_chapters.py`` to
  write ``book/api.md``'s sections.

These four files are generated, never committed (``.gitignore``): ``make data`` writes them, and
every target that needs them (``make book``, ``make check``, the test runs) depends on it, so they
cannot be stale and no commit has to carry them. (The benchmark records beside them are committed:
a measurement is not a function of the sources.) ``--check`` writes nothing and fails when a file is
out of date (``tests/test_packaging.py`` runs that check).

``--freeze-labels`` (``make freeze-labels``, when the book is published) adds the book's new labels to
``tests/public_labels.txt``, the frozen list none of whose labels may disappear: a chapter never edits
that list by hand.

    python tools/package_data.py [--check | --freeze-labels]
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


def book_former_labels(root: Path = ROOT) -> dict[str, citable.Citable]:
    """{former label: the result it now anchors}: a renamed result keeps its former label as a second
    anchor (a MyST target right above it), so the permalinks that cite it still resolve."""
    stems = mystsource.toc_pages((root / "_toc.yml").read_text(encoding="utf-8"))
    return mystsource.former_labels((s, (root / "book" / f"{s}.md").read_text(encoding="utf-8")) for s in stems)


def checks_json() -> str:
    """{label: {"strength", "scope", "badge"}} of every registered check, as JSON."""
    import attention_graph  # noqa: F401 - registers every check
    from attention_graph import registry

    checks = {}
    for label in registry.labels():
        kind, scope = registry.strength(label)
        checks[label] = {"strength": kind, "scope": scope, "badge": registry.badge(label)}
    return json.dumps(checks, indent=1, ensure_ascii=False) + "\n"


def page_title(text: str) -> str:
    """A page's title: its first ``# `` heading."""
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


def class_members(cls: type) -> list[str]:
    """The members ``book/api.md`` shows for a class: its own documented methods and properties
    (a NamedTuple's fields, documented by the class's docstring, are not listed)."""
    import inspect

    def documented(value) -> bool:
        inner = value.fget if isinstance(value, property) else getattr(value, "__func__", value)
        return (isinstance(value, (property, classmethod, staticmethod)) or inspect.isfunction(value)) \
            and bool(inner.__doc__)

    return [name for name, value in vars(cls).items() if not name.startswith("_") and documented(value)]


def api_json(root: Path = ROOT) -> str:
    """{"chapters": [...]}: every concept module with public names, in the order of ``_toc.yml``."""
    import importlib

    import attention_graph

    stems = mystsource.toc_pages((root / "_toc.yml").read_text(encoding="utf-8"))
    concepts = attention_graph.concept_modules()
    chapters = []
    for stem in [s for s in stems if s in concepts] + [s for s in concepts if s not in stems]:
        module = importlib.import_module(f"attention_graph.{stem}")
        names = []
        for name in sorted(module.__all__):
            value = getattr(module, name)
            if isinstance(value, type) and issubclass(value, BaseException):
                continue
            item = {"name": name, "kind": "class" if isinstance(value, type) else "function"}
            if item["kind"] == "class":
                item["members"] = class_members(value)
            names.append(item)
        if names:
            page = root / "book" / f"{stem}.md"
            title = page_title(page.read_text(encoding="utf-8")) if page.exists() else stem
            chapters.append({"stem": stem, "title": title, "module": module.__name__, "names": names})
    return json.dumps({"chapters": chapters}, indent=1, ensure_ascii=False) + "\n"


def expected(root: Path = ROOT) -> dict[str, str]:
    """The text each packaged file must hold, by file name under ``data/``."""
    return {
        "results.json": citable.results_json(book_results(root)),
        "CITATION.cff": (root / "CITATION.cff").read_text(encoding="utf-8"),
        "checks.json": checks_json(),
        "api.json": api_json(root),
    }


def stale(root: Path = ROOT, data: Path = DATA) -> list[str]:
    """Names of the packaged files that differ from what the sources give."""
    return [name for name, text in expected(root).items()
            if not (data / name).exists() or (data / name).read_text(encoding="utf-8") != text]


LABELS = ROOT / "tests" / "public_labels.txt"  # the frozen labels: citations point at them
LABELS_HEADER = ("# The public labels of the book, frozen: citations point at these, so none may disappear\n"
                 "# (tests/test_citable.py). New labels join at publishing: make freeze-labels.\n"
                 "# Remove one only on purpose.\n")


def frozen_labels(path: Path = LABELS) -> list[str]:
    """The labels frozen so far (the file's lines that are not comments)."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [x.strip() for x in lines if x.strip() and not x.startswith("#")]


def freeze_labels(root: Path = ROOT, path: Path = LABELS) -> list[str]:
    """Add the book's labels not yet frozen to ``path`` (none is removed); return the ones added."""
    frozen = frozen_labels(path)
    new = sorted({it.label for it in book_results(root)} - set(frozen))
    if new:
        path.write_text(LABELS_HEADER + "".join(f"{x}\n" for x in sorted(set(frozen) | set(new))), encoding="utf-8")
    return new


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail if out of date")
    parser.add_argument("--freeze-labels", action="store_true",
                        help="add the book's new labels to tests/public_labels.txt (when publishing), write no data")
    args = parser.parse_args(argv)
    if args.freeze_labels:
        for label in freeze_labels():
            print(f"public labels: froze {label}")
        return 0
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
