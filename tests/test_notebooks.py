"""Every notebook the book offers for download runs where only the package is installed.

As a reader would: the wheel the site offers in its download menu (``_build/html/_downloads``,
built by ``book/_ext/package_wheel.py``) is installed with its ``book`` extra into a
fresh virtual environment outside the checkout (one per session, made by uv at the versions of
``requirements.txt``); each executed ``.ipynb`` the site offers (``_build/html/_sources``) is copied
to a folder outside the checkout and run top to bottom by nbclient in a kernel of that environment,
one test per notebook, named after it. Any error fails; then every value the notebook glues must
equal the one the built book pasted in (every text form: plain, LaTeX, Markdown, HTML).

The reader's environment inherits nothing that points into the checkout (``PYTHONPATH`` and the
like are dropped), so the caller's environment does not change the result.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import package_wheel
import pytest

import booktools as bt
import buildpaths as paths

pytestmark = pytest.mark.notebooks  # a run of its own (make notebooks): one environment

# The caller's variables that would point the reader's Python or Jupyter elsewhere.
DROPPED = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV",
           "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR",
           "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR", "MPLBACKEND"}

WHERE = "import sys, attention_graph; print(sys.prefix); print(attention_graph.__file__)"


def downloads() -> list[Path]:
    """The executed notebooks the built site offers for download."""
    return sorted(paths.DOWNLOADS.rglob("*.ipynb"))


@dataclass(frozen=True)
class Reader:
    python: Path  # the reader's environment's interpreter
    folder: Path  # where the notebooks run, outside the checkout
    env: dict[str, str]  # the environment of the reader's processes


def _run(*cmd, env=None, cwd=None) -> str:
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd)
    if out.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out.stdout


@pytest.fixture(scope="session")
def reader(tmp_path_factory) -> Reader:
    """The wheel and its ``book`` extra in a fresh venv outside the checkout, with a kernel spec."""
    tmp = tmp_path_factory.mktemp("reader")
    assert not tmp.resolve().is_relative_to(paths.ROOT)
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    venv = tmp / "venv"
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}", HOME=str(tmp),
               JUPYTER_DATA_DIR=str(tmp / "jd"), JUPYTER_CONFIG_DIR=str(tmp / "jc"),
               JUPYTER_RUNTIME_DIR=str(tmp / "jr"), MPLCONFIGDIR=str(tmp / "mpl"))
    # The wheel the site offers in every page's download menu (book/_ext/package_wheel.py): the file a
    # reader downloads is the one tested.
    (wheel,) = (paths.HTML / package_wheel.FOLDER).glob("attention_graph-*-py3-none-any.whl")
    uv = [sys.executable, "-m", "uv"]
    _run(*uv, "venv", "--quiet", "--python", sys.executable, venv, env=env)
    python = venv / "bin" / "python"
    # The lock's exact versions as constraints (the hashes are the lock's business, not this test's).
    constraints = tmp / "constraints.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in bt.locked().items()))
    _run(*uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", python, "-c", constraints,
         f"{wheel}[book]", env=env)
    _run(*uv, "pip", "check", "--quiet", "--python", python, env=env)
    spec = tmp / "kernels" / "reader"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "the reader's Python", "language": "python"}))
    folder = tmp / "notebooks"
    folder.mkdir()
    return Reader(python, folder, env)


def execute(notebook: Path, reader: Reader) -> dict:
    """Run ``notebook`` top to bottom in a kernel of the reader's environment; the executed notebook."""
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    specs = KernelSpecManager(kernel_dirs=[str(reader.folder.parent / "kernels")])
    km = KernelManager(kernel_name="reader", kernel_spec_manager=specs)
    client = NotebookClient(nb, km=km, timeout=900, allow_errors=False, shutdown_kernel="immediate",
                            resources={"metadata": {"path": str(notebook.parent)}})
    client.execute(env=reader.env)  # a cell's error fails the test with its traceback
    nbformat.write(nb, notebook)
    return json.loads(notebook.read_text())


def _values(data: dict) -> dict:
    """A glued value's text forms: plain, LaTeX (equations), Markdown and HTML (tables); figures are
    compared by their text/plain only (their drawing is checked by the browser tests)."""
    return {m: "".join(v) if isinstance(v, list) else v for m, v in data.items() if not m.startswith("image/")}


def test_the_site_offers_notebooks_to_download():
    names = {p.stem for p in downloads()}
    assert {"softmax", "sparse", "blockwise", "derivations", "how_to_cite"} <= names


def test_the_kernel_runs_the_installed_wheel(reader):
    """The reader's Python is its venv's, and the package comes from its site-packages, not the checkout,
    even with ``PYTHONPATH`` pointing into the checkout in the caller's environment."""
    caller = {**os.environ, "PYTHONPATH": str(paths.ROOT / "code")}
    env = {k: v for k, v in caller.items() if k not in DROPPED} | {"PATH": reader.env["PATH"]}
    prefix, module = _run(reader.python, "-c", WHERE, env=env, cwd=reader.folder).split()
    assert prefix == str(reader.python.parent.parent) and not prefix.startswith(str(paths.ROOT))
    assert "site-packages" in module and not module.startswith(str(paths.ROOT))


@pytest.mark.parametrize("notebook", downloads(), ids=lambda p: p.stem)
def test_notebook(reader, notebook):
    """The downloaded notebook runs outside the checkout and glues what the built book shows."""
    copy = reader.folder / notebook.name
    shutil.copy(notebook, copy)
    rerun = {k: _values(v) for k, v in bt.glue_outputs(execute(copy, reader)).items()}
    # MyST-NB keeps what a page glued beside its executed notebook (<page>.glue.json), not in it.
    built = {k: _values(v["data"]) for k, v in bt.glue_data(notebook.stem).items()}
    assert rerun.keys() == built.keys()
    different = {k: (built[k], rerun[k]) for k in built if built[k] != rerun[k]}
    assert different == {}, "glued values differ from the built book (built, re-run)"
