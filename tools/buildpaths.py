"""Where the book's sources are and where its build puts things: the one list of the build's paths.

Used by the tests (``tests/booktools.py``, the browser and notebook tests) and by the tools
(``browsertools.py``, ``reproducible.py``, ``package_data.py``).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]  # the checkout
BOOK = ROOT / "book"  # the pages' MyST sources
BUILD = ROOT / "_build"
HTML = BUILD / "html"  # the site: HTML / "book" / "softmax.html"
EXECUTED = BUILD / "jupyter_execute"  # executed notebooks and what they glued: EXECUTED / "book" / "softmax.glue.json"
DOWNLOADS = HTML / "_sources"  # what the site offers for download (.md and executed .ipynb)
SCREENSHOTS = BUILD / "screenshots"  # saved by the browser tests, for review
PDF = BUILD / "pdf" / "book.pdf"  # printed by the PDF tests and by `make pdf`
DATA = ROOT / "code" / "attention_graph" / "data"  # package data written by tools/package_data.py
