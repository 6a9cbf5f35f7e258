"""Shared test set-up: Hypothesis profiles, the figure style, and the browser tests' session fixtures.

Hypothesis profiles, chosen by the environment variable ``HYPOTHESIS_PROFILE``: ``check`` (few
examples, ``make check``), ``dev`` (the default) and ``ci`` (many examples, ``make test`` and CI).
Tests give no example counts of their own.

The browser tests (marked ``browser``) use four session fixtures: ``site``, the base URL of
``_build/html`` served on 127.0.0.1; ``browser``, a Playwright ``Browser`` on the system's Chromium
(``tools/browsertools.launch``); ``visit``, ``visit("book/softmax.html")`` → what that page showed
at 1280 px (``tests/visits.py``; each page is opened once per session); and ``phone``,
``phone("book/softmax.html", "dark")`` → what it showed on a 390 px phone (once per mode). The
browser tests run as a pytest run of their own, in one process (``make browser``): one Chromium,
each page opened once at 1280 px and once per mode on a phone. Their screenshots
go to pytest's temporary folder (``tmp_path_factory``; pytest keeps the last three runs' folders), or
to the folder ``--screenshots DIR`` names, for review; no test writes into ``_build``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

import browsertools as bw
import buildpaths as paths
from attention_graph import plots
from visits import PhoneVisits, Visits

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


def pytest_addoption(parser):
    parser.addoption("--screenshots", metavar="DIR", default=None,
                     help="keep the browser tests' screenshots in DIR, for review "
                          "(default: a folder of pytest's temporary area)")


def pytest_collection_modifyitems(items):
    for item in items:
        if item.get_closest_marker("browser") or item.get_closest_marker("notebooks"):
            item.add_marker(pytest.mark.build)  # both read the built site


@pytest.fixture(scope="session")
def site():
    """Base URL of the built site (``_build/html``), served on 127.0.0.1 for the whole session."""
    if not (paths.HTML / "book").is_dir():
        pytest.fail(f"{paths.HTML} has no book: build it first (make book)")
    with bw.serve(paths.HTML) as url:
        yield url


@pytest.fixture(scope="session")
def browser():
    """The system's Chromium, headless and offline, driven by Playwright for the whole session."""
    from playwright.sync_api import sync_playwright

    executable = need_chromium()
    with sync_playwright() as pw:
        chromium = bw.launch(pw, executable)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def visit(browser, site, request, tmp_path_factory) -> Visits:
    """``visit(rel)`` → the :class:`visits.Visit` of page ``rel`` of the build, opened once; its
    screenshots under ``--screenshots DIR``, else in pytest's temporary folder."""
    keep = request.config.getoption("screenshots")
    shots = Path(keep).resolve() if keep else tmp_path_factory.mktemp("screenshots")
    return Visits(browser, site, shots)


@pytest.fixture(scope="session")
def phone(browser, site) -> PhoneVisits:
    """``phone(rel, mode)`` → what page ``rel`` showed on a 390 px phone in ``mode``, opened once per mode."""
    return PhoneVisits(browser, site)
