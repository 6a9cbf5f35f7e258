"""A reader's run of the book's notebooks, outside the repository, done once per test session.

As a reader would: the package is built into a wheel and installed with its ``book`` extra into a
fresh virtual environment in a temporary folder outside the checkout (by ``uv``, from the versions
of ``requirements.txt``); every executed ``.ipynb`` the built site offers for download
(``_build/html/_sources``) is copied next to it and run top to bottom with nbclient, in a kernel of
that environment. ``tests/test_notebooks.py`` then reads what each notebook glued.

``conftest.py`` starts the run in a background thread before the package's tests (as it does
Chromium's tour), and the notebooks run in two processes at a lower priority than the tests
(``background.py``), so the work fills the CPU the package's tests leave. A test asks
:meth:`Reader.result` and waits for it if needed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

import background
import booktools as bt

DOWNLOADS = bt.BUILD / "html" / "_sources"
# What the wheel is built from: nothing else of the checkout reaches the reader.
WHEEL_SOURCES = ["pyproject.toml", "README.md", "LICENSE", "LICENSE-text", "code"]

# What every kernel imports, compiled once before the notebooks run.
WARM_UP = "import attention_graph, attention_graph.plots, ipykernel.kernelapp, matplotlib.pyplot, myst_nb"

# Run in the reader's environment: execute the notebooks named on the command line, in place. Every
# runner is given the same list, largest first, and runs the notebooks it claims first (a file made
# beside the notebook, which only one process can create), so the runners finish together. A
# notebook fails when a cell raises. A kernel that fails to start or to answer (not the notebook's
# doing: e.g. two kernels handed the same port) gets one more try on a new kernel, and is reported.
# Once the last cell has run, the kernel is stopped at once: its outputs are saved, and a graceful
# shutdown sometimes waits 2.5 s for a kernel that does not exit.
RUNNER = r'''
import json, os, sys, traceback
from pathlib import Path

import background  # copied beside this file: the kernels give the CPU to the tests first
import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError


def claim(path):
    """True for the one runner that claims ``path`` first."""
    try:
        os.close(os.open(path.with_name(path.name + ".claimed"), os.O_CREAT | os.O_EXCL))
        return True
    except FileExistsError:
        return False


def run(path):
    """Execute the notebook at ``path`` and save it; None, or the failing cell's error."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=False,
                            shutdown_kernel="immediate", resources={"metadata": {"path": str(path.parent)}})
    client.on_notebook_start = lambda notebook: background.lower(client.km.provisioner.pid)
    try:
        client.execute()
    except CellExecutionError as err:
        return str(err)[-3000:]
    finally:
        nbformat.write(nb, path)
    return None


failures, retried = {}, {}
for name in sys.argv[1:]:
    path = Path(name)
    if not claim(path):
        continue
    original = path.read_bytes()
    try:
        why = run(path)
    except Exception:  # the kernel, not a cell
        retried[path.name] = traceback.format_exc()[-2000:]
        path.write_bytes(original)
        try:
            why = run(path)
        except Exception:
            why = retried[path.name] + "\nand on a second kernel:\n" + traceback.format_exc()[-2000:]
    if why is not None:
        failures[path.name] = why
print(json.dumps({"failures": failures, "retried": retried}))
'''


@dataclass(frozen=True)
class Run:
    """What the reader's run left: its environment's python, the executed notebooks' folder, and
    ``{notebook name: traceback}`` of the notebooks that failed, and of those whose kernel failed
    once (started again, see :data:`RUNNER`)."""

    python: Path
    folder: Path
    failures: dict[str, str]
    retried: dict[str, str]


def downloads() -> list[Path]:
    """The executed notebooks the built site offers for download."""
    return sorted(DOWNLOADS.rglob("*.ipynb"))


def _run(*cmd, **kw) -> str:
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if out.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out.stdout


def _wheel(tmp: Path) -> Path:
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
    _run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", dist, src)
    (wheel,) = dist.glob("attention_graph-*.whl")
    return wheel


def _environment(tmp: Path, wheel: Path) -> Path:
    """A fresh venv holding the wheel and what its ``book`` extra declares, at the lock's versions."""
    venv = tmp / "venv"
    uv = [sys.executable, "-m", "uv"]
    _run(*uv, "venv", "--quiet", "--python", sys.executable, venv)
    python = venv / "bin" / "python"
    # Exact versions of the lock as constraints (the hashes are the lock's business, not this run's).
    constraints = tmp / "constraints.txt"
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in bt.locked().items()))
    _run(*uv, "pip", "install", "--quiet", "--python", python, "-c", constraints, f"{wheel}[book]")
    _run(*uv, "pip", "check", "--quiet", "--python", python)
    return python


def install_runner(folder: Path) -> Path:
    """Write :data:`RUNNER` into ``folder``, with ``background.py`` beside it (it imports it); its path."""
    runner = folder / "runner.py"
    runner.write_text(RUNNER)
    shutil.copy(Path(background.__file__), folder / "background.py")
    return runner


def largest_first(paths: list[Path]) -> list[Path]:
    """The notebooks in the order the runners take them: largest first, so none is left alone at
    the end with a long notebook."""
    return [path for _, path in sorted(((p.stat().st_size, p) for p in paths), reverse=True)]


def _execute(python: Path, folder: Path, tmp: Path, workers: int,
             procs: list) -> tuple[dict[str, str], dict[str, str]]:
    """Run every notebook of ``folder`` in the reader's environment; the failures by name, and the
    notebooks whose first kernel failed.

    The runners' processes are appended to ``procs`` (so that :meth:`Reader.stop` can end them).
    """
    # The machine's environment (its BLAS settings, e.g. OPENBLAS_CORETYPE, shape the last digits),
    # less anything that points into the checkout; Jupyter's own folders are fresh. Bytecode is
    # written, as on a reader's machine: uv installs none, so what every kernel imports is compiled
    # once (and matplotlib's font list made once) before the runners start, not by each first kernel.
    dropped = {"PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env.update(PATH=f"{python.parent}:{os.environ.get('PATH', '/usr/bin:/bin')}", HOME=str(tmp),
               JUPYTER_DATA_DIR=str(tmp / "jd"), JUPYTER_CONFIG_DIR=str(tmp / "jc"),
               MPLCONFIGDIR=str(tmp / "mpl"))
    runner = install_runner(tmp)
    warm = subprocess.Popen([python, "-c", WARM_UP], cwd=folder, env=env)
    background.lower(warm.pid)
    if warm.wait():
        raise RuntimeError(f"the reader's environment cannot import what the kernels import: {WARM_UP}")
    notebooks = largest_first(list(folder.glob("*.ipynb")))
    for _ in range(min(workers, len(notebooks))):
        procs.append(subprocess.Popen([python, runner, *notebooks], cwd=folder, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
        background.lower(procs[-1].pid)  # and the runner lowers each kernel it starts
    failures: dict[str, str] = {}
    retried: dict[str, str] = {}
    for proc in procs:
        out, err = proc.communicate()
        if proc.returncode:
            raise RuntimeError(f"the notebook runner failed:\n{out[-3000:]}\n{err[-3000:]}")
        report = json.loads(out.strip().splitlines()[-1])
        failures.update(report["failures"])
        retried.update(report["retried"])
    return failures, retried


class Reader:
    """The reader's run, in a background thread: :meth:`start` it, then ask :meth:`result`."""

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or min(2, os.cpu_count() or 1)
        self.tmp = Path(tempfile.mkdtemp(prefix="attention-graph-reader-"))
        assert not self.tmp.is_relative_to(bt.ROOT)
        self._future: Future[Run] = Future()
        self._procs: list[subprocess.Popen] = []
        self._thread = threading.Thread(target=self._work, name="reader-notebooks", daemon=True)

    def start(self) -> Reader:
        self._thread.start()
        return self

    def _work(self) -> None:
        try:
            python = _environment(self.tmp, _wheel(self.tmp))
            folder = self.tmp / "notebooks"
            folder.mkdir()
            for path in downloads():
                shutil.copy(path, folder / path.name)
            failures, retried = _execute(python, folder, self.tmp, self.workers, self._procs)
            self._future.set_result(Run(python, folder, failures, retried))
        except BaseException as err:  # noqa: BLE001 - handed to the test that waits for it
            self._future.set_exception(err)

    def result(self, timeout: float = 1800) -> Run:
        return self._future.result(timeout)

    def stop(self) -> None:
        """End the runners if the session ends first (an interrupted run), and remove the folder."""
        for proc in self._procs:
            if proc.poll() is None:
                proc.kill()
        self._thread.join(timeout=60)
        shutil.rmtree(self.tmp, ignore_errors=True)
