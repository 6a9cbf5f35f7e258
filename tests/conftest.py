"""Shared test set-up: Hypothesis profiles, the markers, the figure style and the browser fixtures.

Hypothesis profiles, chosen by the environment variable ``HYPOTHESIS_PROFILE``: ``check`` (few
examples, the writer's fast loop ``make check``), ``dev`` (the default) and ``ci`` (many examples,
``make test`` and CI). Tests give no example counts of their own.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

import browsertools as bw
from attention_graph import plots

_COMMON = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}
settings.register_profile("check", max_examples=15, **_COMMON)
settings.register_profile("dev", max_examples=100, **_COMMON)
settings.register_profile("ci", max_examples=250, **_COMMON)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))

plots.use_book_style()  # the tests draw the book's figures as the pages do


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in {"true", "1", "yes"}


def need_chromium() -> str:
    """The Chromium executable. Without one, skip with how to install it; under CI=true, fail."""
    exe = bw.find_chromium()
    if exe is None:
        if in_ci():
            pytest.fail(f"{bw.INSTALL_HINT} (CI=true: the browser tests must run in CI)")
        pytest.skip(bw.INSTALL_HINT)
    return exe


@pytest.fixture(scope="session")
def chromium() -> str:
    return need_chromium()


@pytest.fixture(scope="session")
def built_html():
    """The HTML build the browser tests read; `make test` builds it first."""
    if not (bw.HTML / "book").is_dir():
        pytest.fail(f"{bw.HTML} has no book: build it first (make book)")
    return bw.HTML


@pytest.fixture(scope="session")
def site(built_html):
    """Base URL of the built book, served on 127.0.0.1 for the whole session."""
    with bw.serve(built_html) as base:
        yield base


@pytest.fixture(scope="session")
def browser(chromium):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = bw.launch(pw, chromium)
        yield b
        b.close()
