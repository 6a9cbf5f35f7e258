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
