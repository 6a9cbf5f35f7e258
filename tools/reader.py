"""The reader's environment: the package's wheel and its ``book`` extra in a fresh venv outside the checkout.

What a reader of the published book does to run a downloaded notebook: install the wheel with its
``book`` extra into an environment of their own, in a folder of their own. ``make reproducible``
(``tools/reproducible.py``) builds its copy of the book with the ``jupyter-book`` of such an
environment, so every page of the copy executes where only the installed wheel is there to import (no
``PYTHONPATH``, no editable install, no file of the checkout), in an empty temporary folder
(``execute: run_in_temp`` in ``_config.yml``), as a downloaded notebook runs in a reader's folder.
``tests/test_notebooks.py`` then reads what that build left (``record``).

The environment is made by uv at the exact versions of ``requirements.txt`` (as constraints; the
hashes are the lock's business), from the wheel the built site offers in its download menu
(``book/_ext/package_wheel.py``): the file a reader downloads is the one installed. It inherits
nothing of the caller's that points elsewhere (``DROPPED``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from buildpaths import ROOT

# The caller's variables that would point the reader's Python or Jupyter elsewhere.
DROPPED = {"PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV",
           "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTER_DATA_DIR", "JUPYTER_CONFIG_DIR",
           "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR", "MPLBACKEND"}
# Where the reader's Python finds the package: printed by the reader's interpreter itself.
WHERE = "import sys, attention_graph; print(sys.prefix); print(attention_graph.__file__)"


@dataclass(frozen=True)
class Reader:
    python: Path  # the reader's environment's interpreter
    env: dict[str, str]  # the environment of the reader's processes
    wheel: Path  # the wheel installed in it

    def exe(self, name: str) -> Path:
        """A console script of the reader's environment (``jupyter-book``)."""
        return self.python.with_name(name)


def run(*cmd, env=None, cwd=None) -> str:
    """Run ``cmd``; its standard output, or an error with the end of both outputs."""
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env=env, cwd=cwd)
    if out.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}")
    return out.stdout


def locked(requirements: Path = ROOT / "requirements.txt") -> dict[str, str]:
    """The exact versions ``requirements.txt`` pins, by name as written (extras left out).

    >>> import tempfile; p = Path(tempfile.mkdtemp()) / "r.txt"
    >>> _ = p.write_text("numpy==2.1.0 \\\\\\n    --hash=sha256:ab\\njsonschema[format-nongpl]==4.24.0\\n")
    >>> locked(p)
    {'numpy': '2.1.0', 'jsonschema': '4.24.0'}
    """
    text = requirements.read_text()
    return dict(re.findall(r"^([A-Za-z0-9][\w.-]*)(?:\[[^\]]*\])?==(\S+)", text, re.M))


def offered_wheel(html: Path) -> Path:
    """The package's wheel a built site offers in its download menu (``_downloads``)."""
    found = sorted((html / "_downloads").glob("attention_graph-*-py3-none-any.whl"))
    if len(found) != 1:
        raise FileNotFoundError(f"{html / '_downloads'} offers {len(found)} wheels of the package, not one: "
                                "build the book (make book)")
    return found[0]


def make(folder: Path, wheel: Path, lock: Path = ROOT / "requirements.txt") -> Reader:
    """The reader's environment in ``folder`` (outside the checkout): ``wheel`` (the one the site offers)
    and its ``book`` extra in a venv made by uv at the versions of ``lock``, a home and Jupyter folders
    of its own."""
    folder = folder.resolve()
    if folder.is_relative_to(ROOT):
        raise ValueError(f"folder: the reader's environment must lie outside the checkout, got {folder}")
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    venv = folder / "venv"
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}", HOME=str(folder / "home"),
               JUPYTER_DATA_DIR=str(folder / "jd"), JUPYTER_CONFIG_DIR=str(folder / "jc"),
               JUPYTER_RUNTIME_DIR=str(folder / "jr"), MPLCONFIGDIR=str(folder / "mpl"))
    (folder / "home").mkdir(parents=True, exist_ok=True)
    uv = [sys.executable, "-m", "uv"]
    run(*uv, "venv", "--quiet", "--python", sys.executable, venv, env=env)
    python = venv / "bin" / "python"
    constraints = folder / "constraints.txt"
    pins = locked(lock)
    constraints.write_text("".join(f"{name}=={version}\n" for name, version in pins.items()))
    run(*uv, "pip", "install", "--quiet", "--python", python, "-c", constraints,
        f"{wheel}[book]", env=env)
    run(*uv, "pip", "check", "--quiet", "--python", python, env=env)
    return Reader(python, env, wheel)


def where(reader: Reader, env: dict[str, str] | None = None) -> tuple[str, str]:
    """The reader's ``sys.prefix`` and the file its ``attention_graph`` is imported from, as its own
    interpreter says, run in its home (or with ``env``, say a caller's ``PYTHONPATH``)."""
    prefix, module = run(reader.python, "-c", WHERE, env=env or reader.env, cwd=reader.env["HOME"]).split()
    return prefix, module


def tree_digest(html: Path) -> str:
    """A digest of every file of a built site (its path and bytes): which build a record belongs to."""
    h = hashlib.sha256()
    for p in sorted(html.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(html).as_posix().encode() + b"\0" + hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()


def kernel_command(reader: Reader) -> list[str]:
    """The command that starts a page's kernel (``python3``, the kernel every page names) when a program
    of the reader's environment, such as its ``jupyter-book``, starts one."""
    code = ("import json; from jupyter_client.manager import KernelManager; "
            "print(json.dumps(KernelManager(kernel_name='python3').format_kernel_cmd()))")
    return json.loads(run(reader.python, "-c", code, env=reader.env, cwd=reader.env["HOME"]))


def record(build: Path, reader: Reader, copy_build: Path, html: Path) -> Path:
    """Keep, under ``build / "reader"``, what the copy's build in the reader's environment left for the
    notebook tests: its executed notebooks and what they glued (``jupyter_execute``) and ``reader.json``:
    where the reader's package came from (with and without a caller's ``PYTHONPATH`` into the
    checkout), the kernel's command, the wheel, and the digest of the checkout's site the copy matched."""
    kept = build / "reader"
    shutil.rmtree(kept, ignore_errors=True)
    kept.mkdir(parents=True)
    shutil.copytree(copy_build / "jupyter_execute", kept / "jupyter_execute")
    prefix, module = where(reader)
    caller = {**os.environ, "PYTHONPATH": str(ROOT / "code")}  # a caller pointing into the checkout
    env = {k: v for k, v in caller.items() if k not in DROPPED} | {"PATH": reader.env["PATH"]}
    prefix_with_caller, module_with_caller = where(reader, env)
    (kept / "reader.json").write_text(json.dumps({
        "python": str(reader.python), "prefix": prefix, "module": module, "checkout": str(ROOT),
        "prefix_with_callers_pythonpath": prefix_with_caller, "module_with_callers_pythonpath": module_with_caller,
        "kernel": kernel_command(reader),
        "wheel": reader.wheel.name, "wheel_sha256": hashlib.sha256(reader.wheel.read_bytes()).hexdigest(),
        "site_digest": tree_digest(html)}, indent=1) + "\n")
    return kept
