"""Shared test set-up: Hypothesis profiles, the markers, the figure style, the background runs.

Two slow pieces of work run in the background, so they overlap the package's tests: Chromium's
visit of every built page (``tests/tour.py``, a process of its own), when a browser test is
selected, and a reader's run of the downloaded notebooks outside the checkout (``tests/reader.py``,
two processes), when a test asks for it. They start once the tests are collected, or before the
collection when the whole suite runs (as ``make test`` runs it). Their processes run at a lower
priority than the tests (``tests/background.py``), and the tests that read them run last.

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
from reader import Reader
from tour import Tour

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


_TOUR: Tour | None = None
_READER: Reader | None = None
_IN_A_WORKER = pytest.StashKey[set]()  # the tests an xdist worker must not run (see below)


def _whole_suite(config) -> bool:
    """True when this run is the whole suite (as ``make test``): the configured test paths, nothing
    selected or deselected, in one process."""
    opt = config.option
    chosen = (opt.markexpr, opt.keyword, getattr(opt, "deselect", None), getattr(opt, "lf", False),
              getattr(opt, "numprocesses", None), opt.collectonly, hasattr(config, "workerinput"))
    return config.args_source == pytest.Config.ArgsSource.TESTPATHS and not any(chosen)


def _start_reader() -> None:
    global _READER
    if _READER is None and (bw.HTML / "_sources").is_dir():
        _READER = Reader().start()


def _start_tour() -> None:
    global _TOUR
    exe = bw.find_chromium()
    if _TOUR is None and exe is not None and (bw.HTML / "book").is_dir():
        _TOUR = Tour(exe).start()


def pytest_sessionstart(session):
    """The whole suite runs the reader's and the browser tests: their background runs start now,
    while the tests are collected (a few seconds of one core)."""
    if _whole_suite(session.config):
        _start_reader()
        _start_tour()


@pytest.hookimpl(trylast=True)  # after `-m` and `-k` have deselected: only what will run counts
def pytest_collection_modifyitems(config, items):
    """The browser and the reader's tests last; start their background runs now (when they can run)."""
    reading = [item for item in items if "reader" in getattr(item, "fixturenames", ())]
    browser = [item for item in items if item.get_closest_marker("browser")]
    if (reading or browser) and hasattr(config, "workerinput"):
        # Each xdist worker would start its own Chromium and its own reader's run: fail them instead.
        config.stash[_IN_A_WORKER] = {item.nodeid for item in reading + browser}
        return
    late = {id(item) for item in reading + browser}
    # The tour has less to do than the reader, so its tests come first, while the notebooks still run.
    items[:] = [item for item in items if id(item) not in late] + browser + reading
    if config.option.collectonly:
        return  # nothing will run
    if reading:
        _start_reader()
    if browser:
        _start_tour()


def pytest_runtest_setup(item):
    if item.nodeid in item.config.stash.get(_IN_A_WORKER, set()):
        pytest.fail("the browser and notebook tests run in one process: drop -n, or deselect them "
                    "(-m 'not browser and not slow'), as `make check` does")


def pytest_sessionfinish(session, exitstatus):
    if _TOUR is not None:
        _TOUR.stop()
    if _READER is not None:
        _READER.stop()


@pytest.fixture(scope="session")
def tour(chromium, built_html) -> Tour:
    """Chromium's visits of every page (one load each) and the book's PDF, made once per session."""
    global _TOUR
    if _TOUR is None:
        _TOUR = Tour(chromium).start()
    return _TOUR


@pytest.fixture(scope="session")
def reader(built_html) -> Reader:
    """The reader's run of the downloaded notebooks outside the checkout (``tests/reader.py``)."""
    global _READER
    if _READER is None:
        _READER = Reader().start()
    return _READER


@pytest.fixture(scope="session")
def site(tour):
    """Base URL of the built book, served on 127.0.0.1 for the whole session."""
    return tour.site
