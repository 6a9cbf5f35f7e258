"""The package's wheel, offered in every page's download menu, so a reader of the HTML can run a notebook.

The book has no public repository: a reader who downloads a page's ``.ipynb`` needs the package too.
At the start of the build this extension builds the wheel of the package from a copy of the files
it is made of (``WHEEL_SOURCES``, in a temporary folder, so the checkout gets no ``build/`` or
``.egg-info``), by the build backend ``pyproject.toml`` names (setuptools, locked; called directly,
as pip would call it without build isolation, so nothing is downloaded and no pip is needed),
and puts it in ``_downloads/`` of the HTML output. Every page's download menu (sphinx-book-theme's,
with the ``.ipynb``, the ``.md`` and the ``.pdf``) gets one more entry, ``.whl``, that links to it, and
its icon button is named for all it holds (``MENU_NAME``, its tooltip, which the theme makes its
``aria-label``); the line "Run it yourself" at the top of each page says how to install it.

The role ``{wheel}`` prints its text as inline code with ``WHEEL`` replaced by the wheel's file name,
so the install line the pages quote is the real one and nobody writes the version by hand:
``{wheel}`pip install "WHEEL[notebook]"```. A new wheel name re-reads every page
(``env-get-outdated``). The theme's download menu names its ``.md`` item by the file's suffix; its
tooltip (``MD_TOOLTIP``) says what the file is.

The wheel is byte-reproducible: its zip entries carry the fixed date ``WHEEL_EPOCH`` (the build's
own ``SOURCE_DATE_EPOCH`` does not reach it, so a copy built on another day gives the same bytes),
in sorted order, with paths relative to the package; ``make reproducible`` compares it with the
rest of the output.

Enabled in ``_config.yml`` under ``sphinx.local_extensions``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

# What the wheel is built from: nothing else of the checkout reaches the reader.
WHEEL_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "LICENSE-text", "code")
WHEEL_EPOCH = 315532800  # 1980-01-01, the earliest date a zip entry holds: the same on every build
FOLDER = "_downloads"  # of the HTML output
# The download menu's name (the theme's "Download this page"), now that it offers the package too.
MENU_NAME = "Download this page (notebook, Markdown, PDF) or the package (wheel)"
# The .md item's tooltip: the page's source, not a notebook.
MD_TOOLTIP = "Download this page's source (.md, MyST Markdown)"
PLACEHOLDER = "attention_graph-<version>-py3-none-any.whl"  # where no wheel is built (a test's one page)
# PEP 517's build_wheel hook of the backend pyproject.toml names (setuptools.build_meta), run in the sources.
BACKEND = "import sys; from setuptools import build_meta; build_meta.build_wheel(sys.argv[1])"
# The caller's variables that would change what is built or where Python looks.
DROPPED = ("PYTHONPATH", "PIP_CONFIG_FILE", "PIP_REQUIRE_VIRTUALENV", "PYTHONHASHSEED")


def build_wheel(root: Path, out: Path) -> Path:
    """The wheel of the package whose sources are under ``root``, written into ``out``; its path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="attention-graph-wheel-") as tmp:
        src, dist = Path(tmp, "src"), Path(tmp, "dist")
        src.mkdir()
        for name in WHEEL_SOURCES:
            path = root / name
            if path.is_dir():
                shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", "*.pyc"))
            else:
                shutil.copy(path, src / name)
        env = {k: v for k, v in os.environ.items() if k not in DROPPED}
        env.update(SOURCE_DATE_EPOCH=str(WHEEL_EPOCH), PYTHONHASHSEED="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
        # The build backend pyproject.toml names, called as pip would call it, in this Python (whose
        # setuptools is the lock's: the `book` extra asks for it): nothing is fetched, and a reader's
        # environment without pip builds the same bytes.
        done = subprocess.run([sys.executable, "-c", BACKEND, str(dist)], capture_output=True, text=True,
                              env=env, cwd=src)
        if done.returncode:
            raise RuntimeError("package_wheel: the wheel's build failed:\n"
                               f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        (wheel,) = dist.glob("*.whl")
        target = out / wheel.name
        shutil.copyfile(wheel, target)
    return target


def _build(app) -> None:
    if app.builder.format != "html":
        return
    if not Path(app.srcdir, "pyproject.toml").is_file():  # a book without the package (a test's one page)
        logger.info("package_wheel: no pyproject.toml beside the book: no wheel offered")
        return
    wheel = build_wheel(Path(app.srcdir), Path(app.outdir, FOLDER))
    for old in wheel.parent.glob("*.whl"):  # a wheel of an earlier version does not stay on offer
        if old != wheel:
            old.unlink()
    app.env.attention_graph_wheel = wheel.name


def install_line(text: str, wheel: str | None) -> str:
    """``text`` with ``WHEEL`` replaced by the wheel's file name (PLACEHOLDER where there is none).

    >>> install_line('pip install "WHEEL[notebook]"', "attention_graph-1.0-py3-none-any.whl")
    'pip install "attention_graph-1.0-py3-none-any.whl[notebook]"'
    """
    return text.replace("WHEEL", wheel or PLACEHOLDER)


def _wheel_role(name, rawtext, text, lineno, inliner, options=None, content=()):
    env = inliner.document.settings.env
    line = install_line(text, getattr(env, "attention_graph_wheel", None))
    return [nodes.literal(rawtext, line)], []


def _outdated(app, env, added, changed, removed):
    """Every page again when the wheel's name changed since the pages were read (they quote it)."""
    name = getattr(env, "attention_graph_wheel", None)
    if getattr(env, "attention_graph_wheel_read", name) == name:
        env.attention_graph_wheel_read = name
        return []
    env.attention_graph_wheel_read = name
    return sorted(env.found_docs - set(added) - set(changed))


def _offer_wheel(app, pagename, templatename, context, doctree) -> None:
    name = getattr(app.env, "attention_graph_wheel", None)
    if not name:
        return
    for button in context.get("header_buttons", []):
        if button.get("label") == "download-buttons":
            # The menu's icon button is named by its tooltip (the theme's aria-label): say what it holds.
            button["tooltip"] = MENU_NAME
            for item in button["buttons"]:
                if item.get("label") == "download-source-button":  # the page's .md
                    item["tooltip"] = MD_TOOLTIP
            button["buttons"].append({
                "type": "link", "url": context["pathto"](f"{FOLDER}/{name}", 1), "text": ".whl",
                "icon": "fas fa-box", "label": "download-wheel-button",
                "tooltip": "Download the package (a wheel) that runs the notebooks"})


def setup(app):
    app.connect("builder-inited", _build)
    app.add_role("wheel", _wheel_role)
    app.connect("env-get-outdated", _outdated)
    app.connect("html-page-context", _offer_wheel, priority=502)  # after the theme's menu (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1"}
