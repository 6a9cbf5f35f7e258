"""The reader of the book's MyST sources: fenced directives, labeled equations, theorems, citable results.

Build code, not a reader's: ``tools/package_data.py`` makes the packaged index of results with it
(``attention_graph/data/results.json``, read back by ``attention_graph.citable.results``), and the
integrity tests read every page with it (``tests/booktools.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from attention_graph.citable import Citable

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|:{3,})\{?(?P<name>[\w:-]*)\}?[ \t]*(?P<arg>.*)$")
# Directives whose whole body is code or math, never prose.
NON_PROSE = {"code-cell", "math", "literalinclude", "code", "code-block", "raw", "bibliography",
             "glue:math", "toctree", "eval-rst", "automodule", "autofunction", "autoclass", ""}
THEOREM_KINDS = ("theorem", "lemma", "proposition", "corollary")
CITABLE_PROOF_KINDS = THEOREM_KINDS + ("definition",)


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
