"""Scores, Q Kᵀ/√d: the function, its errors, and what the scores chapter shows."""

import importlib
import json
import re

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import buildpaths as paths
from attention_graph import scaled_scores, scores
from bad_inputs import cplx, inf, nan, objs, ok, strs

PAGE = "scores"


def test_scaled_scores_is_the_sum_formula():
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((3, 5))  # (n_q, d)
    K = rng.standard_normal((4, 5))  # (n_k, d)
    S = scaled_scores(Q, K)  # (n_q, n_k)
    expected = [[sum(Q[i, l] * K[j, l] for l in range(5)) / 5**0.5 for j in range(4)] for i in range(3)]
    np.testing.assert_allclose(S, expected, rtol=1e-13)
    assert S.shape == (3, 4)


@pytest.mark.parametrize("Q, K, message", [
    (np.ones((2, 3)), np.ones((2, 4)), "share the dimension d"),
    (np.ones(3), np.ones((2, 3)), "Q must be a 2-d array"),
    (np.ones((2, 3)), np.ones((2, 3, 1)), "K must be a 2-d array"),
    (np.array([[np.nan, 1.0]]), np.ones((1, 2)), "Q must be finite"),
    (np.ones((1, 2)), np.array([[np.inf, 1.0]]), "K must be finite"),
    (np.ones((2, 0)), np.ones((2, 0)), "d = 0"),
    (np.full((1, 1), 1e200), np.full((1, 1), 1e200), "overflowed"),
])
def test_scaled_scores_refuses_bad_input(Q, K, message):
    with pytest.raises(ValueError, match=message):
        scaled_scores(Q, K)


def test_simulation_needs_a_generator():
    with pytest.raises(TypeError, match="rng"):
        scores.simulate_dot_products(4, 10, rng=0)


# --- What the page shows, recomputed independently of the package ---------------------------------

@pytest.mark.build
def test_glued_simulation_agrees_with_the_moments_of_a_dot_product():
    """For standard normal q, k in dimension d, q·k = Σ_l q_l k_l has mean 0 and variance d, and
    E[(q·k)⁴] = 3d² + 6d (each term has E[(q_l k_l)⁴] = 9), so the sample variance of n pairs has
    standard error √((2d² + 6d)/n). The glued moments lie within five standard errors of the formula's
    values: a check on what was simulated, not a replay of the same random numbers in the same order."""
    n, d = (bt.glued_float(PAGE, k) for k in ("sim_n", "sim_d"))
    mean, var, var_scaled = (bt.glued_float(PAGE, k) for k in ("sim_mean", "sim_var", "sim_var_scaled"))
    assert abs(mean) <= 5 * np.sqrt(d / n)
    assert abs(var - d) <= 5 * np.sqrt((2 * d**2 + 6 * d) / n)
    assert abs(var_scaled - 1) <= 5 * np.sqrt((2 + 6 / d) / n)
    assert var_scaled == pytest.approx(var / d, rel=1e-12)  # the same products, divided by √d


def test_the_fourth_moment_of_a_dot_product():
    """E[(q·k)⁴] = 3d² + 6d, the formula the standard errors above use, measured at d = 3."""
    rng = np.random.default_rng(11)
    q, k = rng.standard_normal((2, 400_000, 3))  # (pairs, d) each
    x = (q * k).sum(axis=1)  # (pairs,)
    assert np.mean(x**4) == pytest.approx(3 * 9 + 6 * 3, rel=0.05)


@pytest.mark.build
def test_prose_claims_of_the_simulation():
    """The page says: variance close to d unscaled, close to 1 scaled, mean close to 0."""
    d = bt.glued_float(PAGE, "sim_d")
    assert abs(bt.glued_float(PAGE, "sim_var") / d - 1) < 0.05
    assert abs(bt.glued_float(PAGE, "sim_var_scaled") - 1) < 0.05
    assert abs(bt.glued_float(PAGE, "sim_mean")) < 0.2


@pytest.mark.build
def test_demo_shapes_glued_are_those_of_the_matrix_shown():
    """The prose's sizes (glued) are the shown score matrix's: n_q rows of n_k scores each."""
    n_q, n_k, d = (bt.glued_float(PAGE, k) for k in ("demo_nq", "demo_nk", "demo_d"))
    notebook = json.loads((paths.EXECUTED / "book" / f"{PAGE}.ipynb").read_text())
    (cell,) = [c for c in notebook["cells"] if c["cell_type"] == "code" and "S.round(2)" in "".join(c["source"])]
    shown = "".join(cell["outputs"][0]["text"])  # printed: [[ 0.5   0.62 ...] ...]
    rows = re.findall(r"\[([^\[\]]+)\]", shown)
    assert len(rows) == n_q and all(len(row.split()) == n_k for row in rows), shown
    assert d == int(d) >= 1


def test_self_score_margins_match_a_direct_computation():
    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    S = Q @ K.T / np.sqrt(3)
    expected = [S[i, i] - max(S[i, j] for j in range(6) if j != i) for i in range(6)]
    np.testing.assert_allclose(scores.self_score_margins(Q, K), expected, rtol=1e-13)
    with pytest.raises(ValueError, match="same n >= 2 tokens"):
        scores.self_score_margins(Q[:1], K[:1])


# --- Exercises -------------------------------------------------------------------------------------

@pytest.mark.build
def test_exercise_self_scores_have_mean_sqrt_d():
    seed, d, n = (int(bt.glued_float("scores", k)) for k in ("ex_seed", "ex_d", "ex_n"))
    Q = np.random.default_rng(seed).standard_normal((n, d))
    mean = float(((Q * Q).sum(axis=1) / np.sqrt(d)).mean())
    assert bt.glued_float("scores", "ex_self_mean") == pytest.approx(mean, rel=1e-12)
    assert bt.glued_float("scores", "ex_sqrt_d") == np.sqrt(d)
    assert abs(mean - np.sqrt(d)) < 0.05 * np.sqrt(d)


@pytest.mark.build
def test_exercise_uniform_entries_keep_unit_variance():
    seed, d, n = (int(bt.glued_float("scores", k)) for k in ("ex_seed", "ex_d", "ex_n"))
    rng = np.random.default_rng(seed)
    q = rng.uniform(-np.sqrt(3), np.sqrt(3), size=(n, d))
    k = rng.uniform(-np.sqrt(3), np.sqrt(3), size=(n, d))
    var = float(((q * k).sum(axis=1) / np.sqrt(d)).var())
    assert bt.glued_float("scores", "ex_var_uniform") == pytest.approx(var, rel=1e-12)
    assert abs(var - 1) < 0.05  # "close to one": 20 000 samples give a standard error near 0.01


@pytest.mark.build
def test_exercise_sigma_scale():
    sigma, d = bt.glued_float("scores", "ex_sigma"), int(bt.glued_float("scores", "ex_d_sigma"))
    seed, n = int(bt.glued_float("scores", "ex_seed")), int(bt.glued_float("scores", "ex_n"))
    rng = np.random.default_rng(seed)
    z, z2 = rng.standard_normal((n, d)), rng.standard_normal((n, d))
    dots = sigma**2 * (z * z2).sum(axis=1)
    assert bt.glued_float("scores", "ex_var_plain") == pytest.approx((dots / np.sqrt(d)).var(), rel=1e-9)
    assert bt.glued_float("scores", "ex_var_sigma") == pytest.approx((dots / (sigma**2 * np.sqrt(d))).var(), rel=1e-9)
    assert abs(bt.glued_float("scores", "ex_var_plain") - sigma**4) < 0.1 * sigma**4
    assert abs(bt.glued_float("scores", "ex_var_sigma") - 1) < 0.05


# --- Broken variants ------------------------------------------------------------------------------

sc = importlib.import_module("attention_graph.scores")


_expectation = sc.expectation


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


def _hypotheses(mean=0, second=1):
    return {sc.mq[1]: mean, sc.mk[1]: mean, sc.mq[2]: second, sc.mk[2]: second}


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # scores
    "eq-scaled-scores": (sc, "scaled_scores", lambda Q, K: np.asarray(Q) @ np.asarray(K).T, "no 1/√d"),
    "eq-mean-qk": (sc, "HYPOTHESES", _hypotheses(mean=1), "the statement with mean 1"),
    "eq-var-term": (sc, "HYPOTHESES", _hypotheses(second=2), "the statement with variance 2"),
    "eq-var-qk": (sc, "expectation", lambda expr: _expectation(expr.subs(*sorted(
        (s for s in expr.free_symbols if s.name in "kq"), key=lambda s: s.name))),
                  "q and k the same variable: not independent"),
    "eq-var-scaled": (sc, "HYPOTHESES", _hypotheses(mean=1), "the statement with mean 1"),
    "eq-scale-outside-cancels": (sc, "misplaced_scale", after(sc.misplaced_scale, lambda r: {
        **r, "outside": r["right"]}), "the outside reading made equal to the right one"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("scaled_scores", lambda: ag.scaled_scores(ok, np.ones((3, 4))), ValueError, "share the dimension d"),
    ("scaled_scores", lambda: ag.scaled_scores(ok[0], ok), ValueError, "Q must be a 2-d array"),
    ("scaled_scores", lambda: ag.scaled_scores(nan, ok), ValueError, r"Q must be finite; found nan at index \(0, 1\)"),
    ("scaled_scores", lambda: ag.scaled_scores(ok, inf), ValueError, r"K must be finite; found inf at index \(1, 0\)"),
    ("scaled_scores", lambda: ag.scaled_scores(cplx, ok), TypeError, "Q must hold real numbers; got dtype complex128"),
    ("scaled_scores", lambda: ag.scaled_scores(ok, strs), TypeError, "K must hold real numbers"),
    ("scaled_scores", lambda: ag.scaled_scores(objs, ok), TypeError, "Q must hold real numbers; got dtype object"),
    ("scaled_scores", lambda: ag.scaled_scores([[1.0], [1.0, 2.0]], ok), ValueError, "Q must be a rectangular"),
    ("scaled_scores", lambda: ag.scaled_scores(np.ones((2, 0)), np.ones((2, 0))), ValueError, "d = 0"),
    ("scaled_scores", lambda: ag.scaled_scores(ok * 1e200, ok * 1e200), ValueError, "overflowed"),
]
