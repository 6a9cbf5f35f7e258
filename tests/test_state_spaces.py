"""State-space duality: the two forms against a loop written from Mamba-2's formula, by the defining
properties (the state recursion, the 1-semiseparable mask, linear attention at a = 1), and the
benchmark record."""

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import booktools as bt
from attention_graph import bench, decay_mask, linear_attention, ssd

PAGE = "state_spaces"
RECORD = bench.record("ssd")


# Independent implementations from the paper's formulas, used by this file only.

def ssd_reference(X, a, B, C):
    """Dao & Gu (2024), the SSM as a matrix: y_i = Σ_{j≤i} C_iᵀ (a_i ⋯ a_{j+1}) B_j x_j, a double loop."""
    X, a, B, C = (np.asarray(M, float) for M in (X, a, B, C))
    n = X.shape[0]
    Y = np.zeros_like(X)
    for i in range(n):
        for j in range(i + 1):
            Y[i] += np.prod(a[j + 1:i + 1]) * (C[i] @ B[j]) * X[j]
    return Y


def inputs(rng, n, N, p, low=0.5):
    return (rng.standard_normal((n, p)), rng.uniform(low, 1.0, n), rng.standard_normal((n, N)),
            rng.standard_normal((n, N)))


@settings(derandomize=True, max_examples=40)
@given(n=st.integers(1, 12), N=st.integers(1, 4), p=st.integers(1, 3), seed=st.integers(0, 2**32 - 1))
def test_both_forms_are_the_papers_formula(n, N, p, seed):
    X, a, B, C = inputs(np.random.default_rng(seed), n, N, p)
    want = ssd_reference(X, a, B, C)
    for form in ("recurrent", "quadratic"):
        np.testing.assert_allclose(ssd(X, a, B, C, form=form), want, rtol=0, atol=1e-11)


def test_eq_ssd():
    assert bt.verified("eq-ssd") >= 1


def test_thm_ssd_duality():
    assert bt.verified("thm-ssd-duality") >= 1
    # The state recursion h_i = a_i h_{i−1} + B_i x_iᵀ, run here, reads out the quadratic form.
    X, a, B, C = inputs(np.random.default_rng(1), 30, 3, 2, low=0.1)
    h, Y = np.zeros((3, 2)), []
    for i in range(30):
        h = a[i] * h + np.outer(B[i], X[i])
        Y.append(h.T @ C[i])
    np.testing.assert_allclose(ssd(X, a, B, C, "quadratic"), np.array(Y), atol=1e-12)


def test_thm_ssd_semiseparable():
    assert bt.verified("thm-ssd-semiseparable") >= 1
    a = np.random.default_rng(2).uniform(0.2, 1.0, 9)
    P = decay_mask(a)
    alpha = np.cumprod(a)
    want = np.tril(alpha[:, None] / alpha[None, :])  # Π_ij = α_i / α_j below the diagonal
    np.testing.assert_allclose(P, want, rtol=1e-12, atol=0)
    A = np.diag(a[1:], k=-1)  # the chain: the edge from token j to j + 1 has weight a_{j+1}
    np.testing.assert_allclose(np.linalg.inv(np.eye(9) - A), P, rtol=1e-12, atol=1e-15)


def test_decay_mask_does_not_underflow_on_long_sequences():
    P = decay_mask(np.full(5000, 0.5))
    assert np.isfinite(P).all() and P[-1, -1] == 1.0 and P[-1, -2] == 0.5 and P[-1, 0] == 0.0


def test_thm_ssd_linear_attention():
    assert bt.verified("thm-ssd-linear-attention") >= 1
    rng = np.random.default_rng(3)
    X, B, C = rng.standard_normal((8, 2)), rng.uniform(0.1, 1, (8, 3)), rng.uniform(0.1, 1, (8, 3))
    Y = ssd(X, np.ones(8), B, C)
    norm = np.array([C[i] @ B[:i + 1].sum(axis=0) for i in range(8)])
    np.testing.assert_allclose(Y / norm[:, None], linear_attention(C, B, X, feature_map=lambda M: M, causal=True),
                               atol=1e-12)


def test_dtype_float32_is_kept():
    X, a, B, C = (M.astype(np.float32) for M in inputs(np.random.default_rng(4), 5, 2, 2))
    assert ssd(X, a, B, C).dtype == np.float32 and ssd(X, a, B, C, "quadratic").dtype == np.float32


# --- The benchmark record ----------------------------------------------------------------------

def test_record_meets_its_target_and_says_where_the_quadratic_form_stops():
    res = RECORD["results"]
    assert RECORD["quick"] is False
    rec = sorted(c["n"] for c in res["cases"] if c["form"] == "recurrent")
    quad = sorted(c["n"] for c in res["cases"] if c["form"] == "quadratic")
    assert rec[-1] == 65536 and rec[0] <= 1024 and quad[-1] == res["quadratic_cap"] < 65536
    fit = [c for c in res["cases"] if c["form"] == "recurrent" and c["n"] >= 1024]
    x, y = np.log([c["n"] for c in fit]), np.log([c["cpu_seconds"] for c in fit])
    assert np.polyfit(x, y, 1)[0] == pytest.approx(res["slope_recurrent_cpu"], abs=1e-12)
    assert res["target"]["met_cpu"] == (res["slope_recurrent_cpu"] <= 1.1)
    assert res["equal"]["max_abs_diff"] < 1e-9 * res["equal"]["max_abs_y"]


@pytest.mark.slow
def test_benchmark_cli_runs_quick(tmp_path):
    record = bt.quick_benchmark("ssd", tmp_path)
    assert record["results"]["quadratic_cap"] == 512


# --- Broken variants and bad inputs (gathered by tests/test_can_fail.py and test_validation.py) --

_ss = importlib.import_module("attention_graph.state_spaces")


def _off_by_one(a):
    """Π_ij = a_j ⋯ a_i: the decay of token j itself counted on its own edge."""
    cs = np.cumsum(np.log(a))
    prev = np.concatenate([[0.0], cs[:-1]])
    return np.tril(np.exp(cs[:, None] - prev[None, :]))


def _distance_kernel(a):
    """A decay of (i − j)² steps: lower triangular, but not semiseparable."""
    k = np.arange(len(a))
    return np.tril(np.exp(-0.1 * (k[:, None] - k[None, :]) ** 2))


def _reads_before_writing(X, a, B, C):
    """The state read before token i joins it: y_i misses its own term."""
    h, Y = np.zeros((B.shape[1], X.shape[1])), np.empty_like(X)
    for i in range(X.shape[0]):
        h *= a[i]
        Y[i] = C[i] @ h
        h += np.outer(B[i], X[i])
    return Y


BROKEN = {
    "eq-ssd": (_ss, "segment_products", _off_by_one, "token j's own decay on its edge"),
    "thm-ssd-duality": (_ss, "ssd_recurrent", _reads_before_writing, "the state read before it is written"),
    "thm-ssd-semiseparable": (_ss, "segment_products", _distance_kernel, "a Gaussian decay in i − j"),
    "thm-ssd-linear-attention": (_ss, "ssd_quadratic", lambda X, a, B, C: (C @ B.T) @ X, "no causal mask"),
}

ok, dec = np.ones((3, 2)), np.full(3, 0.5)
BAD = [
    ("ssd", lambda: ssd(ok, [0.5, 0.0, 1.0], ok, ok), ValueError,
     r"a must hold decays in \(0, 1\]; found 0.0 at index 1"),
    ("ssd", lambda: ssd(ok, [0.5, 1.5, 1.0], ok, ok), ValueError, "a must hold decays in"),
    ("ssd", lambda: ssd(ok, [0.5, np.nan, 1.0], ok, ok), ValueError, "a must hold decays in"),
    ("ssd", lambda: ssd(ok, [0.5, 0.5], ok, ok), ValueError, "a must be a 1-d array of n = 3"),
    ("ssd", lambda: ssd(ok, ["a", "b", "c"], ok, ok), TypeError, "a must hold real numbers"),
    ("ssd", lambda: ssd(ok, dec, np.ones((2, 2)), ok), ValueError, "B must have one row per row of X"),
    ("ssd", lambda: ssd(ok, dec, ok, np.ones((3, 3))), ValueError, "B and C must have the same number of columns"),
    ("ssd", lambda: ssd(ok, dec, ok, ok, form="chunked"), ValueError, "form must be one of"),
    ("ssd", lambda: ssd([[np.inf, 0]] * 3, dec, ok, ok), ValueError, "X must be finite"),
    ("ssd", lambda: ssd(np.ones(3), dec, ok, ok), ValueError, "X must be a 2-d array"),
    ("decay_mask", lambda: decay_mask([0.5, -0.1]), ValueError, "a must hold decays in"),
    ("decay_mask", lambda: decay_mask([[0.5]]), ValueError, "a must be a 1-d array"),
]



# --- What the page glued, recomputed ----------------------------------------------------------

@pytest.mark.build
def test_glued_benchmark_numbers_are_the_records():
    res = RECORD["results"]
    cases = {(c["form"], c["n"]): c for c in res["cases"]}
    assert bt.glued_float(PAGE, "bench_slope_cpu") == pytest.approx(res["slope_recurrent_cpu"], abs=1e-12)
    assert res["slope_recurrent_cpu"] <= 1.1
    assert bt.glued_float(PAGE, "bench_cap") == res["quadratic_cap"]
    assert bt.glued_float(PAGE, "bench_top_n") == 65536
    cap = res["quadratic_cap"]
    assert bt.glued_float(PAGE, "bench_ratio_cap") == pytest.approx(
        cases[("quadratic", cap)]["cpu_seconds"] / cases[("recurrent", cap)]["cpu_seconds"], rel=1e-12)
    assert bt.glued_float(PAGE, "bench_cap_mb") == cap**2 * 8 / 2**20


@pytest.mark.build
def test_glued_figure_and_linear_attention_numbers():
    a = np.random.default_rng(3).uniform(0.6, 1.0, 10)
    assert bt.glued_float(PAGE, "ssd_show_far") == pytest.approx(float(np.prod(a[1:])), rel=1e-12)
    assert bt.glued_float(PAGE, "ssd_la_gap") < 1e-12


@pytest.mark.build
def test_exercises():
    rng = np.random.default_rng(11)
    X, B, C = rng.standard_normal((50, 3)), rng.standard_normal((50, 4)), rng.standard_normal((50, 4))
    a = rng.uniform(0.5, 1.0, 50)
    np.testing.assert_allclose(ssd(X, a, B, C, "quadratic"), ssd_reference(X, a, B, C), atol=1e-12)
    assert bt.glued_float(PAGE, "ex_forms_gap") < 1e-12
    assert bt.glued_float(PAGE, "ex_half_back") == int(np.floor(np.log(2) / -np.log(0.9)))
    assert bt.glued_float(PAGE, "ex_rank_block") == 1 and bt.glued_float(PAGE, "ex_rank_whole") == 12
