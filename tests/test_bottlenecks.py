"""Bottlenecks: path counts against math.comb and networkx, the sensitivity of the last token against
central differences through an independent stack, and the numbers the chapter shows, recomputed."""

import importlib
import math

import networkx as nx
import numpy as np
import pytest
import sympy as sp

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import (
    causal_path_counts,
    causal_stack,
    init_causal_stack,
    last_token_sensitivity,
    path_share,
    uniform_walk_share,
)
from bad_inputs import I2, I3, inf, nan, ok

PAGE = "bottlenecks"


def _walks_by_networkx(n, T):
    """Walks of T steps from each j to the last token, through a layered DAG built by networkx."""
    G = nx.DiGraph()
    for layer in range(T):
        G.add_edges_from(((layer, j), (layer + 1, i)) for i in range(n) for j in range(i + 1))
    order = list(nx.topological_sort(G))
    counts = []
    for j in range(n):
        ways = {node: 0 for node in G}
        ways[(0, j)] = 1
        for node in order:
            for succ in G.successors(node):
                ways[succ] += ways[node]
        counts.append(ways[(T, n - 1)])
    return counts


@pytest.mark.parametrize("n, T", [(1, 1), (4, 1), (5, 3), (9, 4), (16, 8)])
def test_counts_against_networkx(n, T):
    assert causal_path_counts(n, T).tolist() == _walks_by_networkx(n, T)


def test_thm_causal_path_count():
    assert bt.verified("thm-causal-path-count") >= 1
    for n in (1, 3, 10, 40):
        for T in (1, 2, 5, 9):
            counts = causal_path_counts(n, T)
            assert counts.tolist() == [math.comb(n - j + T - 1, T - 1) for j in range(1, n + 1)]
            assert counts.sum() == math.comb(n + T - 1, T)
            if T >= 2 and n >= 2:
                assert (np.diff(counts) < 0).all()
            assert path_share(n, T).sum() == pytest.approx(1.0)


def test_thm_walk_sensitivity():
    assert bt.verified("thm-walk-sensitivity") >= 1
    # Fixed random causal weights, V = X: the Jacobian of the last row is R_nj I, the walk sum.
    rng = np.random.default_rng(4)
    n, T = 6, 3
    Ws = []
    for _ in range(T):
        W = np.tril(rng.random((n, n)))
        Ws.append(W / W.sum(axis=1, keepdims=True))
    R = np.linalg.multi_dot(Ws[::-1])
    walk_sum = np.zeros(n)
    for j in range(n):
        for middle in __import__("itertools").combinations_with_replacement(range(j, n), T - 1):
            p = (j, *middle, n - 1)
            walk_sum[j] += np.prod([Ws[l][p[l + 1], p[l]] for l in range(T)])
    np.testing.assert_allclose(R[-1], walk_sum, rtol=1e-12)


def _stack(X, layers, residual):
    """An independent causal stack: oracles.attention with the causal mask."""
    n = X.shape[0]
    mask = np.tril(np.ones((n, n), dtype=bool))
    for p in layers:
        Y, _ = oracles.attention(X @ p["W_Q"], X @ p["W_K"], X @ p["W_V"], mask)
        X = X + Y if residual else Y
    return X


def _sensitivity_by_differences(X, layers, residual):
    n, d = X.shape
    J = np.zeros((n, d, d))
    for c in range(d):
        J[:, c, :] = oracles.central_difference(lambda Z, c=c: float(_stack(Z, layers, residual)[-1, c]), X)
    return np.sqrt((J**2).sum(axis=(1, 2)))


@pytest.mark.parametrize("residual", [False, True])
def test_sensitivity_against_central_differences(residual):
    rng = np.random.default_rng(21)
    X = rng.standard_normal((6, 4))  # (n, d)
    layers = init_causal_stack(4, 3, rng)
    np.testing.assert_allclose(causal_stack(X, layers, residual=residual)[0], _stack(X, layers, residual),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(last_token_sensitivity(X, layers, residual=residual),
                               _sensitivity_by_differences(X, layers, residual), rtol=1e-6, atol=1e-7)


def test_uniform_walk_share():
    for n, T in ((5, 1), (8, 3)):
        i = np.arange(n)
        W = np.where(i[None, :] <= i[:, None], 1.0 / (i[:, None] + 1), 0.0)
        np.testing.assert_allclose(uniform_walk_share(n, T), np.linalg.matrix_power(W, T)[-1], rtol=1e-12)


# --- What the chapter shows ------------------------------------------------------------------------

@pytest.mark.build
def test_page_counts():
    g = lambda key: bt.glued_float(PAGE, key)  # noqa: E731
    n, T = int(g("cp_n")), int(g("cp_t"))
    counts = [math.comb(n - j + T - 1, T - 1) for j in range(1, n + 1)]
    assert g("cp_first") == counts[0] and g("cp_before_last") == counts[-2]
    assert g("cp_middle") == counts[int(g("cp_middle_j")) - 1]
    assert g("cp_first_share") == pytest.approx(counts[0] / sum(counts))
    assert g("cp_last_half_share") == pytest.approx(sum(counts[n // 2:]) / sum(counts))
    assert g("cp_fig_first") == math.comb(int(g("cp_fig_n")) + int(g("cp_fig_t")) - 2, int(g("cp_fig_t")) - 1)
    assert g("ex_bn_ratio") == pytest.approx(counts[0] / counts[int(g("cp_middle_j")) - 1])


def _shares(n, d, T, seeds, residual):
    out = []
    for seed in seeds:
        X = np.random.default_rng(seed).standard_normal((n, d))
        layers = init_causal_stack(d, T, np.random.default_rng(seed + 100))
        s = last_token_sensitivity(X, layers, residual=residual)
        out.append(s / s.sum())
    return np.array(out)


@pytest.mark.build
def test_page_sensitivities():
    g = lambda key: bt.glued_float(PAGE, key)  # noqa: E731
    n, d, T = int(g("cp_n")), int(g("sens_d")), int(g("cp_t"))
    seeds = range(int(g("sens_seeds")))
    deep = _shares(n, d, T, seeds, False)
    assert g("sens_first_deep") == pytest.approx(np.median(deep[:, 0]), rel=1e-9)
    assert g("sens_last_deep") == pytest.approx(np.median(deep[:, -1]), rel=1e-6)
    i = np.arange(n)
    W = np.where(i[None, :] <= i[:, None], 1.0 / (i[:, None] + 1), 0.0)
    assert g("sens_walk_first_deep") == pytest.approx(np.linalg.matrix_power(W, T)[-1, 0])
    assert g("ex_bn_walk_first") == pytest.approx(np.linalg.matrix_power(W, T)[-1, 0])
    # "The uniform walk comes close to the measured share of the first token. The count of paths
    # alone gives far less."
    assert abs(g("sens_walk_first_deep") - g("sens_first_deep")) < 0.01
    assert g("sens_path_first_deep") < g("sens_first_deep") / 2
    res = _shares(n, d, T, seeds, True)
    assert g("sens_res_first_deep") == pytest.approx(np.median(res[:, 0]), rel=1e-9)
    assert g("sens_res_first_deep") > g("sens_res_middle_deep")
    assert g("sens_fd_gap") < 1e-6


@pytest.mark.build
@pytest.mark.parametrize("key", ["fig-causal-paths", "fig-sensitivity", "fig-sensitivity-residual"])
def test_figures_are_glued_as_images(key):
    assert "image/svg+xml" in bt.glue_data(PAGE)[key]["data"]


@pytest.mark.build
def test_exercise_no_self_loops():
    A = np.tril(np.ones((8, 8), dtype=np.int64), k=-1)
    walks = np.linalg.matrix_power(A, 3)[-1]
    assert bt.glued_float(PAGE, "ex_bn_first") == walks[0] == math.comb(6, 2)
    assert bt.glued_plain(PAGE, "ex_bn_same") == "True"
    assert bt.glued_float(PAGE, "ex_bn_reach") == 8 - 3


# --- Broken variants ------------------------------------------------------------------------------

def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


bn = importlib.import_module("attention_graph.bottlenecks")


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # bottlenecks
    "thm-causal-path-count": (bn, "path_count_formula", lambda s, L: sp.binomial(s + L, L - 1),
                              "one position too many in the binomial"),
    "thm-walk-sensitivity": (bn, "last_token_sensitivity", after(bn.last_token_sensitivity, lambda s: s[::-1]),
                             "the tokens in reverse order"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("causal_path_counts", lambda: ag.causal_path_counts(0, 2), ValueError, "n must be a positive integer"),
    ("causal_path_counts", lambda: ag.causal_path_counts(5, 1.5), TypeError, "n_layers must be a positive integer"),
    ("causal_path_counts", lambda: ag.causal_path_counts(200, 40), ValueError, "more than 2\\*\\*62 paths"),
    ("path_share", lambda: ag.path_share(4, 0), ValueError, "n_layers must be a positive integer"),
    ("uniform_walk_share", lambda: ag.uniform_walk_share(-1, 2), ValueError, "n must be a positive integer"),
    ("init_causal_stack", lambda: ag.init_causal_stack(4, 2, 0), TypeError, "rng must be a numpy.random.Generator"),
    ("init_causal_stack", lambda: ag.init_causal_stack(4, 2, np.random.default_rng(0), scale=-1.0), ValueError,
     "scale must be a real number >= 0"),
    ("causal_stack", lambda: ag.causal_stack(ok, []), TypeError, "layers must be a non-empty list"),
    ("causal_stack", lambda: ag.causal_stack(ok, [{"W_Q": I2, "W_K": I2}]), ValueError,
     r"layers\[0\] must be a dict with exactly W_Q, W_K and W_V"),
    ("causal_stack", lambda: ag.causal_stack(ok, [{"W_Q": I3, "W_K": I2, "W_V": I2}]), ValueError,
     r"layers\[0\]\['W_Q'\] must have shape \(2, 2\)"),
    ("causal_stack", lambda: ag.causal_stack(ok, [{"W_Q": I2, "W_K": I2, "W_V": I2}], residual=1), TypeError,
     "residual must be True or False"),
    ("last_token_sensitivity", lambda: ag.last_token_sensitivity(nan, [{"W_Q": I2, "W_K": I2, "W_V": I2}]),
     ValueError, "X must be finite"),
    ("last_token_sensitivity", lambda: ag.last_token_sensitivity(ok, [{"W_Q": I2, "W_K": I2, "W_V": inf[:2]}]),
     ValueError, r"layers\[0\]\['W_V'\] must be finite"),
]
