# Two commands: `make book` builds the HTML, `make test` builds when needed, runs ruff and every test
# (the browser tests included: they need a Chromium, see README.md). Both create .venv on first use
# and reinstall it when requirements.txt or pyproject.toml change.
# The writer's fast loop: `make check` (ruff, then the package tests and the integrity rules with few
# Hypothesis examples; no browser, no PDF, no book rebuilt by a test).
# Also: `make pdf` prints the built book into one PDF; `make reproducible` builds it twice from
# scratch and compares every output file byte for byte; `make lab` opens the chapters in
# JupyterLab; `make requirements` regenerates the hashed lock file from pyproject.toml.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Strict: any warning, unresolved reference or cell error fails the build (tracebacks are shown).
JB_FLAGS := -n -W --keep-going

.PHONY: book test check lint pdf reproducible lab requirements clean

# Everything .venv holds comes from requirements.txt, checked against its hashes (uv, from the lock,
# removes what the lock no longer holds); then the package itself, editable (setuptools is in the lock, so no build environment is downloaded).
$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.txt
	$(BIN)/python -m uv pip sync --quiet --python $(BIN)/python --require-hashes requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

# Sphinx builds incrementally; a page whose source, or any file under code/, changed is re-read and
# re-executed (see book/_ext/sphinx_watch.py). After a failed build the environment is
# dropped, so the next build re-reads every page and cannot pass by forgetting a warning.
book: $(STAMP)
	@$(BIN)/python tools/package_data.py
	@$(BIN)/jupyter-book build . $(JB_FLAGS) || { \
	  rm -rf _build/.doctrees; \
	  echo "make book: the build failed (warnings or cell errors above)" >&2; exit 1; }

lint: $(STAMP)
	$(BIN)/ruff check .

# Hypothesis profiles live in tests/conftest.py: `check` (few examples) and `ci` (many).
# `make check` spreads the tests over every core (pytest-xdist; an idle worker takes tests queued for
# another, so neither is left alone with the long ones at the end); `make test` runs in one process,
# beside its two background runs (Chromium's tour and the reader's notebooks, tests/conftest.py).
check: book lint
	HYPOTHESIS_PROFILE=check $(BIN)/python -m pytest -q -m "not browser and not slow" -n auto --dist worksteal

test: book lint
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest

# The whole book as one PDF, printed by Chromium after MathJax has typeset each page (no LaTeX).
pdf: book
	$(BIN)/python tools/browsertools.py pdf _build/pdf/book.pdf

# Two clean builds in fresh folders (other paths, hash seeds and dates) give byte-identical files.
reproducible: $(STAMP)
	JB_FLAGS="$(JB_FLAGS)" $(BIN)/python tools/reproducible.py

# JupyterLab on the book's chapters: every book/*.md opens as a notebook (jupytext), its cells run
# against the package installed from this working tree. Offline: no extension is built or fetched,
# no news or update check. Add LAB_FLAGS="--no-browser" on a machine without a browser.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: $(STAMP)
	@mkdir -p $(dir $(LAB_SETTINGS))
	@printf '%s\n' '{"@jupyterlab/docmanager-extension:plugin": {"defaultViewers":' \
	  '{"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}},' \
	  '"@jupyterlab/apputils-extension:notification": {"fetchNews": "false",' \
	  '"checkForUpdates": false}}' > $(LAB_SETTINGS)
	$(BIN)/jupyter lab --ServerApp.root_dir=book --LabApp.news_url=None \
	  --LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate \
	  $(if $(filter 0,$(shell id -u)),--allow-root) $(LAB_FLAGS)

# requirements.txt is generated: exact versions and hashes of everything pyproject.toml asks for
# (the package, its `book` and `test` extras). uv keeps the versions already locked unless told
# `--upgrade-package NAME`, so the book's numbers do not move by accident.
# uv itself is in the lock (the `test` extra).
requirements: $(STAMP)
	$(BIN)/uv pip compile pyproject.toml --extra book --extra test --generate-hashes --no-strip-extras -o requirements.txt

clean:
	rm -rf _build
