"""Where the book's sources are and where its build puts things: the one list of the build's paths.

Used by the tests (``tests/booktools.py``, the browser and notebook tests) and by the tools
(``browsertools.py``, ``reproducible.py``, ``package_data.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout
BOOK = ROOT / "book"  # the pages' MyST sources
# `make test` runs the tests that read nothing of the build beside `make book` (see the Makefile), with
# BOOK_UNBUILT=1: then there is no build here, and a test that reads one without the `build` mark fails.
BUILD = ROOT / ("_build" if not os.environ.get("BOOK_UNBUILT") else "_build (unread in a BOOK_UNBUILT run)")
HTML = BUILD / "html"  # the site: HTML / "book" / "softmax.html"
EXECUTED = BUILD / "jupyter_execute"  # executed notebooks and what they glued: EXECUTED / "book" / "softmax.glue.json"
DOWNLOADS = HTML / "_sources"  # what the site offers for download (.md and executed .ipynb)
# What `make reproducible` keeps of its copy's build, made in the reader's environment (tools/reader.py):
# READER / "jupyter_execute" / "book" / "softmax.glue.json" and READER / "reader.json"; read by test_notebooks.
READER = BUILD / "reader"
PDF = BUILD / "pdf" / "book.pdf"  # printed by `make pdf` (tools/browsertools.py), read by tests/test_pdf.py
DATA = ROOT / "code" / "attention_graph" / "data"  # package data written by tools/package_data.py
