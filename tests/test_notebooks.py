"""Every notebook the book offers for download runs where only the package is installed.

As a reader would: the package is built into a wheel and installed with its ``book`` extra into a
virtual environment outside the checkout; each executed ``.ipynb`` of the built site (the download
menu's, ``_build/html/_sources``) is copied into a folder outside the repository and run top to
bottom with nbclient, in a kernel of that environment. Any error fails; then every value the
notebook glues must equal the one the built book pasted in (every text form: plain, LaTeX,
Markdown, HTML).

The environment's dependencies are cached in ``_build/notebook-venv`` (rebuilt when
``requirements.txt`` or ``pyproject.toml`` change), pinned to the versions of ``requirements.txt`` so
the numbers match the book's; the package itself is reinstalled from a fresh wheel on every run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import venv

import pytest

import booktools as bt

pytestmark = pytest.mark.slow
VENV = bt.BUILD / "notebook-venv"
DOWNLOADS = bt.BUILD / "html" / "_sources"
# What the wheel is built from: nothing else of the checkout reaches the reader.
WHEEL_SOURCES = ["pyproject.toml", "README.md", "LICENSE", "LICENSE-text", "code"]

RUNNER = r'''
import json, sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

folder = Path(sys.argv[1])
failures = {}
for path in sorted(folder.glob("*.ipynb")):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError as err:
        failures[path.name] = str(err)[-3000:]
    nbformat.write(nb, path)
print(json.dumps(failures))
'''

WHERE = """\
import sys, attention_graph
print(sys.prefix)
print(attention_graph.__file__)
"""


def _run(*cmd, **kw):
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert out.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def _key() -> str:
    h = hashlib.sha256()
    for name in ("requirements.txt", "pyproject.toml"):
        h.update((bt.ROOT / name).read_bytes())
    return h.hexdigest()


def _wheel(tmp) -> str:
    """Build the wheel from a copy of what the package is made of, outside the checkout."""
    src = tmp / "src"
    src.mkdir()
    for name in WHEEL_SOURCES:
        path = bt.ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy(path, src / name)
    dist = tmp / "dist"
    # The checkout's setuptools (locked in requirements.txt): no build environment is downloaded.
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "-w", dist, src)
    (wheel,) = dist.glob("attention_graph-*.whl")
    return str(wheel)


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    """A venv with the wheel and its book extra; returns its python and a folder of the notebooks."""
    tmp = tmp_path_factory.mktemp("reader")
    assert not tmp.is_relative_to(bt.ROOT)
    python = VENV / "bin" / "python"
    if not (VENV / ".key").exists() or (VENV / ".key").read_text() != _key():
        shutil.rmtree(VENV, ignore_errors=True)
        venv.create(VENV, with_pip=True)
    wheel = _wheel(tmp)
    # Exact versions of the lock as constraints (hashes dropped: pip takes them in -r files only).
    constraints = tmp / "constraints.txt"
    constraints.write_text("\n".join(
        line.split(" ")[0] for line in (bt.ROOT / "requirements.txt").read_text().splitlines()
        if "==" in line and not line.startswith("#")) + "\n")
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    _run(*pip, "install", "--quiet", "--no-deps", "--force-reinstall", wheel)
    _run(*pip, "install", "--quiet", "-c", constraints, f"{wheel}[book]")  # what the wheel declares
    _run(*pip, "check")
    (VENV / ".key").write_text(_key())

    folder = tmp / "notebooks"
    folder.mkdir()
    for path in sorted(DOWNLOADS.rglob("*.ipynb")):
        shutil.copy(path, folder / path.name)
    (tmp / "runner.py").write_text(RUNNER)
    return python, folder, tmp


@pytest.fixture(scope="module")
def executed(reader):
    """Run every downloaded notebook once; {notebook name: traceback} of those that failed."""
    python, folder, tmp = reader
    # The machine's environment (its BLAS settings, e.g. OPENBLAS_CORETYPE, shape the last digits),
    # less anything that points into the checkout; Jupyter's own folders are fresh.
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH"}}
    env.update(PATH=f"{python.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}", HOME=str(tmp),
               JUPYTER_DATA_DIR=str(tmp / "jd"), JUPYTER_CONFIG_DIR=str(tmp / "jc"),
               MPLCONFIGDIR=str(tmp / "mpl"))
    out = _run(python, tmp / "runner.py", folder, cwd=folder, env=env)
    return json.loads(out.strip().splitlines()[-1])


def _values(data: dict) -> dict:
    """A glued value's text forms: plain, LaTeX (equations), Markdown and HTML (tables); figures are
    compared by their text/plain only (their drawing is checked by the browser tests)."""
    return {m: "".join(v) if isinstance(v, list) else v for m, v in data.items() if not m.startswith("image/")}


def _downloads():
    return sorted(DOWNLOADS.rglob("*.ipynb"))


def test_the_site_offers_notebooks_to_download():
    names = {p.stem for p in _downloads()}
    assert {"softmax", "sparse", "blockwise", "derivations", "how_to_cite"} <= names


def test_the_kernel_runs_the_installed_wheel(reader):
    """The kernel is the reader's venv, and the package comes from its site-packages, not the checkout."""
    python, folder, tmp = reader
    prefix, module = _run(python, "-c", WHERE, cwd=folder).split()
    assert prefix == str(VENV) and "site-packages" in module and not module.startswith(str(bt.ROOT / "code"))


@pytest.mark.parametrize("name", [p.name for p in _downloads()])
def test_downloaded_notebook_runs_and_glues_what_the_book_shows(executed, reader, name):
    _python, folder, _tmp = reader
    assert name not in executed, f"{name} failed outside the repository:\n{executed.get(name)}"
    # MyST-NB keeps what a page glued beside its executed notebook (<page>.glue.json), not in it.
    built = {k: _values(v["data"]) for k, v in bt.glue_data(name.removesuffix(".ipynb")).items()}
    rerun = {k: _values(v) for k, v in bt.glue_outputs(json.loads((folder / name).read_text())).items()}
    assert rerun.keys() == built.keys()
    different = {k: (built[k], rerun[k]) for k in built if built[k] != rerun[k]}
    assert different == {}, "glued values differ from the built book (built, re-run)"
