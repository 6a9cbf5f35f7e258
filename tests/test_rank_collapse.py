"""Rank collapse: Dobrushin's coefficient against an independent formula, its two theorems on random
matrices, the bound along the chapter's stacks, and the numbers the chapter shows, recomputed by an
independent implementation of its stacks."""

import math

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import distance_from_rank_one, ergodicity_coefficient, product_coefficients, row_spread
from attention_graph import rank_collapse as rc
from bad_inputs import inf, ok

PAGE = "rank_collapse"


def _tau(W):
    """Half the largest L1 distance between two rows: the second form of the coefficient."""
    W = np.asarray(W, dtype=float)
    return max(0.5 * np.abs(W[i] - W[k]).sum() for i in range(len(W)) for k in range(len(W)))


def _spread(X):
    X = np.asarray(X, dtype=float)
    return max(abs(X[i] - X[k]).max() for i in range(len(X)) for k in range(len(X)))


def _res(X):
    X = np.asarray(X, dtype=float)
    return math.sqrt(((X - X.mean(axis=0)) ** 2).sum() / (X**2).sum())


def _stochastic(rng, n_q, n_k, zeros=True):
    W = rng.random((n_q, n_k))  # (n_q, n_k)
    if zeros:
        W *= rng.random((n_q, n_k)) < 0.6
        W[np.arange(n_q), rng.integers(0, n_k, size=n_q)] += 0.1
    return W / W.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("n", [1, 2, 5, 17])
def test_coefficient_against_the_half_l1_form(n):
    rng = np.random.default_rng(n)
    for _ in range(20):
        W = _stochastic(rng, n, n + 2)
        assert ergodicity_coefficient(W) == pytest.approx(_tau(W), abs=1e-12)
    assert ergodicity_coefficient(np.eye(n)) == (1.0 if n > 1 else 0.0)
    assert ergodicity_coefficient(np.full((n, n), 1 / n)) == pytest.approx(0.0, abs=1e-15)
    W32 = _stochastic(rng, n, n).astype(np.float32)
    assert ergodicity_coefficient(W32) == pytest.approx(_tau(W32), abs=1e-6)


def test_eq_ergodicity_coefficient():
    assert bt.verified("eq-ergodicity-coefficient") >= 1


def test_thm_tau_contraction():
    assert bt.verified("thm-tau-contraction") >= 1
    rng = np.random.default_rng(7)
    for n in (2, 6, 20):
        for _ in range(30):
            W = _stochastic(rng, n, n)
            X = rng.standard_normal((n, 4))  # (n, d)
            assert _spread(W @ X) <= _tau(W) * _spread(X) + 1e-12
            assert row_spread(X) == pytest.approx(_spread(X), rel=1e-15)


def test_thm_tau_submultiplicative():
    assert bt.verified("thm-tau-submultiplicative") >= 1
    rng = np.random.default_rng(8)
    for n in (2, 6, 20):
        for _ in range(30):
            A, B = _stochastic(rng, n, n), _stochastic(rng, n, n)
            assert _tau(A @ B) <= _tau(A) * _tau(B) + 1e-12
        layers = [_stochastic(rng, n, n) for _ in range(5)]
        got = product_coefficients(layers)
        P, running = np.eye(n), 1.0
        for k, W in enumerate(layers):
            P, running = W @ P, running * _tau(W)
            assert got["product"][k] == pytest.approx(_tau(P), abs=1e-12)
            assert got["bound"][k] == pytest.approx(running, rel=1e-12)


def test_distance_from_rank_one():
    rng = np.random.default_rng(9)
    X = rng.standard_normal((6, 3))  # (n, d)
    assert distance_from_rank_one(X) == pytest.approx(_res(X), rel=1e-13)
    assert distance_from_rank_one(3.0 * X) == pytest.approx(distance_from_rank_one(X), rel=1e-13)
    assert distance_from_rank_one(np.ones((4, 1)) @ rng.standard_normal((1, 3))) == pytest.approx(0, abs=1e-15)


def test_signed_permutation_keeps_the_spread_and_the_size():
    rng = np.random.default_rng(10)
    U = rc.signed_permutation(7, rng)
    X = rng.standard_normal((5, 7))  # (n, d)
    assert np.allclose(U @ U.T, np.eye(7)) and set(np.abs(U).sum(axis=0)) == {1.0}
    assert _spread(X @ U) == pytest.approx(_spread(X)) and np.linalg.norm(X @ U) == pytest.approx(np.linalg.norm(X))


# --- The chapter's stacks, reimplemented ------------------------------------------------------------

def _masks(n, w):
    i = np.arange(n)
    return {"complete": None, "causal": i[None, :] <= i[:, None],
            "window": np.abs(i[:, None] - i[None, :]) <= w}


def _stack(X, n_layers, seed, mask, residual, norm):
    """The chapter's stack: pre-LN (no gain or bias), value map a signed permutation, same draws."""
    rng = np.random.default_rng(seed)
    d = X.shape[1]
    res, spread, weights = [_res(X)], [_spread(X)], []
    for _ in range(n_layers):
        W_Q = rng.standard_normal((d, d)) / np.sqrt(d)
        W_K = rng.standard_normal((d, d)) / np.sqrt(d)
        U = np.zeros((d, d))
        U[np.arange(d), rng.permutation(d)] = rng.choice([-1.0, 1.0], size=d)
        Z = oracles.layer_norm(X, np.ones(d), np.zeros(d)) if norm else X
        Y, W = oracles.attention(Z @ W_Q, Z @ W_K, Z @ U, mask)
        X = X + Y if residual else Y
        weights.append(W)
        res.append(_res(X))
        spread.append(_spread(X))
    return np.array(res), np.array(spread), weights


@pytest.fixture(scope="module")
def study():
    return rc.collapse_study()


def test_the_stacks_against_an_independent_implementation(study):
    X = np.random.default_rng(study["seeds"][0]).standard_normal((study["n"], study["d"]))
    for graph, mask in _masks(study["n"], study["w"]).items():
        for name, (residual, norm) in rc.VARIANTS.items():
            res, spread, _ = _stack(X, study["n_layers"], study["seeds"][0] + 1000, mask, residual, norm)
            run = study["runs"][graph][name][0]
            # Relative error early on; near zero, rounding differs between the two implementations.
            np.testing.assert_allclose(run["r"], res, rtol=1e-6, atol=1e-12, err_msg=(graph, name))
            np.testing.assert_allclose(run["spread"], spread, rtol=1e-6, atol=1e-9, err_msg=(graph, name))


def test_the_stacks_respect_the_bound(study):
    for graph in rc.GRAPHS:
        run = study["runs"][graph]["attention only"][0]
        P = np.eye(study["n"])
        for depth, W in enumerate(run["weights"], start=1):
            P = W @ P
            assert run["spread"][depth] <= _tau(P) * run["spread"][0] + 1e-12, (graph, depth)
        b = study["bounds"][graph]
        assert (b["product"] <= b["bound"] + 1e-12).all()


@pytest.mark.build
def test_page_numbers(study):
    n, w = study["n"], study["w"]
    assert bt.glued_float(PAGE, "rc_n") == n and bt.glued_float(PAGE, "rc_k") == w
    for graph in rc.GRAPHS:
        run = study["runs"][graph]["attention only"][0]
        assert bt.glued_float(PAGE, f"rc_tau1_{graph}") == pytest.approx(_tau(run["weights"][0]), abs=1e-12)
    assert bt.glued_float(PAGE, "rc_tau1_window") == 1.0
    # The window's product contracts first at ⌈(n − 1)/(2w)⌉ layers, where the two ends' walks meet.
    X = np.random.default_rng(study["seeds"][0]).standard_normal((n, study["d"]))
    _, _, weights = _stack(X, study["n_layers"], study["seeds"][0] + 1000, _masks(n, w)["window"], False, False)
    P, first = np.eye(n), None
    for depth, W in enumerate(weights, start=1):
        P = W @ P
        if first is None and _tau(P) < 1:
            first = depth
    assert bt.glued_float(PAGE, "rc_window_first_contracting") == first == math.ceil((n - 1) / (2 * w))
    assert bt.glued_float(PAGE, "rc_window_predicted") == first
    assert bt.glued_float(PAGE, "rc_window_bound_final") == 1.0
    # Medians of the residual at the last layer, from the independent stacks.
    for graph, mask in _masks(n, w).items():
        for name, (residual, norm) in rc.VARIANTS.items():
            finals = []
            for seed in study["seeds"]:
                X = np.random.default_rng(seed).standard_normal((n, study["d"]))
                finals.append(_stack(X, study["n_layers"], seed + 1000, mask, residual, norm)[0][-1])
            key = name.replace(" + ", "_").replace(" ", "_").lower()
            assert bt.glued_float(PAGE, f"rc_res_{graph}_{key}") == pytest.approx(np.median(finals), rel=1e-5,
                                                                                   abs=1e-14)
    # Residual + LayerNorm on the complete graph halfway up: slower, not stopped (still falling).
    half = study["n_layers"] // 2
    halves = [_stack(np.random.default_rng(seed).standard_normal((n, study["d"])), study["n_layers"], seed + 1000,
                     None, True, True)[0][half] for seed in study["seeds"]]
    assert bt.glued_float(PAGE, "rc_depth_half") == half
    assert bt.glued_float(PAGE, "rc_res_complete_residual_layernorm_half") == pytest.approx(np.median(halves),
                                                                                            rel=1e-5)
    # What the prose says of them.
    g = lambda key: bt.glued_float(PAGE, key)  # noqa: E731
    assert g("rc_res_complete_residual_layernorm_half") > g("rc_res_complete_residual_layernorm")
    assert g("rc_res_complete_residual_layernorm") > 0.1 and g("rc_res_causal_residual_layernorm") > 0.1
    assert g("rc_res_complete_residual") < 1e-3 < g("rc_res_complete_residual_layernorm")
    assert g("rc_res_causal_layernorm") < 1e-9 and g("rc_res_causal_attention_only") < 1e-9
    assert g("rc_complete_collapsed_at") < 10 and g("rc_causal_first_row") == 1.0


@pytest.mark.build
@pytest.mark.parametrize("key", ["fig-collapse-graphs", "fig-collapse-bound", "fig-collapse-depth"])
def test_figures_are_glued_as_images(key):
    assert "image/svg+xml" in bt.glue_data(PAGE)[key]["data"]


@pytest.mark.build
def test_exercises():
    i = np.arange(8)
    W = np.where(i[None, :] <= i[:, None], 1.0 / (i[:, None] + 1), 0.0)  # (8, 8)
    assert bt.glued_float(PAGE, "ex_rc_tau") == pytest.approx(_tau(W)) == pytest.approx(7 / 8)
    assert bt.glued_float(PAGE, "ex_rc_overlap") == pytest.approx(np.minimum(W[0], W[-1]).sum()) == pytest.approx(1 / 8)
    assert bt.glued_float(PAGE, "ex_rc_tau_square") == pytest.approx(_tau(W @ W))
    assert bt.glued_float(PAGE, "ex_rc_tau_squared") == pytest.approx(_tau(W) ** 2)
    assert _tau(W @ W) <= _tau(W) ** 2
    assert bt.glued_float(PAGE, "ex_rc_layers") == math.ceil(63 / 8)
    assert bt.glued_float(PAGE, "ex_rc_perm_tau") == 1.0
    assert bt.glued_plain(PAGE, "ex_rc_perm_spread_same") == "True"


# --- Broken variants ------------------------------------------------------------------------------

def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # rank collapse
    "eq-ergodicity-coefficient": (rc, "ergodicity_coefficient", after(rc.ergodicity_coefficient, lambda t: t / 2),
                                  "half the coefficient"),
    "thm-tau-contraction": (rc, "ergodicity_coefficient", after(rc.ergodicity_coefficient, lambda t: t * 0.9),
                            "a coefficient a tenth too small"),
    "thm-tau-submultiplicative": (rc, "exact_tau", after(rc.exact_tau, lambda t: 1 - t),
                                  "the overlap in place of the coefficient"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([[0.5, 0.4]]), ValueError,
     r"W must be row-stochastic .*row 0 sums to 0.9"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([[1.5, -0.5]]), ValueError,
     r"W must be row-stochastic .*found -0.5 at index \(0, 1\)"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([0.5, 0.5]), ValueError, "W must be a 2-d array"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient(np.ones((0, 3))), ValueError, "at least one row"),
    ("ergodicity_coefficient", lambda: ag.ergodicity_coefficient([[np.nan, 1.0]]), ValueError, "W must be finite"),
    ("row_spread", lambda: ag.row_spread(ok[0]), ValueError, "X must be a 2-d array"),
    ("row_spread", lambda: ag.row_spread(np.ones((0, 2))), ValueError, "X must have at least one row"),
    ("distance_from_rank_one", lambda: ag.distance_from_rank_one(np.zeros((3, 2))), ValueError, "X is zero"),
    ("distance_from_rank_one", lambda: ag.distance_from_rank_one(inf), ValueError, "X must be finite"),
    ("product_coefficients", lambda: ag.product_coefficients([]), ValueError, "at least one weight matrix"),
    ("product_coefficients", lambda: ag.product_coefficients([np.eye(2), np.eye(3)]), ValueError,
     r"layers\[1\] must have shape \(2, 2\)"),
    ("product_coefficients", lambda: ag.product_coefficients([np.eye(2), np.ones((2, 2))]), ValueError,
     r"layers\[1\] must be row-stochastic"),
]
