"""Attention is a graph: message passing, five models, the reductions, and what the chapter shows.

Every expected value here is computed independently, in plain NumPy loops and formulas written out
in the test, never by the package function under test.
"""

import importlib
import json
import re

import numpy as np
import pytest
import sympy as sp

import attention_graph as ag
import booktools as bt
import buildpaths as paths
import oracles
from attention_graph import graph, tables
from attention_graph.worked_example import PEOPLE
from bad_inputs import nan, ok, path

PAGE = "graph"
C, ANA, B, D = range(4)
X = oracles.X_WORKED  # the worked example, (4, 2)
PATH = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]], dtype=float)  # (4, 4)


# --- Independent reference implementations ---------------------------------------------------------

ref_softmax = oracles.softmax


def ref_attention_weights(Q, K, allowed=None):
    return oracles.softmax(oracles.scaled_scores(Q, K), allowed)


def ref_gcn(A):
    n = len(A)
    At = np.asarray(A, float) + np.eye(n)
    deg = [sum(At[i]) for i in range(n)]
    return np.array([[At[i, j] / np.sqrt(deg[i] * deg[j]) for j in range(n)] for i in range(n)])


def ref_mean(A, self_loops=True):
    n = len(A)
    At = np.asarray(A, float) + (np.eye(n) if self_loops else 0)
    return np.array([[At[i, j] / sum(At[i]) for j in range(n)] for i in range(n)])


def ref_gat(A, X, Theta, a, slope=0.2):
    """Veličković et al., eq. by eq.: h = Θᵀx, e_ij = LeakyReLU(aᵀ[h_i ‖ h_j]), α over N(i) ∪ {i}."""
    n = len(A)
    H = [Theta.T @ x for x in X]
    alpha = np.zeros((n, n))
    for i in range(n):
        near = [j for j in range(n) if A[i][j] > 0 or j == i]
        e = {j: float(a @ np.concatenate([H[i], H[j]])) for j in near}
        e = {j: v if v >= 0 else slope * v for j, v in e.items()}
        alpha[i, near] = oracles.softmax([e[j] for j in near])
    Y = np.array([sum(alpha[i, j] * H[j] for j in range(n)) for i in range(n)])
    return Y, alpha


def random_graph(rng, n, p=0.5):
    A = (rng.random((n, n)) < p).astype(float)
    A = np.triu(A, 1)
    return A + A.T


# --- The package: message passing and the five layers ---------------------------------------------

def test_message_passing_is_the_sum_over_edges():
    rng = np.random.default_rng(3)
    W = rng.random((5, 5)) * (rng.random((5, 5)) < 0.5)  # (5, 5), sparse
    V = rng.standard_normal((5, 3))  # (5, 3)
    Y = graph.message_passing(graph.AttentionGraph(W, "abcde"), V)
    expected = [[sum(W[i, j] * V[j, c] for j in range(5)) for c in range(3)] for i in range(5)]
    np.testing.assert_allclose(Y, expected, rtol=1e-13, atol=1e-15)


def test_message_passing_refuses_bad_input():
    with pytest.raises(TypeError, match="AttentionGraph"):
        graph.message_passing(np.eye(2), np.ones((2, 1)))
    with pytest.raises(ValueError, match="one row per node"):
        graph.message_passing(graph.AttentionGraph(np.eye(2), "ab"), np.ones((3, 1)))


def test_gcn_matches_kipf_welling_formula():
    rng = np.random.default_rng(4)
    for n in (1, 2, 5, 8):
        A = random_graph(rng, n)
        Xr = rng.standard_normal((n, 3))
        Y, g = graph.gcn(A, Xr)
        np.testing.assert_allclose(g.W, ref_gcn(A), rtol=1e-14)
        np.testing.assert_allclose(Y, ref_gcn(A) @ Xr, rtol=1e-12, atol=1e-14)
        assert g.labels == tuple(str(i) for i in range(n))


@pytest.mark.parametrize("A, error, message", [
    (np.array([[0, 1], [0, 0]]), ValueError, "symmetric"),
    (np.array([[0, -1], [-1, 0]]), ValueError, "non-negative"),
    (np.ones((2, 3)), ValueError, "square"),
    (np.array([[0, np.nan], [np.nan, 0]]), ValueError, "finite"),
])
def test_gcn_refuses_bad_graphs(A, error, message):
    with pytest.raises(error, match=message):
        graph.gcn_propagation(A)


def test_mean_aggregation_with_and_without_self_loops():
    for self_loops in (True, False):
        Y, g = graph.mean_aggregation(PATH, X, PEOPLE, self_loops=self_loops)
        np.testing.assert_allclose(g.W, ref_mean(PATH, self_loops), rtol=1e-15)
        np.testing.assert_allclose(g.W.sum(axis=1), 1.0, rtol=1e-15)
        np.testing.assert_allclose(Y, ref_mean(PATH, self_loops) @ X, rtol=1e-14)


def test_an_isolated_node_is_refused_by_name_never_nan():
    A_cut = PATH.copy()
    A_cut[B, D] = A_cut[D, B] = 0.0  # Diego has no neighbour
    for layer in (lambda: graph.mean_aggregation(A_cut, X, PEOPLE, self_loops=False),
                  lambda: graph.masked_attention(X, X, X, A_cut, PEOPLE, self_loops=False)):
        with pytest.raises(ValueError, match=r"\['Diego'\] \(row\(s\) \[3\]\) have no neighbour"):
            layer()
    with pytest.raises(ValueError, match="no neighbour"):
        graph.mean_propagation(A_cut, self_loops=False)
    # With self-loops (the default) the isolated node keeps its own state.
    Y, g = graph.masked_attention(X, X, X, A_cut, PEOPLE)
    assert g.W[D, D] == 1.0 and np.array_equal(Y[D], X[D])


def test_gat_matches_the_paper_loop_by_loop():
    rng = np.random.default_rng(5)
    for n, d_in, d_out in ((4, 2, 2), (6, 3, 5), (1, 2, 1)):
        A = random_graph(rng, n)
        Xr = rng.standard_normal((n, d_in))
        Theta, a = graph.gat_parameters(d_in, d_out, rng)
        assert Theta.shape == (d_in, d_out) and a.shape == (2 * d_out,)
        Y, g = graph.gat(A, Xr, Theta, a)
        Y_ref, alpha = ref_gat(A, Xr, Theta, a)
        np.testing.assert_allclose(g.W, alpha, rtol=1e-13, atol=1e-16)
        np.testing.assert_allclose(Y, Y_ref, rtol=1e-12, atol=1e-14)


def test_gat_parameters_are_fixed_by_the_seed():
    p1 = graph.gat_parameters(2, 3, np.random.default_rng(9))
    p2 = graph.gat_parameters(2, 3, np.random.default_rng(9))
    assert all(np.array_equal(u, v) for u, v in zip(p1, p2))
    with pytest.raises(TypeError, match="rng"):
        graph.gat_parameters(2, 2, 9)
    with pytest.raises(ValueError, match="d_out"):
        graph.gat_parameters(2, 0, np.random.default_rng(0))


def test_gat_scores_refuse_mismatched_parameters():
    with pytest.raises(ValueError, match="d_in"):
        graph.gat_scores(X, np.ones((3, 2)), np.ones(4))
    with pytest.raises(ValueError, match="2 d_out"):
        graph.gat_scores(X, np.ones((2, 2)), np.ones(3))
    with pytest.raises(ValueError, match="negative_slope"):
        graph.leaky_relu([1.0], negative_slope=1.5)


def test_masked_attention_is_attention_restricted_to_the_graph():
    rng = np.random.default_rng(6)
    A = random_graph(rng, 7)
    Q, K, V = rng.standard_normal((7, 3)), rng.standard_normal((7, 3)), rng.standard_normal((7, 2))
    allowed = (A > 0) | np.eye(7, dtype=bool)
    Y, g = graph.masked_attention(Q, K, V, A)
    np.testing.assert_allclose(g.W, ref_attention_weights(Q, K, allowed), rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(Y, g.W @ V, rtol=1e-13, atol=1e-15)
    assert (g.W[~allowed] == 0.0).all()


def test_complete_attention_needs_self_attention():
    with pytest.raises(ValueError, match="one query per key"):
        graph.complete_attention(np.ones((2, 2)), np.ones((3, 2)), np.ones((3, 1)))


@pytest.mark.parametrize("call, error, message", [
    (lambda: graph.causal_mask(0), ValueError, "positive integer"),
    (lambda: graph.causal_mask(2.0), TypeError, "positive integer"),
    (lambda: graph.permutation_matrix([0, 0, 1]), ValueError, "permutation"),
    (lambda: graph.permutation_matrix([0.0, 1.0]), ValueError, "permutation"),
    (lambda: graph.relabel(graph.AttentionGraph(np.eye(2), "ab"), [2, 1, 0]), ValueError, "permute"),
    (lambda: graph.additive_mask_softmax(np.ones((2, 2)), np.ones((2, 2), bool), 5.0), ValueError, "fill"),
    (lambda: graph.additive_mask_softmax(np.ones((2, 2)), np.ones((2, 2)), -1.0), TypeError, "boolean"),
    (lambda: graph.product_mask_softmax(np.ones((2, 2)), np.ones((2, 3), bool)), TypeError, "boolean"),
    (lambda: graph.graph_mask(np.ones(3)), ValueError, "2-d"),
    (lambda: graph.mean_aggregation(PATH, X, ["Carla", "Ana"]), ValueError, "labels must name the 4"),
    (lambda: graph.masked_attention(X, X, X, np.ones((3, 3))), ValueError, "mask must have shape"),
])
def test_helpers_refuse_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_additive_mask_with_minus_inf_is_the_exact_mask():
    rng = np.random.default_rng(8)
    S = rng.standard_normal((5, 5)) * 3
    allowed = rng.random((5, 5)) < 0.5
    allowed[:, 0] = True
    np.testing.assert_allclose(graph.additive_mask_softmax(S, allowed, -np.inf), ref_softmax(S, allowed),
                               rtol=1e-13, atol=1e-300)
    # With ordinary scores the finite constant is harmless: the leak is below what a float can hold.
    W = graph.additive_mask_softmax(S, allowed, -1e9)
    assert (W[~allowed] == 0.0).all()


def test_five_models_and_their_table():
    models = graph.five_models(X, PATH, np.random.default_rng(1), PEOPLE)
    assert tuple(models) == graph.MODEL_NAMES
    table = tables.outputs_table(X, models, PEOPLE)
    rows = table.splitlines()
    assert len(rows) == 2 + len(PEOPLE) and rows[2].startswith("| Carla | (0.000, 1.000) |")
    gat_only = tables.outputs_table(X, {"GAT": models["GAT"]}, PEOPLE, input_name="$\\tilde x$")
    assert gat_only.splitlines()[0] == "| node | input $\\tilde x$ | GAT $y$ |"
    with pytest.raises(ValueError, match="input_name"):
        tables.outputs_table(X, models, PEOPLE, input_name="")


# --- The theorems: the registered SymPy check, then an independent numeric check -------------------

def test_thm_attention_is_message_passing():
    assert bt.verified("thm-attention-is-message-passing") >= 1
    rng = np.random.default_rng(11)
    Xr = rng.standard_normal((6, 4))  # (n, d)
    WQ, WK, WV = (rng.standard_normal((4, 4)) for _ in range(3))
    Y, g = graph.complete_attention(Xr @ WQ, Xr @ WK, Xr @ WV)
    W = ref_attention_weights(Xr @ WQ, Xr @ WK)
    # Dense and weighted: every ordered pair is an edge, out-weights sum to 1.
    assert len(g.edges()) == 36 and (g.W > 0).all()
    np.testing.assert_allclose(g.in_strength(), 1.0, rtol=1e-14)
    # Message passing along the edges, by hand, is the attention output.
    V = Xr @ WV
    by_edges = np.zeros_like(V)
    for i in range(6):
        for j in range(6):
            by_edges[i] += W[i, j] * V[j]
    np.testing.assert_allclose(Y, by_edges, rtol=1e-12, atol=1e-14)
    # Directed, and input-dependent.
    assert not np.allclose(g.W, g.W.T)
    _, g2 = graph.complete_attention(2 * Xr @ WQ, 2 * Xr @ WK, Xr @ WV)
    assert not np.allclose(g.W, g2.W)


def test_thm_constant_scores_mean_aggregation():
    assert bt.verified("thm-constant-scores-mean-aggregation") >= 1
    rng = np.random.default_rng(12)
    for _ in range(5):
        A = random_graph(rng, 6)
        Vr = rng.standard_normal((6, 3))
        Kr = rng.standard_normal((6, 2))
        # Q = 0: every score is 0, the layer averages its neighbours and itself.
        Y, g = graph.masked_attention(np.zeros((6, 2)), Kr, Vr, A)
        np.testing.assert_allclose(g.W, ref_mean(A), rtol=1e-14)
        np.testing.assert_allclose(Y, ref_mean(A) @ Vr, rtol=1e-12, atol=1e-14)
    # A different constant per row, other values off the mask: still the mean.
    allowed = graph.causal_mask(5)
    c = rng.standard_normal(5) * 50
    S = np.where(allowed, c[:, None], rng.standard_normal((5, 5)) * 50)
    W = graph.additive_mask_softmax(S, allowed, -np.inf)
    np.testing.assert_allclose(W, allowed / allowed.sum(axis=1, keepdims=True), rtol=1e-14)


def test_thm_masked_softmax_neighbours():
    assert bt.verified("thm-masked-softmax-neighbours") >= 1
    rng = np.random.default_rng(13)
    S = rng.standard_normal((6, 6)) * 2
    allowed = random_graph(rng, 6) > 0
    allowed |= np.eye(6, dtype=bool)
    W_mask = graph.additive_mask_softmax(S, allowed, -np.inf)
    # The softmax over the neighbours only ...
    np.testing.assert_allclose(W_mask, ref_softmax(S, allowed), rtol=1e-13, atol=1e-300)
    # ... is the complete-graph weights renormalised over the neighbours ...
    W_full = ref_softmax(S)
    renorm = np.where(allowed, W_full, 0) / np.where(allowed, W_full, 0).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(W_mask, renorm, rtol=1e-13)
    # ... does not depend on the forbidden scores ...
    S2 = np.where(allowed, S, S + rng.standard_normal((6, 6)) * 100)
    np.testing.assert_array_equal(graph.additive_mask_softmax(S2, allowed, -np.inf), W_mask)
    # ... and is not softmax(S ∘ A): that gives every forbidden entry a positive weight.
    W_prod = graph.product_mask_softmax(S, allowed)
    np.testing.assert_allclose(W_prod, ref_softmax(S * allowed), rtol=1e-13)
    assert (W_prod[~allowed] > 0).all()


def test_thm_gat_is_masked_attention():
    assert bt.verified("thm-gat-is-masked-attention") >= 1
    rng = np.random.default_rng(14)
    A = random_graph(rng, 6)
    Xr = rng.standard_normal((6, 3))
    Theta, a = graph.gat_parameters(3, 4, rng)
    Y_ref, alpha = ref_gat(A, Xr, Theta, a)
    # Masked attention with GAT's scores, written out: e_ij = LeakyReLU(a₁·h_i + a₂·h_j).
    H = Xr @ Theta
    E = (H @ a[:4])[:, None] + (H @ a[4:])[None, :]
    E = np.where(E >= 0, E, 0.2 * E)
    W = ref_softmax(E, (A > 0) | np.eye(6, dtype=bool))
    np.testing.assert_allclose(alpha, W, rtol=1e-13, atol=1e-16)
    np.testing.assert_allclose(Y_ref, W @ H, rtol=1e-12, atol=1e-14)
    Y, g = graph.gat(A, Xr, Theta, a)
    np.testing.assert_allclose(g.W, W, rtol=1e-13, atol=1e-16)


def test_thm_causal_mask_lower_triangular():
    assert bt.verified("thm-causal-mask-lower-triangular") >= 1
    rng = np.random.default_rng(15)
    for n in (1, 2, 5, 9):
        M = graph.causal_mask(n)
        assert np.array_equal(M, [[j <= i for j in range(n)] for i in range(n)])
        Q, K, V = (rng.standard_normal((n, 3)) for _ in range(3))
        Y, g = graph.masked_attention(Q, K, V, M, self_loops=False)
        assert (np.triu(g.W, 1) == 0).all()
        assert [len(np.flatnonzero(row)) for row in g.W] == list(range(1, n + 1))
        assert g.W[0, 0] == 1.0 and np.array_equal(Y[0], V[0])
    with pytest.raises(ValueError, match=r"\['0'\]"):
        graph.masked_attention(Q, K, V, np.tril(np.ones((n, n)), -1), self_loops=False)


def test_thm_permutation_equivariance():
    assert bt.verified("thm-permutation-equivariance") >= 1
    rng = np.random.default_rng(16)
    n = 6
    Xr = rng.standard_normal((n, 3))
    A = random_graph(rng, n)
    order = rng.permutation(n)
    P = np.eye(n)[order]  # row r of P is e_{order[r]}
    for mask in (None, A):
        if mask is None:
            Y, g = graph.complete_attention(Xr, Xr, Xr)
            Yp, gp = graph.complete_attention(P @ Xr, P @ Xr, P @ Xr)
        else:
            Y, g = graph.masked_attention(Xr, Xr, Xr, A)
            Yp, gp = graph.masked_attention(P @ Xr, P @ Xr, P @ Xr, P @ A @ P.T)
        np.testing.assert_allclose(gp.W, P @ g.W @ P.T, rtol=1e-13, atol=1e-16)
        np.testing.assert_allclose(Yp, P @ Y, rtol=1e-13, atol=1e-15)
    assert np.array_equal(graph.permutation_matrix(order), P)
    relabelled = graph.relabel(g, order)
    assert relabelled.labels == tuple(str(k) for k in order)


# --- What the page shows, recomputed independently -------------------------------------------------

def glued(key):
    return bt.glued_float(PAGE, key)


MASKING = "masking"  # the appendix on masks in code (book/masking.md)
PATTERNS = "patterns"  # the causal mask lives in the chapter on attention patterns


def glued_masking(key):
    return bt.glued_float(MASKING, key)


W_ATT = ref_attention_weights(X, X)
W_MASK = ref_attention_weights(X, X, (PATH > 0) | np.eye(4, dtype=bool))


@pytest.mark.build
def test_glued_theorem_example():
    assert glued("n_people") == 4 and glued("n_edges") == 16
    assert glued("w_ana_carla") == pytest.approx(W_ATT[ANA, C], rel=1e-12)
    assert glued("w_carla_ana") == pytest.approx(W_ATT[C, ANA], rel=1e-12)
    assert glued("w_ana_carla_double") == pytest.approx(ref_attention_weights(2 * X, 2 * X)[ANA, C], rel=1e-12)
    # The article's published weight, and the asymmetry the proof relies on.
    assert round(glued("w_ana_carla"), 3) == 0.141
    assert glued("w_ana_carla") != pytest.approx(glued("w_carla_ana"), abs=1e-3)
    assert glued("w_ana_carla_double") != pytest.approx(glued("w_ana_carla"), abs=1e-3)
    assert glued("mp_diff") < 1e-15


@pytest.mark.build
def test_glued_model_weights():
    G = ref_gcn(PATH)
    assert glued("gcn_row_carla") == pytest.approx(G[C].sum(), rel=1e-12)
    assert glued("gcn_row_carla") == pytest.approx(0.5 + 1 / np.sqrt(6), rel=1e-12)
    assert glued("gcn_row_ana") == pytest.approx(G[ANA].sum(), rel=1e-12)
    assert glued("gcn_carla_ana") == pytest.approx(G[C, ANA], rel=1e-12)
    assert glued("gcn_bruno_x") == pytest.approx((G @ X)[B, 0], rel=1e-12)
    assert glued("mean_ana") == pytest.approx(1 / 3, rel=1e-12)
    assert glued("mask_ana_carla") == pytest.approx(W_MASK[ANA, C], rel=1e-12)
    assert glued("mask_ana_bruno") == pytest.approx(W_MASK[ANA, B], rel=1e-12)
    assert glued("att_ana_bruno") == pytest.approx(W_ATT[ANA, B], rel=1e-12)
    for key, (i, j) in {"att_carla_bruno": (C, B), "att_carla_ana": (C, ANA),
                        "att_diego_bruno": (D, B), "att_diego_ana": (D, ANA)}.items():
        assert glued(key) == pytest.approx(W_ATT[i, j], rel=1e-12), key


@pytest.mark.build
def test_the_table_prints_gats_drawn_parameters():
    """GAT's Θ and the halves a₁, a₂ of a, drawn as gat_parameters' docstring says: from seed gat_seed,
    Θ (d, d') normal with variance 2/(d + d'), then a (2d',) normal with variance 2/(2d' + 1)."""
    d = X.shape[1]
    rng = np.random.default_rng(int(glued("gat_seed")))
    Theta = rng.normal(0.0, np.sqrt(2.0 / (d + d)), size=(d, d))  # (d, d')
    a = rng.normal(0.0, np.sqrt(2.0 / (2 * d + 1)), size=2 * d)  # (2 d',)
    expected = {"$\\Theta$, row 1": Theta[0], "$\\Theta$, row 2": Theta[1], "$a_1$": a[:d], "$a_2$": a[d:]}
    bt.assert_table_shows(bt.glued_table(PAGE, "tab-gat-parameters"), expected)


@pytest.mark.build
def test_glued_gcn_row_of_ana_worked_by_hand():
    """§ GCN's worked row: Ana's degree, each sender's degree and weight 1/sqrt(D̃_ii D̃_jj), the row's
    sum and Ana's output, each from the formula entry by entry (not the package's matrix code)."""
    A_tilde = PATH + np.eye(4)  # (4, 4), each node also hears itself
    deg = [sum(A_tilde[i]) for i in range(4)]  # the degrees D̃_ii, counted row by row
    weight = [A_tilde[ANA, j] / np.sqrt(deg[ANA] * deg[j]) for j in range(4)]  # row Ana of Â
    for name, j in {"carla": C, "ana": ANA, "bruno": B, "diego": D}.items():
        assert glued(f"gcn_deg_{name}") == deg[j], name
        assert glued(f"gcn_ana_{name}") == pytest.approx(weight[j], rel=1e-12, abs=1e-15), name
    assert [glued(f"gcn_deg_{n}") for n in ("carla", "ana", "bruno", "diego")] == [2, 3, 3, 2]
    assert glued("gcn_ana_carla") == pytest.approx(1 / np.sqrt(6), rel=1e-12)
    assert glued("gcn_ana_diego") == 0.0 and glued("gcn_ana_ana") == pytest.approx(1 / 3, rel=1e-12)
    assert glued("gcn_row_ana") == pytest.approx(sum(weight), rel=1e-12)
    y = sum(weight[j] * X[j] for j in range(4))  # (2,), Ana's output
    assert [glued("gcn_y_ana_1"), glued("gcn_y_ana_2")] == pytest.approx(list(y), rel=1e-12)
    # The prose: Carla's weight is the largest of the row, the row sums to more than 1.
    assert max(weight) == weight[C] and glued("gcn_row_ana") > 1
    # Attention's row for the same receiver: every sender, Diego included, and a sum of 1.
    for key, j in {"w_ana_carla": C, "att_ana_ana": ANA, "att_ana_bruno": B, "att_ana_diego": D}.items():
        assert glued(key) == pytest.approx(W_ATT[ANA, j], rel=1e-12), key
    assert glued("att_ana_diego") > 0 and glued("att_row_ana") == pytest.approx(1.0, rel=1e-12)


@pytest.mark.build
def test_prose_claims_about_the_five_models():
    G, M = ref_gcn(PATH), ref_mean(PATH)
    # GCN: symmetric, rows not summing to 1, Bruno's first coordinate larger than any input's.
    np.testing.assert_allclose(G, G.T)
    assert abs(glued("gcn_row_carla") - 1) > 0.05 and abs(glued("gcn_row_ana") - 1) > 0.05
    assert glued("gcn_row_carla") < 1 < glued("gcn_row_ana")
    assert glued("gcn_bruno_x") > X.max()
    # Â = D̃^{1/2} M D̃^{-1/2}: GCN and mean aggregation differ by a rescaling of the nodes.
    deg = (PATH + np.eye(4)).sum(axis=1)
    np.testing.assert_allclose(G, np.diag(deg**0.5) @ M @ np.diag(deg**-0.5), rtol=1e-14)
    # Ana gives equal thirds under mean aggregation; the attention matrix is not symmetric.
    np.testing.assert_allclose(M[ANA, [C, ANA, B]], 1 / 3)
    assert not np.allclose(W_ATT, W_ATT.T)
    # Masked attention renormalises the complete-graph weights over the neighbours.
    near = [C, ANA, B]
    assert glued("mask_ana_carla") == pytest.approx(W_ATT[ANA, C] / W_ATT[ANA, near].sum(), rel=1e-12)
    assert glued("mask_ana_carla") > glued("w_ana_carla")
    assert glued("mask_ana_bruno") > glued("att_ana_bruno")
    # Dot products rank per query: Carla puts Bruno above Ana, Diego puts Ana above Bruno.
    assert glued("att_carla_bruno") > glued("att_carla_ana")
    assert glued("att_diego_ana") > glued("att_diego_bruno")


@pytest.mark.build
def test_glued_gat_and_its_same_ranking_for_every_node():
    seed = int(glued("gat_seed"))
    assert glued("gat_slope") == 0.2
    Theta, a = graph.gat_parameters(2, 2, np.random.default_rng(seed))
    _, alpha = ref_gat(PATH, X, Theta, a)
    for key, (i, j) in {"gat_ana_bruno": (ANA, B), "gat_ana_ana": (ANA, ANA),
                        "gat_bruno_bruno": (B, B), "gat_bruno_ana": (B, ANA)}.items():
        assert glued(key) == pytest.approx(alpha[i, j], rel=1e-12), key
    # The page's example: Ana and Bruno both rank Bruno above Ana.
    assert glued("gat_ana_bruno") > glued("gat_ana_ana")
    assert glued("gat_bruno_bruno") > glued("gat_bruno_ana")
    # The general claim: any two nodes rank their shared neighbours alike, for any parameters.
    rng = np.random.default_rng(17)
    for _ in range(20):
        A = random_graph(rng, 6, 0.6)
        Xr = rng.standard_normal((6, 3))
        Th, av = graph.gat_parameters(3, 3, rng)
        _, al = ref_gat(A, Xr, Th, av)
        for i in range(6):
            for k in range(6):
                shared = [j for j in range(6) if al[i, j] > 0 and al[k, j] > 0]
                for j1 in shared:
                    for j2 in shared:
                        if al[i, j1] > al[i, j2] * (1 + 1e-12):
                            assert al[k, j1] >= al[k, j2] * (1 - 1e-12)


@pytest.mark.build
def test_glued_product_mask_counterexample():
    allowed = (PATH > 0) | np.eye(4, dtype=bool)
    S = X @ X.T / np.sqrt(2)
    W_prod = ref_softmax(S * allowed)
    assert glued_masking("score_diego_carla") == pytest.approx(-1 / np.sqrt(2), rel=1e-12)
    assert glued_masking("prod_diego_carla") == pytest.approx(W_prod[D, C], rel=1e-12)
    assert glued_masking("prod_diego_bruno") == pytest.approx(W_prod[D, B], rel=1e-12)
    assert glued_masking("prod_diego_carla") == pytest.approx(glued_masking("prod_diego_bruno"), rel=1e-12)
    assert not allowed[D, C] and allowed[D, B]
    assert glued_masking("prod_leak_diego") == pytest.approx(W_prod[D, C] + W_prod[D, ANA], rel=1e-12)
    assert glued_masking("mask_diego_bruno") == pytest.approx(W_MASK[D, B], rel=1e-12)
    # "raises it to 0": the score was negative.
    assert glued_masking("score_diego_carla") < 0


@pytest.mark.build
def test_glued_causal_example():
    assert bt.glued_float(PATTERNS, "causal_first") == 1.0


@pytest.mark.build
def test_glued_permutation_example():
    assert glued("perm_y_diff") < 1e-15 and glued("perm_w_diff") < 1e-15


def test_prose_claim_the_mask_cannot_tell_the_ends_of_the_path_apart():
    R = np.eye(4)[::-1]  # reverse the path: Carla <-> Diego, Ana <-> Bruno
    np.testing.assert_array_equal(R @ PATH @ R.T, PATH)
    Y, _ = graph.masked_attention(X, X, X, PATH, PEOPLE)
    Y_traded, _ = graph.masked_attention(R @ X, R @ X, R @ X, PATH, PEOPLE)
    np.testing.assert_allclose(Y_traded, R @ Y, rtol=1e-14, atol=1e-15)


@pytest.mark.build
def test_glued_minus_1e9_leak():
    """Scores of size 1e9, neighbours only: -1e9 leaks 2/3, 1/2 and all of the weight; -inf none."""
    allowed = PATH > 0
    t2 = 1e9 * np.sqrt(2)  # t² so that Carla's score for herself, t² |x_C|² / √2, is 1e9
    S = t2 * (X @ X.T) / np.sqrt(2)
    assert glued_masking("big_score") == pytest.approx(1e9, rel=1e-12)
    W_fill = ref_softmax(S + np.where(allowed, 0.0, -1e9))
    leak = np.where(allowed, 0.0, W_fill).sum(axis=1)
    # At scores of 1e9 a float64 is exact only to about 1e-7, and so are these weights.
    assert glued_masking("leak_carla") == pytest.approx(leak[C], rel=1e-6)
    assert glued_masking("leak_bruno") == pytest.approx(leak[B], rel=1e-6)
    assert glued_masking("leak_diego") == pytest.approx(leak[D], rel=1e-6)
    leaks = (glued_masking("leak_carla"), glued_masking("leak_bruno"), glued_masking("leak_diego"))
    assert leaks == pytest.approx((2 / 3, 1 / 2, 1), rel=1e-6)
    assert W_fill[D, D] == pytest.approx(1.0)  # "all of it goes to himself"
    assert glued_masking("leak_exact_max") == 0.0


@pytest.mark.build
def test_glued_empty_row_with_minus_1e9_is_the_unmasked_row():
    assert glued_masking("cut_diff") < 1e-6
    A_cut = PATH.copy()
    A_cut[B, D] = A_cut[D, B] = 0.0
    S = X @ X.T / np.sqrt(2)
    W_fill = ref_softmax(S + np.where(A_cut > 0, 0.0, -1e9))
    np.testing.assert_allclose(W_fill[D], W_ATT[D], atol=1e-6)


@pytest.mark.build
def test_page_prints_the_refusal_naming_diego():
    nb = json.loads((paths.EXECUTED / "book" / f"{MASKING}.ipynb").read_text())
    outputs = [o for cell in nb["cells"] if cell["cell_type"] == "code" for o in cell.get("outputs", [])]
    printed = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
    assert "masked attention: node(s) ['Diego']" in printed
    assert not any(o.get("output_type") == "error" for o in outputs)


def test_a_table_of_vectors_is_read_cell_by_cell_and_a_wrong_one_fails():
    """bt.assert_table_shows on outputs_table's cells, "(0.000, 1.000)" with the minus sign U+2212:
    the numbers of a row, in order, are its input and its outputs; a wrong number, a missing one or
    a fourth decimal fails."""
    x, y = np.array([0.0, 1.0]), np.array([-0.25, 0.5])
    good = {"Carla": ["(0.000, 1.000)", "(−0.250, 0.500)"]}
    bt.assert_table_shows(good, {"Carla": np.concatenate([x, y])})
    for bad in (["(0.000, 1.000)", "(0.250, 0.500)"], ["(0.000, 1.000)", "(−0.250)"],
                ["(0.000, 1.000)", "(−0.2500, 0.500)"], ["(0.000, 1.000)", "−0.250, 0.500"]):
        with pytest.raises(AssertionError):
            bt.assert_table_shows({"Carla": bad}, {"Carla": np.concatenate([x, y])})


@pytest.mark.build
def test_glued_table_is_the_five_models_outputs():
    # Three tables (each fits a phone's column): GCN and mean, the two attentions, both in the space
    # of X; then GAT alone, beside its own inputs X̃ = XΘ, since its outputs live in that space.
    rng = np.random.default_rng(2018)  # the chapter's GAT seed; Θ and a drawn as gat_parameters documents
    Theta = rng.normal(0.0, np.sqrt(2.0 / 4), size=(2, 2))  # (d, d')
    a = rng.normal(0.0, np.sqrt(2.0 / 5), size=4)  # (2 d',)
    Y_gat, _ = ref_gat(PATH, X, Theta, a)
    shown = {  # key: its header, and the matrices its columns show, one row per person
        "table-outputs": (["node", "input $x$", "GCN $y$", "mean $y$"], [X, ref_gcn(PATH) @ X, ref_mean(PATH) @ X]),
        "table-outputs-attention": (["node", "input $x$", "attention $y$", "masked attention $y$"],
                                    [X, W_ATT @ X, W_MASK @ X]),
        "table-outputs-gat": (["node", "input $\\tilde x$", "GAT $y$"], [X @ Theta, Y_gat]),
    }
    for key, (header, columns) in shown.items():
        assert bt.glued_table_header(PAGE, key) == header, key
        rows = {name: np.concatenate([M[i] for M in columns]) for i, name in enumerate(PEOPLE)}
        bt.assert_table_shows(bt.glued_table(PAGE, key), rows)


@pytest.mark.build
@pytest.mark.parametrize("page, key", [(PAGE, "fig-five-models"), (PATTERNS, "fig-causal")])
def test_figures_are_glued_as_images(page, key):
    assert "image/svg+xml" in bt.glue_data(page)[key]["data"]


def test_the_five_models_are_stacked_in_one_colour_map_and_the_mask_says_it_is_none():
    """Fig. five-models: one panel a row (a phone's column wide, so its cells keep 10 pt), every
    model's weights in one colour map, printed "0.50" with the leading zero, under one colour bar;
    the last panel is the mask A + I, in another map, and its title says it holds no weights."""
    from attention_graph import plots
    from attention_graph.plots.graph import MASK_CMAP, WEIGHTS_CMAP
    from attention_graph.plots.style import COLUMN

    plots.use_book_style()
    models = graph.five_models(X, PATH, np.random.default_rng(2018), PEOPLE)
    fig = plots.plot_model_adjacencies(models, structure=graph.AttentionGraph(graph.graph_mask(PATH), PEOPLE))
    axes = [ax for ax in fig.axes if ax.images]
    assert len(axes) == 6 and fig.get_figwidth() <= COLUMN
    assert len({round(ax.get_position().x0, 6) for ax in axes}) == 1  # one column
    assert [ax.images[0].get_cmap().name for ax in axes] == [WEIGHTS_CMAP] * 5 + [MASK_CMAP]
    assert "not a model" in axes[-1].get_title() and "A + I" in axes[-1].get_title()
    cells = [t.get_text() for ax in axes[:5] for t in ax.texts]
    assert "0.50" in cells and not [c for c in cells if c.startswith(".")]
    assert min(t.get_fontsize() for ax in axes for t in ax.texts) >= 10
    # One colour bar for the models' shared scale, heading the column; the mask's key is its title.
    bars = [ax for ax in fig.axes if not ax.images]
    top = max(float(g.W.max()) for _, g in models.values())
    assert len(bars) == 1 and "one scale" in bars[0].get_title()
    assert bars[0].get_position().y0 > max(ax.get_position().y1 for ax in axes)
    assert bars[0].get_xlim() == pytest.approx((0.0, top))
    assert all(ax.images[0].get_clim() == pytest.approx((0.0, top)) for ax in axes[:5])


def test_the_key_figure_is_attentions_panel_with_the_path_framed():
    """Fig. complete-over-path, the chapter's key figure beside its summary: one panel, a phone's column
    wide and low enough to sit beside the summary; attention's weights on the five models' colour
    scale, every cell printed; a frame on each cell of A + I and on no other."""
    from matplotlib.colors import to_rgb
    from matplotlib.patches import Rectangle

    from attention_graph import plots
    from attention_graph.plots.graph import FRAME_COLOR, KEY_HEIGHT, WEIGHTS_CMAP
    from attention_graph.plots.style import COLUMN

    plots.use_book_style()
    models = graph.five_models(X, PATH, np.random.default_rng(2018), PEOPLE)
    fig = plots.plot_complete_over_path(models, graph.AttentionGraph(graph.graph_mask(PATH), PEOPLE))
    (ax,) = fig.axes
    assert fig.get_figwidth() <= COLUMN and fig.get_figheight() == KEY_HEIGHT < 2 * 1.95
    top = max(float(g.W.max()) for _, g in models.values())
    assert ax.images[0].get_cmap().name == WEIGHTS_CMAP and ax.images[0].get_clim() == pytest.approx((0.0, top))
    np.testing.assert_allclose(ax.images[0].get_array(), W_ATT, rtol=1e-12)
    assert sorted(t.get_text() for t in ax.texts) == sorted(f"{w:.2f}" for w in W_ATT.ravel())
    frames = [p for p in ax.patches if isinstance(p, Rectangle) and not p.get_fill()]
    assert all(tuple(p.get_edgecolor()[:3]) == to_rgb(FRAME_COLOR) for p in frames)
    framed = {(round(p.get_y() + p.get_height() / 2), round(p.get_x() + p.get_width() / 2)) for p in frames}
    assert framed == {(i, j) for i in range(4) for j in range(4) if PATH[i, j] > 0 or i == j}
    assert "A + I" in ax.get_title() and min(t.get_fontsize() for t in ax.texts) >= 10
    with pytest.raises(ValueError, match="name must be one of the models"):
        plots.plot_complete_over_path(models, graph.AttentionGraph(graph.graph_mask(PATH), PEOPLE), name="GATv2")


# --- Exercises -------------------------------------------------------------------------------------

def _rankings(e):
    return {tuple(np.argsort(-row, kind="stable")) for row in np.asarray(e)}


def _leaky(x, slope=0.2):
    return np.where(x >= 0, x, slope * x)


@pytest.mark.build
def test_exercise_gatv2_ranks_keys_per_query():
    rng = np.random.default_rng(int(bt.glued_float(PAGE, "ex_gat_seed")))
    Theta, a = graph.gat_parameters(2, 2, rng)
    Theta2, a2 = rng.normal(size=(4, 4)), rng.normal(size=4)
    H = X @ Theta
    e_gat = _leaky((H @ a[:2])[:, None] + (H @ a[2:])[None, :])
    e_v2 = np.array([[_leaky(np.concatenate([X[i], X[j]]) @ Theta2) @ a2 for j in range(4)]
                     for i in range(4)])  # one pair at a time, the formula as written
    np.testing.assert_allclose(graph.gatv2_scores(X, Theta2, a2), e_v2, rtol=0, atol=1e-14)
    assert bt.glued_float(PAGE, "ex_gat_rankings") == len(_rankings(e_gat)) == 1  # static attention
    assert bt.glued_float(PAGE, "ex_gatv2_rankings") == len(_rankings(e_v2)) > 1  # dynamic


def test_gatv2_scores_refuses_mismatched_parameters():
    with pytest.raises(ValueError, match="Theta must have 2 d_in rows"):
        graph.gatv2_scores(X, np.ones((3, 4)), np.ones(4))
    with pytest.raises(ValueError, match="a must have d_out entries"):
        graph.gatv2_scores(X, np.ones((4, 4)), np.ones(3))


@pytest.mark.build
def test_exercise_mean_weights_follow_the_receivers_degree():
    deg = PATH.sum(axis=1) + 1  # neighbours and self
    assert bt.glued_float(PAGE, "ex_mean_ana_carla") == pytest.approx(1 / deg[1], abs=1e-15)
    assert bt.glued_float(PAGE, "ex_mean_bruno_diego") == pytest.approx(1 / deg[2], abs=1e-15)


@pytest.mark.build
def test_exercise_path_and_causal_masks_intersect():
    M = ((PATH + np.eye(4)) > 0) & np.tri(4, dtype=bool)
    _, W = oracles.attention(X, X, X, M)
    assert bt.glued_float(PATTERNS, "ex_pc_edges") == M.sum() == 7  # four loops, three edges back
    assert bt.glued_float(PATTERNS, "ex_pc_carla") == W[0, 0] == 1.0
    assert bt.glued_float(PATTERNS, "ex_pc_ana_carla") == pytest.approx(W[1, 0], abs=1e-15)
    assert bt.glued_float(PATTERNS, "ex_pc_diego_bruno") == pytest.approx(W[3, 2], abs=1e-15)
    assert np.count_nonzero(W[1]) == 2  # Ana: Carla and herself

# --- The orientation in PyG / DGL terms and the two masking idioms ---------------------------------

def test_message_edge_index_puts_the_message_source_in_row_0():
    W = np.array([[0.0, 0.7, 0.3], [0.0, 1.0, 0.0], [0.5, 0.0, 0.5]])
    index = graph.message_edge_index(graph.AttentionGraph(W, "abc"))
    assert index.shape == (2, 5) and index.dtype == np.int64
    # Scatter-add of the messages V[source] * weight into the targets, the way PyG aggregates,
    # is the book's Y = W V.
    V = np.arange(6.0).reshape(3, 2)
    src, dst = index
    Y = np.zeros_like(V)
    np.add.at(Y, dst, W[dst, src][:, None] * V[src])
    np.testing.assert_allclose(Y, W @ V, rtol=0, atol=1e-15)


def test_the_replacing_idiom_leaks_only_when_allowed_scores_reach_the_constant():
    allowed = np.array([[True, True, False]])
    replace = lambda S: ref_softmax(np.where(allowed, S, -1e9))  # noqa: E731, masked_fill(~M, -1e9)
    # A forbidden score far above the allowed ones: replacing removes it exactly, adding leaks.
    S = np.array([[0.0, 1.0, 2e9]])
    assert replace(S)[0, 2] == 0.0
    assert ref_softmax(S + np.where(allowed, 0.0, -1e9))[0, 2] > 0.5
    # Allowed scores down at the constant's size: replacing leaks.
    assert replace(np.array([[-1e9, -1e9, 5.0]]))[0, 2] > 0.3
    # An empty row: replacing spreads the attention uniformly over every key.
    np.testing.assert_allclose(ref_softmax(np.full((1, 3), -1e9)), np.full((1, 3), 1 / 3), rtol=1e-15)


def test_prose_claim_gcn_is_mean_aggregation_exactly_when_each_component_is_regular():
    """'GCN joins this family exactly when, in each connected component, every node has the same degree.'"""
    cycle = np.roll(np.eye(5), 1, axis=1) + np.roll(np.eye(5), -1, axis=1)  # C_5: every degree 2
    two = np.zeros((7, 7))
    two[:5, :5] = cycle
    two[5, 6] = two[6, 5] = 1.0  # plus a separate edge: components of degrees 2 and 1
    for A in (cycle, two):
        np.testing.assert_allclose(ref_gcn(A), ref_mean(A), rtol=0, atol=1e-15)
        np.testing.assert_allclose(graph.gcn_propagation(A).sum(axis=1), 1.0, rtol=0, atol=1e-15)
    rows = ref_gcn(PATH).sum(axis=1)  # the path is not regular: Carla's row does not sum to 1
    assert abs(rows[C] - 1) > 0.05
# --- From fixed to computed: the explorable's path (graph.fixed_to_computed) ----------------------

def _glued_state(page: str, key: str) -> dict:
    """The JSON state a page glued for an explorable (explorables.explorable_data)."""
    html = bt.glue_data(page)[key]["data"]["text/html"]
    return json.loads(re.search(r"<script[^>]*>(.*)</script>", html, re.S).group(1))


def test_fixed_to_computed_passes_through_three_of_the_five_models():
    from attention_graph.worked_example import embeddings, path_adjacency

    X, A = embeddings(), path_adjacency()
    ends = {0.0: graph.mean_aggregation(A, X), 1.0: graph.masked_attention(X, X, X, A),
            2.0: graph.complete_attention(X, X, X)}
    for t, (Y_model, g_model) in ends.items():
        Y, g = graph.fixed_to_computed(X, A, t)
        assert np.array_equal(g.W, g_model.W) and np.array_equal(Y, Y_model)


@pytest.mark.parametrize("t", [0.3, 0.7, 1.25, 1.8])
def test_fixed_to_computed_is_its_formula(t):
    rng = np.random.default_rng(int(t * 100))
    X = rng.normal(size=(5, 3))  # (5, 3)
    A = np.triu((rng.random((5, 5)) < 0.4).astype(float), 1)  # (5, 5)
    A = A + A.T
    M = (A + np.eye(5)) > 0  # (5, 5)
    s, lam = min(t, 1.0), max(t - 1.0, 0.0)
    E = np.exp(s * X @ X.T / np.sqrt(3)) * np.where(M, 1.0, lam)  # (5, 5), the weights before normalising
    W_want = E / E.sum(axis=1, keepdims=True)  # (5, 5)
    Y, g = graph.fixed_to_computed(X, A, t)
    assert np.allclose(g.W, W_want, rtol=0, atol=1e-13)
    assert np.allclose(Y, W_want @ X, rtol=0, atol=1e-13)
    assert (g.W[~M] == 0).all() == (t <= 1.0)


@pytest.mark.build
def test_the_page_glues_the_explorables_states_as_the_package_computes_them():
    from attention_graph.worked_example import embeddings, path_adjacency

    state = _glued_state("graph", "explore-fixed")
    X, A = embeddings(), path_adjacency()
    assert state["ts"][0] == 0.0 and state["ts"][-1] == 2.0 and 1.0 in state["ts"]
    for t, shown in zip(state["ts"], state["states"]):
        Y, g = graph.fixed_to_computed(X, A, t)
        assert np.array_equal(shown["W"], g.W) and np.array_equal(shown["Y"], Y)
    models = graph.five_models(X, A, np.random.default_rng(int(bt.glued_float("graph", "gat_seed"))), PEOPLE)
    assert state["model_names"] == list(graph.MODEL_NAMES)
    for name, (_, g) in models.items():
        assert np.array_equal(state["models"][name], g.W)


@pytest.mark.build
def test_exercise_attention_graph_is_directed():
    """The pair whose weights differ most, from the oracle's weights; GCN's Â is symmetric."""
    _, W = oracles.attention(X, X, X)
    gap = np.abs(W - W.T)
    i, j = np.unravel_index(gap.argmax(), gap.shape)
    assert bt.glued_plain(PAGE, "ex_dir_i").strip("'") == PEOPLE[i]
    assert bt.glued_plain(PAGE, "ex_dir_j").strip("'") == PEOPLE[j]
    assert bt.glued_float(PAGE, "ex_dir_ij") == pytest.approx(W[i, j], abs=1e-15)
    assert bt.glued_float(PAGE, "ex_dir_ji") == pytest.approx(W[j, i], abs=1e-15)
    assert bt.glued_float(PAGE, "ex_dir_gap") == pytest.approx(gap.max(), abs=1e-15)
    assert gap.max() > 0.1
    Z = np.exp(X @ X.T / np.sqrt(2)).sum(axis=1)  # each receiver's normaliser
    assert W[i, j] / W[j, i] == pytest.approx(Z[j] / Z[i], rel=1e-12)  # the solution's ratio
    assert bt.glued_float(PAGE, "ex_dir_gcn") <= 1e-16


# --- Broken variants ------------------------------------------------------------------------------

gr = importlib.import_module("attention_graph.graph")


sm = importlib.import_module("attention_graph.softmax")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # graph
    "eq-message-passing": (gr, "display_message_passing", after(gr.display_message_passing, lambda eq: eq.replace(
        lambda e: isinstance(e, sp.Indexed) and e.base.label.name == "A", lambda e: e.base[e.indices[::-1]])),
        "the display sums A_ji instead of A_ij"),
    "thm-attention-is-message-passing": (gr, "message_passing", lambda graph, V: graph.W.T @ np.asarray(V),
                                         "messages flow along the edges, i → j"),
    "eq-gcn-propagation": (gr, "gcn_propagation", lambda A, **kw: gr.mean_propagation(A),
                           "one-sided normalisation"),
    "eq-mean-aggregation": (gr, "display_mean_aggregation", after(gr.display_mean_aggregation, lambda eq: eq.replace(
        lambda e: isinstance(e, sp.MatPow) and e.exp == -1, lambda e: e.base)),
        "the display multiplies by D̃ instead of dividing"),
    "eq-gat-scores": (gr, "gat_scores", after(gr.gat_scores, lambda e: e.T), "query and key swapped"),
    "eq-neighbour-softmax": (gr, "display_neighbour_softmax", after(gr.display_neighbour_softmax, lambda eq: sp.Eq(
        eq.lhs, eq.rhs.xreplace({sp.IndexedBase("M")[eq.lhs.indices]: 1}), evaluate=False)),
        "the display forgets M_ij in the numerator"),
    "thm-constant-scores-mean-aggregation": (gr, "mean_propagation", lambda A, self_loops=True: gr.gcn_propagation(A),
                                             "GCN in place of the mean"),
    "thm-masked-softmax-neighbours": (gr, "product_mask_softmax",
                                      lambda S, allowed: sm.softmax(S, allowed),
                                      "S ∘ M computed as the exact mask"),
    "thm-gat-is-masked-attention": (gr, "gat", after(gr.gat, lambda r: (r[0] + 1.0, r[1])),
                                    "GAT output shifted"),
    "thm-permutation-equivariance": (gr, "sym_scores", lambda Q, K: Q * K.T / sp.sqrt(Q.cols) + sp.Matrix(
        Q.rows, K.rows, lambda r, c: c), "scores with a bias by key position"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    # The graph chapter's models
    ("graph_mask", lambda: ag.graph_mask(np.ones((2, 3))), ValueError, "A must be square"),
    ("causal_mask", lambda: ag.causal_mask(-1), ValueError, "n must be a positive integer"),
    ("causal_mask", lambda: ag.causal_mask(2.5), TypeError, "n must be a positive integer"),
    ("message_passing", lambda: ag.message_passing(ag.AttentionGraph(np.eye(3), "abc"), np.ones((4, 2))),
     ValueError, "V must have one row per node"),
    ("message_passing", lambda: ag.message_passing(np.eye(3), ok), TypeError, "graph must be an AttentionGraph"),
    ("message_edge_index", lambda: ag.message_edge_index(np.eye(3)), TypeError, "graph must be an AttentionGraph"),
    ("gcn_propagation", lambda: ag.gcn_propagation(-path), ValueError, "A must be non-negative"),
    ("mean_propagation", lambda: ag.mean_propagation(np.ones((2, 3))), ValueError, "A must be square"),
    ("gcn", lambda: ag.gcn(path, np.ones((4, 2))), ValueError, "one row per node"),
    ("mean_aggregation", lambda: ag.mean_aggregation(path, nan), ValueError, "X must be finite"),
    ("gat_parameters", lambda: ag.gat_parameters(2, 2, rng=0), TypeError, "rng must be a numpy.random.Generator"),
    ("gat_parameters", lambda: ag.gat_parameters(0, 2, np.random.default_rng(0)),
     ValueError, "d_in must be a positive integer"),
    ("gat_scores", lambda: ag.gat_scores(ok, np.ones((3, 2)), np.ones(4)), ValueError, "X and Theta must share d_in"),
    ("gat", lambda: ag.gat(path, ok, np.ones((2, 2)), np.ones(3)), ValueError, "a must have 2 d_out entries"),
    ("complete_attention", lambda: ag.complete_attention(ok, ok, ok, labels="ab"),
     ValueError, "labels must name the 3 nodes"),
    ("masked_attention", lambda: ag.masked_attention(ok, ok, ok, np.ones((2, 2))),
     ValueError, r"mask must have shape \(3, 3\)"),
    ("masked_attention", lambda: ag.masked_attention(ok, ok, ok, np.zeros((3, 3)), self_loops=False),
     ValueError, "have no neighbour"),
    ("additive_mask_softmax", lambda: ag.additive_mask_softmax(np.ones((3, 3)), np.ones((3, 3))),
     TypeError, "mask must be a boolean array"),
    ("product_mask_softmax", lambda: ag.product_mask_softmax(np.ones((3, 3)), np.ones((3, 2), bool)),
     TypeError, "mask must be a boolean array of shape"),
    ("permutation_matrix", lambda: ag.permutation_matrix([0, 0, 1]), ValueError, "order must be a permutation"),
    ("relabel", lambda: ag.relabel(ag.AttentionGraph(np.eye(3), "abc"), [0, 1]),
     ValueError, "order must permute the 3 nodes"),
    ("five_models", lambda: ag.five_models(ok, path, rng=1), TypeError, "rng must be a numpy.random.Generator"),
]
