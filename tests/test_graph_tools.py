"""Graph tools on attention: each tool against an independent oracle, the theorems on random cases, and
what the graph_tools chapter shows, recomputed with plain numpy, scipy and networkx."""

import importlib

import networkx as nx
import numpy as np
import pytest
import scipy.linalg as sl
import sympy as sp

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import AttentionGraph
from attention_graph.graph_tools import (
    attention_rollout,
    fiedler_vector,
    head_graphs,
    laplacian_spectrum,
    mean_graph,
    multigraph,
    pagerank,
    random_walk_laplacian,
    residual_attention_stack,
    spectral_bipartition,
    stationary_distribution,
    symmetrised,
)
from bad_inputs import strs

PAGE = "graph_tools"
PEOPLE = ("Carla", "Ana", "Bruno", "Diego")
# The worked example's inputs (the article's embeddings, as recovered); every output is recomputed here.
X_WORKED = oracles.X_WORKED


softmax_rows = oracles.softmax


def worked_W():
    return softmax_rows(X_WORKED @ X_WORKED.T / np.sqrt(2))


def random_stochastic(rng, n, density=1.0):
    """A random row-stochastic matrix; with density < 1, a random mask that keeps the diagonal."""
    M = rng.random((n, n))
    if density < 1.0:
        keep = (rng.random((n, n)) < density) | np.eye(n, dtype=bool)
        M = np.where(keep, M, 0.0)
    return M / M.sum(axis=1, keepdims=True)


def stationary_by_eig(W):
    """Left eigenvector of W for eigenvalue 1, normalised to sum 1 (numpy.linalg.eig of Wᵀ)."""
    vals, vecs = np.linalg.eig(W.T)
    v = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    return v / v.sum()


# --- The tools against independent oracles ---------------------------------------------------------

@pytest.mark.parametrize("seed, density", [(0, 1.0), (1, 1.0), (2, 0.3), (3, 0.5)])
def test_pagerank_matches_networkx_on_the_digraph(seed, density):
    rng = np.random.default_rng(seed)
    W = random_stochastic(rng, 12, density)
    g = AttentionGraph(W, [f"v{i}" for i in range(12)])
    for alpha in (0.5, 0.85, 0.99):
        expected = nx.pagerank(g.to_networkx(), alpha=alpha, tol=1e-15, max_iter=100_000)
        np.testing.assert_allclose(pagerank(g, damping=alpha), [expected[v] for v in g.labels],
                                   rtol=0, atol=1e-10)


def test_pagerank_orientation_walker_follows_attention():
    # Everyone attends to node 0; node 0 attends to itself. The walker ends up at node 0.
    W = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.0, 0.5]])
    r = pagerank(W, damping=0.85)
    assert r[0] > 0.8 and r[0] == r.max()
    damped = (1 - 0.85) / 3 + 0.85 * r @ W  # eq-pagerank, written out
    np.testing.assert_allclose(r, damped, atol=1e-14)


@pytest.mark.parametrize("seed, density", [(0, 1.0), (5, 0.4)])
def test_stationary_distribution_matches_numpy_eig(seed, density):
    W = random_stochastic(np.random.default_rng(seed), 9, density)
    # a random mask with the diagonal kept can still be reducible; use it only when π is unique
    if np.linalg.matrix_rank(np.eye(9) - W) < 8:
        pytest.skip("this random mask made a reducible walk")
    np.testing.assert_allclose(stationary_distribution(W), stationary_by_eig(W), atol=1e-12)


def test_stationary_refuses_a_walk_with_two_closed_classes():
    W = np.array([[0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 0.2, 0.8], [0, 0, 0.6, 0.4]])
    with pytest.raises(ValueError, match="more than one stationary distribution"):
        stationary_distribution(W)
    r = pagerank(W)  # PageRank is unique even here
    assert abs(r.sum() - 1) < 1e-12 and (r > 0).all()


@pytest.mark.parametrize("bad, err, message", [
    ([[0.5, 0.4], [0.5, 0.5]], ValueError, "row 0 sums to"),
    ([[1.0, 0.0]], ValueError, "square"),
    ([[np.nan, 1.0], [0.5, 0.5]], ValueError, "finite"),
    ([[-0.5, 1.5], [0.5, 0.5]], ValueError, "non-negative"),
])
def test_markov_tools_refuse_bad_W(bad, err, message):
    for tool in (stationary_distribution, pagerank):
        with pytest.raises(err, match=message):
            tool(bad)


@pytest.mark.parametrize("damping, err", [(1.0, ValueError), (-0.1, ValueError), (True, TypeError),
                                          ("0.85", TypeError)])
def test_pagerank_refuses_bad_damping(damping, err):
    with pytest.raises(err, match="damping"):
        pagerank(np.full((2, 2), 0.5), damping=damping)


def test_random_walk_laplacian_of_a_general_graph():
    W = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0], [3.0, 3.0, 2.0]])
    expected = np.eye(3) - W / W.sum(axis=1)[:, None]
    np.testing.assert_allclose(random_walk_laplacian(W), expected, atol=1e-15)
    with pytest.raises(ValueError, match="in-strength 0"):
        random_walk_laplacian([[0.0, 0.0], [1.0, 0.0]])


def test_laplacian_spectrum_matches_scipy_and_the_trace():
    W = random_stochastic(np.random.default_rng(11), 7)
    lam = laplacian_spectrum(W)
    expected = sl.eigvals(np.eye(7) - W)
    np.testing.assert_allclose(np.sort_complex(lam), np.sort_complex(expected), atol=1e-12)
    assert abs(lam.sum() - np.trace(np.eye(7) - W)) < 1e-12
    assert (np.diff(lam.real) >= -1e-12).all()  # sorted by real part


def test_symmetrised():
    W = random_stochastic(np.random.default_rng(3), 5)
    np.testing.assert_allclose(symmetrised(W).W, (W + W.T) / 2)


def test_fiedler_vector_solves_the_generalised_problem():
    W = random_stochastic(np.random.default_rng(4), 8, 0.6)
    A_s = (W + W.T) / 2
    D = np.diag(A_s.sum(axis=1))
    lam, U = sl.eigh(D - A_s, D)  # scipy's generalised solver: independent of the package
    lam2, u = fiedler_vector(W)
    assert abs(lam2 - lam[1]) < 1e-10
    np.testing.assert_allclose((D - A_s) @ u, lam2 * D @ u, atol=1e-10)
    assert abs(u @ D @ u - 1) < 1e-10
    assert min(np.abs(u - U[:, 1]).max(), np.abs(u + U[:, 1]).max()) < 1e-8
    groups = spectral_bipartition(W)
    assert groups[0] == 0
    assert set(np.flatnonzero(groups)) in ({i for i in range(8) if U[i, 1] > 0},
                                           {i for i in range(8) if U[i, 1] < 0})


def test_spectral_bipartition_finds_two_planted_blocks():
    rng = np.random.default_rng(9)
    M = rng.random((10, 10)) * 0.05
    M[:5, :5] += 1.0
    M[5:, 5:] += 1.0
    perm = rng.permutation(10)
    W = M[perm][:, perm]
    W = W / W.sum(axis=1, keepdims=True)
    groups = spectral_bipartition(W)
    truth = (perm >= 5).astype(int)
    assert (groups == truth).all() or (groups == 1 - truth).all()


def test_spectral_bipartition_refuses_undetermined_splits():
    disconnected = np.array([[0.5, 0.5, 0, 0], [0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5], [0, 0, 0.5, 0.5]])
    with pytest.raises(ValueError, match="disconnected"):
        spectral_bipartition(disconnected)
    with pytest.raises(ValueError, match="repeated"):
        spectral_bipartition(np.full((4, 4), 0.25))  # complete graph: λ₂ = λ₃ = λ₄


def test_head_graphs_by_hand():
    rng = np.random.default_rng(6)
    Q, K = rng.standard_normal((5, 6)), rng.standard_normal((5, 6))
    mask = rng.random((5, 5)) < 0.6
    np.fill_diagonal(mask, True)
    heads = head_graphs(Q, K, 2, "abcde", mask)
    for h in range(2):
        Wh = softmax_rows(Q[:, 3 * h:3 * h + 3] @ K[:, 3 * h:3 * h + 3].T / np.sqrt(3), mask)
        np.testing.assert_allclose(heads[h].W, Wh, atol=1e-14)
    with pytest.raises(ValueError, match="not divisible"):
        head_graphs(Q, K, 4, "abcde")
    with pytest.raises(ValueError, match="n_heads"):
        head_graphs(Q, K, 0, "abcde")


def test_multigraph_has_one_edge_per_head():
    rng = np.random.default_rng(8)
    heads = [AttentionGraph(random_stochastic(rng, 4, 0.5), "abcd") for _ in range(3)]
    G = multigraph(heads)
    assert isinstance(G, nx.MultiDiGraph)
    assert G.number_of_edges() == sum(int((g.W > 0).sum()) for g in heads)
    for h, g in enumerate(heads):
        for i, j in zip(*np.nonzero(g.W)):
            assert G["abcd"[i]]["abcd"[j]][h]["weight"] == g.W[i, j]


def test_mean_graph_is_row_stochastic_and_checks_nodes():
    rng = np.random.default_rng(10)
    a, b = (AttentionGraph(random_stochastic(rng, 3), "xyz") for _ in range(2))
    np.testing.assert_allclose(mean_graph([a, b]).W, (a.W + b.W) / 2)
    with pytest.raises(ValueError, match="same nodes"):
        mean_graph([a, AttentionGraph(b.W, "xyw")])
    with pytest.raises(ValueError, match="empty"):
        mean_graph([])


def test_attention_rollout_by_hand():
    rng = np.random.default_rng(12)
    Ws = [random_stochastic(rng, 5) for _ in range(3)]
    for rho in (0.0, 0.5, 0.9):
        At = [rho * np.eye(5) + (1 - rho) * W for W in Ws]
        np.testing.assert_allclose(attention_rollout(Ws, residual=rho).W, At[2] @ At[1] @ At[0],
                                   atol=1e-14)
    with pytest.raises(ValueError, match="residual"):
        attention_rollout(Ws, residual=1.5)
    with pytest.raises(TypeError, match="residual"):
        attention_rollout(Ws, residual=None)
    with pytest.raises(ValueError, match="row-stochastic"):
        attention_rollout([Ws[0], 2 * Ws[1]])


# --- The theorems, on random cases ------------------------------------------------------------------

@pytest.mark.build
def test_thm_out_strength_sums_to_n():
    for seed in range(5):
        W = random_stochastic(np.random.default_rng(seed), 3 + seed, 0.5)
        assert abs(AttentionGraph(W, [str(i) for i in range(3 + seed)]).out_strength().sum() - (3 + seed)) < 1e-12
    assert bt.glued_float(PAGE, "s_out_total") == pytest.approx(4, abs=1e-12)


def test_thm_symmetric_scores_reversible():
    rng = np.random.default_rng(13)
    S = rng.standard_normal((6, 6))
    S = S + S.T
    W = softmax_rows(S)
    d = np.exp(S).sum(axis=1)
    pi = d / d.sum()
    np.testing.assert_allclose(stationary_distribution(W), pi, atol=1e-12)
    np.testing.assert_allclose(pi[:, None] * W, (pi[:, None] * W).T, atol=1e-14)
    assert np.abs(np.linalg.eigvals(W).imag).max() < 1e-12
    # Without symmetry detailed balance fails: the hypothesis is needed.
    S2 = rng.standard_normal((6, 6))
    W2 = softmax_rows(S2)
    pi2 = stationary_by_eig(W2)
    assert np.abs(pi2[:, None] * W2 - (pi2[:, None] * W2).T).max() > 1e-3


def test_thm_pagerank_unique():
    rng = np.random.default_rng(14)
    for density in (1.0, 0.3):
        W = random_stochastic(rng, 10, density)
        for alpha in (0.0, 0.5, 0.85):
            r = pagerank(W, damping=alpha)
            assert abs(r.sum() - 1) < 1e-12 and (r > 0).all()
            # Neumann series, summed independently
            term, series = np.ones(10) * (1 - alpha) / 10, np.zeros(10)
            for _ in range(400):
                series, term = series + term, alpha * W.T @ term
            np.testing.assert_allclose(r, series, atol=1e-12)


def test_thm_laplacian_disc():
    rng = np.random.default_rng(15)
    for density in (1.0, 0.5, 0.2):
        for _ in range(5):
            W = random_stochastic(rng, 15, density)
            lam = sl.eigvals(np.eye(15) - W)
            assert (np.abs(lam - 1) <= 1 + 1e-12).all()
            assert np.abs(lam).min() < 1e-12
            np.testing.assert_allclose((np.eye(15) - W) @ np.ones(15), 0, atol=1e-14)


def test_thm_rollout_exact():
    rng = np.random.default_rng(16)
    X0 = rng.standard_normal((6, 3))
    for rho in (0.0, 0.3, 0.5):
        XL, layers = residual_attention_stack(X0, 4, "abcdef", residual=rho)
        X, Ws = X0.copy(), []
        for _ in range(4):  # the stack, independently
            W = softmax_rows(X @ X.T / np.sqrt(3))
            Ws.append(W)
            X = rho * X + (1 - rho) * W @ X
        np.testing.assert_allclose(XL, X, atol=1e-13)
        R = np.eye(6)
        for W in Ws:
            R = (rho * np.eye(6) + (1 - rho) * W) @ R
        np.testing.assert_allclose(R @ X0, XL, atol=1e-12)
        np.testing.assert_allclose(attention_rollout(layers, rho).W, R, atol=1e-13)
        np.testing.assert_allclose(R.sum(axis=1), 1, atol=1e-13)


# --- What the page shows ------------------------------------------------------------------------------

@pytest.mark.build
def test_glued_strengths():
    W = worked_W()
    s_out = W.sum(axis=0)  # the column sums: the weight on the arrows leaving each node
    assert bt.glued_float(PAGE, "s_out_most") == pytest.approx(s_out.max(), abs=1e-12)
    assert bt.glued_float(PAGE, "s_out_least") == pytest.approx(s_out.min(), abs=1e-12)
    # "Bruno's out-strength is the largest ... Carla's the smallest"
    assert PEOPLE[int(np.argmax(s_out))] == "Bruno" and PEOPLE[int(np.argmin(s_out))] == "Carla"
    assert bt.glued_float(PAGE, "s_in_max_dev") < 1e-12


@pytest.mark.build
def test_glued_stationary_distribution_is_the_closed_form():
    d = np.exp(X_WORKED @ X_WORKED.T / np.sqrt(2)).sum(axis=1)
    pi = d / d.sum()
    np.testing.assert_allclose(stationary_by_eig(worked_W()), pi, atol=1e-12)
    assert bt.glued_float(PAGE, "pi_bruno") == pytest.approx(pi[2], abs=1e-12)
    assert bt.glued_float(PAGE, "pi_carla") == pytest.approx(pi[0], abs=1e-12)
    assert pi.argmax() == 2 and pi.argmin() == 0  # largest at Bruno, smallest at Carla
    assert bt.glued_float(PAGE, "pi_closed_form_dev") < 1e-12


@pytest.mark.build
def test_glued_pagerank_and_the_claims_about_it():
    W = worked_W()
    alpha = bt.glued_float(PAGE, "damping")
    assert alpha == 0.85
    r_nx = nx.pagerank(AttentionGraph(W, PEOPLE).to_networkx(), alpha=alpha, tol=1e-15, max_iter=10**5)
    r = np.array([r_nx[p] for p in PEOPLE])
    assert bt.glued_float(PAGE, "pr_bruno") == pytest.approx(r[2], abs=1e-12)
    assert bt.glued_float(PAGE, "pr_carla") == pytest.approx(r[0], abs=1e-12)
    assert bt.glued_float(PAGE, "pr_nx_dev") < 1e-10
    d = np.exp(X_WORKED @ X_WORKED.T / np.sqrt(2)).sum(axis=1)
    pi = d / d.sum()
    assert bt.glued_float(PAGE, "pr_pi_dev") == pytest.approx(np.abs(r - pi).max(), abs=1e-10)
    # "they rank the four people in the same order": Bruno first, Carla last, for all three
    orders = [list(np.argsort(-v)) for v in (W.sum(axis=0), pi, r)]
    assert orders[0] == orders[1] == orders[2]
    assert orders[0][0] == 2 and orders[0][-1] == 0


@pytest.mark.build
def test_glued_laplacian_spectrum():
    lam = np.sort(sl.eigvals(np.eye(4) - worked_W()).real)
    assert np.abs(sl.eigvals(np.eye(4) - worked_W()).imag).max() < 1e-12  # "real"
    assert bt.glued_float(PAGE, "lam_1") < 1e-12
    assert bt.glued_float(PAGE, "lam_2") == pytest.approx(lam[1], abs=1e-12)
    assert bt.glued_float(PAGE, "lam_max") == pytest.approx(lam[-1], abs=1e-12)
    t = int(bt.glued_float(PAGE, "mix_steps"))
    d = np.exp(X_WORKED @ X_WORKED.T / np.sqrt(2)).sum(axis=1)
    dev = np.abs(np.linalg.matrix_power(worked_W(), t) - d / d.sum()).max()
    assert bt.glued_float(PAGE, "mix_dev") == pytest.approx(dev, rel=1e-9)
    gamma = np.abs(1 - np.sort_complex(sl.eigvals(np.eye(4) - worked_W()))[1:]).max()
    assert bt.glued_float(PAGE, "mix_rate") == pytest.approx(gamma, abs=1e-12)
    assert gamma == pytest.approx(1 - lam[1], abs=1e-12)  # "set by λ₂" on this real spectrum in [0, 1]
    assert lam[-1] <= 1  # "lies in [0, 1]"
    assert dev < 2 * gamma**t  # "roughly like γ^t"


@pytest.mark.build
def test_glued_communities_of_the_worked_example():
    W = worked_W()
    A_s = (W + W.T) / 2
    D = np.diag(A_s.sum(axis=1))
    lam, U = sl.eigh(D - A_s, D)
    u = U[:, 1] * np.sign(U[np.argmax(np.abs(U[:, 1])), 1])
    together = {frozenset(PEOPLE[i] for i in range(4) if u[i] > 0),
                frozenset(PEOPLE[i] for i in range(4) if u[i] <= 0)}
    assert together == {frozenset({"Carla", "Bruno"}), frozenset({"Ana", "Diego"})}
    assert bt.glued_float(PAGE, "fiedler_lam2") == pytest.approx(lam[1], abs=1e-12)
    assert bt.glued_float(PAGE, "u_ana") == pytest.approx(u[1], abs=1e-10)
    assert bt.glued_float(PAGE, "u_max_abs") == pytest.approx(np.abs(u).max(), abs=1e-10)
    assert np.argmin(np.abs(u)) == 1  # "Ana sits nearest the boundary"


@pytest.mark.build
def test_glued_heads_of_the_worked_example():
    heads = [softmax_rows(np.outer(X_WORKED[:, h], X_WORKED[:, h])) for h in range(2)]  # d_h = 1
    assert bt.glued_float(PAGE, "n_heads") == 2
    assert bt.glued_float(PAGE, "multi_edges") == 2 * 16
    assert bt.glued_float(PAGE, "uniform_share") == pytest.approx(heads[0][0, 0], abs=1e-15)
    # head 1: Carla uniform, Ana = Bruno = Diego rows; head 2: Ana uniform, Carla = Bruno rows
    np.testing.assert_allclose(heads[0][0], 0.25)
    np.testing.assert_allclose(heads[0][1], heads[0][2])
    np.testing.assert_allclose(heads[0][1], heads[0][3])
    np.testing.assert_allclose(heads[1][1], 0.25)
    np.testing.assert_allclose(heads[1][0], heads[1][2])
    splits = [spectral_bipartition(H).tolist() for H in heads]
    assert splits[0] == [0, 1, 1, 1]  # head 1 isolates Carla
    assert splits[1] == [0, 1, 0, 1]  # head 2: {Carla, Bruno} against {Ana, Diego}
    mean = (heads[0] + heads[1]) / 2
    assert bt.glued_float(PAGE, "mean_vs_single") == pytest.approx(np.abs(mean - worked_W()).max(), abs=1e-12)


@pytest.mark.build
def test_glued_rollout_of_the_worked_example():
    L = int(bt.glued_float(PAGE, "n_layers"))
    X, Ws = X_WORKED.copy(), []
    for _ in range(L):
        W = softmax_rows(X @ X.T / np.sqrt(2))
        Ws.append(W)
        X = 0.5 * X + 0.5 * W @ X
    R, R0 = np.eye(4), np.eye(4)
    for W in Ws:
        R = (0.5 * np.eye(4) + 0.5 * W) @ R
        R0 = W @ R0
    assert bt.glued_float(PAGE, "rollout_exact_dev") < 1e-12
    assert bt.glued_float(PAGE, "rollout_diag_min") == pytest.approx(np.diag(R).min(), abs=1e-12)
    spread = (R0.max(axis=0) - R0.min(axis=0)).max()
    assert bt.glued_float(PAGE, "rollout0_spread") == pytest.approx(spread, abs=1e-12)
    # "nearly identical rows" without the residual; the residual keeps the diagonal dominant
    assert spread < 0.05 and spread < 0.1 * np.diag(R).min()
    assert all(R[i, i] == R[i].max() for i in range(4))


# --- Exercises -------------------------------------------------------------------------------------

def _pagerank_by_power(W, alpha, steps=2000):
    n = len(W)
    r = np.full(n, 1 / n)
    for _ in range(steps):
        r = (1 - alpha) / n + alpha * r @ W
    return r


def _worked_weights(mask=None):
    return oracles.attention(X_WORKED, X_WORKED, X_WORKED, mask)[1]


@pytest.mark.build
def test_exercise_causal_pagerank_and_its_sink():
    W = _worked_weights(np.tril(np.ones((4, 4), dtype=bool)))
    r = _pagerank_by_power(W, 0.85)
    names = ["Carla", "Ana", "Bruno", "Diego"]
    assert bt.glued_plain("graph_tools", "ex_causal_top").strip("'") == names[int(np.argmax(r))] == "Carla"
    assert bt.glued_float("graph_tools", "ex_causal_top_rank") == pytest.approx(r.max(), abs=1e-12)
    assert bt.glued_float("graph_tools", "ex_causal_pi_first") == pytest.approx(1.0, abs=1e-12)
    pi = np.linalg.matrix_power(W, 4000)[2]  # from Bruno, the walk ends at Carla
    assert pi[0] == pytest.approx(1.0)


@pytest.mark.build
def test_exercise_damping_moves_pagerank_between_uniform_and_stationary():
    W = _worked_weights()
    pi = np.linalg.matrix_power(W, 200)[0]
    for name in ("half", "high"):
        alpha = bt.glued_float("graph_tools", f"ex_damp_{name}")
        gap = np.abs(_pagerank_by_power(W, alpha) - pi).max()
        assert bt.glued_float("graph_tools", f"ex_damp_{name}_gap") == pytest.approx(gap, abs=1e-10)
    assert bt.glued_float("graph_tools", "ex_damp_high_gap") < bt.glued_float("graph_tools", "ex_damp_half_gap")
    assert bt.glued_float("graph_tools", "ex_damp_half_gap") < bt.glued_float("graph_tools", "ex_damp_uniform_gap")
    assert bt.glued_float("graph_tools", "ex_damp_uniform_gap") == pytest.approx(np.abs(pi - 1 / 4).max())


@pytest.mark.build
def test_exercise_doubly_stochastic_gives_uniform_pagerank():
    W = (np.eye(4) + np.roll(np.eye(4), 1, axis=1)) / 2
    for alpha in (0.1, 0.5, 0.85, 0.99):
        np.testing.assert_allclose(_pagerank_by_power(W, alpha), 1 / 4, atol=1e-12)
    assert bt.glued_plain("graph_tools", "ex_doubly_uniform") == "True"


# --- Broken variants ------------------------------------------------------------------------------

gt = importlib.import_module("attention_graph.graph_tools")


gr = importlib.import_module("attention_graph.graph")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # graph_tools
    "thm-out-strength-sums-to-n": (gr.AttentionGraph, "out_strength", lambda self: self.W.max(axis=0),
                                   "the out-strength takes the largest weight, not the sum"),
    "eq-stationary": (gt, "stationary_distribution", lambda W: np.full(len(W), 1 / len(W)),
                      "the uniform distribution"),
    "eq-pagerank": (gt, "pagerank", lambda W, damping=0.85: np.linalg.solve(
        np.eye(len(W)) - damping * np.asarray(W, float), np.full(len(W), (1 - damping) / len(W))),
        "the walker goes from the attended to the attender"),
    "thm-pagerank-unique": (gt, "EXAMPLE", sp.Matrix([[sp.Rational(3, 2), sp.Rational(-1, 2), 0],
                                                       [0, 1, 0], [0, 0, 1]]),
                            "rows sum to 1 but an entry is negative: not a stochastic W"),
    "thm-symmetric-scores-reversible": (gt, "stationary_distribution",
                                        lambda W: np.full(len(W), 1 / len(W)), "the uniform distribution"),
    "eq-rw-laplacian": (gt, "random_walk_laplacian", lambda W: np.eye(len(W)) - np.asarray(W, float),
                        "D⁻¹ forgotten"),
    "thm-laplacian-disc": (gt, "laplacian_spectrum", after(gt.laplacian_spectrum, lambda lam: 3 * lam),
                           "eigenvalues outside the disc"),
    "eq-spectral-bipartition": (gt, "spectral_bipartition", lambda W: np.array([0, 1, 0, 1]),
                                "an alternating split"),
    "eq-head-weights": (gt, "head_graphs", after(gt.head_graphs, lambda heads: heads[::-1]),
                        "heads in the wrong order"),
    "eq-rollout": (gt, "attention_rollout", lambda layers, residual=0.5: gr.AttentionGraph(
        np.linalg.multi_dot([np.eye(len(np.asarray(layers[0])))] + [
            residual * np.eye(len(np.asarray(W))) + (1 - residual) * np.asarray(W) for W in layers]),
        [str(k) for k in range(len(np.asarray(layers[0])))]), "layers multiplied in the wrong order"),
    "thm-rollout-exact": (gt, "residual_attention_stack", after(gt.residual_attention_stack,
                                                                lambda r: (r[0] + 1e-6, r[1])),
                          "the stack's output shifted"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("attention_rollout", lambda: ag.attention_rollout([]), ValueError, "layers is empty"),
    ("attention_rollout", lambda: ag.attention_rollout([ag.AttentionGraph(np.eye(3), "abc"),
                                                        ag.AttentionGraph(np.eye(2), "ab")]),
     ValueError, "every graph must be on the same nodes"),
    ("head_graphs", lambda: ag.head_graphs(np.ones((3, 4)), np.ones((3, 4)), 3, "abc"),
     ValueError, "not divisible into n_heads = 3"),
    ("laplacian_spectrum", lambda: ag.laplacian_spectrum(np.ones((2, 3))), ValueError, "must be a square matrix"),
    ("mean_graph", lambda: ag.mean_graph([]), ValueError, "graphs is empty"),
    ("pagerank", lambda: ag.pagerank(np.eye(3), damping=1.5), ValueError, r"damping must be in \[0, 1\)"),
    ("pagerank", lambda: ag.pagerank(np.full((2, 2), 0.7)), ValueError, "row-stochastic"),
    ("random_walk_laplacian", lambda: ag.random_walk_laplacian(-np.ones((2, 2))), ValueError, "non-negative"),
    ("spectral_bipartition", lambda: ag.spectral_bipartition(np.full((2, 2), np.nan)), ValueError, "must be finite"),
    ("stationary_distribution", lambda: ag.stationary_distribution(np.ones((2, 3))),
     ValueError, "must be a square matrix"),
    ("symmetrised", lambda: ag.symmetrised(strs), TypeError, "must hold real numbers"),
]
