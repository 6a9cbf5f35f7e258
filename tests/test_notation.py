"""The notation page's exercises: shapes, the PyG orientation and the heads, recomputed independently."""

import re

import numpy as np

import booktools as bt
import oracles
from attention_graph import worked_example as we

PAGE = "notation"
COUNTS = {"One": 1, "Two": 2, "Three": 3, "Four": 4, "Five": 5}


def _plain(key: str) -> str:
    return bt.glued_plain(PAGE, key).strip("'")


def _exercise(label: str) -> str:
    """The statement of exercise ``label``, as the page's source writes it."""
    text = (bt.BOOK / f"{PAGE}.md").read_text()
    return next("\n".join(line for line in body if not line.startswith(":"))
                for name, _arg, options, body, _start in bt.blocks(text)
                if name == "exercise" and options.get("label") == label)


def _size(statement: str, symbol: str) -> int:
    return int(re.search(re.escape(symbol) + r" = (\d+)\$", statement).group(1))


def test_exercise_shapes_name_queries_keys_and_value_width():
    statement = _exercise("ex-notation-shapes")  # "Two decoder queries attend to the four people ..."
    n_q, n_k, d_v = COUNTS[statement.split()[0]], len(we.PEOPLE), _size(statement, "d_v")
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
    statement = _exercise("ex-notation-heads")
    d_model, H, n = _size(statement, r"d_{\text{model}}"), _size(statement, "H"), len(we.PEOPLE)
    assert bt.glued_float(PAGE, "ex_heads_dh") == d_model // H
    assert _plain("ex_heads_shape") == str((H, n, n))
