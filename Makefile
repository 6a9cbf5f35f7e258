# Two commands: `make book` builds the HTML, `make test` builds when needed, runs ruff and every test
# (the browser tests included: they need a Chromium, see README.md). Both create .venv on first use
# and reinstall it when requirements.txt or pyproject.toml change.
# The test targets (all build the book first, when it is out of date):
#   make check      the writer's fast loop: ruff, the package tests and the integrity rules with few
#                   Hypothesis examples (no browser, no notebook re-run, no PDF)
#   make browser    the built pages in Chromium and the PDF printed from them (tests marked `browser`)
#   make notebooks  the downloadable notebooks re-run outside the checkout (tests marked `notebooks`)
#   make test       all of them, with many Hypothesis examples: the README's and CI's command. It is
#                   two pytest runs: the tests that read nothing of the build (marked `build` if they
#                   do), which need no book and so run beside `make book` under `make -j`, then the
#                   tests marked `build`, on the checkout's build
# Also: `make pdf` prints the built book into one PDF; `make reproducible` builds the book in a
# fresh folder and compares every output file with the checkout's build, byte for byte; `make lab`
# opens the chapters in JupyterLab; `make requirements` regenerates the hashed lock file.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Strict: any warning, unresolved reference or cell error fails the build (tracebacks are shown).
JB_FLAGS := -n -W --keep-going

.PHONY: data freeze-labels book test test-unbuilt test-built check browser notebooks lint pdf reproducible lab requirements clean

# Everything .venv holds comes from requirements.txt, checked against its hashes (uv, from the lock,
# removes what the lock no longer holds); then the package itself, editable (setuptools is in the lock, so no build environment is downloaded).
$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes -r requirements.txt
	$(BIN)/python -m uv pip sync --quiet --python $(BIN)/python --require-hashes requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $@

# The generated package data (tools/package_data.py: the index of results, the checks' classes, each
# chapter's public names, the citation), never committed: everything that reads it depends on `data`,
# so under `make -j` it is written once, before the build and the tests start.
data: $(STAMP)
	@$(BIN)/python tools/package_data.py

# When publishing: the book's new labels join tests/public_labels.txt, the frozen list none of whose
# labels may disappear (a chapter's labels need no hand edit of it).
freeze-labels: $(STAMP)
	$(BIN)/python tools/package_data.py --freeze-labels

# Sphinx builds incrementally; a page whose source, or any file under code/, changed is re-read and
# re-executed (see book/_ext/sphinx_watch.py). After a failed build the environment is
# dropped, so the next build re-reads every page and cannot pass by forgetting a warning.
book: data
	@$(BIN)/jupyter-book build . $(JB_FLAGS) || { \
	  rm -rf _build/.doctrees; \
	  echo "make book: the build failed (warnings or cell errors above)" >&2; exit 1; }

lint: $(STAMP)
	$(BIN)/ruff check .

# Hypothesis profiles live in tests/conftest.py: `check` (few examples) and `ci` (many).
# The tests spread over every core with pytest-xdist; `--dist loadgroup` keeps each xdist_group on
# one worker: the browser tests (one Chromium, each page opened once) and the notebooks (one
# reader's environment).
PYTEST := $(BIN)/python -m pytest -n auto --dist loadgroup

check: book lint
	HYPOTHESIS_PROFILE=check $(PYTEST) -q -m "not browser and not notebooks and not slow"

browser: book
	$(BIN)/python -m pytest -m browser

notebooks: book
	$(BIN)/python -m pytest -m notebooks

test: test-unbuilt test-built

# BOOK_UNBUILT=1 hides the build from this run (tools/buildpaths.py): a test that reads it unmarked fails.
test-unbuilt: lint data
	BOOK_UNBUILT=1 HYPOTHESIS_PROFILE=ci $(PYTEST) -m "not build"

test-built: book lint
	HYPOTHESIS_PROFILE=ci $(PYTEST) -m build

# The whole book as one PDF, printed by Chromium after MathJax has typeset each page (no LaTeX).
pdf: book
	$(BIN)/python tools/browsertools.py pdf _build/pdf/book.pdf

# The checkout's build (up to date: the tree the tests check) and a clean build of a copy in a fresh
# folder (another path, hash seed and date) give byte-identical files.
reproducible: book
	JB_FLAGS="$(JB_FLAGS)" $(BIN)/python tools/reproducible.py

# JupyterLab on the book's chapters: every book/*.md opens as a notebook (jupytext), its cells run
# against the package installed from this working tree. Offline: no extension is built or fetched,
# no news or update check. Add LAB_FLAGS="--no-browser" on a machine without a browser.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings/overrides.json
lab: data
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
