"""Decoding with a KV cache: step by step equals full causal attention (the oracle's masked softmax)."""

import importlib

import numpy as np
import pytest
import sympy as sp

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import KVCache, decode
from bad_inputs import nan, ok

PAGE = "decoding"


def _causal_oracle(Q, K, V):
    n = len(Q)
    return oracles.attention(Q, K, V, mask=np.tril(np.ones((n, n), dtype=bool)))


@pytest.mark.parametrize("n, d, d_v, seed", [(1, 1, 1, 0), (7, 3, 2, 1), (40, 8, 5, 2)])
def test_thm_decoding_equals_causal(n, d, d_v, seed):
    assert bt.verified("thm-decoding-equals-causal") >= 1
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((n, d)), rng.standard_normal((n, d)), rng.standard_normal((n, d_v))
    Y, _ = _causal_oracle(Q, K, V)
    np.testing.assert_allclose(decode(Q, K, V), Y, rtol=0, atol=1e-14)


def test_thm_kv_new_node():
    assert bt.verified("thm-kv-new-node") >= 1
    rng = np.random.default_rng(3)
    Q, K, V = rng.standard_normal((9, 4)), rng.standard_normal((9, 4)), rng.standard_normal((9, 2))
    _, W9 = _causal_oracle(Q, K, V)
    _, W8 = _causal_oracle(Q[:8], K[:8], V[:8])
    np.testing.assert_allclose(W9[:8, :8], W8, rtol=0, atol=1e-15)  # the earlier rows do not change
    assert (W9[:8, 8] == 0).all() and (W9[8] > 0).all()  # the new node: in-edges only


def test_cache_holds_what_was_appended_and_grows():
    cache = KVCache()
    rng = np.random.default_rng(4)
    K, V = rng.standard_normal((20, 3)), rng.standard_normal((20, 2))
    for i in range(20):
        cache.append(K[i], V[i])
        assert cache.n == i + 1
        np.testing.assert_array_equal(cache.keys, K[: i + 1])
        np.testing.assert_array_equal(cache.values, V[: i + 1])
        assert cache.nbytes == (i + 1) * (3 + 2) * 8
    w = cache.weights(K[0])
    assert w.shape == (20,) and w.sum() == pytest.approx(1.0, abs=1e-15)
    with pytest.raises(ValueError):
        cache.keys[0, 0] = 1.0  # read-only views


# --- What the page shows ------------------------------------------------------------------------------

@pytest.mark.build
def test_page_decoding_numbers():
    assert bt.glued_float(PAGE, "dag_block_diff") == 0
    n_dag = int(bt.glued_float(PAGE, "dag_n"))
    assert bt.glued_float(PAGE, "dag_block_entries") == (n_dag - 1) ** 2
    assert bt.glued_float(PAGE, "dag_new") == n_dag - 1  # its index in the code
    assert bt.glued_float(PAGE, "dag_new_name") == n_dag  # the prose counts from 1
    n, d = int(bt.glued_float(PAGE, "dec_n")), int(bt.glued_float(PAGE, "dec_d"))
    assert bt.glued_float(PAGE, "dec_gap") < 1e-14
    assert 0 <= bt.glued_float(PAGE, "dec_equal_share") <= 1
    assert bt.glued_float(PAGE, "dec_per_token_bytes") == 2 * d * 8
    assert bt.glued_float(PAGE, "dec_cache_kib") == 2 * n * d * 8 / 1024
    assert bt.glued_float(PAGE, "dec_ops_cache") == 2 * d * n * (n + 1) // 2
    assert bt.glued_float(PAGE, "dec_ops_recompute") == 2 * d * n * (n + 1) * (n + 2) // 6
    assert bt.glued_float(PAGE, "dec_ops_ratio") == pytest.approx((n + 2) / 3, rel=1e-12)
    assert bt.glued_float(PAGE, "ex_dec_gap") < 1e-15


@pytest.mark.build
def test_exercise_window_decoding():
    """The windowed decoder of the exercise equals the oracle's attention under the causal band."""
    w = int(bt.glued_float(PAGE, "ex_win_width"))
    assert bt.glued_float(PAGE, "ex_win_held") == w
    assert bt.glued_float(PAGE, "ex_win_gap") < 1e-14
    rng = np.random.default_rng(5)
    Q, K, V = rng.standard_normal((12, 3)), rng.standard_normal((12, 3)), rng.standard_normal((12, 2))
    i, j = np.indices((12, 12))
    Y, _ = oracles.attention(Q, K, V, mask=(j <= i) & (i - j < w))
    for row in range(12):
        cache = KVCache()
        for col in range(max(0, row - w + 1), row + 1):
            cache.append(K[col], V[col])
        np.testing.assert_allclose(cache.attend(Q[row]), Y[row], rtol=0, atol=1e-14)


# --- Broken variants ------------------------------------------------------------------------------

sm = importlib.import_module("attention_graph.softmax")


de = importlib.import_module("attention_graph.decoding")


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    "thm-kv-new-node": (de, "causal_weights_exact", lambda S: sm.RowSoftmax(sp.Matrix(S)).doit(),
                        "no causal mask: earlier tokens see the new one"),
    "thm-decoding-equals-causal": (de, "step_weights", lambda q, K: np.exp(K @ q) / np.exp(K @ q).sum(),
                                   "no 1/√d in the decoding step"),
}


# --- Bad inputs --------------------------------------------------------------------------------

def _cache():
    """A KV cache holding one token with d = 2 and d_v = 1."""
    cache = ag.KVCache()
    cache.append([1.0, 0.0], [1.0])
    return cache

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("KVCache", lambda: ag.KVCache().attend([1.0, 0.0]), ValueError, "the cache is empty"),
    ("KVCache", lambda: _cache().append([1.0, 0.0, 0.0], [1.0]),
     ValueError, "k must have 2 entries, as the cached ones"),
    ("KVCache", lambda: _cache().append([1.0, 0.0], [1.0, 2.0]), ValueError, "v must have 1 entries"),
    ("KVCache", lambda: _cache().attend([[1.0, 0.0]]), ValueError, "q must be one vector"),
    ("KVCache", lambda: _cache().attend([np.nan, 0.0]), ValueError, "q must be finite"),
    ("KVCache", lambda: ag.KVCache().append([], []), ValueError, "k is empty"),
    ("decode", lambda: ag.decode(ok, np.ones((2, 2)), np.ones((2, 2))),
     ValueError, r"one query per token \(n_q = n_k\): 3 != 2"),
    ("decode", lambda: ag.decode(ok, ok, nan), ValueError, "V must be finite"),
]
