"""The notebook a reader downloads: plain Jupyter Markdown, the page's code cells as they ran.

MyST-NB's executed notebook keeps each Markdown cell as the page's MyST source: ``{glue:text}``
roles, ``{eq}`` references, ``:::{prf:theorem}`` fences. Plain Jupyter shows them raw. This module
rewrites every Markdown cell as the HTML page reads, from the built environment (all pages read, every
number assigned), with Sphinx's own resolvers:

- a glued value (``{glue:text}`name:fmt```, ``{glue:md}``, ``{glue}``) is pasted as the page shows
  it: MyST-NB's ``format_plain_text`` for the format, then ``glue_marks.prose_number``;
- ``{glue:math}`` is a ``$$ … \\tag{6.3} $$`` block of the glued LaTeX, numbered as the page; a
  ``{glue:figure}`` is its figure (a cell attachment: MyST-NB keeps a figure glued with
  ``display=False`` out of the cell's outputs) and its numbered caption in italics;
- ``{eq}``, ``{numref}``, ``{ref}``, ``{doc}``, ``{prf:ref}`` and ``{cite}`` are the text Sphinx's
  domains resolve them to: "(6.3)", "Fig. 8.2", a section's or page's title, "Theorem 5.1",
  "(Vaswani *et al.*, 2017)";
- a directive is plain Markdown: a bold title line and its body (theorems and exercises numbered as
  the page numbers them), a ``literalinclude`` the code it shows (Sphinx's reader, with the book's
  short docstrings), an explorable a sentence pointing to the book's page;
- an exercise's solution is folded: its prose in ``<details>``, its code cells with their source and
  outputs hidden (``"jupyter": {"source_hidden": true, "outputs_hidden": true}``, which JupyterLab
  honours); a ``remove-cell`` or ``hide-input`` cell's source is hidden the same way, and a
  ``remove-output`` or ``hide-output`` cell's outputs;
- a ``remove-cell`` cell (the page never shows it) opens with the line :data:`BUILD_NOTE`, so a
  reader who unfolds it knows what it is for: the code the page shows never needs it
  (``tests/test_shown_code.py``), and a comment changes nothing it computes.

Code cells keep their outputs and tags, and their source but for that comment line: the download's
code is the code that ran. Markdown is
converted from the source, not from the doctree: a notebook's cell boundaries are in the source, and
every number the doctree shows comes from the environment the resolvers read. The conversion is a pure
function of the built environment, so two builds give the same bytes (``make reproducible``).
"""

from __future__ import annotations

import base64
import copy
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from myst_nb.core.utils import coalesce_streams  # as the page does (nb_merge_streams in _config.yml)
from myst_nb.core.variables import format_plain_text  # the page's own formatting of {glue:text}

ROLE = re.compile(r"\{([A-Za-z][\w:-]*)\}`([^`]*)`")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|:{3,})(?:\{(?P<name>[^}\s]+)\})?[ \t]*(?P<arg>.*?)\s*$")
OPTION = re.compile(r"^:([\w-]+):(?:\s+(.*))?$")
TARGET = re.compile(r"^\(([^()\s]+)\)=\s*$")  # (label)=, a MyST target line
SOLUTION = "Solution"
BUILD_NOTE = "# For the book's build: computes and glues what the text quotes (the shown code never needs it)\n"
THEOREMS = {"theorem", "lemma", "corollary", "proposition", "definition", "remark", "example", "conjecture",
            "property", "observation", "criterion", "assumption", "axiom", "algorithm", "notation"}


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else value


def mid_sentence(text: str) -> bool:
    """Whether what follows ``text`` (a paragraph so far) is inside a sentence, not at its start.

    >>> mid_sentence("the vectors that"), mid_sentence("It ends. "), mid_sentence("- "), mid_sentence("")
    (True, False, False, False)
    """
    text = re.sub(r"^\s*(?:#+|[-*+>]|\d+[.)])\s", "", text).strip().rstrip("*_(\"'")
    return bool(text) and text[-1] not in ".!?:"


def lower_first(title: str) -> str:
    """``title`` with its first letter lower-case, unless its first word is a name or an acronym.

    >>> lower_first("The four people"), lower_first("SymPy checks"), lower_first("Ana's query")
    ('the four people', 'SymPy checks', "Ana's query")
    """
    first = re.match(r"[A-Za-z]+", title)
    if first is None or first.group() not in _COMMON_STARTS:
        return title
    return title[0].lower() + title[1:]


# The first words a section title starts with that are not names: lower-cased in mid-sentence.
_COMMON_STARTS = {"The", "A", "An", "What", "How", "Why", "When", "Where", "Which", "Who", "One", "Two",
                  "Three", "Four", "Each", "Every", "From", "Running", "Run", "Reading", "Read", "Shapes",
                  "Shape", "Scores", "Weights", "Values", "Queries", "Keys", "Heads", "Masks", "Masking",
                  "Positions", "Position", "Sinks", "Graphs", "Graph", "Attention", "Softmax", "Several",
                  "Many", "Some", "All", "No", "Checking", "Building", "Learning", "Training",
                  "Counting", "Exact", "Random", "Identity", "Symmetric", "Directed", "Causal", "Cross",
                  "Self", "Multi", "Single", "Stable", "Large", "Small", "Long", "Short"}


def latex_body(latex: str) -> str:
    r"""The LaTeX of a glued ``Math`` without its ``$\displaystyle … $`` wrapper.

    >>> latex_body(r"$\displaystyle x = 1$"), latex_body(r"$$a$$")
    ('x = 1', 'a')
    """
    body = latex.strip()
    while body.startswith("$") and body.endswith("$") and len(body) > 1:
        body = body[1:-1].strip()
    return re.sub(r"^\\displaystyle\s*", "", body)


@dataclass
class Page:
    """What the conversion needs of the built book, for one page (the resolvers are the build's)."""

    docname: str
    glue: Callable[[str, str], dict]  # (docname, key) -> the glued output's data (MIME type -> value)
    reference: Callable[[str, str], str]  # (role, text) -> what the page shows for it
    number: Callable[[str, str], str]  # (kind, label) -> "6.3"; kind "theorem", "exercise", "equation", "figure"
    include: Callable[[str, dict], tuple[str, str]]  # (path, options) -> (code, language)
    prose_number: Callable[[str], str] = lambda s: s
    url: str = ""  # the page's address in the book, relative to the site
    figures_shown: set = field(default_factory=set)  # glue keys already an output of a code cell
    attachments: dict = field(default_factory=dict)  # the current cell's attachments, filled as it converts

    # --- inline roles --------------------------------------------------------------------------------

    def role(self, name: str, text: str) -> str:
        if name in {"glue:text", "glue:md", "glue", "glue:any", "glue:"}:
            return self.pasted(name, text)
        if name == "math":
            return f"${text}$"
        return self.reference(name, text)

    def pasted(self, name: str, text: str) -> str:
        doc, _, rest = text.rpartition("::")
        doc = doc or self.docname
        if name == "glue:text":
            key, fmt = rest.rsplit(":", 1) if ":" in rest else (rest, "")
            return self.prose_number(format_plain_text(_text(self.glue(doc, key)["text/plain"]), fmt))
        data = self.glue(doc, rest)
        if "text/markdown" in data:
            return self.prose_number(_text(data["text/markdown"]).strip())
        if "text/latex" in data:
            return f"${latex_body(_text(data['text/latex']))}$"
        return self.prose_number(format_plain_text(_text(data["text/plain"]), ""))

    def inline(self, line: str, before: str = "") -> str:
        """``line`` with every role replaced by what the page shows; inline code and math kept as written.

        ``before`` is the paragraph's text up to this line. A section's title put in place of a ``{ref}``
        in mid-sentence starts lower-case ("the vectors that the four people introduced"), and an
        ``{eq}`` already in parentheses keeps one pair ("(4.3)", not "((4.3))").
        """
        parts = re.split(r"(`[^`]*`)", line)
        out, k = [], 0
        while k < len(parts):
            part = parts[k]
            # a role is a name in braces right before a code span: {eq}`label`
            m = re.search(r"\{([A-Za-z][\w:-]*)\}$", part)
            if m and k + 1 < len(parts) and parts[k + 1].startswith("`"):
                name, text, lead = m.group(1), parts[k + 1][1:-1], part[:m.start()]
                shown = self.role(name, text)
                after = parts[k + 2] if k + 2 < len(parts) else ""
                if name == "eq" and lead.endswith("(") and after.startswith(")"):
                    shown = shown.removeprefix("(").removesuffix(")")
                if name == "ref" and "<" not in text and mid_sentence(before + " " + "".join(out) + lead):
                    shown = lower_first(shown)
                out.append(lead + shown)
                k += 2
                continue
            out.append(part)
            k += 1
        return "".join(out)

    # --- blocks --------------------------------------------------------------------------------------

    def markdown(self, text: str) -> str:
        """A Markdown cell's MyST source as plain Jupyter Markdown."""
        lines = text.split("\n")
        out: list[str] = []
        k = 0
        while k < len(lines):
            line = lines[k]
            m = FENCE.match(line)
            if m:
                end = _closing(lines, k + 1, m.group("fence"))
                body = lines[k + 1:end]
                if m.group("name") is None:  # a plain code fence: kept as written
                    out += [line, *body, lines[end] if end < len(lines) else m.group("fence")]
                else:
                    options, body = _options(body)
                    out += self.directive(m.group("name"), m.group("arg"), options, body).split("\n")
                k = end + 1
                continue
            if TARGET.match(line) or line.startswith("% "):
                k += 1
                continue
            paragraph = []  # the lines of this paragraph converted so far
            for prior in reversed(out):
                if not prior.strip():
                    break
                paragraph.insert(0, prior)
            out.append(self.inline(line, " ".join(paragraph)))
            k += 1
        return _tidy("\n".join(out))

    def directive(self, name: str, arg: str, options: dict, body: list[str]) -> str:
        inner = self.markdown("\n".join(body)) if body else ""
        label = options.get("label", "")
        if name in {"glue:math", "math"}:
            latex = latex_body(_text(self.glue(self.docname, arg)["text/latex"])) if name == "glue:math" else inner
            tag = f" \\tag{{{self.number('equation', label)}}}" if label else ""
            return f"$$\n{latex.strip()}{tag}\n$$"
        if name == "glue:figure":
            return self.figure(arg, options, inner)
        if name in {"glue:md", "glue", "glue:any"}:
            return self.pasted(name, arg)
        if name == "literalinclude":
            code, language = self.include(arg, options)
            return f"```{options.get('language', language)}\n{code.rstrip()}\n```"
        if name in {"code-block", "code", "sourcecode"}:
            return f"```{arg}\n" + "\n".join(body) + "\n```"
        if name == "explorable":
            title = options.get("title", "An interactive figure")
            where = f" ({self.url})" if self.url else ""
            return (f"**{title}.** This figure is interactive in the book's web page{where}: open it there "
                    "to move its controls.")
        if name == "summary":
            return f"**In short.** {inner}"
        if name.startswith("prf:"):
            kind = name[4:]
            if kind == "proof":
                return f"**Proof.** {inner} ∎"
            head = kind.title() + (f" {self.number('theorem', label)}" if label and kind in THEOREMS else "")
            return f"**{head}{f' ({self.inline(arg)})' if arg else ''}.** {inner}"
        if name == "exercise":
            number = f" {self.number('exercise', label)}" if label else ""
            return f"**Exercise{number}{f' ({self.inline(arg)})' if arg else ''}.** {inner}"
        if name == "solution":
            return _details(SOLUTION, inner)
        if name == "solution-start":
            return f"**{SOLUTION}** (folded below: open the cells to read it, after trying)."
        if name == "solution-end":
            return ""
        if name == "dropdown":
            return _details(self.inline(arg) or "Details", inner)
        if name == "admonition" and "dropdown" in options.get("class", "").split():
            return _details(self.inline(arg), inner)
        title = self.inline(arg) if arg else name.replace("-", " ").capitalize()
        return f"**{title}.** {inner}" if inner else f"**{title}.**"

    def figure(self, key: str, options: dict, caption: str) -> str:
        name = options.get("name", "")
        number = self.number("figure", name) if name else ""
        lines = []
        if key not in self.figures_shown:
            data = self.glue(self.docname, key)
            for mime, suffix in (("image/svg+xml", "svg"), ("image/png", "png")):
                if mime in data:
                    raw = _text(data[mime])
                    b64 = base64.b64encode(raw.encode()).decode() if mime == "image/svg+xml" else raw.replace("\n", "")
                    filename = f"{key}.{suffix}"
                    self.attachments[filename] = {mime: b64}
                    alt = " ".join(options.get("alt", key).split()).replace("]", ")").replace("[", "(")
                    lines.append(f"![{alt}](attachment:{filename})")
                    break
        head = f"Fig. {number}: " if number else ""
        lines.append(f"*{head}{' '.join(caption.split())}*" if caption or head else "")
        return "\n\n".join(lines)


def _closing(lines: list[str], start: int, fence: str) -> int:
    """The index of the line that closes a fence opened with ``fence`` (``len(lines)`` when none does)."""
    char, n = fence[0], len(fence)
    depth = 0
    for k in range(start, len(lines)):
        m = FENCE.match(lines[k])
        if not m:
            continue
        f = m.group("fence")
        if f[0] == char and len(f) >= n and m.group("name") is None and not m.group("arg"):
            if depth == 0:
                return k
            depth -= 1
        elif f[0] == char and len(f) == n and (m.group("name") or m.group("arg")):
            depth += 1  # a nested fence of the same length (as MyST allows for colons)
    return len(lines)


def _options(body: list[str]) -> tuple[dict, list[str]]:
    """A directive's ``:key: value`` lines (or ``---`` YAML block) and the body after them.

    >>> _options([":label: x", ":class: dropdown", "", "Text."])
    ({'label': 'x', 'class': 'dropdown'}, ['Text.'])
    """
    options: dict = {}
    k = 0
    if body and body[0].strip() == "---":
        end = body.index("---", 1) if "---" in body[1:] else len(body)
        for line in body[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        k = end + 1
    else:
        while k < len(body) and OPTION.match(body[k]):
            key, value = OPTION.match(body[k]).groups()
            options[key] = (value or "").strip()
            k += 1
    while k < len(body) and not body[k].strip():
        k += 1
    return options, body[k:]


def _details(summary: str, body: str) -> str:
    return f"<details>\n<summary>{summary}</summary>\n\n{body}\n\n</details>"


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def source_lines(text: str) -> list[str]:
    """A cell's source as nbformat's list of lines (each but the last with its newline)."""
    return text.splitlines(keepends=True)


def labelled(cell: dict) -> dict:
    """A ``remove-cell`` code cell with :data:`BUILD_NOTE` as its first line (once); any other cell as it is.

    >>> labelled({"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": "x = 1"})["source"][0]
    "# For the book's build: computes and glues what the text quotes (the shown code never needs it)\\n"
    >>> labelled({"cell_type": "code", "metadata": {}, "source": "x = 1"})["source"]
    'x = 1'
    """
    source = _text(cell.get("source", ""))
    if "remove-cell" not in cell.get("metadata", {}).get("tags", []) or source.startswith(BUILD_NOTE):
        return cell
    return {**cell, "source": source_lines(BUILD_NOTE + source)}


def unlabelled(source: str) -> str:
    """A code cell's source without the :data:`BUILD_NOTE` :func:`labelled` gave it: the code that ran."""
    return source.removeprefix(BUILD_NOTE)


def _hidden(cell: dict, *, source: bool = False, outputs: bool = False) -> dict:
    jupyter = dict(cell.get("metadata", {}).get("jupyter", {}))
    if source:
        jupyter["source_hidden"] = True
    if outputs:
        jupyter["outputs_hidden"] = True
    return {**cell, "metadata": {**cell.get("metadata", {}), "jupyter": jupyter}} if jupyter else cell


def _gate(source: str, name: str):
    r"""The first ``{solution-start}`` or ``{solution-end}`` directive block of ``source`` (a backtick or
    colon fence, its options included), or None.

    >>> text = "Try it.\n\n:::{solution-start} ex-a\n:class: dropdown\n:::\n\nThe answer."
    >>> text[_gate(text, "solution-start").end():]
    '\n\nThe answer.'
    >>> _gate("```{solution-end}\n```\nAfter.", "solution-end").end()
    21
    >>> _gate("No gate.", "solution-end") is None
    True
    """
    opening = r"^(?P<fence>`{3,}|:{3,})\{" + re.escape(name) + r"\}[^\n]*\n"
    return re.search(opening + r"(?:(?!(?P=fence)\s*$).*\n)*?(?P=fence)[ \t]*$", source, re.M)


def merged_streams(outputs: list[dict]) -> list[dict]:
    """The outputs with one stream per name, as the page shows them (``nb_merge_streams``): how a
    kernel split a cell's writes into messages depends on timing, so two builds agree only merged.

    >>> merged_streams([{"output_type": "stream", "name": "stdout", "text": ["[1 2]"]},
    ...                 {"output_type": "stream", "name": "stdout", "text": "\\n"}])
    [{'output_type': 'stream', 'name': 'stdout', 'text': '[1 2]\\n'}]
    """
    outputs = copy.deepcopy(outputs)
    for output in outputs:
        if output.get("output_type") == "stream":
            output["text"] = _text(output["text"])
    return coalesce_streams(outputs)


def reader_notebook(notebook: dict, page: Page) -> dict:
    """``notebook`` (MyST-NB's executed one) as a reader downloads it: Markdown plain, solutions folded."""
    page.figures_shown = {o.get("metadata", {}).get("scrapbook", {}).get("name")
                          for c in notebook.get("cells", []) for o in c.get("outputs", [])} - {None}
    cells, in_solution = [], False
    for cell in notebook.get("cells", []):
        source = _text(cell.get("source", ""))
        if cell.get("cell_type") == "markdown":
            page.attachments = {}
            parts = []
            while True:
                block = _gate(source, "solution-end" if in_solution else "solution-start")
                if in_solution:
                    body = source[:block.start()] if block else source
                    if body.strip():  # the solution's prose: folded
                        parts.append(_details(SOLUTION + " (continued)", page.markdown(body)))
                    if block is None:
                        break
                    source, in_solution = source[block.end():], False
                else:
                    parts.append(page.markdown(source[:block.end()] if block else source))
                    if block is None:
                        break
                    source, in_solution = source[block.end():], True
            text = _tidy("\n\n".join(part for part in parts if part.strip()))
            new = {**cell, "source": source_lines(text)}
            if page.attachments:
                new["attachments"] = dict(sorted(page.attachments.items()))
            cells.append(new)
        elif cell.get("cell_type") == "code":
            tags = set(cell.get("metadata", {}).get("tags", []))
            # one stream output per name: how print's writes were split into messages depends on timing
            cell = {**cell, "outputs": merged_streams(cell.get("outputs", []))}
            cells.append(_hidden(labelled(cell),
                                 source=in_solution or bool(tags & {"remove-cell", "remove-input", "hide-input",
                                                                    "hide-cell"}),
                                 outputs=in_solution or bool(tags & {"remove-output", "hide-output", "hide-cell"})))
        else:
            cells.append(cell)
    return {**notebook, "cells": cells}


def leftover_myst(text: str) -> list[str]:
    """The MyST syntax left in Markdown: roles and directive fences (none in a reader's notebook).

    >>> leftover_myst("a {eq}`x` and\\n:::{note}\\n```{code-cell}\\n``` python\\n`{not a role}`")
    ['{eq}`', ':::{note}', '```{code-cell}']
    """
    found = [m.group(0)[:-len(m.group(2)) - 1] for m in ROLE.finditer(text)]
    found += [m.group(0).strip() for m in re.finditer(r"^\s*(?:`{3,}|:{3,})\{[^}]*\}", text, re.M)]
    return found


def _path_of(docname: str) -> Path:
    return Path(*docname.split("/"))
