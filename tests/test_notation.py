"""The notation page's exercises: shapes, the PyG orientation and the heads, recomputed independently."""

import numpy as np

import booktools as bt
import oracles
from attention_graph import worked_example as we

PAGE = "notation"


def _plain(key: str) -> str:
    return bt.glued_plain(PAGE, key).strip("'")


def test_exercise_shapes_name_queries_keys_and_value_width():
    n_q, n_k, d_v = 2, len(we.PEOPLE), 3  # the exercise's sizes
    assert _plain("ex_shape_Y") == str((n_q, d_v))
    assert _plain("ex_shape_W") == str((n_q, n_k))


def test_exercise_edge_index_receivers_are_in_the_second_row():
    X = we.embeddings()  # (4, 2)
    _, W = oracles.attention(X, X, X)  # (4, 4)
    ana = we.PEOPLE.index("Ana")
    assert bt.glued_float(PAGE, "ex_ei_edges") == np.count_nonzero(W)
    # Ana receives along the nonzero entries of her own row: every person, herself included.
    assert bt.glued_float(PAGE, "ex_ei_ana_in") == np.count_nonzero(W[ana]) == len(we.PEOPLE)


def test_exercise_heads_width_and_weight_shape():
    d_model, H, n = 4, 2, len(we.PEOPLE)
    assert bt.glued_float(PAGE, "ex_heads_dh") == d_model // H
    assert _plain("ex_heads_shape") == str((H, n, n))


# The symbol table (tools/notation.py, the one place it is kept): one entry per symbol, and every
# letter a page's mathematics uses has an entry.
import collections  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402

import pytest  # noqa: E402

sys.path.insert(0, str(bt.ROOT / "tools"))
import notation as table  # noqa: E402

_LETTER = r"\\(?:tilde|hat|bar)\s*\{?\\?[A-Za-z]+\}?|\\mathcal\{[A-Za-z]\}|\\[A-Za-z]+|[A-Za-z]"
_NOT_SYMBOLS = re.compile(r"\\(?:text|operatorname|mathrm|mathbb|mathbf|begin|end)\{[^}]*\}")
_COMMANDS = {"\\" + c for c in ("sum", "frac", "tfrac", "sqrt", "cdot", "cdots", "dots", "ldots", "top",
                                "le", "ge", "ne", "in", "notin", "cup", "to", "mapsto", "times", "circ", "pm",
                                "infty", "partial", "left", "right", "big", "Big", "lVert", "rVert", "Vert",
                                "lceil", "rceil", "lfloor", "rfloor", "log", "ln", "exp", "max", "min", "cos",
                                "sin", "binom", "quad", "qquad", "approx", "sim", "mid", "langle", "rangle",
                                "prod", "lim", "neq", "leq", "geq", "forall", "exists", "emptyset", "setminus",
                                "subseteq", "cap", "quad", "odot", "otimes", "star", "ell")}


def _symbols_of(tex: str) -> list[str]:
    tex = _NOT_SYMBOLS.sub(" ", tex)
    return [s.replace(" ", "") for s in re.findall(_LETTER, tex) if s not in _COMMANDS]


def _entries() -> list[str]:
    """Every symbol the table has an entry for: each dollar group of a row's symbol column."""
    return [m.strip() for _, rows in table.SYMBOLS for sym, _, _ in rows for m in re.findall(r"\$([^$]+)\$", sym)]


def _page_math(page) -> str:
    text = re.sub(r"```.*?```", " ", page.read_text(), flags=re.S)  # code and directives' bodies aside
    return " ".join(a or b for a, b in re.findall(r"\$\$(.+?)\$\$|\$([^$\n]+?)\$", text, flags=re.S))


# Known clashes, to be renamed in the pages (issue 25): the table still gives a (GAT's vector, a
# block) and β (LN's bias, the worked example's unknown) two entries each. The test is strict: it
# fails as soon as they are resolved, so that this mark is removed.
@pytest.mark.xfail(strict=True, reason="a and β still have two entries each (issue 25, notation)")
def test_no_symbol_has_two_entries():
    twice = sorted(s for s, k in collections.Counter(_entries()).items() if k > 1)
    assert twice == []


def test_the_table_has_entries():
    assert len(_entries()) > 60


def test_every_letter_a_page_uses_is_in_the_table():
    known = {sym for e in _entries() for sym in _symbols_of(e)}
    missing = {page.stem: sorted(set(_symbols_of(_page_math(page))) - known)
               for page in sorted((bt.ROOT / "book").glob("*.md"))}
    assert {k: v for k, v in missing.items() if v} == {}
