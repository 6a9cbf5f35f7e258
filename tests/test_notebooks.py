"""Every notebook the book offers for download runs where only the package is installed.

As a reader would: the package's wheel the site offers in its download menu is installed with its
``book`` extra into a fresh virtual environment outside the checkout, at the versions of ``requirements.txt``
(``tools/reader.py``). ``make reproducible`` builds its copy of the book with that environment's
``jupyter-book``: every page executes there top to bottom in a kernel of the reader's Python, in an
empty temporary folder (``execute: run_in_temp``), and the copy's site must equal the checkout's byte
for byte, the notebooks it offers for download included. So each downloadable notebook is the record
of its own run in a reader's environment. ``make notebooks`` (which runs ``make reproducible`` first)
reads what that run left in ``_build/reader``: one test per notebook, named after it, checks that it
ran without error and that every value it glued equals the one the checkout's build pasted in (every
text form: plain, LaTeX, Markdown, HTML).

The reader's environment inherits nothing that points into the checkout (``PYTHONPATH`` and the
like are dropped), so the caller's environment does not change the result.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import reader_notebook as rn

import booktools as bt
import buildpaths as paths
import reader as rd

pytestmark = pytest.mark.notebooks  # make notebooks: after make reproducible


def downloads() -> list[Path]:
    """The executed notebooks the built site offers for download."""
    return sorted(paths.DOWNLOADS.rglob("*.ipynb"))


@pytest.fixture(scope="session")
def run() -> dict:
    """What ``make reproducible`` recorded of its build in the reader's environment, for this very site."""
    record = paths.READER / "reader.json"
    if not record.is_file():
        pytest.fail(f"{record} is missing: run make reproducible (make notebooks runs it first)")
    found = json.loads(record.read_text())
    assert found["site_digest"] == rd.tree_digest(paths.HTML), (
        f"{paths.READER} belongs to another build of the site: run make reproducible again")
    return found


def _values(data: dict) -> dict:
    """A glued value's text forms: plain, LaTeX (equations), Markdown and HTML (tables); figures are
    compared by their text/plain only (their drawing is checked by the browser tests)."""
    return {m: "".join(v) if isinstance(v, list) else v for m, v in data.items() if not m.startswith("image/")}


def _code(notebook: dict) -> list[str]:
    """The code cells' sources, without the comment line the download adds to a build cell (``rn.labelled``)."""
    return [rn.unlabelled("".join(c["source"])) for c in notebook["cells"] if c["cell_type"] == "code"]


def test_the_site_offers_notebooks_to_download():
    names = {p.stem for p in downloads()}
    assert {"softmax", "sparse", "blockwise", "derivations", "how_to_cite"} <= names


def test_the_pages_ran_in_the_readers_environment_on_the_installed_wheel(run):
    """The reader's Python is its venv's, outside the checkout; its package comes from the venv's
    site-packages, not the checkout, even with ``PYTHONPATH`` pointing into the checkout in the caller's
    environment; and the kernel a page starts there is that Python."""
    checkout = run["checkout"]
    assert Path(run["python"]).parent.parent == Path(run["prefix"]) and not run["prefix"].startswith(checkout)
    for prefix, module in [(run["prefix"], run["module"]),
                           (run["prefix_with_callers_pythonpath"], run["module_with_callers_pythonpath"])]:
        assert prefix == run["prefix"]
        assert module.startswith(prefix) and "site-packages" in module and not module.startswith(checkout)
    assert run["kernel"][:3] == [run["python"], "-m", "ipykernel_launcher"]
    offered = rd.offered_wheel(paths.HTML)  # the file a reader downloads is the one the pages ran on
    assert run["wheel"] == offered.name and run["wheel_sha256"] == hashlib.sha256(offered.read_bytes()).hexdigest()


def test_the_config_runs_every_page_in_an_empty_folder():
    """A page that read a file beside it would run in the book's build and fail in a reader's folder."""
    assert "\n  run_in_temp: true\n" in (paths.ROOT / "_config.yml").read_text()


@pytest.mark.parametrize("notebook", downloads(), ids=lambda p: p.stem)
def test_notebook(run, notebook):
    """The downloaded notebook ran in the reader's environment and glued what the built book shows."""
    name = notebook.relative_to(paths.DOWNLOADS).with_suffix("")
    executed = json.loads((paths.READER / "jupyter_execute" / name).with_suffix(".ipynb").read_text())
    errors = [out for cell in executed["cells"] for out in cell.get("outputs", [])
              if out.get("output_type") == "error"]
    assert errors == []
    # What a reader downloads is what ran: the same code cells, in the same order.
    offered = json.loads(notebook.read_text())
    assert _code(offered) == _code(executed) != []
    # MyST-NB keeps what a page glued beside its executed notebook (<page>.glue.json), not in it.
    reran = json.loads((paths.READER / "jupyter_execute" / name).with_suffix(".glue.json").read_text())
    rerun = {k: _values(v["data"]) for k, v in reran.items()}
    built = {k: _values(v["data"]) for k, v in bt.glue_data(notebook.stem).items()}
    assert rerun.keys() == built.keys()
    different = {k: (built[k], rerun[k]) for k in built if built[k] != rerun[k]}
    assert different == {}, "glued values differ from the built book (built, reader's run)"
