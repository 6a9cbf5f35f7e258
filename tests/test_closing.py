"""The closing chapter: its numbers, recomputed from the worked example with plain NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import booktools as bt
import oracles

PAGE = "closing"
PEOPLE = ("Carla", "Ana", "Bruno", "Diego")
C, A, B, D = range(4)
X = oracles.X_WORKED  # (4, 2)


def weights(X):
    return oracles.attention(X, X, X)[1]  # (4, 4)


@pytest.mark.build
def test_a_new_input_gives_a_new_graph_and_leaves_the_path_alone():
    X2 = X.copy()
    X2[C] = -X[A]
    assert bt.glued_float(PAGE, "close_w_ac") == pytest.approx(weights(X)[A, C], abs=1e-15)
    assert bt.glued_float(PAGE, "close_w_ac_turned") == pytest.approx(weights(X2)[A, C], abs=1e-15)
    assert bt.glued_float(PAGE, "close_w_ac_turned") < bt.glued_float(PAGE, "close_w_ac")  # "falls"
    assert bt.glued_float(PAGE, "close_path_change") == 0.0  # "do not move at all"


@pytest.mark.build
def test_pagerank_and_communities_of_the_four():
    W = weights(X)
    alpha, n = 0.85, 4
    r = np.full(n, 1 / n)
    for _ in range(500):  # power iteration, independent of the package's linear solve
        r = (1 - alpha) / n + alpha * r @ W
    assert bt.glued_plain(PAGE, "close_top").strip("'\"") == PEOPLE[int(np.argmax(r))]
    assert bt.glued_float(PAGE, "close_top_rank") == pytest.approx(r.max(), abs=1e-12)
    assert bt.glued_float(PAGE, "close_uniform_rank") == 1 / n
    As = (W + W.T) / 2
    d = As.sum(axis=1)
    L = np.eye(n) - As / np.sqrt(np.outer(d, d))
    u = np.linalg.eigh(L)[1][:, 1] / np.sqrt(d)  # Fiedler vector of the random-walk form
    same_as = {i: [PEOPLE[j] for j in range(n) if (u[j] > 0) == (u[i] > 0)] for i in (C, A)}
    assert bt.glued_plain(PAGE, "close_with_carla").strip("'\"") == " and ".join(same_as[C])
    assert bt.glued_plain(PAGE, "close_with_ana").strip("'\"") == " and ".join(same_as[A])


def test_the_closing_gathers_the_two_newer_parts():
    """'Closing gathers the argument': every chapter of 'Sequences as graphs' and of 'What the graph
    view explains' (as _toc.yml lists them) is named on the closing page, and so are both parts."""
    import yaml

    toc = yaml.safe_load((bt.ROOT / "_toc.yml").read_text())
    parts = {p["caption"]: [c["file"].removeprefix("book/") for c in p["chapters"]] for p in toc["parts"]}
    text = (bt.ROOT / "book" / "closing.md").read_text()
    for caption in ("Sequences as graphs", "What the graph view explains"):
        assert f"*{caption}*" in text
        for stem in parts[caption]:
            assert f"{{doc}}`{stem}`" in text, stem


# --- The appendices ---------------------------------------------------------------------------------

@pytest.mark.build
def test_methodology_appendix_shows_the_records_and_targets():
    """The appendix's numbers, read straight from the records' fields (not through the summary the
    page calls)."""
    from attention_graph import bench
    from attention_graph.bench.sparse import TARGETS

    record = bench.record("sparse")
    res, rows = record["results"], record["results"]["sizes"]
    expected = {"degree": res["degree"], "d": res["d"], "repeat": res["repeat"], "n_min": min(r["n"] for r in rows),
                "n_max": max(r["n"] for r in rows), "n_dense_max": max(r["n"] for r in rows if "dense_seconds" in r),
                "cpus": record["machine"]["cpus"]}
    for key, value in expected.items():
        assert bt.glued_float("methodology", f"bench_{key}") == value, key
    target = bench.record("blockwise")["results"]["target"]
    assert bt.glued_float("methodology", "target_mb") == target["target_mb"]
    assert bt.glued_float("methodology", "target_dense_mb") == target["dense_matrix_mb"] > target["target_mb"]
    assert bt.glued_float("methodology", "target_slope") == TARGETS["slope"]
    assert bt.glued_float("methodology", "target_ratio") == TARGETS["ratio"]


# --- The intro's figure ----------------------------------------------------------------------------

@pytest.mark.build
def test_intro_figure_counts_the_edges_of_both_graphs():
    path = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])
    assert bt.glued_float("intro", "intro_path_edges") == (path + np.eye(4)).astype(bool).sum() == 10
    assert bt.glued_float("intro", "intro_attention_edges") == (weights(X) > 0).sum() == 16
    svg = bt.glue_data("intro")["fig-intro-fixed-computed"]["data"]["image/svg+xml"]
    assert svg.lstrip().startswith("<?xml") and all(name in svg for name in PEOPLE)


@pytest.mark.build
def test_intro_figure_labels_the_carla_bruno_pair_with_its_two_weights():
    """The caption's two numbers are the arcs between Carla and Bruno, W_CB (from Bruno to Carla)
    and W_BC (from Carla to Bruno), recomputed with plain NumPy; the figure prints both."""
    S = X @ X.T / np.sqrt(2)  # (4, 4)
    W = np.exp(S) / np.exp(S).sum(axis=1, keepdims=True)  # (4, 4)
    assert bt.glued_float("intro", "intro_w_cb") == pytest.approx(W[C, B], abs=1e-15)
    assert bt.glued_float("intro", "intro_w_bc") == pytest.approx(W[B, C], abs=1e-15)
    assert round(W[C, B], 3) == 0.365 and round(W[B, C], 3) == 0.221  # the two differ
    svg = bt.glue_data("intro")["fig-intro-fixed-computed"]["data"]["image/svg+xml"]
    assert f"<!-- {W[C, B]:.3f} -->" in svg and f"<!-- {W[B, C]:.3f} -->" in svg


def test_plot_fixed_and_computed_refuses_graphs_of_other_nodes():
    from attention_graph import AttentionGraph
    from attention_graph.plots import plot_fixed_and_computed

    a = AttentionGraph(np.eye(2), ("a", "b"))
    b = AttentionGraph(np.eye(2), ("a", "c"))
    with pytest.raises(ValueError, match="same nodes"):
        plot_fixed_and_computed(a, b)


# --- Exercises -------------------------------------------------------------------------------------

def _pagerank_nx(W, alpha=0.85):
    import networkx as nx

    G = nx.from_numpy_array(np.asarray(W), create_using=nx.DiGraph)  # edge i -> j weighs W[i, j]
    r = nx.pagerank(G, alpha=alpha, weight="weight", tol=1e-14, max_iter=10_000)
    return np.array([r[i] for i in range(len(W))])


@pytest.mark.build
def test_exercise_sharper_input_moves_attention_not_the_path():
    W, W3 = weights(X), weights(3 * X)
    assert bt.glued_float(PAGE, "ex_close_sharp_change") == pytest.approx(np.abs(W3 - W).max(), abs=1e-12)
    assert bt.glued_float(PAGE, "ex_close_sharp_change") > 0
    assert bt.glued_float(PAGE, "ex_close_sharp_path_change") == 0.0
    assert (W3.max(axis=1) > W.max(axis=1)).all()  # "the largest weight of every row grows"
    r = _pagerank_nx(W3)
    assert bt.glued_plain(PAGE, "ex_close_sharp_top").strip("'\"") == PEOPLE[int(np.argmax(r))]
    assert bt.glued_float(PAGE, "ex_close_sharp_top_rank") == pytest.approx(r.max(), abs=1e-9)


@pytest.mark.build
def test_exercise_path_pagerank_ignores_the_input():
    A_loop = np.array([[1, 1, 0, 0], [1, 1, 1, 0], [0, 1, 1, 1], [0, 0, 1, 1]], dtype=float)  # (4, 4)
    r = _pagerank_nx(A_loop / A_loop.sum(axis=1, keepdims=True))
    assert bt.glued_float(PAGE, "ex_close_path_rank_change") == 0.0
    assert bt.glued_float(PAGE, "ex_close_path_rank_max") == pytest.approx(r.max(), abs=1e-9)
    assert bt.glued_float(PAGE, "ex_close_path_rank_min") == pytest.approx(r.min(), abs=1e-9)
    assert r[[0, 3]].max() < r[[1, 2]].min()  # "ends of the path" below "its middle"


@pytest.mark.build
def test_exercise_uniform_attention_is_not_uniform_importance():
    W = oracles.attention(np.zeros_like(X), X, X)[1]
    np.testing.assert_allclose(W, 1 / 4)
    gap = np.abs(_pagerank_nx(W) - 1 / 4).max()
    assert gap < 1e-9  # uniform attention, uniform PageRank
    assert bt.glued_float(PAGE, "ex_close_flat_rank_gap") == pytest.approx(gap, abs=1e-9)
    effect = np.linalg.norm(X, axis=1) / 4  # removing V_j moves every output by V_j / 4
    assert bt.glued_float(PAGE, "ex_close_flat_effect_low") == pytest.approx(effect.min(), abs=1e-12)
    assert bt.glued_float(PAGE, "ex_close_flat_effect_max") == pytest.approx(effect.max(), abs=1e-12)
    assert effect.min() < effect.max()  # "not equal"
