"""A Sphinx extension that keeps the book's numbers, and its look, fresh, and executes no notebook for a
change that cannot move a number.

What a change re-does on the next build:

- **code** (every ``*.py`` file and every package-data file, a ``data`` folder, under the configured
  folders; the Python of the book's extensions is among them): every page is re-read and re-executed.
  Sphinx decides what to re-read from a page's own source alone, so without this a change in
  ``code/`` would leave every glued number stale: the files are recorded as a dependency of every
  page, and their digest is part of every page's execution key (below).
- **a page's code** (a code cell's source or metadata, the page's kernel or execution settings):
  Sphinx re-reads the page and it is executed again.
- **a page's prose only** (its Markdown, its front matter's other keys): Sphinx re-reads the page,
  and its notebook is not executed; the outputs of its last execution are reused (below).
- **the generated package data** (``attention_graph_generated``: the index of results, the checks'
  classes, the public names, the citation, which ``make data`` writes from the sources): a prose edit
  that adds, moves or retitles a labeled result changes the index. Every page is re-read (the
  extensions that read these files draw badges and the API's sections), but only a page whose code
  cells read them (``attention_graph_reads_generated``, a regular expression over the code cells) is
  executed again: they are not part of the other pages' execution key.
- **static files** (a ``static`` folder: CSS, JavaScript, icons): nothing is re-read or executed.
  Their digest is the configuration value ``attention_graph_static_digest``, of the HTML builder's
  kind (``rebuild="html"``): a new digest changes the build's ``.buildinfo``, so Sphinx writes every
  page again from its stored doctree (each page links the static files with their checksums) and
  copies the static files. Without it Sphinx found "no targets out of date" and the site kept the old
  CSS; when static files were page dependencies, a change of CSS re-executed every notebook.

**Reuse of an execution.** With ``execute_notebooks: force`` MyST-NB executes every page it reads.
Here each successful execution is kept, under the build's doctree folder
(``_build/.doctrees/attention_graph_executed/<page>.json``), with its key: a SHA-256 over the code
files' digest, the page's kernel and execution settings, and every code cell's source and metadata,
in order. When a page is read again with the same key, its code cells get the kept outputs (and
execution counts, and the kernel's ``language_info``) and nothing is executed: the glued numbers,
figures and the notebook MyST-NB writes to ``_build/jupyter_execute`` (the downloadable one) are those
of an execution of these very cells against this very code. Any other key executes the page, so no
stale number reaches the HTML. A failed build drops the doctree folder (the Makefile), the kept
executions with it; a fresh folder (``make reproducible``) has none and executes everything.

Not jupyter-cache (``execute_notebooks: cache``): on a cache hit MyST-NB 1.4 writes the page's
notebook without its outputs to ``_build/jupyter_execute`` (``NotebookClientCache`` replaces its own
notebook with the merged one, while the parser writes the one it passed in), and the cached cells'
metadata (their tags) replaces the page's.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``; ``attention_graph_watch`` lists the
folders, relative to the book's root (default ``["code", "book/_ext"]``).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

KEPT = "attention_graph_executed"  # under the doctree folder: one JSON file per executed page
_BUILD: dict = {}  # the running application, and its code files' digest (set when the builder starts)


def _files(app, kind: str) -> list[Path]:
    """The watched files of one kind: ``"code"`` (``*.py`` and package data but the generated),
    ``"generated"`` (the generated package data) or ``"static"``."""
    root = Path(app.confdir)
    files = []
    for folder in app.config.attention_graph_watch:
        for p in sorted((root / folder).rglob("*")):
            if not p.is_file() or "__pycache__" in p.parts:
                continue
            if kind in ("generated", "code") and (str(p.relative_to(root)) in app.config.attention_graph_generated) \
                    != (kind == "generated"):
                continue
            parts = set(p.relative_to(root).parent.parts)
            is_static = "static" in parts
            is_code = not is_static and (p.suffix == ".py" or "data" in parts)
            if (kind == "static" and is_static) or (kind in ("code", "generated") and is_code):
                files.append(p.resolve())
    return files


def _digest(app, kind: str) -> str:
    """SHA-256 over one kind's files' paths (relative to the book's root) and bytes: the same in any folder."""
    root = Path(app.confdir).resolve()
    h = hashlib.sha256()
    for p in _files(app, kind):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _static_digest(app, config) -> None:
    config.attention_graph_static_digest = _digest(app, "static")


def _note(app, docname, source) -> None:
    for path in _files(app, "code") + _files(app, "generated"):
        app.env.note_dependency(str(path))


def execution_key(code_digest: str, notebook, nb_config) -> str:
    """What an execution's outputs depend on: the code, the page's kernel and execution settings, and
    its code cells (source and metadata, in order); its prose is not part of it.

    >>> from types import SimpleNamespace as NS
    >>> cfg = NS(execution_mode="force", execution_timeout=600, execution_allow_errors=False,
    ...          execution_in_temp=False)
    >>> def nb(*cells):
    ...     return {"metadata": {"kernelspec": {"name": "python3"}}, "cells": [
    ...         {"cell_type": t, "source": s, "metadata": {}} for t, s in cells]}
    >>> a = execution_key("c", nb(("markdown", "Prose."), ("code", "x = 1")), cfg)
    >>> a == execution_key("c", nb(("markdown", "Other prose."), ("code", "x = 1")), cfg)
    True
    >>> a == execution_key("c", nb(("code", "x = 2")), cfg), a == execution_key("d", nb(("code", "x = 1")), cfg)
    (False, False)
    """
    meta = notebook["metadata"]
    head = {"code": code_digest, "kernel": meta.get("kernelspec", {}).get("name"),
            "execution": meta.get("execution"), "mode": nb_config.execution_mode,
            "timeout": nb_config.execution_timeout, "allow_errors": nb_config.execution_allow_errors,
            "in_temp": nb_config.execution_in_temp}
    h = hashlib.sha256(json.dumps(head, sort_keys=True, default=str).encode())
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            h.update(b"\0" + source.encode() + b"\0" + json.dumps(cell["metadata"], sort_keys=True).encode())
    return h.hexdigest()


def _kept(app, docname: str) -> Path:
    return Path(app.doctreedir, KEPT, *f"{docname}.json".split("/"))


def _node(value, node: type):
    """JSON made of ``node`` (nbformat's ``NotebookNode``, a dict read by attribute too), as
    ``nbformat.from_dict`` makes it."""
    if isinstance(value, dict):
        return node({k: _node(v, node) for k, v in value.items()})
    return [_node(v, node) for v in value] if isinstance(value, list) else value


def _reuse(create_client):
    """``myst_nb.sphinx_.create_client``, which executes a page, wrapped: a page whose execution key
    has a kept execution gets its outputs and is not executed; a page executed afresh is kept."""
    from myst_nb.core.execute import NotebookClientBase, NotebookClientDirect

    def create(notebook, source, nb_config, logger, read_fmt=None):
        app = _BUILD.get("app")
        client = create_client(notebook, source, nb_config, logger, read_fmt)
        if app is None or type(client) is not NotebookClientDirect:
            return client  # another execution mode, or a page excluded from execution
        kept = _kept(app, app.env.docname)
        code = _BUILD["code"]
        if any(re.search(app.config.attention_graph_reads_generated, "".join(c.source))
               for c in notebook.cells if c.cell_type == "code"):
            code += _BUILD["generated"]  # the page reads the generated data: their digest is part of its key
        key = execution_key(code, notebook, nb_config)
        previous = json.loads(kept.read_text(encoding="utf8")) if kept.is_file() else {}
        if previous.get("key") == key:
            cells = [c for c in notebook.cells if c.cell_type == "code"]
            for cell, outputs in zip(cells, previous["outputs"], strict=True):
                cell.execution_count, cell.outputs = outputs[0], _node(outputs[1], type(notebook))
            for name, value in previous["metadata"].items():
                notebook.metadata.setdefault(name, _node(value, type(notebook)))
            reused = NotebookClientBase(notebook, client.path, nb_config, logger)
            reused.exec_metadata = previous["exec"]
            logger.info("Reused the outputs of the page's last execution (its code cells and code/ unchanged)")
            return reused
        execute = client.start_client

        def start_and_keep():
            execute()
            if client.exec_metadata and client.exec_metadata["succeeded"]:
                kept.parent.mkdir(parents=True, exist_ok=True)
                record = {"key": key, "exec": client.exec_metadata,
                          "metadata": {k: v for k, v in notebook.metadata.items() if k == "language_info"},
                          "outputs": [[c.get("execution_count"), c.get("outputs", [])]
                                      for c in notebook.cells if c.cell_type == "code"]}
                # in the outputs' own key order: the glue data MyST-NB writes from them is not sorted
                kept.write_text(json.dumps(record), encoding="utf8")

        client.start_client = start_and_keep
        return client

    create.attention_graph_reuse = True
    return create


def _builder_inited(app) -> None:
    _BUILD.update(app=app, code=_digest(app, "code"), generated=_digest(app, "generated"))


def setup(app):
    import myst_nb.sphinx_ as nb_sphinx

    app.add_config_value("attention_graph_watch", ["code", "book/_ext"], "env")
    app.add_config_value("attention_graph_generated", [], "env")
    app.add_config_value("attention_graph_reads_generated", r"(?!)", "env")
    app.add_config_value("attention_graph_static_digest", "", "html")
    app.connect("config-inited", _static_digest)
    app.connect("builder-inited", _builder_inited)
    app.connect("source-read", _note)
    if not getattr(nb_sphinx.create_client, "attention_graph_reuse", False):
        nb_sphinx.create_client = _reuse(nb_sphinx.create_client)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "3"}
