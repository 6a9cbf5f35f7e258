"""`make lab` starts JupyterLab on the book's chapters, offline, with each page opening as a notebook."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

import booktools as bt

pytestmark = pytest.mark.slow
TOKEN = "attention-graph-test"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.status, response.read().decode()


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """`make lab` as a reader runs it (no browser, a free port), stopped after the tests."""
    port = _free_port()
    flags = f"--no-browser --ServerApp.ip=127.0.0.1 --ServerApp.port={port} --IdentityProvider.token={TOKEN}"
    log = (tmp_path_factory.mktemp("lab") / "lab.log").open("w+")
    proc = subprocess.Popen(["make", "--no-print-directory", "lab", f"LAB_FLAGS={flags}"], cwd=bt.ROOT,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                _get(f"{base}/api/status?token={TOKEN}")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    pytest.fail(f"make lab did not start:\n{log.read()[-3000:]}")
                time.sleep(1)
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.seek(0)
        lab_log = log.read()
        log.close()
    assert "Traceback" not in lab_log, lab_log[-3000:]


def test_lab_serves_its_page(lab):
    status, html = _get(f"{lab}/lab?token={TOKEN}")
    assert status == 200 and "JupyterLab" in html


def test_a_chapter_opens_as_a_notebook_through_jupytext(lab):
    status, body = _get(f"{lab}/api/contents/softmax.md?type=notebook&content=1&token={TOKEN}")
    nb = json.loads(body)["content"]
    assert status == 200 and nb["nbformat"] == 4
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and any("attention_graph" in c["source"] for c in code)


def test_chapters_open_as_notebooks_by_default(lab):
    _status, body = _get(f"{lab}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={TOKEN}")
    viewers = json.loads(body)["schema"]["properties"]["defaultViewers"]["default"]
    assert viewers["markdown"] == "Jupytext Notebook"


def test_nothing_is_fetched_from_outside(lab):
    """News are off (the page config says so) and the update check never runs: the lab works
    on a machine without a network."""
    _status, html = _get(f"{lab}/lab?token={TOKEN}")
    assert '"news": {"disabled": true}' in html
    _status, body = _get(f"{lab}/lab/api/update?token={TOKEN}")
    assert json.loads(body).get("notification") is None
    settings = (bt.ROOT / ".venv/share/jupyter/lab/settings/overrides.json").read_text()
    assert '"checkForUpdates": false' in settings
