"""The backward pass of attention: finite differences, the mask, dtypes and the chapter's claims."""


import importlib

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import attention_graph as ag
import booktools as bt
import memtools
import oracles
from attention_graph import bench, blockwise_attention, blockwise_attention_backward
from attention_graph.backward import attention_backward, softmax_backward
from attention_graph.bench import backward as bench_backward
from bad_inputs import cplx, empty_row, nan, ok

PAGE = "backward"


def _problem(seed, n_q=4, n_k=5, d=3, d_v=2, masked=False):
    rng = np.random.default_rng(seed)
    Q, K, V, dY = (rng.standard_normal(s) for s in ((n_q, d), (n_k, d), (n_k, d_v), (n_q, d_v)))
    mask = None
    if masked:
        mask = rng.random((n_q, n_k)) < 0.5
        mask[np.arange(n_q), rng.integers(0, n_k, n_q)] = True  # every row allows a key
    return Q, K, V, dY, mask


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_attention_backward_matches_central_differences(seed, masked):
    Q, K, V, dY, mask = _problem(seed, masked=masked)
    dQ, dK, dV = attention_backward(Q, K, V, dY, mask)
    loss = {  # L = Σ dY ∘ Y, so ∂L/∂Y = dY; Y from the independent oracle
        "Q": lambda X: float((oracles.attention(X, K, V, mask)[0] * dY).sum()),
        "K": lambda X: float((oracles.attention(Q, X, V, mask)[0] * dY).sum()),
        "V": lambda X: float((oracles.attention(Q, K, X, mask)[0] * dY).sum()),
    }
    for got, name, X in ((dQ, "Q", Q), (dK, "K", K), (dV, "V", V)):
        assert got.shape == X.shape
        np.testing.assert_allclose(got, oracles.central_difference(loss[name], X), atol=1e-8)


def test_softmax_backward_is_the_jacobian_row_by_row():
    rng = np.random.default_rng(3)
    W = oracles.softmax(rng.standard_normal((3, 4)))
    dW = rng.standard_normal((3, 4))
    want = np.stack([(np.diag(w) - np.outer(w, w)) @ g for w, g in zip(W, dW)])
    np.testing.assert_allclose(softmax_backward(W, dW), want, rtol=0, atol=1e-15)


def test_thm_masked_gradient():
    assert bt.verified("thm-masked-gradient") > 0
    Q, K, V, dY, mask = _problem(7, n_q=5, n_k=6, masked=True)
    W = oracles.attention(Q, K, V, mask)[1]
    dS = softmax_backward(W, dY @ V.T)
    assert (dS[~mask] == 0).all()
    # A key no query may see gets no gradient at all.
    mask[:, 2] = False
    mask[:, 0] = True
    dQ, dK, dV = attention_backward(Q, K, V, dY, mask)
    assert (dK[2] == 0).all() and (dV[2] == 0).all()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_is_kept(dtype):
    Q, K, V, dY, _ = _problem(4)
    out = attention_backward(*(x.astype(dtype) for x in (Q, K, V, dY)))
    assert all(x.dtype == dtype for x in out)


@pytest.mark.build
def test_chapter_glues_the_finite_difference_gap():
    Q, K, V, dY, _ = _problem(2017)
    gap = bt.glued_float(PAGE, "fd_max_gap")
    assert 0 < gap < 1e-7
    assert bt.glued_float(PAGE, "fd_n_q") == Q.shape[0]


# --- The blockwise backward ------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_q=st.integers(0, 6), n_k=st.integers(1, 25),
       d=st.integers(1, 5), d_v=st.integers(1, 4), block_size=st.integers(1, 30),
       scale=st.sampled_from([1e-2, 1.0, 5.0]))
def test_blockwise_backward_equals_dense_hypothesis(seed, n_q, n_k, d, d_v, block_size, scale):
    rng = np.random.default_rng(seed)
    Q = scale * rng.standard_normal((n_q, d))
    K, V = rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d_v))
    dY = rng.standard_normal((n_q, d_v))
    dense = attention_backward(Q, K, V, dY)
    block = blockwise_attention_backward(Q, K, V, dY, block_size)
    for a, b in zip(dense, block):
        assert a.shape == b.shape
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-12)


def test_lse_is_the_log_sum_exp():
    Q, K, V, _, _ = _problem(9, n_q=5, n_k=11)
    Y, lse = blockwise_attention(Q, K, V, 4, return_lse=True)
    S = oracles.scaled_scores(Q, K)
    np.testing.assert_allclose(lse, np.log(np.exp(S).sum(axis=1)), rtol=1e-14)
    np.testing.assert_allclose(Y, oracles.attention(Q, K, V)[0], atol=1e-14)


def _backward_peak(n: int, d: int = 8, b: int = 32) -> int:
    """Peak bytes traced while blockwise_attention_backward runs on (n, d) inputs in blocks of b."""
    setup = f"""
        import numpy as np
        from attention_graph import blockwise_attention_backward
        rng = np.random.default_rng(0)
        Q, K, V, dY = (rng.standard_normal(({n}, {d})) for _ in range(4))
    """
    return memtools.traced_peak(setup, f"blockwise_attention_backward(Q, K, V, dY, {b})")


def test_blockwise_backward_never_holds_n_by_n():
    small, large = _backward_peak(1024), _backward_peak(2048)
    n = 2048
    assert large < 2.5 * small  # twice n: linear memory doubles, an (n, n) matrix would quadruple
    assert large < n * n * 8 / 4  # well under one (n, n) float64 matrix


@pytest.mark.build
def test_backward_record_meets_its_target():
    record = bench.record("backward")
    target = record["results"]["target"]
    assert record["quick"] is False and record["machine"]["cpus"] >= 1
    blockwise = [c for c in record["results"]["cases"] if c["method"] == "blockwise"]
    # The target is the largest blockwise run, at the record's d and block size.
    assert target["n"] == max(c["n"] for c in blockwise) and target["d"] == record["results"]["d"]
    assert {c["block_size"] for c in blockwise} == {record["results"]["block_size"]}
    assert target["target_mb"] == bench_backward.TARGET_MB
    assert target["traced_mb"] < target["target_mb"] and target["rss_mb"] < target["target_mb"] and target["met"]
    assert target["dense_extrapolated_mb"] > 2 * 1024  # the dense backward needs several GB
    assert target["max_abs_diff_dq_rows"] < 1e-12
    assert record["results"]["equal_to_dense"]["max_abs_diff"] < 1e-12
    assert bt.glued_float("backward", "back_traced_mb") == pytest.approx(target["traced_mb"])


@pytest.mark.build
def test_backward_exercises():
    assert bt.glued_float(PAGE, "ex_one_key_max") == 0.0
    assert bt.glued_float(PAGE, "ex_rows_max") < 1e-15
    assert bt.glued_float(PAGE, "ex_code_gap") < 1e-7


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_blockwise_backward_keeps_dtype(dtype):
    Q, K, V, dY, _ = _problem(4)
    out = blockwise_attention_backward(*(x.astype(dtype) for x in (Q, K, V, dY)), block_size=2)
    assert all(x.dtype == dtype for x in out)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["backward", "training"])
def test_benchmark_cli_runs_quick(tmp_path, name):
    record = bt.quick_benchmark(name, tmp_path)
    assert record["results"]["met"] if name == "training" else record["results"]["target"]["met"]


# --- Broken variants ------------------------------------------------------------------------------

bw = importlib.import_module("attention_graph.blockwise")


bk = importlib.import_module("attention_graph.backward")


_sym_softmax = bk.sym_softmax


def _no_rescale(a, b, *, exp, maximum):
    """Merges two states but forgets e^{m_A − m}: wrong whenever the maxima differ."""
    ell = a.ell + b.ell
    return bw.BlockState(maximum(a.m, b.m), ell, (a.ell * a.o + b.ell * b.o) / ell)


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # backward
    "eq-grad-v": (bk, "grad_v", lambda W, G: 2 * (W.T * G), "dV doubled"),
    "eq-grad-w": (bk, "grad_w", lambda G, V: G * V.T + sp.ones(G.rows, V.rows), "dW shifted by 1"),
    "eq-grad-s": (bk, "grad_s", lambda W, dW: W.multiply_elementwise(dW), "the row sum forgotten"),
    "eq-grad-q": (bk, "grad_q", lambda dS, K: dS * K, "no 1/√d"),
    "eq-grad-k": (bk, "grad_k", lambda dS, Q: dS.T * Q, "no 1/√d"),
    "thm-masked-gradient": (bk, "sym_softmax", lambda S, allowed=None: _sym_softmax(S),
                            "the mask is ignored"),
    "eq-lse-weights": (bw, "merge", _no_rescale, "no rescaling by e^{m_A − m}"),
    "eq-flash-delta": (bw, "delta_rows", lambda dY, Y: dY.sum(axis=1, keepdims=True),
                       "D_i = rowsum(dY), Y forgotten"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, np.ones((3, 3))),
     ValueError, r"dY must have the shape of Y"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, nan), ValueError, "dY must be finite"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, cplx), TypeError, "dY must hold real numbers"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, np.ones((4, 2)), ok),
     ValueError, "K and V must have the same number of rows"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, ok, empty_row), ValueError, "mask allows no key"),
    ("attention_backward", lambda: ag.attention_backward(ok, ok, ok, ok, np.ones((3, 3))),
     TypeError, "mask must be a boolean array"),
    ("softmax_backward", lambda: ag.softmax_backward(np.ones((2, 3)), np.ones((2, 2))),
     ValueError, "dW must have the shape of W"),
    ("softmax_backward", lambda: ag.softmax_backward(nan, ok), ValueError, "W must be finite"),
    ("softmax_backward", lambda: ag.softmax_backward(ok[0], ok), ValueError, "W must be a 2-d array"),
]
