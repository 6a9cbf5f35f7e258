"""The reader of the book's MyST sources: fenced directives, prose, labeled equations, theorems, citable results.

The one reader of the pages, on myst-parser's own tokens (markdown-it-py, configured with the
book's MyST extensions), so that it finds a directive exactly where the build does. Used by
``tools/package_data.py`` and by the tests (``booktools``, the architecture, browser and notation
tests).

Build code, not a reader's: ``tools/package_data.py`` makes the packaged index of results with it
(``attention_graph/data/results.json``, read back by ``attention_graph.citable.results``), and the
integrity tests read every page with it (``tests/booktools.py``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from attention_graph.citable import Citable

# Directives whose whole body is code or math, never prose ("" is a plain code fence, ```python).
NON_PROSE = {"code-cell", "math", "literalinclude", "code", "code-block", "raw", "bibliography",
             "glue:math", "toctree", "eval-rst", "automodule", "autofunction", "autoclass", ""}
THEOREM_KINDS = ("theorem", "lemma", "proposition", "corollary")
CITABLE_PROOF_KINDS = THEOREM_KINDS + ("definition",)
# The book's MyST syntax (_config.yml, parse: myst_enable_extensions).
EXTENSIONS = {"amsmath", "dollarmath", "colon_fence"}
_OPTION = re.compile(r"^\s*:([\w-]+):\s*(.*)$")
_DIRECTIVE = re.compile(r"^\{([\w:-]+)\}\s*(.*)$")


@dataclass(frozen=True)
class Directive:
    """One fenced directive (or plain code fence) of a page, as myst-parser's tokens give it.

    ``start`` is the line of its opening fence and ``end`` that of its closing fence (1-based; the
    page's last line when it is never closed); ``body`` the lines between them, options included;
    ``option_lines`` how many of them are options (``:key: value`` lines or a ``---`` YAML block).
    """

    name: str
    arg: str
    options: dict
    body: list
    start: int
    end: int
    option_lines: int


@cache
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions=EXTENSIONS, dmath_double_inline=True), RendererHTML)


def _options(body: list[str]) -> tuple[dict, int]:
    """A directive's options and how many body lines they take (``:key: value`` lines or YAML)."""
    if body and body[0].strip() == "---":
        end = next((k for k in range(1, len(body)) if body[k].strip() == "---"), None)
        if end is not None:
            found = {}
            for line in body[1:end]:
                key, sep, value = line.partition(":")
                if sep:
                    found[key.strip()] = value.strip()
            return found, end + 1
    found, n = {}, 0
    for line in body:
        m = _OPTION.match(line)
        if not m:
            break
        found[m.group(1)] = m.group(2).strip()
        n += 1
    return found, n


def directives(text: str, _offset: int = 0) -> list[Directive]:
    """Every fenced directive of ``text`` at any depth, each after those it contains (a directive's
    body is parsed again unless it is code or math, :data:`NON_PROSE`)."""
    found, lines = [], text.splitlines()
    for token in _parser().parse(text):
        if token.type not in ("fence", "colon_fence") or token.map is None:
            continue
        m = _DIRECTIVE.match(token.info.strip())
        name, arg = (m.group(1), m.group(2)) if m else ("", token.info.strip())
        first, after = token.map  # the opening fence's line and the line after the closing one (0-based)
        closed = after - 1 > first and lines[after - 1].strip().startswith(token.markup[:3]) \
            and set(lines[after - 1].strip()) == {token.markup[0]}
        body = lines[first + 1:after - 1 if closed else after]
        options, n_options = _options(body)
        if name not in NON_PROSE:
            found += directives("\n".join(body), _offset + first + 1)
        found.append(Directive(name, arg, options, body, _offset + first + 1,
                               _offset + (after if closed else after), n_options))
    return found


def blocks(text: str):
    """Yield (name, arg, options, body_lines, start_line) for each fenced directive at any depth."""
    for d in directives(text):
        yield d.name, d.arg, d.options, d.body, d.start


def line_roles(text: str) -> list[str]:
    """What each line of a page is: "front" (front matter), "fence" (a directive's opening or closing
    line), "code" (the body of a code or math directive), "option" (a directive's options) or "prose"."""
    lines = text.splitlines()
    roles = ["prose"] * len(lines)
    tokens = _parser().parse(text)
    for token in tokens:
        if token.type == "front_matter" and token.map:
            roles[token.map[0]:token.map[1]] = ["front"] * (token.map[1] - token.map[0])
    for d in directives(text):
        roles[d.start - 1] = "fence"
        if d.end - 1 < len(lines) and d.end != d.start and lines[d.end - 1].strip() and \
                set(lines[d.end - 1].strip()) <= {"`", ":"}:
            roles[d.end - 1] = "fence"
        inner = range(d.start, d.start + len(d.body))
        for k, n in enumerate(inner):
            if d.name in NON_PROSE:
                roles[n] = "code"
            elif k < d.option_lines and roles[n] == "prose":
                roles[n] = "option"
    return roles


def prose(text: str, inline: Iterable[re.Pattern] = ()) -> str:
    """The prose of a page: blank for its front matter, fences, options and code or math bodies,
    then each of the ``inline`` patterns blanked; newlines are kept, so line numbers stay valid."""
    out = "\n".join(line if role == "prose" else "" for line, role in zip(text.splitlines(), line_roles(text)))
    for pattern in inline:
        out = pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), out)
    return out


def outside_code(text: str) -> str:
    """The page without its front matter, its fences and the bodies of its code and math directives
    (a directive's options are kept: a role may sit in one)."""
    return "\n".join(line for line, role in zip(text.splitlines(), line_roles(text)) if role in ("prose", "option"))


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


TARGET = re.compile(r"^\(([\w:-]+)\)=\s*$")  # a MyST target line: (label)=


def targets(text: str) -> list[tuple[int, str]]:
    """(line index from 0, label) of every MyST target line ``(label)=`` of a page's text.

    >>> targets("(sec-a)=\\n# A\\n(thm-old)=")
    [(0, 'sec-a'), (2, 'thm-old')]
    """
    return [(k, m.group(1)) for k, line in enumerate(text.splitlines()) if (m := TARGET.match(line))]


def former_labels(pages: Iterable[tuple[str, str]]) -> dict[str, Citable]:
    """{former label: the result it now anchors} in ``pages``, (stem, MyST text) pairs.

    A renamed result keeps its former label as a MyST target on the line right above its directive,
    so a permalink to the former label still lands on it.

    >>> former_labels([("p", "(thm-old)=\\n:::{prf:theorem} T\\n:label: thm-new\\n:::")])
    {'thm-old': Citable(kind='theorem', label='thm-new', title='T', page='p')}
    """
    pages = list(pages)
    by_start = {}
    for page, text in pages:
        results = {it.label: it for it in citables([(page, text)])}
        for d in directives(text):
            label = d.options.get("label") or d.options.get("name")
            if label in results:
                by_start[page, d.start] = results[label]
    out = {}
    for page, text in pages:
        for k, label in targets(text):
            if (page, k + 2) in by_start:  # the directive opens on the next line (1-based k + 2)
                out[label] = by_start[page, k + 2]
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
