"""A Sphinx extension that keeps the book's numbers, and its look, fresh, and executes no notebook for a
change that cannot move a number.

What a change re-does on the next build:

- **code** (every ``*.py`` file and every package-data file, a ``data`` folder, under the configured
  folders; the Python of the book's extensions is among them): every page is re-read, and with
  ``execute_notebooks: force`` re-executed. jupyter-cache, and Sphinx itself, decide what to re-read
  from a page's own source alone, so without this a change in ``code/`` would leave every glued number
  stale: the files are recorded as a dependency of every page.
- **a page** (its prose or its cells): Sphinx re-reads that page, so it is executed again.
- **static files** (a ``static`` folder: CSS, JavaScript, icons): nothing is re-read or executed.
  Their digest is the configuration value ``attention_graph_static_digest``, of the HTML builder's
  kind (``rebuild="html"``): a new digest changes the build's ``.buildinfo``, so Sphinx writes every
  page again from its stored doctree (each page links the static files with their checksums) and
  copies the static files. Without it Sphinx found "no targets out of date" and the site kept the old
  CSS; when static files were page dependencies, a change of CSS re-executed every notebook.

A page's prose is not served from jupyter-cache (``execute_notebooks: cache``): on a cache hit MyST-NB
1.4 writes the page's notebook without its outputs to ``_build/jupyter_execute`` (the downloadable
notebook, and what the tests read), and the cached cells' metadata (their tags) replaces the page's.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``; ``attention_graph_watch`` lists the
folders, relative to the book's root (default ``["code", "book/_ext"]``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def _files(app, kind: str) -> list[Path]:
    """The watched files of one kind: ``"code"`` (``*.py`` and package data) or ``"static"``."""
    root = Path(app.confdir)
    files = []
    for folder in app.config.attention_graph_watch:
        for p in sorted((root / folder).rglob("*")):
            if not p.is_file() or "__pycache__" in p.parts:
                continue
            parts = set(p.relative_to(root).parent.parts)
            is_static = "static" in parts
            is_code = not is_static and (p.suffix == ".py" or "data" in parts)
            if (kind == "static" and is_static) or (kind == "code" and is_code):
                files.append(p.resolve())
    return files


def _static_digest(app, config) -> None:
    """SHA-256 over the static files' paths (relative to the book's root) and bytes: the same in any folder."""
    root = Path(app.confdir).resolve()
    h = hashlib.sha256()
    for p in _files(app, "static"):
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    config.attention_graph_static_digest = h.hexdigest()


def _note(app, docname, source) -> None:
    for path in _files(app, "code"):
        app.env.note_dependency(str(path))


def setup(app):
    app.add_config_value("attention_graph_watch", ["code", "book/_ext"], "env")
    app.add_config_value("attention_graph_static_digest", "", "html")
    app.connect("config-inited", _static_digest)
    app.connect("source-read", _note)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "2"}
