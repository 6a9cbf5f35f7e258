"""Mark every number the build computed: a quiet dotted underline, and its glue name on hover.

MyST-NB pastes ``{glue:text}`` and ``{glue:md}`` as bare spans. This extension wraps each pasted
value in ``<span class="glued" title="computed: NAME">``, where NAME is the key the page's cell glued
it under, so a reader can tell a computed number from a typed one and find what computed it. The
look lives in ``static/book.css`` (with the dark-mode rules for figures).

Enable it in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from docutils import nodes
from myst_nb.ext.glue.domain import NbGlueDomain
from myst_nb.ext.glue.roles import PasteMarkdownRole, PasteTextRole

STATIC = Path(__file__).parent / "static"


def glue_key(text: str) -> str:
    """The glue name in a role's text: ``w_ac:.3f`` → ``w_ac``, ``page::w_ac`` → ``w_ac``.

    >>> glue_key("cost_n:,d"), glue_key("n_people"), glue_key("scores::sim_d:.1f")
    ('cost_n', 'n_people', 'sim_d')
    """
    key = text.rsplit(":", 1)[0] if ":" in text.replace("::", "") else text
    return key.split("::")[-1]


def _marked(result, key: str):
    pasted, messages = result
    if not pasted:
        return pasted, messages
    title = escape(f"computed: {key}", quote=True)
    open_ = nodes.raw("", f'<span class="glued" title="{title}">', format="html")
    close = nodes.raw("", "</span>", format="html")
    return [open_, *pasted, close], messages


class MarkedText(PasteTextRole):
    def run(self):
        return _marked(super().run(), glue_key(self.text))


class MarkedMarkdown(PasteMarkdownRole):
    def run(self):
        return _marked(super().run(), glue_key(self.text))


def _add_static(app) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    NbGlueDomain.roles = {**NbGlueDomain.roles, "text": MarkedText(), "md": MarkedMarkdown()}
    app.connect("builder-inited", _add_static)
    app.add_css_file("book.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
