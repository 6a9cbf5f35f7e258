"""A Sphinx extension that keeps the book's numbers, and its look, fresh when the package or the
book's extensions change.

jupyter-cache, and Sphinx itself, decide what to re-execute from a page's own source: a change in
``code/`` alone would leave every page's glued numbers stale. Sphinx does not watch its extensions
either, nor their static files: after a change in ``book/_ext/static/book.css`` alone it finds "no
targets out of date" and copies no static file, so the site kept the old CSS. This extension records
every ``*.py`` file under the configured folders, every package-data file (a ``data`` folder:
benchmark records, the index of results that ``tools/package_data.py`` writes at the start of a
build) and every static file (a ``static`` folder: CSS, JavaScript, icons) as a dependency of every
page, so a change there makes Sphinx re-read, and with ``execute_notebooks: force`` re-execute,
every page on the next build, and write every page with the new files' checksums.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``; ``attention_graph_watch`` lists the
folders, relative to the book's root (default ``["code", "book/_ext"]``).
"""

from __future__ import annotations

from pathlib import Path


def _watched(app) -> list[str]:
    root = Path(app.confdir)
    files = []
    for folder in app.config.attention_graph_watch:
        files += sorted(str(p.resolve()) for p in (root / folder).rglob("*")
                        if p.is_file() and (p.suffix == ".py" or {"data", "static"} & set(p.parent.parts)))
    return files


def _note(app, docname, source) -> None:
    for path in _watched(app):
        app.env.note_dependency(path)


def setup(app):
    app.add_config_value("attention_graph_watch", ["code", "book/_ext"], "env")
    app.connect("source-read", _note)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
