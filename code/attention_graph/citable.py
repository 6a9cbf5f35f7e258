"""What a reader can cite: every labeled equation, theorem, definition, figure and exercise of the book.

The book's sources are read, not a hand-kept list: ``tools/mystsource.py`` parses the text of the
pages (build code: the integrity tests use the same reader). The package reads no file of the
repository: what a cell needs ships as package data (``attention_graph/data``), written from the
sources by ``tools/package_data.py`` (run by ``make book``): ``results.json``, the index of results,
and a copy of ``CITATION.cff``, the one source of the book's own citation.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from importlib import resources

import yaml

__all__ = ["Citable", "results", "results_json", "index_markdown", "book_bibtex", "LABEL_PATTERN"]

# A public label: a kind prefix and lowercase words joined by hyphens.
LABEL_PATTERN = re.compile(r"^(eq|thm|lem|prop|cor|def|fig|ex)-[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Citable:
    kind: str  # equation, theorem, lemma, proposition, corollary, definition, figure, exercise
    label: str
    title: str
    page: str  # the page's stem, e.g. "scores"


def results_json(items: list[Citable]) -> str:
    """The text of the packaged index of results (``data/results.json``), one result a line."""
    lines = ",\n".join(json.dumps(asdict(it), ensure_ascii=False) for it in items)
    return f"[\n{lines}\n]\n"


def _data(name: str) -> str:
    return resources.files("attention_graph").joinpath("data", name).read_text(encoding="utf-8")


def results() -> list[Citable]:
    """The book's citable results in reading order, as packaged (``data/results.json``).

    >>> all(isinstance(it, Citable) for it in results())
    True
    """
    return [Citable(**entry) for entry in json.loads(_data("results.json"))]


def index_markdown(items: list[Citable], checks: dict[str, str] | None = None) -> str:
    """MyST tables of ``items`` with live references, one a chapter under a line naming it: each row
    links to its result. (The chapter is no column, so each table fits a phone's column.)

    ``checks`` maps a label to how strongly its check establishes it (``registry.badge``); a result
    without a check (a definition, a figure, an exercise) shows a dash.
    """
    checks = checks or {}
    ref = {"equation": "Equation {{eq}}`{label}`", "figure": "{{numref}}`{label}`",
           "exercise": "{{numref}}`{label}`"}
    head = ["| Result | Title | Label | Check |", "| --- | --- | --- | --- |"]
    blocks, page = [], None
    for it in items:
        if it.page != page:
            page = it.page
            blocks.append([f"From {{doc}}`{page}`:", "", *head])
        link = ref.get(it.kind, "{{prf:ref}}`{label}`").format(label=it.label)
        title = it.title.replace("|", "\\|")
        check = checks.get(it.label, "—").replace("|", "\\|")
        blocks[-1].append(f"| {link} | {title} | `{it.label}` | {check} |")
    return "\n\n".join("\n".join(block) for block in blocks)


def book_bibtex(cff_text: str | None = None) -> str:
    """BibTeX for the book, made from ``CITATION.cff`` (its one source; by default the packaged copy).

    >>> book_bibtex().startswith("@book{attention_is_a_graph,")
    True
    """
    if cff_text is None:
        cff_text = _data("CITATION.cff")
    if not isinstance(cff_text, str):
        raise TypeError(f"cff_text must be the text of a CITATION.cff (str); got {type(cff_text).__name__}")
    cff = yaml.safe_load(cff_text)
    pref = cff.get("preferred-citation", cff)
    names = " and ".join(a.get("name") and "{" + a["name"] + "}"
                         or f"{a['family-names']}, {a['given-names']}" for a in pref["authors"])
    fields = {
        "title": pref["title"],
        "author": names,
        "year": str(pref.get("year", str(cff.get("date-released", ""))[:4])),
        "version": str(cff.get("version", "")),
        "url": pref.get("url", cff.get("url", "")),
        "note": "Every numbered formula checked by SymPy; every number computed by its package",
    }
    body = ",\n".join(f"  {k:<7} = {{{v}}}" for k, v in fields.items() if v)
    return f"@book{{attention_is_a_graph,\n{body}\n}}"
