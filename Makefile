# Two commands: `make book` builds the HTML, `make test` builds when needed, prints the PDF, runs ruff
# and every test (the browser tests included: they need a Chromium, see README.md). Both create .venv
# on first use and reinstall it when requirements.txt, pyproject.toml or this Makefile change.
#   make check      the writer's fast loop, no build: ruff, the package tests and the rules on the
#                   sources, with few Hypothesis examples (the tests marked `build` or `slow` are left
#                   out; BOOK_UNBUILT=1 hides the build, so a test that reads it unmarked fails)
#   make pdf        the built book printed by Chromium into _build/pdf/book.pdf (tools/browsertools.py)
#   make browser    the built pages in Chromium, and the PDF read back (tests marked `browser`): one
#                   pytest process, one Chromium, each page opened once at 1280 px and once per mode
#                   on a phone; it prints the PDF first
#   make notebooks  the downloadable notebooks as a reader runs them (tests marked `notebooks`): what
#                   `make reproducible` executed in the reader's environment (tools/reader.py), read back
#   make test       all of them, with many Hypothesis examples: the README's and CI's command. Four
#                   pytest runs: the tests that read nothing of the build (test-unbuilt), which need no
#                   book and so run beside `make book` under `make -j`; then, on the checkout's build,
#                   the tests marked `build` (test-built), `make browser` and `make notebooks`
# Also: `make reproducible` builds the book in a fresh folder, in the reader's environment (the wheel
# and its `book` extra in a fresh venv), and compares every output file with the checkout's build,
# byte for byte; `make lab` opens the chapters in JupyterLab; `make requirements`
# regenerates the hashed lock file. No test writes into _build: the browser tests' screenshots go to
# pytest's temporary folder, or to SCREENSHOTS=DIR (make browser SCREENSHOTS=DIR) for review.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Strict: any warning, unresolved reference or cell error fails the build (tracebacks are shown).
# No parallel read (-j): Jupyter Book 1.0's command has no option for it, and under sphinx-build -j 2
# Sphinx reads serially anyway, warning that sphinx_multitoc_numbering (which Jupyter Book adds) does
# not declare itself parallel-safe, a warning -W turns into a failed build.
JB_FLAGS := -n -W --keep-going

.PHONY: data freeze-labels book test test-unbuilt test-built check browser notebooks lint pdf reproducible lab requirements clean page-times

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

# Sphinx builds incrementally (book/_ext/sphinx_watch.py says what each change re-does): a page whose
# code cells changed is re-read and re-executed, a page whose prose alone changed is re-read and
# re-written from its last execution's outputs, a change under code/ re-reads and re-executes every
# page, and a change of CSS or JavaScript under book/_ext/static re-writes every page, executing
# nothing. After a failed build the environment (and the kept executions) is dropped, so the next
# build re-reads and re-executes every page and cannot pass by forgetting a warning.
book: data
	@$(BIN)/jupyter-book build . $(JB_FLAGS) || { \
	  rm -rf _build/.doctrees; \
	  echo "make book: the build failed (warnings or cell errors above)" >&2; exit 1; }

lint: $(STAMP)
	$(BIN)/ruff check .

# Hypothesis profiles live in tests/conftest.py: `check` (few examples) and `ci` (many).
# The tests spread over every core with pytest-xdist, but for the browser and notebook tests: each
# is a run of its own, one process (one Chromium; one reader's environment).
PYTEST := $(BIN)/python -m pytest -n auto

check: lint data
	BOOK_UNBUILT=1 HYPOTHESIS_PROFILE=check $(PYTEST) -q -m "not build and not slow"

# Without a Chromium no PDF is printed and the browser tests skip, saying how to get one (under CI=true
# they fail).
HAS_CHROMIUM := $(BIN)/python -c 'import sys; sys.path[:0] = ["tools"]; import browsertools; sys.exit(browsertools.find_chromium() is None)'
PRINT_PDF := $(BIN)/python tools/browsertools.py pdf _build/pdf/book.pdf

browser: book
	@if $(HAS_CHROMIUM); then $(PRINT_PDF); else echo "make browser: no Chromium, so no PDF"; fi
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -m browser $(if $(SCREENSHOTS),--screenshots=$(SCREENSHOTS))

# The copy's build in the reader's environment is the reader's run of every notebook: the tests read
# what it executed and glued (_build/reader), so the book is executed twice in all, not three times.
notebooks: reproducible
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest -m notebooks

test: test-unbuilt test-built browser notebooks

# BOOK_UNBUILT=1 hides the build from this run (tools/buildpaths.py): a test that reads it unmarked fails.
test-unbuilt: lint data
	BOOK_UNBUILT=1 HYPOTHESIS_PROFILE=ci $(PYTEST) -m "not build"

test-built: book lint
	HYPOTHESIS_PROFILE=ci $(PYTEST) -m "build and not browser and not notebooks"

# A benchmark, not a test: each page's notebook executed alone in a fresh kernel, the median of three
# runs, against the rule "a page executes in 20 s or less" (tools/page_times.py; exit 1 if one is over).
# Run it on a quiet machine: its record names the load average before and after.
page-times: book
	$(BIN)/python tools/page_times.py

# The whole book as one PDF, printed by Chromium after MathJax has typeset each page (no LaTeX).
pdf: book
	$(PRINT_PDF)

# The checkout's build (up to date: the tree the tests check) and a clean build of a copy in a fresh
# folder (another path, hash seed and date), made in the reader's environment (the wheel and its `book`
# extra in a fresh venv outside the checkout, tools/reader.py), give byte-identical files; what the
# copy executed is kept in _build/reader for `make notebooks`.
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
