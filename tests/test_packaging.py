"""The package stands on its own: it imports only what pyproject.toml declares, reads no file of the
repository, and its dependencies are locked with hashes; the licenses are stated; no placeholder
reaches the site; every notebook page says how to run it."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tomllib
from functools import lru_cache
from importlib import metadata

import pytest
import yaml
from packaging.requirements import Requirement

import booktools as bt
import buildpaths as paths
import package_data

PACKAGE = bt.ROOT / "code" / "attention_graph"
PYPROJECT = tomllib.loads((bt.ROOT / "pyproject.toml").read_text())
# Never a need of the library itself: the book's build and the notebooks' front end.
FORBIDDEN = {"sphinx", "docutils", "myst_nb", "myst_parser", "jupyter_book", "jupyter_cache",
             "jupytext", "nbformat", "nbclient", "ipykernel", "jupyter_client", "jupyter_core",
             "jupyterlab", "jupyter_server", "sphinx_proof", "sphinx_exercise", "pytest", "hypothesis"}


def _name(requirement: str) -> str:
    """The normalized distribution name of a requirement string ("scipy>=1.11" -> "scipy")."""
    return re.sub(r"[-_.]+", "-", re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)).lower()


def _declared() -> set[str]:
    return {_name(r) for r in PYPROJECT["project"]["dependencies"]}


@lru_cache
def _closure() -> frozenset[str]:
    """The declared dependencies and, recursively, what they require (their extras left out)."""
    seen: set[str] = set()
    todo = list(_declared())
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for req in map(Requirement, metadata.requires(name) or []):
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(_name(req.name))
    return frozenset(seen)


@lru_cache
def _packages() -> dict[str, list[str]]:
    """Top-level module -> the distributions that provide it (a scan of every installed one)."""
    return metadata.packages_distributions()


def _distributions(module: str) -> set[str]:
    return {_name(d) for d in _packages().get(module, [])}


def _is_stdlib(module: str) -> bool:
    return module in sys.stdlib_module_names or module in sys.builtin_module_names


# Run in a fresh interpreter: records, for each top-level module imported while `import` runs,
# the file whose code imported it first.
PROBE = """
import sys, traceback
first = {}
class Recorder:
    def find_spec(self, name, path=None, target=None):
        top = name.split(".")[0]
        if top not in first and top not in sys.modules:
            frames = [f.filename for f in traceback.extract_stack()[:-1]
                      if not f.filename.startswith("<frozen") and "importlib" not in f.filename]
            first[top] = frames[-1] if frames else ""
        return None
sys.meta_path.insert(0, Recorder())
import %s
for top, importer in sorted(first.items()):
    if top in sys.modules:
        print(top, importer)
"""


def _imports_of(module: str) -> dict[str, str]:
    """{top-level module: the file that imported it} for ``import module`` in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", PROBE % module], capture_output=True, text=True, cwd="/",
                         check=True)
    return dict(line.split(" ", 1) for line in out.stdout.splitlines())


def test_import_needs_only_declared_dependencies():
    """`import attention_graph` pulls in no Sphinx, docutils or Jupyter, and every module the
    package's own code imports is the standard library or a declared dependency. (What a dependency
    imports is its own affair: optional imports of whatever else is installed included.)"""
    imported = _imports_of("attention_graph")
    assert "attention_graph" in imported
    assert set(imported) & FORBIDDEN == set(), "the library imports the book's or the tests' machinery"
    own = {m for m, importer in imported.items() if importer.startswith(str(PACKAGE)) and m != "attention_graph"}
    assert {"numpy", "sympy"} <= own
    undeclared = sorted(m for m in own if not _is_stdlib(m) and not _distributions(m) & _declared())
    assert undeclared == [], f"imported but not declared in pyproject.toml: {undeclared}"


def _module_imports(path) -> set[str]:
    """Top-level names of every absolute import in a module, lazy ones (inside functions) included."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_module_imports_only_declared_dependencies(path):
    """Lazy imports too: each third-party name a module imports is a direct dependency."""
    third_party = {m for m in _module_imports(path) - {"__future__", "attention_graph"} if not _is_stdlib(m)}
    assert third_party & FORBIDDEN == set(), "Sphinx, docutils and Jupyter are not the library's needs"
    undeclared = sorted(m for m in third_party if not _distributions(m) & _declared())
    assert undeclared == [], f"{path.name} imports {undeclared}: declare them in pyproject.toml"


def test_the_check_sees_who_imports_what():
    """The probe names the importer: the check would catch the package importing docutils."""
    imported = _imports_of("docutils.nodes")
    assert "docutils" in imported and not _distributions("docutils") & _declared()


REPOSITORY_NAMES = ("_toc.yml", "_config.yml", "book/data", "book/_ext", "tests/", "tools/", "references.bib", "_build")


def _repository_reads(source: str) -> list[str]:
    """Ways a module's code (docstrings aside) would locate or name a file of the repository."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "__file__":
            found.append("__file__")
        elif isinstance(node, ast.Attribute) and node.attr == "parents":
            found.append(".parents")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [name for name in REPOSITORY_NAMES if name in node.value]
    return found


def test_no_module_reads_a_path_of_the_repository():
    """Files a cell needs are package data read with importlib.resources, never the checkout."""
    found = {p.name: _repository_reads(p.read_text()) for p in PACKAGE.rglob("*.py")}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_repository_path_check_sees_one():
    assert _repository_reads('ROOT = Path(__file__).parents[2]\ntoc = (ROOT / "_toc.yml").read_text()') == [
        ".parents", "__file__", "_toc.yml"]
    assert _repository_reads('"""Reads ``_toc.yml``."""') == []


# The package's public API as it stood when __init__.py listed it by hand: gathering it from the
# modules' __all__ must neither drop nor add a name (a new chapter adds its names in its module). Two names
# were renamed since, to follow the arrows: in_degrees is out_degrees, position_in_strength position_out_strength.
API_BEFORE_GATHERING = {
    "AttentionGraph", "BlockParams", "DerivationError", "KVCache", "RandomFeatures", "additive_mask_softmax",
    "adjusted_rand_index", "alibi_bias", "attention", "attention_backward", "attention_exact", "attention_rollout",
    "bigbird_edges", "bipartite_adjacency", "block_state", "block_weights", "blockwise_attention",
    "blockwise_attention_backward", "causal_edges", "causal_mask", "causal_path_counts", "causal_stack",
    "club_graph", "complete_attention", "complete_edges", "composed_graph", "decode", "distance_bias",
    "distance_from_rank_one", "edge_attention", "elu_feature_map", "ergodicity_coefficient", "feed_forward",
    "five_models", "gat", "gat_parameters", "gat_scores", "gcn", "gcn_propagation", "graph_mask",
    "graph_transformer_layer", "hardmax", "head_graphs", "head_messages", "head_scores", "hop_distances",
    "induction_graph", "init_block_params", "init_causal_stack", "laplacian_pe",
    "laplacian_spectrum", "last_token_sensitivity", "layer_norm", "linear_attention", "linear_weights",
    "longformer_edges", "masked_attention", "max_path_length", "mean_aggregation", "mean_graph",
    "mean_propagation", "merge", "message_edge_index", "message_passing", "multi_head_attention",
    "normalized_laplacian", "out_degrees", "pagerank", "params_from_torch", "params_to_torch", "path_edges",
    "path_share",
    "permutation_matrix", "position_out_strength", "previous_token_graph", "product_coefficients",
    "product_mask_softmax", "project", "pull", "random_features", "random_walk_laplacian", "relabel", "rotary",
    "row_spread", "scaled_scores", "segment_softmax", "shortest_path_distances", "sinusoidal_encoding",
    "softmax", "softmax_backward", "softmax_jacobian", "softmax_with_temperature", "spectral_bipartition",
    "stationary_distribution", "symmetrised", "transformer_block", "uniform_causal_weights",
    "uniform_walk_share", "weighted_sum", "window_edges", "worked_example"}


def test_the_package_gathers_every_concept_modules_public_names():
    """``__all__`` of the package is the union of the concept modules' ``__all__`` (each name once,
    bound to its own module's object), plus ``DerivationError`` and the module ``worked_example``."""
    import importlib

    import attention_graph as ag

    stems = ag.concept_modules()
    assert "softmax" in stems and not set(stems) & ag.NOT_CONCEPTS
    declared = [(stem, name) for stem in stems for name in importlib.import_module(f"attention_graph.{stem}").__all__]
    names = [name for _, name in declared]
    assert len(names) == len(set(names)), "a name is in two modules' __all__"
    assert set(ag.__all__) == set(names) | {"DerivationError", "worked_example"}
    assert all(getattr(ag, name) is getattr(importlib.import_module(f"attention_graph.{stem}"), name)
               for stem, name in declared)
    assert API_BEFORE_GATHERING <= set(ag.__all__), API_BEFORE_GATHERING - set(ag.__all__)
    assert callable(ag.attention) and callable(ag.softmax), "a function named as its module is exported"


def test_importing_the_package_loads_no_presentation_and_no_benchmark():
    """``import attention_graph`` imports the concept modules only (and the base rooms), in a fresh
    interpreter: the plots, tables, summaries, explorables, citable and bench stay unloaded until a
    page asks for them."""
    code = ("import sys, attention_graph; print(' '.join(m for m in sys.modules if m.startswith('attention_graph')))")
    loaded = set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                cwd=bt.ROOT).stdout.split())
    presentation = {"tables", "summaries", "explorables", "plots", "citable", "bench"}
    assert not {m for m in loaded if m.split(".")[1:2] and m.split(".")[1] in presentation}
    assert {"attention_graph.softmax", "attention_graph.induction", "attention_graph.registry"} <= loaded


def test_two_modules_exporting_one_name_fail_the_import(tmp_path):
    """The gathering refuses a name two concept modules both export (a planted package)."""
    package = tmp_path / "attention_graph"
    package.mkdir()
    source = (PACKAGE / "__init__.py").read_text()
    (package / "__init__.py").write_text(source)
    (package / "worked_example.py").write_text("__all__ = []\n")
    (package / "registry.py").write_text("class DerivationError(Exception):\n    pass\n")
    (package / "one.py").write_text("__all__ = ['f']\ndef f():\n    pass\n")
    (package / "two.py").write_text("__all__ = ['f']\ndef f():\n    pass\n")
    run = subprocess.run([sys.executable, "-c", "import attention_graph"], capture_output=True, text=True,
                         cwd=tmp_path, env={"PYTHONPATH": str(tmp_path)})
    assert run.returncode != 0 and "f is exported twice (again by attention_graph.two)" in run.stderr


def test_package_data_follows_the_sources():
    """data/results.json, CITATION.cff, checks.json and api.json (generated, not committed) are what
    tools/package_data.py writes (make data, which the build and the test runs depend on)."""
    assert package_data.stale() == [], "run: make data"


def test_packaged_index_is_read_back_whole():
    from attention_graph import citable

    assert citable.results() == package_data.book_results()
    assert json.loads(citable.results_json(citable.results())) == json.loads(
        (PACKAGE / "data" / "results.json").read_text())


def test_the_build_knows_which_package_data_is_generated():
    """sphinx_watch keeps the generated files out of the pages' execution key (but for the pages that
    read them): its list in _config.yml is the one tools/package_data.py writes, and the pages that read
    them are the ones its pattern names."""
    config = yaml.safe_load((bt.ROOT / "_config.yml").read_text())["sphinx"]["config"]
    assert sorted(config["attention_graph_generated"]) == sorted(
        f"code/attention_graph/data/{name}" for name in package_data.expected())
    readers = sorted(p.stem for p in bt.pages()
                     if re.search(config["attention_graph_reads_generated"], _code_cells(p.read_text())))
    assert readers == ["derivations", "how_to_cite"]


def _code_cells(text: str) -> str:
    return "\n".join(re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.S | re.M))


def test_stale_package_data_is_reported(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "CITATION.cff").write_text("cff-version: 1.2.0\n")
    assert set(package_data.stale(data=tmp_path / "data")) == {"results.json", "CITATION.cff", "checks.json",
                                                               "api.json"}


@pytest.mark.build
def test_the_badges_are_the_registry_s():
    """What book/_ext/check_strength.py shows under each result is registry.badge, via data/checks.json."""
    from attention_graph import registry

    checks = json.loads((PACKAGE / "data" / "checks.json").read_text())
    assert sorted(checks) == registry.labels()
    assert all(c["badge"] == registry.badge(k) and (c["strength"], c["scope"]) == registry.strength(k)
               for k, c in checks.items())


# --- Dependencies: declared, locked with hashes ------------------------------------------------------

def _locked() -> dict[str, str]:
    return {_name(n): v for n, v in bt.locked().items()}


def test_requirements_lock_every_declared_dependency_with_hashes():
    text = (bt.ROOT / "requirements.txt").read_text()
    entries = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert entries and all("==" in e and "--hash=sha256:" in e for e in entries if e.strip())
    wanted = _declared() | {_name(r) for extra in ("book", "test")
                            for r in PYPROJECT["project"]["optional-dependencies"][extra]}
    assert wanted - set(_locked()) == set(), "requirements.txt is stale: run make requirements"


def test_the_regenerate_command_is_written_down():
    command = ("uv pip compile pyproject.toml --extra book --extra test --generate-hashes --no-strip-extras "
               "-o requirements.txt")
    assert command in (bt.ROOT / "requirements.txt").read_text()
    assert command in (bt.ROOT / "Makefile").read_text()
    assert "make requirements" in (bt.ROOT / "README.md").read_text()


def test_make_installs_only_the_lock_and_the_package():
    """Every install the venv's recipe runs (as make prints it, nothing run) is the hashed lock or the
    package itself, without its dependencies."""
    run = subprocess.run(["make", "--no-print-directory", "-n", "-B", ".venv/.installed"], cwd=bt.ROOT,
                         capture_output=True, text=True, check=True)
    installs = [line for line in run.stdout.splitlines() if re.search(r"pip (install|sync) ", line)]
    lock = [line for line in installs if "--require-hashes" in line and "requirements.txt" in line]
    package = [line for line in installs if "--no-deps" in line and line.split()[-2:] == ["-e", "."]]
    assert lock and package and sorted(lock + package) == sorted(installs), installs


def test_installed_versions_are_the_locked_ones():
    locked = _locked()
    for name in sorted(_closure()):
        assert metadata.version(name) == locked[name], f"{name}: run make (the venv is stale)"


# --- Licenses, site -----------------------------------------------------------------------------------

@pytest.mark.build
def test_code_and_text_licenses_are_stated():
    assert (bt.ROOT / "LICENSE").read_text().startswith("MIT License")
    text = (bt.ROOT / "LICENSE-text").read_text()
    assert "CC BY 4.0" in text and "https://creativecommons.org/licenses/by/4.0/legalcode" in text
    assert PYPROJECT["project"]["license"] == "MIT"
    readme = (bt.ROOT / "README.md").read_text()
    assert "LICENSE-text" in readme and "CC BY 4.0" in readme and "MIT" in readme
    intro = (paths.HTML / "book" / "intro.html").read_text()
    assert "CC-BY-4.0" in intro and "MIT" in intro


PLACEHOLDERS = re.compile(r"REPLACE-WITH|PLACEHOLDER|executablebooks/jupyter-book|TODO|FIXME|XXX")


@pytest.mark.build
def test_no_placeholder_reaches_the_site():
    hits = []
    assert (paths.HTML / "book" / "softmax.html").exists(), "no built site to read: make book"
    for path in sorted((paths.BUILD / "html").rglob("*")):
        if path.suffix in {".html", ".ipynb", ".md", ".txt", ".js"} and "_static" not in path.parts:
            for m in PLACEHOLDERS.finditer(path.read_text(errors="replace")):
                hits.append(f"{path.relative_to(paths.BUILD)}: {m.group(0)}")
    assert hits == []


def test_config_has_no_repository_until_one_is_set():
    config = (bt.ROOT / "_config.yml").read_text()
    assert not re.search(r"^(repository|latex|html):", config, re.M) and "REPLACE" not in config
    assert "[]" not in config and "{}" not in config  # no empty settings


# --- How to run a page ---------------------------------------------------------------------------------

@pytest.mark.build
def test_every_downloadable_notebook_says_how_to_run_it_in_its_first_cell():
    notebooks = sorted((paths.BUILD / "html" / "_sources").rglob("*.ipynb"))
    assert len(notebooks) >= 10
    for path in notebooks:
        first = json.loads(path.read_text())["cells"][0]
        text = "".join(first["source"])
        assert first["cell_type"] == "markdown" and "(`.ipynb`)" in text and "(`.whl`)" in text, path
        assert "Run the code" in text, path  # the introduction's section ({ref}`run-the-code`) says how, both ways


@pytest.mark.build
def test_the_first_page_says_how_to_run_the_book():
    import html as html_escapes

    page = (paths.HTML / "book" / "intro.html").read_text()
    assert 'id="run-the-code"' in page  # the section every page's "Run it yourself" line points to
    text = html_escapes.unescape(re.sub(r"<[^>]+>", "", page))
    assert "make lab" in text and 'pip install ".[book]"' in text
    (wheel,) = (paths.HTML / "_downloads").glob("attention_graph-*-py3-none-any.whl")
    assert f'pip install "{wheel.name}[notebook]"' in text  # the real name (_ext/package_wheel.py)
    assert f'pip install "{wheel.name}[book]"' in text  # and the build's
    assert "<version>" not in text


def test_the_notebook_extra_is_light_and_locked():
    """A downloaded notebook needs the package and Jupyter only (``registry.glue`` works without MyST-NB);
    the extra asks for nothing the lock does not pin."""
    extra = {_name(r) for r in PYPROJECT["project"]["optional-dependencies"]["notebook"]}
    assert extra == {"ipykernel", "jupyterlab"}
    assert extra <= set(_locked())


def test_a_run_with_the_build_hidden_finds_no_build():
    """`make test-unbuilt` sets BOOK_UNBUILT=1: a test reading what the build glued fails, saying to mark it."""
    code = ("import booktools, buildpaths\n"
            "assert not buildpaths.BUILD.exists()\n"
            "try:\n    booktools.glue_record('book/softmax')\n"
            "except FileNotFoundError as e:\n    print(e)\n")
    env = {"PATH": "/usr/bin:/bin", "BOOK_UNBUILT": "1", "PYTHONPATH": f"{bt.ROOT / 'tests'}:{bt.ROOT / 'tools'}"}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert "is missing" in run.stdout and "marked `build`" in run.stdout


@pytest.mark.build
def test_every_page_offers_the_package_wheel_and_says_how_to_install_it():
    """The download menu's third entry is the wheel (book/_ext/package_wheel.py), and the line at the
    top of each page points to the introduction's "Run the code", which says how to install it."""
    import zipfile

    import package_wheel

    (wheel,) = (paths.HTML / package_wheel.FOLDER).glob("attention_graph-*-py3-none-any.whl")
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
    assert {i.date_time for i in infos} == {(1980, 1, 1, 0, 0, 0)}  # the fixed date: reproducible
    assert not [i.filename for i in infos if i.filename.startswith("/") or ".." in i.filename]
    assert any(i.filename == "attention_graph/data/results.json" for i in infos)  # the package data ships
    pages = sorted((paths.HTML / "book").glob("*.html"))
    assert len(pages) >= 10
    for page in pages:
        html = page.read_text()
        entry = re.search(r'<a href="([^"]+\.whl)"[^>]*?class="[^"]*\bbtn-download-wheel-button\b', html, re.S)
        assert entry, page.name
        href = entry.group(1)
        assert (page.parent / href).resolve() == wheel.resolve(), (page.name, href)
    for path in sorted((paths.BUILD / "html" / "_sources").rglob("*.ipynb")):
        first = "".join(json.loads(path.read_text())["cells"][0]["source"])
        assert "(`.whl`)" in first and "Run the code" in first, path  # the intro says how to install it
        assert f'`pip install "{wheel.name}[notebook]"`' in first, path  # and the line itself, with the real name
