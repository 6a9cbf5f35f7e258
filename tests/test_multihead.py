"""Multi-head attention against a reshape-based oracle, its theorems on random cases, and what the
multihead chapter shows, recomputed."""

import importlib

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import attention, bipartite_adjacency, graph_tools, head_messages, multi_head_attention
from attention_graph.multihead import split_heads
from bad_inputs import I3, cplx, nan, ok

PAGE = "multihead"
PEOPLE = ("Carla", "Ana", "Bruno", "Diego")
X_WORKED = oracles.X_WORKED
I2 = np.eye(2)


def _random(rng, n_q, n_k, d):
    return (rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)),
            *rng.standard_normal((4, d, d)))


@pytest.mark.parametrize("n_q, n_k, d, H", [(5, 5, 6, 2), (3, 7, 8, 4), (4, 4, 3, 1), (2, 6, 6, 6)])
def test_multi_head_attention_matches_the_oracle(n_q, n_k, d, H):
    rng = np.random.default_rng(n_q * 100 + d)
    args = _random(rng, n_q, n_k, d)
    mask = rng.random((n_q, n_k)) < 0.6
    mask[:, 0] = True
    for m in (None, mask):
        Y, W = multi_head_attention(*args, H, mask=m)
        Y_ref, W_ref = oracles.multi_head(*args, H, mask=m)
        assert W.shape == (H, n_q, n_k)
        np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(Y, Y_ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_multi_head_attention_keeps_the_float_dtype(dtype):
    args = [a.astype(dtype) for a in _random(np.random.default_rng(1), 3, 4, 4)]
    Y, W = multi_head_attention(*args, 2)
    assert Y.dtype == dtype and W.dtype == dtype
    assert head_messages(*args, 2).dtype == dtype


def test_split_heads_takes_contiguous_blocks():
    M = np.arange(12.0).reshape(2, 6)
    assert [b.tolist() for b in split_heads(M, 3)] == [M[:, :2].tolist(), M[:, 2:4].tolist(),
                                                        M[:, 4:].tolist()]


def test_thm_heads_add():
    assert bt.verified("thm-heads-add") >= 1
    rng = np.random.default_rng(2)
    for H, d in ((2, 4), (3, 6), (4, 8)):
        args = _random(rng, 5, 5, d)
        M = head_messages(*args, H)  # (H, n, d)
        np.testing.assert_allclose(M.sum(axis=0), oracles.multi_head(*args, H)[0], rtol=0, atol=1e-12)


def test_thm_one_head():
    assert bt.verified("thm-one-head") >= 1
    rng = np.random.default_rng(3)
    X, _, W_Q, W_K, W_V, _ = _random(rng, 6, 6, 5)
    Y, W = multi_head_attention(X, X, W_Q, W_K, W_V, np.eye(5), 1)
    Y_ref, W_ref = attention(X @ W_Q, X @ W_K, X @ W_V)
    assert np.array_equal(Y, Y_ref) and np.array_equal(W[0], W_ref)


def test_bipartite_adjacency_has_square_zero():
    W = oracles.softmax(np.random.default_rng(4).standard_normal((2, 5)))
    B = bipartite_adjacency(W)
    assert B.shape == (7, 7)
    assert np.array_equal(B @ B, np.zeros((7, 7)))
    np.testing.assert_array_equal(B[:2, 2:], W)


def test_head_graphs_are_multi_head_weights():
    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((4, 6)), rng.standard_normal((4, 6))
    W_ref = oracles.multi_head(Q, K, np.eye(6), np.eye(6), np.eye(6), np.eye(6), 3)[1]
    for g, W_h in zip(graph_tools.head_graphs(Q, K, 3, "abcd"), W_ref):
        np.testing.assert_allclose(g.W, W_h, rtol=0, atol=1e-12)


# --- What the chapter shows ------------------------------------------------------------------------

W_O_PAGE = np.array([[1.0, 1.0], [0.0, 1.0]])
Z_PAGE = np.array([[1.0, 1.0], [-1.0, 0.0]])


@pytest.mark.build
def test_page_messages_add_up_to_anas_output():
    Y, W = oracles.multi_head(X_WORKED, X_WORKED, I2, I2, I2, W_O_PAGE, 2)
    ana = PEOPLE.index("Ana")
    # Head h's message is Y_h W_O^(h): column block h of the head outputs times row h of W_O.
    Y_heads = oracles.multi_head(X_WORKED, X_WORKED, I2, I2, I2, I2, 2)[0]  # (n, 2)
    m1, m2 = Y_heads[ana, 0] * W_O_PAGE[0, 1], Y_heads[ana, 1] * W_O_PAGE[1, 1]
    assert bt.glued_float(PAGE, "ana_msg_1") == pytest.approx(m1, abs=1e-12)
    assert bt.glued_float(PAGE, "ana_msg_2") == pytest.approx(m2, abs=1e-12)
    assert bt.glued_float(PAGE, "ana_out") == pytest.approx(Y[ana, 1], abs=1e-12)
    assert m1 + m2 == pytest.approx(Y[ana, 1], abs=1e-12)


@pytest.mark.build
def test_page_fig_heads_caption():
    """The caption of fig-heads: Ana's weights in each head, from the oracle's one-coordinate heads."""
    W = oracles.multi_head(X_WORKED, X_WORKED, I2, I2, I2, I2, 2)[1]  # (2, n, n)
    carla, ana, bruno = (PEOPLE.index(p) for p in ("Carla", "Ana", "Bruno"))
    assert bt.glued_float(PAGE, "heads_ana_carla_1") == pytest.approx(W[0, ana, carla], abs=1e-12)
    assert bt.glued_float(PAGE, "heads_ana_bruno_1") == pytest.approx(W[0, ana, bruno], abs=1e-12)
    assert bt.glued_float(PAGE, "heads_ana_carla_2") == pytest.approx(W[1, ana, carla], abs=1e-12)
    # The prose: in head 1 the three others than Carla get one weight, more than Carla's; in head 2 all four.
    others = np.delete(W[0, ana], carla)  # (3,)
    assert np.allclose(others, W[0, ana, bruno], rtol=0, atol=1e-12) and W[0, ana, carla] < others.min()
    assert np.allclose(W[1, ana], 0.25, rtol=0, atol=1e-12)


def _worked_heads_from_the_formula():
    """[Y_1 Y_2] and Y = [Y_1 Y_2] W_O for the page's two heads, written from eq-multihead: identity
    projections, head h reads coordinate h as query, key and value, d_h = 1 so the scale is √1."""
    outputs = []
    for h in range(2):
        x = X_WORKED[:, h:h + 1]  # (n, 1): Q_h = K_h = V_h
        S = x @ x.T / np.sqrt(1.0)  # (n, n)
        E = np.exp(S - S.max(axis=1, keepdims=True))  # (n, n)
        outputs.append((E / E.sum(axis=1, keepdims=True)) @ x)  # (n, 1)
    Y_cat = np.hstack(outputs)  # (n, 2)
    return Y_cat, Y_cat @ W_O_PAGE


@pytest.mark.build
def test_page_table_of_head_outputs():
    """The table under fig-heads: each person's Y_1, Y_2 and the two columns of Y."""
    Y_cat, Y = _worked_heads_from_the_formula()
    for i, person in enumerate(PEOPLE):
        key = person.lower()
        assert bt.glued_float(PAGE, f"y_head1_{key}") == pytest.approx(Y_cat[i, 0], abs=1e-12)
        assert bt.glued_float(PAGE, f"y_head2_{key}") == pytest.approx(Y_cat[i, 1], abs=1e-12)
        assert bt.glued_float(PAGE, f"y_out1_{key}") == pytest.approx(Y[i, 0], abs=1e-12)
        assert bt.glued_float(PAGE, f"y_out2_{key}") == pytest.approx(Y[i, 1], abs=1e-12)
    # The prose: Y's first column is Y_1, its second Y_1 + Y_2; the messages section reads Ana's row of it.
    np.testing.assert_allclose(Y, np.column_stack([Y_cat[:, 0], Y_cat.sum(axis=1)]), rtol=0, atol=1e-12)
    ana = PEOPLE.index("Ana")
    assert bt.glued_float(PAGE, "ana_out") == pytest.approx(bt.glued_float(PAGE, "y_out2_ana"), abs=1e-12)
    assert bt.glued_float(PAGE, "ana_msg_2") == pytest.approx(Y_cat[ana, 1], abs=1e-12)


@pytest.mark.build
def test_page_multigraph_counts():
    assert bt.glued_float(PAGE, "n_multi_edges") == 2 * 4 * 4
    assert bt.glued_float(PAGE, "n_tokens") == 4
    assert bt.glued_float(PAGE, "ex_multi_three") == 3 * 4 * 4


@pytest.mark.build
def test_page_cross_attention():
    W = oracles.softmax(Z_PAGE @ X_WORKED.T / np.sqrt(2))  # (2, 4)
    assert bt.glued_float(PAGE, "cross_z1_bruno") == pytest.approx(W[0, 2], abs=1e-12)
    assert bt.glued_float(PAGE, "cross_z2_carla") == pytest.approx(W[1, 0], abs=1e-12)
    # The prose: decoder token 1 gives Bruno the largest share, token 2 gives Carla the largest share.
    assert int(np.argmax(W[0])) == PEOPLE.index("Bruno") and int(np.argmax(W[1])) == PEOPLE.index("Carla")
    assert bt.glued_float(PAGE, "cross_nodes") == 6 and bt.glued_float(PAGE, "cross_edges") == 8


@pytest.mark.build
def test_page_exercises():
    mask = np.array([[True, True, True, True], [True, True, False, False]])
    W = oracles.softmax(Z_PAGE @ X_WORKED.T / np.sqrt(2), mask)
    assert bt.glued_float(PAGE, "ex_mask_ana") == pytest.approx(W[1, 1], abs=1e-12)
    assert bt.glued_float(PAGE, "ex_mask_carla") == pytest.approx(W[1, 0], abs=1e-12)
    assert bt.glued_float(PAGE, "ex_mask_ana") + bt.glued_float(PAGE, "ex_mask_carla") == pytest.approx(1.0)
    # Swapping the heads, from the oracle's multi-head attention: the same output.
    I, W_O, swap = np.eye(2), np.array([[1.0, 1.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]])
    Y = oracles.multi_head(X_WORKED, X_WORKED, I, I, I, W_O, 2)[0]
    Y_swapped = oracles.multi_head(X_WORKED, X_WORKED, swap, swap, swap, swap @ W_O, 2)[0]
    assert bt.glued_float(PAGE, "ex_swap_diff") == pytest.approx(np.abs(Y_swapped - Y).max(), abs=1e-12)
    assert bt.glued_float(PAGE, "ex_swap_diff") < 1e-12


# --- Broken variants ------------------------------------------------------------------------------

att = importlib.import_module("attention_graph.attention")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


mh = importlib.import_module("attention_graph.multihead")


_mh_bipartite = mh.bipartite_adjacency


def _mha_wrong_scale(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """Multi-head attention whose heads divide the scores by √d_model instead of √d_h."""
    Q, K, V = (np.asarray(a, float) @ W for a, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    d, H = Q.shape[1], n_heads
    d_h = d // H
    heads = [att.attention(Q[:, h * d_h:(h + 1) * d_h] * np.sqrt(d_h / d), K[:, h * d_h:(h + 1) * d_h],
                           V[:, h * d_h:(h + 1) * d_h], mask=mask) for h in range(H)]
    return np.hstack([Y for Y, _ in heads]) @ W_O, np.stack([W for _, W in heads])


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # multi-head attention
    "eq-multihead": (mh, "multi_head_attention", _mha_wrong_scale, "every head scaled by √d_model, not √d_h"),
    "thm-heads-add": (mh, "head_messages", after(mh.head_messages, lambda M: np.repeat(M[:1], len(M), axis=0)),
                      "every head sends head 1's message"),
    "thm-one-head": (mh, "multi_head_attention",
                     after(mh.multi_head_attention, lambda r: (np.nextafter(r[0], np.inf), r[1])),
                     "one unit in the last place off the single head"),
    "eq-bipartite": (mh, "bipartite_adjacency", lambda W: _mh_bipartite(W).T, "edges from the keys to the queries"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    # Multi-head attention, the block, the patterns
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, I2, 0),
     ValueError, "n_heads must be a positive integer"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, I2, 2.0),
     TypeError, "n_heads must be a positive integer"),
    ("multi_head_attention", lambda: ag.multi_head_attention(np.ones((3, 3)), np.ones((3, 3)), I3, I3, I3, I3, 2),
     ValueError, "not divisible into n_heads = 2"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, np.ones((4, 3)), I2, I2, I2, I2, 1),
     ValueError, "X_q and X_kv must share d_model"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, np.ones((2, 3)), 1),
     ValueError, r"W_O must have shape \(d_model, d_model\)"),
    ("multi_head_attention", lambda: ag.multi_head_attention(nan, ok, I2, I2, I2, I2, 1),
     ValueError, "X_q must be finite"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I2, I2, I2, I2, 1, mask=np.ones((3, 3))),
     TypeError, "mask must be a boolean array"),
    ("head_messages", lambda: ag.head_messages(ok, ok, I2, I2, cplx[:2], I2, 1),
     TypeError, "W_V must hold real numbers"),
    ("bipartite_adjacency", lambda: ag.bipartite_adjacency(-ok), ValueError, "W must be non-negative"),
    ("bipartite_adjacency", lambda: ag.bipartite_adjacency(ok[0]), ValueError, "W must be a 2-d array"),
]
