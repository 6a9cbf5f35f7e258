"""A Sphinx extension for the book's HTML: notebooks to download, no duplicated script.

**Notebook download.** sphinx-book-theme's download menu lists a page's ``.ipynb`` only when a launch button (Binder,
JupyterHub, ...) is configured, and the book is offline. This extension writes the notebook that
MyST-NB executed for each page, outputs included, to ``_sources/<page>.ipynb`` next to the page's
Markdown source, and adds it to the menu. Its Markdown is made plain Jupyter Markdown, as the page
reads (``reader_notebook.py``: glued numbers, equation and figure numbers, titles resolved by the
build's own domains; solutions folded); its code cells are the ones that ran, unchanged.

The copy is reproducible: MyST-NB gives the cells random ids on every build; here cell ``k`` of a page
gets an id made from the page name, ``k`` and the cell's source, so two builds give the same file.

**Duplicated inline scripts.** sphinx-thebe adds an inline script (``const THEBE_JS_URL = ...``)
after the HTML builder has started; Sphinx 7.4 then lists it twice in every page (once as filename
``None``, once as ``""``), and the second copy throws "Identifier 'THEBE_JS_URL' has already been
declared" in the reader's console. Each page keeps the first copy of every script.

**Every build writes its pages as a fresh build does.** A page links each CSS and JavaScript file with
its checksum (``proof.css?v=8c6b312c``) when the file is already in the output's ``_static`` as the
page is written. Some extensions (sphinx-proof, sphinx-exercise, MyST-NB, the offline MathJax) copy
theirs only when the build finishes, so a fresh build links them bare, and a later build into the same
folder would link them with checksums: ``make reproducible`` would then find the checkout's pages
different from a fresh copy's. The output's ``_static`` is emptied when the builder starts writing
(Sphinx's ``write-started``, before it copies its assets), so every build that writes pages writes
them in a fresh build's conditions (Sphinx and the extensions copy it again); a build with nothing
to write leaves it be.

No page shows a traceback (a cell that demonstrates an error catches it and prints the message), so
no output holds the folder the book was built in; ``make reproducible`` checks it.

Enabled in ``_config.yml`` under ``sphinx.local_extensions`` (it is the book's, not the package's).
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import package_wheel
import reader_notebook
from docutils import nodes
from glue_marks import prose_number
from sphinx import addnodes
from sphinx.directives.code import LiteralIncludeReader

# A role's target and its domain and type, as MyST's roles make their pending_xref.
XREF = {"eq": ("math", "eq"), "ref": ("std", "ref"), "numref": ("std", "numref"), "doc": ("std", "doc"),
        "prf:ref": ("prf", "ref"), "cite": ("cite", "p"), "cite:p": ("cite", "p"), "cite:t": ("cite", "t")}


def stable_cell_ids(notebook: dict, pagename: str) -> dict:
    """The notebook with cell ids that depend only on the page name, cell position and source.

    >>> nb = {"cells": [{"id": "random", "source": "x = 1"}, {"id": "other", "source": ["y"]}]}
    >>> [c["id"] for c in stable_cell_ids(nb, "book/scores")["cells"]] == [
    ...     c["id"] for c in stable_cell_ids(nb, "book/scores")["cells"]]
    True
    >>> len({c["id"] for c in stable_cell_ids(nb, "book/scores")["cells"]})
    2
    """
    cells = []
    for k, cell in enumerate(notebook.get("cells", [])):
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        digest = hashlib.sha256(f"{pagename}\n{k}\n{source}".encode()).hexdigest()[:12]
        cells.append({**cell, "id": f"cell-{k}-{digest}"})
    return {**notebook, "cells": cells}


def _offer_notebook(app, pagename, templatename, context, doctree) -> None:
    if doctree is None or context.get("ipynb_source"):
        return
    if "kernelspec" not in app.env.metadata.get(pagename, {}):
        return  # not a notebook page
    executed = Path(app.env.mystnb_config.output_folder, *f"{pagename}.ipynb".split("/"))
    if not executed.exists():
        return
    notebook = json.loads(executed.read_text(encoding="utf8"))
    notebook = stable_cell_ids(reader_notebook.reader_notebook(notebook, _page(app, pagename)), pagename)
    target = Path(app.outdir, "_sources", *f"{pagename}.ipynb".split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(notebook, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                      encoding="utf8")
    context["ipynb_source"] = f"{pagename}.ipynb"


def _page(app, pagename: str) -> reader_notebook.Page:
    """What the reader's notebook of ``pagename`` needs of the build: its glue and Sphinx's resolvers."""
    env, builder = app.env, app.builder
    glued: dict[str, dict] = {}

    def glue(doc: str, key: str) -> dict:
        if doc not in glued:
            path = Path(env.mystnb_config.output_folder, *f"{doc}.glue.json".split("/"))
            glued[doc] = json.loads(path.read_text(encoding="utf8"))
        if key not in glued[doc]:
            raise KeyError(f"{pagename}: no glue {key!r} in {doc}")
        return glued[doc][key]["data"]

    def reference(role: str, text: str) -> str:
        if role == "wheel":  # package_wheel's install line, as the page prints it
            return f"`{package_wheel.install_line(text, getattr(env, 'attention_graph_wheel', None))}`"
        if role not in XREF:
            raise ValueError(f"{pagename}: the reader's notebook cannot render the role {{{role}}}`{text}`")
        domain, typ = XREF[role]
        explicit = re.fullmatch(r"(.*?)\s*<([^<>]+)>", text, re.S)
        title, target = (explicit.group(1), explicit.group(2)) if explicit else (text, text)
        if role == "ref":
            target = target.lower()
        contnode = nodes.inline(title, title)
        node = addnodes.pending_xref("", contnode, refdomain=domain, reftype=typ, reftarget=target,
                                     refexplicit=bool(explicit), refwarn=True, refdoc=pagename)
        found = env.get_domain(domain).resolve_xref(env, pagename, builder, typ, target, node, contnode)
        if found is None:
            raise ValueError(f"{pagename}: {{{role}}}`{text}` does not resolve")
        return " ".join(found.astext().split())

    def number(kind: str, label: str) -> str:
        if kind == "equation":
            return reference("eq", label).strip("()")
        if kind == "theorem":
            found = env.proof_list[label]
            return ".".join(map(str, env.toc_fignumbers[found["docname"]][found["countertype"]][label]))
        if kind == "figure":
            doc, labelid, _ = env.get_domain("std").labels[label]
            return ".".join(map(str, env.toc_fignumbers[doc]["figure"][labelid]))
        return ".".join(map(str, env.toc_fignumbers[pagename][kind][label]))

    def include(path: str, options: dict) -> tuple[str, str]:
        source = Path(env.doc2path(pagename)).parent / path
        code, _ = LiteralIncludeReader(str(source), dict(options), app.config).read()
        return code, options.get("language", "python")

    return reader_notebook.Page(docname=pagename, glue=glue, reference=reference, number=number,
                                include=include, prose_number=prose_number, url=f"{pagename}.html")


def _script_key(script) -> tuple:
    attributes = getattr(script, "attributes", {}) or {}
    return (getattr(script, "filename", script) or "", getattr(script, "priority", 0),
            tuple(sorted((k, str(v)) for k, v in attributes.items())))


def unique_scripts(scripts: list) -> list:
    """The scripts in order, each kept once; a missing filename and an empty one are the same.

    >>> from types import SimpleNamespace as S
    >>> a, b = S(filename=None, priority=500, attributes={"body": "const X = 1"}), S(filename="x.js")
    >>> c = S(filename="", priority=500, attributes={"body": "const X = 1"})
    >>> unique_scripts([a, b, c]) == [a, b]
    True
    """
    seen, kept = set(), []
    for script in scripts:
        key = _script_key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _drop_duplicate_scripts(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if isinstance(scripts, list):
        scripts[:] = unique_scripts(scripts)


def _fresh_static(app, builder) -> None:
    """Empty the output's ``_static``: pages link static files as in a fresh build (see the docstring)."""
    if builder.format == "html":
        shutil.rmtree(Path(app.outdir) / "_static", ignore_errors=True)


def setup(app):
    app.connect("write-started", _fresh_static)
    # Before sphinx-book-theme builds its download menu (priority 501).
    app.connect("html-page-context", _offer_notebook, priority=500)
    app.connect("html-page-context", _drop_duplicate_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
