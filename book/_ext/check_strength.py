"""Show under every labeled result how strongly its SymPy check establishes it.

The line is generated from ``attention_graph.registry`` (``registry.badge(label)``): "Proved in SymPy
for every d ...", "Verified exactly for n = 2, 3 ...", "Measured to 1e-12 ...". The extension does not
import the package: ``tools/package_data.py`` (run by ``make book`` before the build) writes every
label's class and line into the package data, ``attention_graph/data/checks.json``, read here. It is added after each
labeled display equation and at the end of each theorem whose label has a registered check, when a
page is read, so a page cannot forget it and a new result gets its line without any markup.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes

CHECKS = Path("code") / "attention_graph" / "data" / "checks.json"  # from the book's root


def _checks(app) -> dict[str, dict]:
    """{label: {"strength", "scope", "badge"}}, as tools/package_data.py wrote it.

    A book without the package's data (the small books the integrity tests build) has no results to
    badge; this book's every result is checked for its badge by tests/test_integrity.py.
    """
    path = Path(app.confdir) / CHECKS
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _badge(label: str, check: dict) -> nodes.paragraph:
    kind, text = check["strength"], check["badge"]
    return nodes.paragraph(text, "", nodes.emphasis(text, text),
                           classes=["check-strength", f"check-{kind}"], ids=[f"check-{label}"])


def add_badges(app, doctree) -> None:
    known = _checks(app)
    for node in list(doctree.findall(nodes.math_block)):
        label = node.get("label")
        if label in known:
            node.parent.insert(node.parent.index(node) + 1, _badge(label, known[label]))
    for node in list(doctree.findall(nodes.Admonition)):
        label = node.get("label")
        if label in known and node.get("realtype"):  # a sphinx-proof result
            sections = [c for c in node.children if isinstance(c, nodes.section)]
            (sections[-1] if sections else node).append(_badge(label, known[label]))


def setup(app):
    app.connect("doctree-read", add_badges)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
