"""What a reader can cite: every labeled equation, theorem, definition, figure and exercise of the book.

The book's sources are read, not a hand-kept list: :func:`citables` parses the text of the pages, and
the integrity tests use the same reader. The package reads no file of the repository: what a cell
needs ships as package data (``attention_graph/data``), written from the sources by
``tools/package_data.py`` (run by ``make book``): ``results.json``, the index of results, and a copy
of ``CITATION.cff``, the one source of the book's own citation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from importlib import resources

import yaml

__all__ = ["Citable", "blocks", "labeled_equations", "theorem_labels", "toc_pages", "citables",
           "results", "results_json", "index_markdown", "book_bibtex", "LABEL_PATTERN"]

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|:{3,})\{?(?P<name>[\w:-]*)\}?[ \t]*(?P<arg>.*)$")
# Directives whose whole body is code or math, never prose.
NON_PROSE = {"code-cell", "math", "literalinclude", "code", "code-block", "raw", "bibliography",
             "glue:math", "toctree", "eval-rst", "automodule", "autofunction", "autoclass", ""}
THEOREM_KINDS = ("theorem", "lemma", "proposition", "corollary")
CITABLE_PROOF_KINDS = THEOREM_KINDS + ("definition",)
# A public label: a kind prefix and lowercase words joined by hyphens.
LABEL_PATTERN = re.compile(r"^(eq|thm|lem|prop|cor|def|fig|ex)-[a-z0-9]+(-[a-z0-9]+)*$")


def blocks(text: str):
    """Yield (name, arg, options, body_lines, start_line) for each fenced directive at any depth."""
    lines = text.splitlines()
    stack: list[tuple[str, str, str, int, list[str]]] = []
    for no, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if stack:
            if line.strip() == stack[-1][0]:
                _fence, name, arg, start, body = stack.pop()
                options = {}
                for b in body:
                    om = re.match(r"^\s*:([\w-]+):\s*(.*)$", b)
                    if not om:
                        break
                    options[om.group(1)] = om.group(2).strip()
                yield name, arg, options, body, start
                if stack:
                    stack[-1][4].extend(body)
                continue
            if m and m.group("name") and stack[-1][1] not in NON_PROSE:
                stack.append((m.group("fence"), m.group("name"), m.group("arg"), no, []))
                continue
            stack[-1][4].append(line)
            continue
        if m and (m.group("name") or m.group("fence").startswith("`")):
            stack.append((m.group("fence"), m.group("name"), m.group("arg"), no, []))


def labeled_equations(text: str) -> list[tuple[str, str, str | None]]:
    """(label, kind, glue key) for every labeled display equation: kind is "glue" or "math"."""
    found = []
    for name, arg, options, _body, _start in blocks(text):
        if name == "glue:math" and "label" in options:
            found.append((options["label"], "glue", arg.strip()))
        elif name == "math" and "label" in options:
            found.append((options["label"], "math", None))
    for m in re.finditer(r"\$\$[\s\S]*?\$\$[ \t]*\(([\w:-]+)\)", text):
        found.append((m.group(1), "math", None))
    for m in re.finditer(r"\\label\{([^}]+)\}", text):
        found.append((m.group(1), "math", None))
    return found


def theorem_labels(text: str, kinds=THEOREM_KINDS) -> list[str]:
    """Labels of every sphinx-proof directive of the given kinds (theorems and the like)."""
    out = []
    for name, _arg, options, _body, start in blocks(text):
        if name.startswith("prf:") and name[4:] in kinds:
            if "label" not in options:
                raise ValueError(f"a {name} at line {start} has no :label:")
            out.append(options["label"])
    return out


@dataclass(frozen=True)
class Citable:
    kind: str  # equation, theorem, lemma, proposition, corollary, definition, figure, exercise
    label: str
    title: str
    page: str  # the page's stem, e.g. "scores"


def toc_pages(toc: str) -> list[str]:
    """Stems of the book's pages in the order of a ``_toc.yml`` given as text.

    >>> toc_pages("root: book/intro\\nchapters:\\n  - file: book/notation\\n")
    ['notation']
    """
    return re.findall(r"file:\s*book/([\w-]+)", toc)


def citables(pages: Iterable[tuple[str, str]]) -> list[Citable]:
    """Every citable result in ``pages``, (stem, MyST text) pairs in reading order.

    >>> citables([("softmax", ":::{prf:theorem} Rows sum to one\\n:label: thm-rows\\n:::")])
    [Citable(kind='theorem', label='thm-rows', title='Rows sum to one', page='softmax')]
    """
    out: list[Citable] = []
    for page, text in pages:
        for name, arg, options, _body, _start in blocks(text):
            label = options.get("label") or options.get("name")
            if name.startswith("prf:") and name[4:] in CITABLE_PROOF_KINDS and label:
                out.append(Citable(name[4:], label, arg.strip(), page))
            elif name in ("math", "glue:math") and options.get("label"):
                out.append(Citable("equation", options["label"], "", page))
            elif name in ("figure", "glue:figure") and options.get("name"):
                out.append(Citable("figure", options["name"], "", page))
            elif name == "exercise" and label:
                out.append(Citable("exercise", label, arg.strip(), page))
        for m in re.finditer(r"\$\$[\s\S]*?\$\$[ \t]*\(([\w:-]+)\)", text):
            out.append(Citable("equation", m.group(1), "", page))
    return out


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
    """A MyST table of ``items`` with live references: each row links to its result.

    ``checks`` maps a label to how strongly its check establishes it (``registry.badge``); a result
    without a check (a definition, a figure, an exercise) shows a dash.
    """
    checks = checks or {}
    ref = {"equation": "Equation {{eq}}`{label}`", "figure": "{{numref}}`{label}`",
           "exercise": "{{numref}}`{label}`"}
    rows = ["| Result | Title | Label | Chapter | Check |", "| --- | --- | --- | --- | --- |"]
    for it in items:
        link = ref.get(it.kind, "{{prf:ref}}`{label}`").format(label=it.label)
        title = it.title.replace("|", "\\|")
        check = checks.get(it.label, "—").replace("|", "\\|")
        rows.append(f"| {link} | {title} | `{it.label}` | {{doc}}`{it.page}` | {check} |")
    return "\n".join(rows)


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
        "note": "Every formula checked by SymPy; every number computed by its package",
    }
    body = ",\n".join(f"  {k:<7} = {{{v}}}" for k, v in fields.items() if v)
    return f"@book{{attention_is_a_graph,\n{body}\n}}"
