"""The karate club chapter: the layer, the agreement scores, and every number and claim of the page,
recomputed by an independent pipeline (networkx for the data and PageRank, numpy for the layer, scipy
for the eigenproblems, pair counting for the adjusted Rand index)."""

import importlib
import itertools

import networkx as nx
import numpy as np
import pytest
import scipy.linalg as sl
from scipy.stats import spearmanr

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import karate
from attention_graph.positional import laplacian_pe

PAGE = "karate"
N = 34


softmax_rows = oracles.softmax


def nx_club():
    G = nx.karate_club_graph()
    A = nx.to_numpy_array(G, nodelist=range(N), weight=None)
    club = np.array([0 if G.nodes[v]["club"] == "Mr. Hi" else 1 for v in range(N)])
    return G, A, club


def independent_layer(seed, k=4, d=8, h=2):
    """The layer of eq-gt-layer written out in numpy (the positional encodings are an input here)."""
    _, A, _ = nx_club()
    P = laplacian_pe(A, k) * np.sqrt(N)
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((k, d)) / np.sqrt(k)
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))
    H = P @ C
    Q, K, V = H @ W_Q, H @ W_K, H @ W_V
    mask = (A + np.eye(N)) > 0
    dh = d // h
    Ws = [softmax_rows(Q[:, i * dh:(i + 1) * dh] @ K[:, i * dh:(i + 1) * dh].T / np.sqrt(dh), mask)
          for i in range(h)]
    Y = H + np.hstack([W @ V[:, i * dh:(i + 1) * dh] for i, W in enumerate(Ws)]) @ W_O
    return Y, Ws, np.mean(Ws, axis=0)


def fiedler_split(W):
    """Sign of the second generalised eigenvector of (D − A_s) u = λ D u (scipy), node 0 in group 0."""
    A_s = (W + W.T) / 2
    D = np.diag(A_s.sum(axis=1))
    lam, U = sl.eigh(D - A_s, D)
    groups = (U[:, 1] > 0).astype(int)
    return (groups if groups[0] == 0 else 1 - groups), lam


def ari_by_pairs(a, b):
    """Adjusted Rand index from the four pair counts (Steinley's form), pair by pair."""
    n11 = n10 = n01 = n00 = 0
    for s, t in itertools.combinations(range(len(a)), 2):
        same_a, same_b = a[s] == a[t], b[s] == b[t]
        n11 += same_a and same_b
        n10 += same_a and not same_b
        n01 += same_b and not same_a
        n00 += not same_a and not same_b
    return 2 * (n11 * n00 - n10 * n01) / ((n11 + n10) * (n10 + n00) + (n11 + n01) * (n01 + n00))


# --- The package's functions ------------------------------------------------------------------------

def test_club_graph_is_networkx_karate_club():
    G, A, club = nx_club()
    A2, club2, labels = karate.club_graph()
    np.testing.assert_array_equal(A2, A)
    np.testing.assert_array_equal(club2, club)
    assert labels == tuple(str(v) for v in range(N))
    assert G.number_of_edges() == int(A.sum()) // 2 and (A == A.T).all() and not np.diag(A).any()


@pytest.mark.parametrize("seed", [0, 3])
def test_graph_transformer_layer_matches_numpy(seed):
    A, _, labels = karate.club_graph()
    params = karate.init_projections(4, 8, np.random.default_rng(seed))
    Y, heads = karate.graph_transformer_layer(A, karate.standardised_pe(A, 4), params, 2, labels)
    Y_ref, Ws, _ = independent_layer(seed)
    np.testing.assert_allclose(Y, Y_ref, atol=1e-12)
    for g, W in zip(heads, Ws):
        np.testing.assert_allclose(g.W, W, atol=1e-14)
        assert ((g.W > 0) == ((A + np.eye(N)) > 0)).all()  # support = friendships + self-loops


def test_standardised_pe_has_unit_mean_square_columns():
    A, _, _ = karate.club_graph()
    P = karate.standardised_pe(A, 4)
    np.testing.assert_allclose((P**2).mean(axis=0), 1.0, atol=1e-12)


def test_layer_refuses_bad_input():
    A, _, _ = karate.club_graph()
    params = karate.init_projections(4, 8, np.random.default_rng(0))
    P = karate.standardised_pe(A, 4)
    with pytest.raises(ValueError, match="one row per node"):
        karate.graph_transformer_layer(A, P[:10], params, 2)
    with pytest.raises(ValueError, match="one row per column of P"):
        karate.graph_transformer_layer(A, P[:, :3], params, 2)
    with pytest.raises(ValueError, match="params lacks"):
        karate.graph_transformer_layer(A, P, {"C": params["C"]}, 2)
    with pytest.raises(ValueError, match="not divisible"):
        karate.graph_transformer_layer(A, P, params, 3)
    with pytest.raises(TypeError, match="rng"):
        karate.init_projections(4, 8, rng=0)
    with pytest.raises(ValueError, match="d must be a positive integer"):
        karate.init_projections(4, 0, np.random.default_rng(0))


def test_no_two_members_overlap_in_the_drawings():
    """club_layout keeps every two members apart: in the chapter's figure (plot_club_split), the px
    between two centres as drawn exceed a node's marker (190 pt², its diameter √190 pt); in the
    explorable (book/_ext/static/explore_karate.js: a 320 px square, 18 px margins, circles of
    radius 9.5 px), they exceed two radii."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from attention_graph import plots

    pos = plots.club_layout()  # (34, 2)
    far = np.linalg.norm(pos[:, None] - pos[None], axis=2) + np.eye(N) * 1e9  # (34, 34)
    A, club, labels = karate.club_graph()
    graph = ag.AttentionGraph(oracles.softmax(np.zeros((N, N)), mask=A + np.eye(N) > 0), labels)
    plots.use_book_style()
    fig = plots.plot_club_split(graph, club, pos)
    canvas = FigureCanvasAgg(fig)
    canvas.draw()
    drawn = fig.axes[0].transData.transform(pos)  # (34, 2) px
    apart = np.linalg.norm(drawn[:, None] - drawn[None], axis=2) + np.eye(N) * 1e9  # (34, 34)
    assert apart.min() > np.sqrt(190) * fig.dpi / 72
    scale = (320 - 36) / (pos.max(axis=0) - pos.min(axis=0)).max()  # px a unit, as the explorable sets it
    assert far.min() * scale > 2 * 9.5


@pytest.mark.parametrize("seed", range(6))
def test_adjusted_rand_index_by_pair_counting(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 2 + seed % 3, 20), rng.integers(0, 2, 20)
    assert karate.adjusted_rand_index(a, b) == pytest.approx(ari_by_pairs(a, b), abs=1e-12)
    assert karate.adjusted_rand_index(a, a) == 1.0
    assert karate.adjusted_rand_index(a, 5 - a) == pytest.approx(1.0)  # names do not matter


def test_accuracy_up_to_relabelling_by_brute_force():
    rng = np.random.default_rng(1)
    for _ in range(10):
        found, truth = rng.integers(0, 3, 12), rng.integers(0, 3, 12)
        best = max(np.mean([perm[f] == t for f, t in zip(found, truth)])
                   for perm in itertools.permutations(range(3)))
        assert karate.accuracy_up_to_relabelling(found, truth) == pytest.approx(best)


@pytest.mark.parametrize("a, b, err", [([0, 1], [0, 1, 1], ValueError), ([[0, 1]], [0, 1], ValueError),
                                       ([0.5, 1.0], [0, 1], TypeError), ([0], [1], ValueError)])
def test_agreement_scores_refuse_bad_input(a, b, err):
    with pytest.raises(err):
        karate.adjusted_rand_index(a, b)


def test_thm_ari_random_zero():
    # Exhaustively over every relabelling of a small split...
    a, b = [0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 2, 2]
    scores = [ari_by_pairs(a, p) for p in itertools.permutations(b)]  # all 5040 assignments
    assert abs(np.mean(scores)) < 1e-12
    assert max(scores) > 0.3 and min(scores) < 0  # the scores themselves are far from 0
    # ... and by simulation on the club.
    _, _, club = nx_club()
    rng = np.random.default_rng(0)
    sims = [ari_by_pairs(rng.permutation(club), club) for _ in range(2000)]
    assert abs(np.mean(sims)) < 3 * np.std(sims) / np.sqrt(len(sims))


# --- What the page shows ------------------------------------------------------------------------------

@pytest.mark.build
def test_glued_club_facts():
    G, A, club = nx_club()
    assert bt.glued_float(PAGE, "n_members") == G.number_of_nodes() == N
    assert bt.glued_float(PAGE, "n_friendships") == G.number_of_edges()
    assert bt.glued_float(PAGE, "n_hi") == (club == 0).sum()
    assert bt.glued_float(PAGE, "n_officer") == (club == 1).sum()
    assert G.nodes[int(bt.glued_float(PAGE, "leader_hi"))]["club"] == "Mr. Hi"
    assert G.nodes[int(bt.glued_float(PAGE, "leader_officer"))]["club"] == "Officer"
    # "only n_cross of its friendships join members whom the recorded split puts on different sides"
    cross = sum(G.nodes[u]["club"] != G.nodes[v]["club"] for u, v in G.edges())
    assert bt.glued_float(PAGE, "n_cross") == cross
    assert cross < G.number_of_edges() / 5  # "loosely tied halves"


@pytest.mark.build
def test_glued_layer_facts():
    _, A, _ = nx_club()
    seed = int(bt.glued_float(PAGE, "seed"))
    assert (bt.glued_float(PAGE, "k_pe"), bt.glued_float(PAGE, "d_model"),
            bt.glued_float(PAGE, "n_heads")) == (4, 8, 2)
    _, _, W = independent_layer(seed)
    # "its support is exactly the mask: two edges per friendship and one self-loop per member"
    assert bt.glued_float(PAGE, "n_edges_attention") == (W > 0).sum() == int(A.sum()) + N
    uniform = (A + np.eye(N)) / (A + np.eye(N)).sum(axis=1, keepdims=True)
    assert bt.glued_float(PAGE, "dev_uniform") == pytest.approx(np.abs(W - uniform).max(), abs=1e-12)
    # Unscaled encodings: "almost uniform"; scaled: "the weights do move"
    P = laplacian_pe(A, 4)
    rng = np.random.default_rng(seed)
    C = rng.standard_normal((4, 8)) / 2
    W_Q, W_K = (rng.standard_normal((8, 8)) / np.sqrt(8) for _ in range(2))
    H = P @ C
    Q, K = H @ W_Q, H @ W_K
    mask = (A + np.eye(N)) > 0
    Wu = np.mean([softmax_rows(Q[:, i:i + 4] @ K[:, i:i + 4].T / 2, mask) for i in (0, 4)], axis=0)
    dev_unscaled = np.abs(Wu - uniform).max()
    assert bt.glued_float(PAGE, "dev_uniform_unscaled") == pytest.approx(dev_unscaled, abs=1e-12)
    assert dev_unscaled < 0.02 < 0.2 < np.abs(W - uniform).max()


@pytest.mark.build
def test_glued_pagerank_claims():
    G, A, _ = nx_club()
    _, _, W = independent_layer(int(bt.glued_float(PAGE, "seed")))
    Gd = nx.DiGraph()
    Gd.add_weighted_edges_from((i, j, W[i, j]) for i, j in zip(*np.nonzero(W)))
    pr = nx.pagerank(Gd, alpha=0.85, tol=1e-15, max_iter=10**5)
    r = np.array([pr[i] for i in range(N)])
    top = np.argsort(-r)
    assert (bt.glued_float(PAGE, "pr_top1"), bt.glued_float(PAGE, "pr_top2")) == (top[0], top[1])
    assert bt.glued_float(PAGE, "pr_top1_value") == pytest.approx(r[top[0]], abs=1e-10)
    assert bt.glued_float(PAGE, "pr_top2_value") == pytest.approx(r[top[1]], abs=1e-10)
    assert bt.glued_float(PAGE, "pr_uniform_share") == pytest.approx(1 / N)
    # "the two leaders of the conflict", who "have the most friends"
    assert {top[0], top[1]} == {0, 33} == set(np.argsort(-A.sum(axis=1))[:2])
    rho = spearmanr(A.sum(axis=1), r.round(9)).statistic  # equivalent members tie
    assert bt.glued_float(PAGE, "spearman_pr_degree") == pytest.approx(rho, abs=1e-10)
    assert 0.3 < rho < 0.9  # correlated, "well short of 1"


@pytest.mark.build
def test_glued_spectrum_claims():
    _, A, _ = nx_club()
    _, Ws, W = independent_layer(int(bt.glued_float(PAGE, "seed")))
    vals, vecs = np.linalg.eig(W.T)
    pi = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    pi /= pi.sum()
    flow = pi[:, None] * W
    assert bt.glued_float(PAGE, "balance_violation") == pytest.approx(np.abs(flow - flow.T).max(), rel=1e-6)
    assert np.abs(flow - flow.T).max() > 1e-4  # "not reversible"
    imag = max(np.abs(sl.eigvals(np.eye(N) - Wh).imag).max() for Wh in Ws)
    assert bt.glued_float(PAGE, "imag_heads") == pytest.approx(imag, abs=1e-9)
    assert 1e-6 < imag < 0.05  # "the heads do, though barely"
    for M in Ws + [W]:
        assert (np.abs(sl.eigvals(np.eye(N) - M) - 1) <= 1 + 1e-9).all()  # inside the disc
    lam_att = np.sort(sl.eigvals(np.eye(N) - W).real)[1]
    U = (A + np.eye(N)) / (A + np.eye(N)).sum(axis=1, keepdims=True)
    lam_uni = np.sort(sl.eigvals(np.eye(N) - U).real)[1]
    assert bt.glued_float(PAGE, "lam2_attention") == pytest.approx(lam_att, abs=1e-9)
    assert bt.glued_float(PAGE, "lam2_uniform") == pytest.approx(lam_uni, abs=1e-9)
    assert lam_att < 0.15 and lam_uni < 0.15  # "small in both"


@pytest.mark.build
def test_glued_agreement_with_the_recorded_split():
    _, A, club = nx_club()
    _, _, W = independent_layer(int(bt.glued_float(PAGE, "seed")))
    found, _ = fiedler_split(W)
    ari = ari_by_pairs(found, club)
    acc = max((found == club).mean(), (found != club).mean())
    assert bt.glued_float(PAGE, "ari") == pytest.approx(ari, abs=1e-12)
    assert bt.glued_float(PAGE, "accuracy") == pytest.approx(acc, abs=1e-12)
    assert bt.glued_float(PAGE, "n_right") == round(acc * N)
    wrong = np.flatnonzero(found != club) if (found == club).mean() > 0.5 else np.flatnonzero(found == club)
    assert bt.glue_data(PAGE)["wrong_members"]["data"]["text/markdown"] == " and ".join(map(str, wrong))
    # "who in fact joined Mr. Hi's club": every misplaced member is on that recorded side
    side = {0: "Mr. Hi", 1: "Officer"}[int(club[wrong[0]])]
    assert (club[wrong] == club[wrong[0]]).all()
    assert bt.glue_data(PAGE)["wrong_side"]["data"]["text/markdown"] == side
    # Baselines: uniform attention on the mask and the positional encoding alone
    uniform = (A + np.eye(N)) / (A + np.eye(N)).sum(axis=1, keepdims=True)
    found_u, _ = fiedler_split(uniform)
    assert bt.glued_float(PAGE, "ari_uniform") == pytest.approx(ari_by_pairs(found_u, club), abs=1e-12)
    n_differ = min((found_u != found).sum(), (found_u == found).sum())
    assert bt.glued_float(PAGE, "n_differ_uniform") == n_differ
    phrase = bt.glue_data(PAGE)["uniform_split_phrase"]["data"]["text/markdown"]
    assert ("very same split" in phrase) == (n_differ == 0)
    pe_split = (laplacian_pe(A, 4)[:, 0] > 0).astype(int)
    ari_pe = ari_by_pairs(pe_split, club)
    assert bt.glued_float(PAGE, "ari_pe") == pytest.approx(ari_pe, abs=1e-12)
    assert ari_pe >= ari - 1e-12  # "the positional encoding alone does as well"


@pytest.mark.build
def test_glued_random_split_baseline():
    _, A, club = nx_club()
    _, _, W = independent_layer(int(bt.glued_float(PAGE, "seed")))
    found, _ = fiedler_split(W)
    n_draws, seed = int(bt.glued_float(PAGE, "n_draws")), int(bt.glued_float(PAGE, "null_seed"))
    rng = np.random.default_rng(seed)
    aris, accs = [], []
    for _ in range(n_draws):
        s = rng.permutation(found)
        aris.append(karate.adjusted_rand_index(s, club))  # checked against pair counting above
        accs.append(max((s == club).mean(), (s != club).mean()))
    aris, accs = np.array(aris), np.array(accs)
    assert bt.glued_float(PAGE, "null_ari_mean") == pytest.approx(aris.mean(), abs=1e-12)
    assert bt.glued_float(PAGE, "null_ari_q95") == pytest.approx(np.quantile(aris, 0.95), abs=1e-12)
    assert bt.glued_float(PAGE, "null_ari_max") == pytest.approx(aris.max(), abs=1e-12)
    assert bt.glued_float(PAGE, "null_acc_mean") == pytest.approx(accs.mean(), abs=1e-12)
    assert bt.glued_float(PAGE, "null_acc_q95") == pytest.approx(np.quantile(accs, 0.95), abs=1e-12)
    assert abs(aris.mean()) < 0.01 and accs.min() >= 0.5  # "can never fall below one half"
    assert bt.glued_float(PAGE, "ari") > aris.max()  # "far beyond chance"


@pytest.mark.build
def test_glued_seed_sweep():
    _, A, club = nx_club()
    n_seeds = int(bt.glued_float(PAGE, "n_seeds"))
    sweep = np.array([ari_by_pairs(fiedler_split(independent_layer(s)[2])[0], club) for s in range(n_seeds)])
    uniform = (A + np.eye(N)) / (A + np.eye(N)).sum(axis=1, keepdims=True)
    base = ari_by_pairs(fiedler_split(uniform)[0], club)
    assert bt.glued_float(PAGE, "sweep_median") == pytest.approx(np.median(sweep), abs=1e-12)
    assert bt.glued_float(PAGE, "sweep_min") == pytest.approx(sweep.min(), abs=1e-12)
    assert bt.glued_float(PAGE, "sweep_max") == pytest.approx(sweep.max(), abs=1e-12)
    above, equal, below = ((sweep > base + 1e-9).sum(), (np.abs(sweep - base) <= 1e-9).sum(),
                           (sweep < base - 1e-9).sum())
    assert (bt.glued_float(PAGE, "sweep_above"), bt.glued_float(PAGE, "sweep_equal"),
            bt.glued_float(PAGE, "sweep_below")) == (above, equal, below)
    # "mostly score the same as uniform attention", "hurt more often than they help", "no better on the whole"
    assert equal > above + below
    assert 1 <= above < below
    assert np.median(sweep) <= base + 1e-12


# --- Exercises -------------------------------------------------------------------------------------

def _club():
    import networkx as nx
    G = nx.karate_club_graph()
    A = nx.to_numpy_array(G, nodelist=sorted(G.nodes), weight=None)
    club = np.array([G.nodes[v]["club"] for v in sorted(G.nodes)])
    return A, club


@pytest.mark.build
def test_exercise_the_two_hubs_lead_the_two_sides():
    A, club = _club()
    deg = A.sum(axis=1)
    first, second = np.argsort(-deg, kind="stable")[:2]
    assert bt.glued_plain("karate", "ex_deg_first").strip("'") == str(first)
    assert bt.glued_plain("karate", "ex_deg_second").strip("'") == str(second)
    assert bt.glued_float("karate", "ex_deg_first_n") == deg[first]
    assert bt.glued_float("karate", "ex_deg_second_n") == deg[second]
    assert club[first] != club[second]  # "the two leaders", one per side
    data = bt.glue_data("karate")
    assert data["ex_deg_first_side"]["data"]["text/markdown"] == club[first]
    assert data["ex_deg_second_side"]["data"]["text/markdown"] == club[second]


@pytest.mark.build
def test_exercise_ari_ignores_names_and_drops_when_a_member_moves():
    from math import comb

    def adjusted_rand_score(a, b):  # Hubert and Arabie, from the pair counts
        pairs = sum(comb(int(np.sum((a == i) & (b == j))), 2) for i in (0, 1) for j in (0, 1))
        rows = sum(comb(int(np.sum(a == i)), 2) for i in (0, 1))
        cols = sum(comb(int(np.sum(b == j)), 2) for j in (0, 1))
        expected = rows * cols / comb(len(a), 2)
        return (pairs - expected) / ((rows + cols) / 2 - expected)

    _, club = _club()
    truth = (club == club[0]).astype(int)
    moved = truth.copy()
    moved[0] = 1 - moved[0]
    assert bt.glued_float("karate", "ex_ari_swapped") == pytest.approx(1.0, abs=1e-15)
    assert bt.glued_float("karate", "ex_ari_moved") == pytest.approx(adjusted_rand_score(truth, moved), abs=1e-12)


@pytest.mark.build
def test_exercise_pagerank_of_friendships_follows_degree():
    A, _ = _club()
    n = len(A)
    W = (A + np.eye(n)) / (A + np.eye(n)).sum(axis=1, keepdims=True)
    r = np.full(n, 1 / n)
    for _ in range(3000):
        r = 0.15 / n + 0.85 * r @ W
    top = ", ".join(str(i) for i in np.argsort(-r, kind="stable")[:3])
    by_degree = ", ".join(str(i) for i in np.argsort(-A.sum(axis=1), kind="stable")[:3])
    assert bt.glued_plain("karate", "ex_top_rank").strip("'") == top == by_degree
    assert bt.glued_plain("karate", "ex_top_degree").strip("'") == by_degree


@pytest.mark.build
def test_caption_claim_uniform_attention_on_the_mask_has_a_real_spectrum():
    """fig-karate-spectrum: W = D̃⁻¹(A + I) is similar to the symmetric D̃^{-1/2}(A + I)D̃^{-1/2}."""
    A = nx.to_numpy_array(nx.karate_club_graph(), nodelist=sorted(nx.karate_club_graph()), weight=None)
    M = A + np.eye(len(A))
    W = M / M.sum(axis=1, keepdims=True)
    lam = np.linalg.eigvals(np.eye(len(A)) - W)
    assert np.abs(lam.imag).max() < 1e-12
    assert bt.glued_float("karate", "imag_heads") > 1e-6  # the heads' are not real


# --- Broken variants ------------------------------------------------------------------------------

ka = importlib.import_module("attention_graph.karate")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # karate
    "eq-ari": (ka, "adjusted_rand_index", lambda a, b: 0.5, "a constant index"),
    "thm-ari-random-zero": (ka, "adjusted_rand_index", lambda a, b: 0.1, "chance scores 0.1"),
    "eq-gt-layer": (ka, "graph_transformer_layer", after(ka.graph_transformer_layer,
                                                         lambda r: (r[0] + 1e-6, r[1])), "output shifted"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    # Graph tools and the karate club
    ("adjusted_rand_index", lambda: ag.adjusted_rand_index([0, 1], [0, 1, 1]),
     ValueError, "a and b must label the same nodes"),
    ("club_graph", lambda: ag.club_graph(3), TypeError, "positional argument"),
    ("graph_transformer_layer", lambda: ag.graph_transformer_layer(np.ones((3, 3)), np.ones((4, 2)), {}, 2),
     ValueError, "P must have one row per node of A"),
]
