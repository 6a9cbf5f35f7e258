"""Attention patterns: edge lists, edge counts and diameters against networkx, the causal DAG, and
what the patterns chapter shows, recomputed."""

import importlib
import math

import networkx as nx
import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import (
    attention,
    bigbird_edges,
    causal_edges,
    complete_edges,
    edge_attention,
    hop_distances,
    longformer_edges,
    max_path_length,
    path_edges,
    tables,
    window_edges,
)
from attention_graph.patterns import compare_patterns, named_patterns

PAGE = "patterns"


def _mask(E, n):
    M = np.zeros((n, n), dtype=bool)
    M[E[:, 0], E[:, 1]] = True
    return M


def test_builders_against_their_definitions():
    n, w, g = 12, 2, 2
    i, j = np.meshgrid(range(n), range(n), indexing="ij")
    assert np.array_equal(_mask(complete_edges(n), n), np.ones((n, n), bool))
    assert np.array_equal(_mask(causal_edges(n), n), j <= i)
    assert np.array_equal(_mask(path_edges(n), n), (j == i) | (j == i - 1))
    assert np.array_equal(_mask(window_edges(n, w), n), np.abs(i - j) <= w)
    assert np.array_equal(_mask(longformer_edges(n, w, g), n), (np.abs(i - j) <= w) | (i < g) | (j < g))
    B = _mask(bigbird_edges(n, w, g, 3, seed=1), n)
    L = _mask(longformer_edges(n, w, g), n)
    assert (B >= L).all() and ((B & ~L).sum(axis=1) == np.minimum(3, (~L).sum(axis=1))).all()
    assert np.array_equal(bigbird_edges(n, w, g, 3, seed=1), bigbird_edges(n, w, g, 3, seed=1))
    assert not np.array_equal(bigbird_edges(n, w, g, 3, seed=1), bigbird_edges(n, w, g, 3, seed=2))


@pytest.mark.parametrize("n", [1, 5, 16])
def test_every_pattern_runs_through_edge_attention(n):
    rng = np.random.default_rng(n)
    Q, K, V = rng.standard_normal((3, n, 4))
    for E in named_patterns(n, 2, 1, 2, seed=0).values():
        assert len({tuple(e) for e in E}) == len(E)  # no repeated edge
        np.testing.assert_allclose(edge_attention(Q, K, V, E), attention(Q, K, V, _mask(E, n))[0],
                                   rtol=0, atol=1e-12)


def test_hop_distances_against_networkx():
    n = 14
    for E in named_patterns(n, 2, 1, 2, seed=3).values():
        G = oracles.digraph_of_messages(E, n)
        lengths = dict(nx.all_pairs_shortest_path_length(G))
        D = hop_distances(E, n)
        for j in range(n):
            for i in range(n):
                assert D[i, j] == lengths[j].get(i, -1)


@pytest.mark.parametrize("n_layers", [1, 2, 3])
def test_max_path_length_against_networkx(n_layers):
    for n in (2, 9, 20):
        for E in named_patterns(n, 2, 1, 2, seed=0).values():
            assert max_path_length(E, n, n_layers) == oracles.max_path_length(E, n, n_layers)


def test_edge_counts_and_diameters_formulas():
    assert bt.verified("eq-window-edges") >= 1
    assert bt.verified("eq-window-diameter") >= 1
    for n in (5, 17, 40):
        for w in (1, 3):
            assert len(window_edges(n, w)) == n * (2 * w + 1) - w * (w + 1)
            assert max_path_length(window_edges(n, w), n) == math.ceil((n - 1) / w)


def test_thm_causal_dag():
    assert bt.verified("thm-causal-dag") >= 1
    for n in (1, 2, 7, 30):
        G = oracles.digraph_of_messages(causal_edges(n), n)
        G.remove_edges_from(nx.selfloop_edges(G))
        assert nx.is_directed_acyclic_graph(G)
        assert len(causal_edges(n)) == n * (n + 1) // 2
        assert all(j < i for j, i in G.edges)  # token order is a topological order
        assert oracles.max_path_length(causal_edges(n), n) == min(1, n - 1)
        # Every earlier token reaches every later one in one step, no later token an earlier one.
        lengths = dict(nx.all_pairs_shortest_path_length(G))
        assert all(lengths[j].get(i) == (1 if j < i else (0 if i == j else None))
                   for i in range(n) for j in range(n))


# --- What the chapter shows ------------------------------------------------------------------------

def _table_by_networkx(ns=(16, 64, 256)):
    out = {}
    for n in ns:
        for name, E in named_patterns(n, 2, 1, 2, seed=0).items():
            G = oracles.digraph_of_messages(E, n)
            if name == "complete":  # every pair is an edge: the diameter is one when n > 1
                diameter = 1
            else:
                diameter = oracles.max_path_length(E, n)
            out.setdefault(name, {})[n] = (G.number_of_edges(), diameter)
    return out


@pytest.mark.build
def test_page_table_against_networkx():
    glued = bt.glue_data(PAGE)
    expected = _table_by_networkx()
    for key in ("tab-patterns", "tab-patterns-path"):
        md = glued[key]["data"]["text/markdown"]
        assert md.splitlines()[0] == "| pattern | " + " | ".join(f"$n = {n}$" for n in (16, 64, 256)) + " |"
    edges, paths = bt.glued_table(PAGE, "tab-patterns"), bt.glued_table(PAGE, "tab-patterns-path")
    assert list(edges) == list(paths) == list(expected)
    for name, by_n in expected.items():
        cells = [c.replace(",", "") for c in edges[name] + paths[name]]
        ns = sorted(by_n)
        assert [int(c) for c in cells] == [by_n[n][0] for n in ns] + [by_n[n][1] for n in ns], name
    # The package's comparison is the same table.
    comp = compare_patterns([16, 64, 256], 2, 1, 2, 0)
    assert {k: {n: (v["edges"], v["max_path"]) for n, v in d.items()} for k, d in comp.items()} == expected


@pytest.mark.build
def test_page_numbers():
    n = 256
    assert bt.glued_float(PAGE, "complete_edges_big") == n * n
    assert bt.glued_float(PAGE, "rnn_path_big") == n - 1
    assert bt.glued_float(PAGE, "window_path_big") == math.ceil((n - 1) / 2)
    E = longformer_edges(n, 2, 1)
    assert bt.glued_float(PAGE, "longformer_edges_big") == oracles.digraph_of_messages(E, n).number_of_edges()
    assert bt.glued_float(PAGE, "edge_share_big") == pytest.approx(100 * len(E) / n**2)
    assert bt.glued_float(PAGE, "edge_vs_mask") < 1e-12
    # Graphormer's bias on the path: Carla and Diego are three hops apart, and a negative bias per
    # hop lowers Carla's weight on Diego.
    assert bt.glued_float(PAGE, "spd_carla_diego") == 3
    assert bt.glued_float(PAGE, "w_carla_diego_biased") < bt.glued_float(PAGE, "w_carla_diego")


@pytest.mark.build
def test_page_exercises():
    assert bt.glued_float(PAGE, "ex_layers_window") == oracles.max_path_length(window_edges(256, 2), 256)
    assert bt.glued_float(PAGE, "ex_stacks_window") == math.ceil(255 / 8)
    star = longformer_edges(64, 0, 1)
    assert bt.glued_float(PAGE, "ex_star_edges") == 3 * 64 - 2 == len(star)
    assert bt.glued_float(PAGE, "ex_star_path") == oracles.max_path_length(star, 64) == 2
    cw = np.array([(i, j) for i in range(64) for j in range(64) if i - 4 <= j <= i])
    assert bt.glued_float(PAGE, "ex_causal_window_edges") == len(cw)
    assert bt.glued_float(PAGE, "ex_causal_window_path") == oracles.max_path_length(cw, 64) == math.ceil(63 / 4)


# --- Broken variants ------------------------------------------------------------------------------

gr = importlib.import_module("attention_graph.graph")


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


pa = importlib.import_module("attention_graph.patterns")


_pa_window = pa.window_edges


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    "thm-causal-mask-lower-triangular": (gr, "causal_mask", lambda n: np.triu(np.ones((n, n))) == 1,
                                         "an upper-triangular mask"),
    # patterns
    "thm-causal-dag": (pa, "causal_edges", lambda n: pa.complete_edges(n), "the causal pattern is complete"),
    "eq-window-edges": (pa, "window_edges", lambda n, w: _pa_window(n, max(w - 1, 0)), "a window one narrower"),
    "eq-window-diameter": (pa, "max_path_length", after(pa.max_path_length, lambda D: D + 1), "one layer too many"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("complete_edges", lambda: ag.complete_edges(0), ValueError, "n must be an integer >= 1"),
    ("causal_edges", lambda: ag.causal_edges(2.0), TypeError, "n must be an integer"),
    ("path_edges", lambda: ag.path_edges(-3), ValueError, "n must be an integer >= 1"),
    ("window_edges", lambda: ag.window_edges(5, -1), ValueError, "w must be an integer >= 0"),
    ("longformer_edges", lambda: ag.longformer_edges(5, 1, 6), ValueError, "n_global = 6 exceeds"),
    ("bigbird_edges", lambda: ag.bigbird_edges(5, 1, 1, 2, seed=None), TypeError, "seed must be an integer"),
    ("bigbird_edges", lambda: ag.bigbird_edges(5, 1, 1, -2, seed=0), ValueError, "n_random must be an integer >= 0"),
    ("hop_distances", lambda: ag.hop_distances([[0, 3]], 3), ValueError, "outside 0..2"),
    ("hop_distances", lambda: ag.hop_distances([[0.0, 1.0]], 3), TypeError, "integer array"),
    ("max_path_length", lambda: ag.max_path_length([[0, 0]], 1, n_layers=0),
     ValueError, "n_layers must be an integer >= 1"),
    ("pattern_table", lambda: tables.pattern_table({"complete": {4: {"edges": 16}}}, "paths"),
     ValueError, "measure must be"),
]
