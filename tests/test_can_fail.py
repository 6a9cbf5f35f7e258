"""Every check can fail: for each registered label, a broken variant that its check must catch.

One row per label: the module and name to replace, and the wrong thing to put there: a package
function that computes something else (wrong scale, wrong orientation, a forgotten normalisation),
a displayed formula with an error in it, or a statement with a changed hypothesis. With the row
applied, ``registry.verify(label)`` must raise ``DerivationError``. A check that still passed would
not be checking its statement.

A label registered without a row fails ``test_every_label_has_a_broken_variant``: a new result must
come with its broken variant, as a new public function comes with its bad inputs
(tests/test_validation.py). A chapter keeps its rows in its own test file, ``tests/test_<stem>.py``,
as a table ``BROKEN`` of the same form; they are gathered here, and this file keeps only the
collector, the rows that belong to no one chapter, and the rules every check obeys.
"""

from __future__ import annotations

import importlib

import pytest
import sympy as sp

import booktools as bt
from attention_graph import registry


def _module(name):
    # importlib, not "from attention_graph import attention": the package exports functions of the
    # same names as some modules (attention, softmax).
    return importlib.import_module(f"attention_graph.{name}")


bl, gr, mh = _module("block"), _module("graph"), _module("multihead")
_i = sp.Symbol("i", integer=True, positive=True)


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken). Every chapter's rows live in its own test file;
# this table holds only rows that belong to no one chapter (none today).
BROKEN: dict[str, tuple] = {}

# A chapter's own rows live in its test file (tests/test_<stem>.py: BROKEN = {label: row}).
for _stem, _rows in bt.chapter_tables("BROKEN", "test_can_fail").items():
    assert not set(_rows) & set(BROKEN), f"{_stem}: a label with two broken variants: {set(_rows) & set(BROKEN)}"
    BROKEN.update(_rows)


def test_every_label_has_a_broken_variant():
    assert sorted(set(registry.labels()) - set(BROKEN)) == [], "add a row to BROKEN for each new label"
    assert sorted(set(BROKEN) - set(registry.labels())) == [], "a row for a label no longer registered"


def _caught(monkeypatch, label: str, row) -> None:
    """The check under ``label`` raises once the row's name in its module is replaced by the wrong one."""
    module, name, wrong, _what = row
    assert hasattr(module, name), f"{module.__name__}.{name} does not exist"
    monkeypatch.setattr(module, name, wrong)
    with pytest.raises(registry.DerivationError, match=label):
        registry.verify(label)


@pytest.mark.parametrize("label", sorted(BROKEN))
def test_the_check_fails_on_its_broken_variant(monkeypatch, label):
    _caught(monkeypatch, label, BROKEN[label])


# A check must not be built from the helper it checks. Each row breaks a helper that the page's
# display, the package and (formerly) the check's exact side shared; only an exact side written
# independently from the formula on the page catches it.
def _block_without_second_residual(X, mha, ln_1, ln_2, ffn, norm_first):
    """The block mis-wired: the feed-forward sublayer's residual is forgotten."""
    if norm_first:
        Z = X + mha(ln_1(X))
        return ffn(ln_2(Z))
    Z = ln_1(X + mha(X))
    return ln_2(ffn(Z))


def _softmax_rows_unnormalised(S, allowed=None):
    """exp of the scores, never divided by the row sum."""
    return S.applyfunc(sp.exp)


BROKEN_SHARED_HELPER = {
    "eq-pre-ln": (bl, "wire_block", _block_without_second_residual, "the shared wiring drops a residual"),
    "eq-post-ln": (bl, "wire_block", _block_without_second_residual, "the shared wiring drops a residual"),
    "thm-one-head": (mh, "softmax_rows_exact", _softmax_rows_unnormalised,
                     "the exact softmax helper forgets to normalise"),
    "thm-gat-is-masked-attention": (gr, "gat_scores", after(gr.gat_scores, lambda e: e.T),
                                    "the shared score helper swaps query and key"),
}


@pytest.mark.parametrize("label", sorted(BROKEN_SHARED_HELPER))
def test_the_check_is_independent_of_the_helper_it_checks(monkeypatch, label):
    _caught(monkeypatch, label, BROKEN_SHARED_HELPER[label])


# The class follows from the check: "proved" needs a statement in general symbols.
_n = sp.Symbol("n", integer=True, positive=True)
_x, _a = sp.IndexedBase("x"), sp.Symbol("a", real=True)
_FIXED = [sp.Eq(registry.symbol_matrix("x", 2, 3) * sp.eye(3), registry.symbol_matrix("x", 2, 3), evaluate=False),
          sp.Eq(sp.Symbol("x_01") + sp.Symbol("x_02"), sp.Symbol("x_02") + sp.Symbol("x_01"), evaluate=False),
          True, sp.Eq(sp.Integer(2), 2)]
_GENERAL = [sp.Eq(sp.Sum(2 * _x[_i], (_i, 1, _n)), 2 * sp.Sum(_x[_i], (_i, 1, _n)), evaluate=False),
            sp.Eq(sp.MatMul(sp.MatrixSymbol("X", _n, _n), sp.Identity(_n)), sp.MatrixSymbol("X", _n, _n),
                  evaluate=False),
            sp.Eq((_a + 1) ** 2, _a**2 + 2 * _a + 1, evaluate=False)]


@pytest.mark.parametrize("statement", _FIXED, ids=str)
def test_a_check_at_fixed_sizes_cannot_register_as_proved(statement):
    assert not registry.is_general(statement)
    assert registry.verify_statements([statement], "verified") == 1
    with pytest.raises(registry.DerivationError, match="proved"):
        registry.verify_statements([statement], "proved")


@pytest.mark.parametrize("statement", _GENERAL, ids=str)
def test_a_check_in_general_symbols_may_register_as_proved(statement):
    assert registry.is_general(statement)
    assert registry.verify_statements([statement], "proved") == 1


def test_every_proved_label_has_a_general_statement():
    # registry.verify applies the rule to each label's own strength (test_integrity runs them all);
    # here the proved ones, so that a reclassification shows up in this file's failures.
    for label in registry.labels():
        if registry.strength(label)[0] == "proved":
            assert registry.verify(label) > 0
