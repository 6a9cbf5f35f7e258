"""Mark every labeled result with a small badge saying how strongly its check establishes it.

The badge shows one word, the class of the check: *proved* (symbolic, for general symbols),
*verified* (exact, at named sizes) or *measured* (numerical). Its scope, the sentence
``attention_graph.registry`` gives ("Verified exactly for n = 2, 3 ..."), is one hover, tap or
key press away: the badge is a ``<details>`` element whose ``<summary>`` is focusable and carries the
sentence as its ``title`` and ``aria-label``; opened, it shows the sentence beside the word.

A badge is added after each labeled display equation and at the end of each theorem whose label has
a registered check, when a page is read, so a page cannot forget it and a new result gets its badge
without any markup. Where the class and scope come from is :func:`check_of` alone: the extension does
not import the package; ``tools/package_data.py`` (run by ``make book`` before the build) writes every
label's class and sentence into ``attention_graph/data/checks.json``, read here.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from docutils import nodes

CHECKS = Path("code") / "attention_graph" / "data" / "checks.json"  # from the book's root


def _checks(app) -> dict[str, dict]:
    """{label: {"strength", "scope", "badge"}}, as tools/package_data.py wrote it (none for a small book
    without the package's data, as the integrity tests build)."""
    path = Path(app.confdir) / CHECKS
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def check_of(checks: dict[str, dict], label: str | None) -> tuple[str, str] | None:
    """(class, scope sentence) of the check behind ``label``, or None when it has none."""
    check = checks.get(label) if label else None
    return None if check is None else (check["strength"], check["badge"])


class check_badge(nodes.General, nodes.Element):
    """A result's class, with its scope folded in; rendered by :func:`visit_html`."""


def visit_html(self, node: check_badge) -> None:
    kind, scope = node["kind"], node["scope"]
    said = escape(scope, quote=True)
    self.body.append(
        f'<div class="check-strength check-{kind}" id="check-{escape(node["label"], quote=True)}">'
        f'<details class="check-badge"><summary title="{said}" aria-label="{escape(kind)}: {said}">'
        f'{escape(kind)}</summary> <span class="check-scope">{escape(scope, quote=False)}</span>'
        "</details></div>")
    raise nodes.SkipNode


def visit_text(self, node: check_badge) -> None:  # any other builder: the sentence, in brackets
    self.add_text(f"[{node['scope']}]")
    raise nodes.SkipNode


def visit_other(self, node: check_badge) -> None:
    raise nodes.SkipNode


def _badge(label: str, kind: str, scope: str) -> check_badge:
    return check_badge("", label=label, kind=kind, scope=scope)


def add_badges(app, doctree) -> None:
    checks = _checks(app)
    for node in list(doctree.findall(nodes.math_block)):
        label = node.get("label")
        found = check_of(checks, label)
        if found:
            node.parent.insert(node.parent.index(node) + 1, _badge(label, *found))
    for node in list(doctree.findall(nodes.Admonition)):
        label = node.get("label")
        found = check_of(checks, label) if node.get("realtype") else None  # a sphinx-proof result
        if found:
            sections = [c for c in node.children if isinstance(c, nodes.section)]
            (sections[-1] if sections else node).append(_badge(label, *found))


def setup(app):
    app.add_node(check_badge, html=(visit_html, None), text=(visit_text, None),
                 latex=(visit_other, None), man=(visit_other, None), texinfo=(visit_other, None))
    app.connect("doctree-read", add_badges)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
