"""Every notebook the book offers for download runs where only the package is installed.

The run is a reader's (``tests/reader.py``): the wheel and its ``book`` extra in a fresh
environment outside the checkout, each downloaded ``.ipynb`` executed from a folder outside the
repository. Any error fails; then every value the notebook glues must equal the one the built book
pasted in (every text form: plain, LaTeX, Markdown, HTML).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import nbformat
import pytest

import booktools as bt
import reader as rd

pytestmark = pytest.mark.slow

WHERE = """\
import sys, attention_graph
print(sys.prefix)
print(attention_graph.__file__)
"""


@pytest.fixture(scope="module")
def run(reader) -> rd.Run:
    result = reader.result()
    for name, why in result.retried.items():  # not the notebook's failure, but worth seeing
        warnings.warn(f"{name}: its first kernel failed, a second one ran it:\n{why}", stacklevel=1)
    return result


def _values(data: dict) -> dict:
    """A glued value's text forms: plain, LaTeX (equations), Markdown and HTML (tables); figures are
    compared by their text/plain only (their drawing is checked by the browser tests)."""
    return {m: "".join(v) if isinstance(v, list) else v for m, v in data.items() if not m.startswith("image/")}


def test_the_site_offers_notebooks_to_download():
    names = {p.stem for p in rd.downloads()}
    assert {"softmax", "sparse", "blockwise", "derivations", "how_to_cite"} <= names


def test_the_kernel_runs_the_installed_wheel(run):
    """The kernel is the reader's venv, and the package comes from its site-packages, not the checkout."""
    out = subprocess.run([run.python, "-c", WHERE], cwd=run.folder, capture_output=True, text=True, check=True)
    prefix, module = out.stdout.split()
    assert prefix == str(run.python.parent.parent) and not prefix.startswith(str(bt.ROOT))
    assert "site-packages" in module and not module.startswith(str(bt.ROOT))


@pytest.mark.parametrize("name", [p.name for p in rd.downloads()])
def test_downloaded_notebook_runs_and_glues_what_the_book_shows(run, name):
    assert name not in run.failures, f"{name} failed outside the repository:\n{run.failures.get(name)}"
    # MyST-NB keeps what a page glued beside its executed notebook (<page>.glue.json), not in it.
    built = {k: _values(v["data"]) for k, v in bt.glue_data(name.removesuffix(".ipynb")).items()}
    rerun = {k: _values(v) for k, v in bt.glue_outputs(json.loads((run.folder / name).read_text())).items()}
    assert rerun.keys() == built.keys()
    different = {k: (built[k], rerun[k]) for k in built if built[k] != rerun[k]}
    assert different == {}, "glued values differ from the built book (built, re-run)"


def test_the_runners_share_the_notebooks_and_a_kernel_that_dies_twice_fails_only_its_notebook(tmp_path):
    """Two of the reader's runners (here with the checkout's Python) on one list: each notebook runs
    once. A kernel that dies gets one more start; a notebook that kills it again fails with both
    reports, and the other notebooks still run."""
    log = tmp_path / "ran.txt"
    cells = {"dies.ipynb": "import os\nos._exit(3)",
             **{f"fine{k}.ipynb": f"with open({str(log)!r}, 'a') as f:\n    print('fine{k}', file=f)"
                for k in range(2)}}
    for name, source in cells.items():
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)]), tmp_path / name)
    runner = rd.install_runner(tmp_path)
    runners = [subprocess.Popen([sys.executable, runner, *cells], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
               for _ in range(2)]
    reports = [json.loads(proc.communicate()[0].strip().splitlines()[-1]) for proc in runners]
    assert all(proc.returncode == 0 for proc in runners)
    failures = [name for report in reports for name in report["failures"]]
    retried = [name for report in reports for name in report["retried"]]
    assert failures == retried == ["dies.ipynb"]
    assert "and on a second kernel" in next(r["failures"]["dies.ipynb"] for r in reports if r["failures"])
    assert sorted(log.read_text().split()) == ["fine0", "fine1"]  # each ran, and once
