"""A Sphinx extension that keeps the book's numbers fresh when the package changes.

jupyter-cache, and Sphinx itself, decide what to re-execute from a page's own source: a change in
``code/`` alone would leave every page's glued numbers stale. This extension records every ``*.py``
file under the configured folders, and every package-data file (a ``data`` folder: benchmark records,
the index of results that ``tools/package_data.py`` writes at the start of a build), as a dependency
of every page, so a change there makes Sphinx re-read, and with ``execute_notebooks: force``
re-execute, every page on the next build.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``; ``attention_graph_watch`` lists the
folders, relative to the book's root (default ``["code"]``).
"""

from __future__ import annotations

from pathlib import Path


def _watched(app) -> list[str]:
    root = Path(app.confdir)
    files = []
    for folder in app.config.attention_graph_watch:
        files += sorted(str(p.resolve()) for p in (root / folder).rglob("*")
                        if p.is_file() and (p.suffix == ".py" or "data" in p.parent.parts))
    return files


def _note(app, docname, source) -> None:
    for path in _watched(app):
        app.env.note_dependency(path)


def setup(app):
    app.add_config_value("attention_graph_watch", ["code"], "env")
    app.connect("source-read", _note)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
