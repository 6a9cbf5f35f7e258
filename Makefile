# Two commands: `make book` builds the HTML, `make test` builds when needed, runs ruff and every test
# (the browser tests included: they need a Chromium, see README.md). Both create .venv on first use
# and reinstall it when requirements.txt or pyproject.toml change.
# The writer's fast loop: `make check` (ruff, then the package tests and the integrity rules with few
# Hypothesis examples; no browser, no PDF, no book rebuilt by a test).
# Also: `make pdf` prints the built book into one PDF; `make reproducible` builds it twice from
# scratch and compares every output file byte for byte.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Strict: any warning, unresolved reference or cell error fails the build (tracebacks are shown).
JB_FLAGS := -n -W --keep-going

.PHONY: book test check lint pdf reproducible clean

$(STAMP): requirements.txt pyproject.toml Makefile
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@# Only cffconvert's copy of the CFF 1.2.0 JSON schema is used (its own pins clash with Jupyter Book's).
	$(BIN)/python -m pip install --quiet --no-deps cffconvert==2.0.0
	@touch $@

# Sphinx builds incrementally; a page whose source, or any file under code/, changed is re-read and
# re-executed (see book/_ext/sphinx_watch.py). After a failed build the environment is
# dropped, so the next build re-reads every page and cannot pass by forgetting a warning.
book: $(STAMP)
	@$(BIN)/jupyter-book build . $(JB_FLAGS) || { \
	  rm -rf _build/.doctrees; \
	  echo "make book: the build failed (warnings or cell errors above)" >&2; exit 1; }

lint: $(STAMP)
	$(BIN)/ruff check .

# Hypothesis profiles live in tests/conftest.py: `check` (few examples) and `ci` (many).
check: book lint
	HYPOTHESIS_PROFILE=check $(BIN)/python -m pytest -q -m "not browser and not slow"

test: book lint
	HYPOTHESIS_PROFILE=ci $(BIN)/python -m pytest

# The whole book as one PDF, printed by Chromium after MathJax has typeset each page (no LaTeX).
pdf: book
	$(BIN)/python tools/browsertools.py pdf _build/pdf/book.pdf

# Two clean builds in fresh folders (other paths, hash seeds and dates) give byte-identical files.
reproducible: $(STAMP)
	JB_FLAGS="$(JB_FLAGS)" $(BIN)/python tools/reproducible.py

clean:
	rm -rf _build
