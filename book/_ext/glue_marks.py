"""Mark every number the build computed, quietly: a faint tint on hover and its glue name as a tooltip.

MyST-NB pastes ``{glue:text}`` and ``{glue:md}`` as bare spans. This extension wraps each pasted
value in ``<span class="glued" title="computed: NAME">``, where NAME is the key the page's cell glued
it under, so a reader can tell a computed number from a typed one and find what computed it. In the
Markdown a ``{glue:md}`` block pastes (a table), every number outside math gets the same span. The
look lives in ``static/book.css`` (with the dark-mode rules for figures).

A number pasted into prose is also written as prose writes it (:func:`prose_number`): a power of
ten in Python's ``e`` notation, ``1e+09`` or ``2.5e-07``, becomes ``10⁹`` or ``2.5 × 10⁻⁷``, and a
negative number takes a true minus sign, ``-1`` becomes ``−1`` (U+2212, as math and the figures
write it; ASCII's hyphen is shorter and breaks a line after it). Only the text a ``{glue:text}`` or
``{glue:md}`` role pastes is rewritten, and the minus sign of a number in a table ``{glue:md}``
pastes, never math or code, and never the glued value the tests read.

Enable it in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

from docutils import nodes
from myst_nb.ext.glue.directives import PasteMarkdownDirective
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


# A number in Python's e notation: 1e+09, -2.5e-07, 1.0E6 (not the e of a word).
E_NOTATION = re.compile(r"(?<![\w.])([-\u2212]?)(\d+(?:\.\d+)?)[eE]([-+]?)(\d+)(?![\w.])")
# The hyphen of a negative number: -1, (-0.5, 2), not the hyphen of 2026-12-03, x-1 or a range 1-3.
HYPHEN_MINUS = re.compile(r"(?<![\w.)\]])-(?=\.?\d)")
# Math and code in a Markdown string: its numbers are left as written.
_MATH_OR_CODE = re.compile(r"\$\$[\s\S]*?\$\$|\$[^$\n]+\$|`[^`\n]*`")
SUPERSCRIPT = str.maketrans("0123456789-", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b")


def prose_number(text: str) -> str:
    """``text`` with every number in e notation written as a power of ten and every negative
    number with a minus sign; math (``$…$``) and code (```…```) in it are left as written.

    >>> prose_number("1e+09"), prose_number("2.5e-07"), prose_number("-1.0e6 and 3e-16")
    ('10⁹', '2.5 × 10⁻⁷', '−10⁶ and 3 × 10⁻¹⁶')
    >>> prose_number("(-1, 2)"), prose_number("| -0.707 | 2026-12-03 |"), prose_number("$-1$ `-1`")
    ('(−1, 2)', '| −0.707 | 2026-12-03 |', '$-1$ `-1`')
    """
    pieces, end = [], 0
    for m in _MATH_OR_CODE.finditer(text):
        pieces += [_prose_piece(text[end:m.start()]), m.group(0)]
        end = m.end()
    return "".join([*pieces, _prose_piece(text[end:])])


def minus_sign(text: str) -> str:
    """``text`` with the hyphen of every negative number a minus sign (U+2212).

    >>> minus_sign("-1 and -0.5, not 1-3 or x-1")
    '−1 and −0.5, not 1-3 or x-1'
    """
    return HYPHEN_MINUS.sub("\u2212", text)


def _prose_piece(text: str) -> str:
    def power(m: re.Match) -> str:
        sign, mantissa, esign, digits = m.groups()
        exponent = ("-" if esign == "-" else "") + str(int(digits))
        ten = "10" + exponent.translate(SUPERSCRIPT)
        body = ten if float(mantissa) == 1 else f"{mantissa} \u00d7 {ten}"
        return ("\u2212" if sign else "") + body

    return minus_sign(E_NOTATION.sub(power, text))


def _prose_numbers(tree: nodes.Node) -> None:
    for text in list(tree.findall(nodes.Text)):
        if text.parent is None:
            continue
        if any(isinstance(a, _NOT_PROSE) for a in _ancestors(text)):
            continue
        value = str(text)
        new = _prose_piece(value)  # a Text node: its $ and ` are characters, not math or code
        if new != value:
            text.parent.replace(text, nodes.Text(new))


class MarkedText(PasteTextRole):
    def run(self):
        pasted, messages = super().run()
        for node in pasted:
            _prose_numbers(node)
        return _marked((pasted, messages), glue_key(self.text))


class MarkedMarkdown(PasteMarkdownRole):
    def run(self):
        pasted, messages = super().run()
        for node in pasted:
            _prose_numbers(node)
        return _marked((pasted, messages), glue_key(self.text))


# A number in pasted Markdown: 3, -0.250, 1.5e-05, 20,000 (not the 2 of "x2" or of "v1.2.3").
NUMBER = re.compile(r"(?<![\w.^_])[-\u2212]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])")
# Text inside these is not prose: math, code and raw HTML keep their numbers unmarked.
_NOT_PROSE = (nodes.math, nodes.math_block, nodes.literal, nodes.literal_block, nodes.raw)


def _open_span(key: str):
    title = escape(f"computed: {key}", quote=True)
    return nodes.raw("", f'<span class="glued" title="{title}">', format="html")


def _marked(result, key: str):
    pasted, messages = result
    if not pasted:
        return pasted, messages
    close = nodes.raw("", "</span>", format="html")
    return [_open_span(key), *pasted, close], messages


def mark_numbers(tree: nodes.Node, key: str) -> int:
    """Wrap every number of the text under ``tree`` (outside math and code) in a marking span, a
    negative one with a minus sign.

    >>> p = nodes.paragraph("", "", nodes.Text("w = 0.25, n=-3 and x2"), nodes.math("", "-4"))
    >>> mark_numbers(p, "w")
    2
    >>> re.findall(r'title="computed: w">([^<]*)</span>', p.astext())
    ['0.25', '−3']
    """
    count = 0
    for text in list(tree.findall(nodes.Text)):
        if any(isinstance(a, _NOT_PROSE) for a in _ancestors(text)):
            continue
        value = str(text)
        pieces, end = [], 0
        for m in NUMBER.finditer(value):
            pieces += [nodes.Text(value[end:m.start()]), _open_span(key), nodes.Text(minus_sign(m.group(0))),
                       nodes.raw("", "</span>", format="html")]
            end = m.end()
        if not pieces:
            continue
        pieces.append(nodes.Text(value[end:]))
        parent = text.parent
        at = parent.index(text)
        parent[at:at + 1] = [p for p in pieces if not (isinstance(p, nodes.Text) and not str(p))]
        count += len(pieces) // 4
    return count


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


class MarkedMarkdownBlock(PasteMarkdownDirective):
    def run(self):
        pasted = super().run()
        key = glue_key(self.arguments[0])
        for node in pasted:
            mark_numbers(node, key)
        return pasted


def _add_static(app) -> None:
    app.config.html_static_path.append(str(STATIC))


def setup(app):
    NbGlueDomain.roles = {**NbGlueDomain.roles, "text": MarkedText(), "md": MarkedMarkdown()}
    NbGlueDomain.directives = {**NbGlueDomain.directives, "md": MarkedMarkdownBlock}
    app.connect("builder-inited", _add_static)
    app.add_css_file("book.css")
    return {"parallel_read_safe": True, "parallel_write_safe": True}
