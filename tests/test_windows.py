"""Windows with sinks against independent implementations: the mask from its definition, reach by
networkx's shortest paths, bounded-cache decoding against the oracle's masked attention."""

import importlib

import networkx as nx
import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import WindowCache, sliding_window_mask, window_decode

PAGE = "windows"


def _mask_from_definition(n, window, n_sink):
    """Mistral's band (i − window < j ≤ i) plus StreamingLLM's first n_sink tokens, entry by entry."""
    return np.array([[j <= i and (i - window < j or j < n_sink) for j in range(n)] for i in range(n)])


@pytest.mark.parametrize("n, window, n_sink", [(1, 1, 0), (6, 2, 0), (9, 3, 2), (10, 10, 0), (7, 1, 7)])
def test_eq_sliding_window_mask(n, window, n_sink):
    assert bt.verified("eq-sliding-window-mask") >= 1
    M = sliding_window_mask(n, window, n_sink)
    assert M.dtype == bool and M.shape == (n, n)
    np.testing.assert_array_equal(M, _mask_from_definition(n, window, n_sink))
    if n_sink == 0:  # the window alone is the patterns chapter's causal band of reach w = window − 1
        i, j = np.indices((n, n))
        np.testing.assert_array_equal(M, (j <= i) & (i - j <= window - 1))


@pytest.mark.parametrize("n, w, n_sink", [(12, 1, 0), (15, 3, 1), (20, 4, 2)])
def test_thm_window_reach(n, w, n_sink):
    """networkx's shortest paths on the digraph of messages: w positions a layer, sinks one hop to all."""
    assert bt.verified("thm-window-reach") >= 1
    M = _mask_from_definition(n, w + 1, n_sink)
    G = oracles.digraph_of_messages(np.argwhere(M), n)
    for j in range(n):
        lengths = nx.single_source_shortest_path_length(G, j)
        for i in range(j + 1, n):
            assert lengths[i] == (1 if j < n_sink else -(-(i - j) // w))
        assert all(i >= j for i in lengths)  # nothing travels backwards
    # L layers of the window: the patterns chapter's diameter, ⌈(n − 1)/(L w)⌉ over the non-sink tokens.
    for L in (1, 2, 3):
        E = ag.window_edges_of(M[n_sink:, n_sink:])
        assert ag.max_path_length(E, n - n_sink, L) == -(-(n - 1 - n_sink) // (L * w))


@pytest.mark.parametrize("n, window, n_sink, seed",
                         [(1, 1, 0, 0), (25, 4, 0, 1), (25, 4, 2, 2), (30, 30, 1, 3), (12, 1, 3, 4)])
def test_thm_window_cache(n, window, n_sink, seed):
    assert bt.verified("thm-window-cache") >= 1
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((n, 3)), rng.standard_normal((n, 3)), rng.standard_normal((n, 2))
    Y, _ = oracles.attention(Q, K, V, mask=_mask_from_definition(n, window, n_sink))
    np.testing.assert_allclose(window_decode(Q, K, V, window, n_sink), Y, rtol=0, atol=1e-15)
    cache = WindowCache(window, n_sink)
    for i in range(n):
        cache.append(K[i], V[i])
        assert cache.held == min(i + 1, n_sink + window)
        assert cache.nbytes == cache.held * (3 + 2) * 8
        held = set(cache.positions.tolist())
        assert held == {j for j in range(i + 1) if j < n_sink or i - j < window}


def test_thm_sink_eviction():
    """Evicting keys renormalises the rest: the softmax over the smaller set, by the oracle."""
    assert bt.verified("thm-sink-eviction") >= 1
    rng = np.random.default_rng(9)
    S = rng.standard_normal((10, 10)) + 4.0 * (np.arange(10) == 0)
    with_sink, without = _mask_from_definition(10, 3, 1), _mask_from_definition(10, 3, 0)
    W = oracles.softmax(S, with_sink)
    np.testing.assert_allclose(ag.evict(W, without), oracles.softmax(S, without), rtol=0, atol=1e-15)
    share = W[3:, 0]  # the sink's share in the rows where it is outside the window
    np.testing.assert_allclose(ag.evict(W, without)[3:].sum(axis=1), 1.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(ag.evict(W, without)[3:, 1:], W[3:, 1:] / (1 - share[:, None]), rtol=1e-13, atol=0)


def test_cache_is_bounded_at_any_length():
    cache = WindowCache(window=8, n_sink=4)
    rng = np.random.default_rng(0)
    for _ in range(1000):
        cache.append(rng.standard_normal(2), rng.standard_normal(2))
    assert cache.n == 1000 and cache.held == 12 and cache.nbytes == 12 * 4 * 8
    assert sorted(cache.positions.tolist()) == [0, 1, 2, 3, *range(992, 1000)]


# --- What the page shows ---------------------------------------------------------------------------

@pytest.mark.build
def test_page_numbers():
    n, w, n_sink = (int(bt.glued_float(PAGE, k)) for k in ("win_n", "win_w", "win_sinks"))
    M = _mask_from_definition(n, w + 1, n_sink)
    assert bt.glued_float(PAGE, "win_edges") == M.sum()
    assert bt.glued_float(PAGE, "win_full_edges") == n * (n + 1) // 2
    assert bt.glued_float(PAGE, "win_held") == n_sink + w + 1
    assert bt.glued_float(PAGE, "dec_gap") < 1e-15
    # Mistral 7B: window 4096, 32 layers: reach 32 · 4096 tokens (the paper's "about 131K").
    assert bt.glued_float(PAGE, "mistral_reach") == 32 * 4096


@pytest.mark.build
def test_page_sink_eviction_numbers():
    share = bt.glued_float(PAGE, "evict_share")
    assert 0 < share < 1
    assert bt.glued_float(PAGE, "evict_factor") == pytest.approx(1 / (1 - share), rel=1e-12)


@pytest.mark.build
def test_page_exercises():
    assert bt.glued_float(PAGE, "ex_layers_needed") == -(-(100 - 1) // 3)
    assert bt.glued_float(PAGE, "ex_ring_gap") < 1e-15


# --- Broken variants and bad inputs (collected by tests/test_can_fail.py and tests/test_validation.py)

wi = importlib.import_module("attention_graph.windows")

BROKEN = {
    "eq-sliding-window-mask": (wi, "window_mask_kernel",
                               lambda n, window, n_sink: np.tril(np.ones((n, n), dtype=bool)),
                               "the window is ignored: plain causal attention"),
    "thm-window-reach": (wi, "window_mask_kernel",
                         lambda n, window, n_sink: (lambda i, j: ((j <= i) & ((i - j < window) | (j < n_sink)))
                                                    | (i < n_sink))(*np.indices((n, n))),
                         "the sinks also read every token (Longformer's globals), which shortens paths"),
    "thm-window-cache": (wi.WindowCache, "append",
                         lambda self, k, v: _append_without_sinks(self, k, v),
                         "the rolling buffer overwrites the sinks too"),
    "thm-sink-eviction": (wi, "evict_kernel", lambda kept, total: kept,
                          "the kept weights are not renormalised"),
}


def _append_without_sinks(self, k, v):
    capacity = self.n_sink + self.window
    if self.n < capacity:
        self._store.append(k, v)
        self._pos.append(self.n)
    else:
        slot = (self.n - capacity) % capacity
        self._store.overwrite(slot, k, v)
        self._pos[slot] = self.n
    self._n += 1


ok = np.ones((3, 2))
BAD = [
    ("sliding_window_mask", lambda: ag.sliding_window_mask(0, 2), ValueError, "n must be a positive integer"),
    ("sliding_window_mask", lambda: ag.sliding_window_mask(4, 0), ValueError,
     r"window must be a positive integer \(the query's own key counts\)"),
    ("sliding_window_mask", lambda: ag.sliding_window_mask(4, 2.0), TypeError, "window must be a positive integer"),
    ("sliding_window_mask", lambda: ag.sliding_window_mask(4, 2, n_sink=-1), ValueError,
     "n_sink must be an integer >= 0"),
    ("window_edges_of", lambda: ag.window_edges_of(np.ones((2, 3), dtype=bool)), ValueError,
     r"mask must be a square \(n, n\)"),
    ("window_edges_of", lambda: ag.window_edges_of(np.ones((2, 2))), TypeError, "mask must be a boolean array"),
    ("WindowCache", lambda: ag.WindowCache(0), ValueError, "window must be a positive integer"),
    ("WindowCache", lambda: ag.WindowCache(2, n_sink=True), TypeError, "n_sink must be an integer >= 0"),
    ("WindowCache", lambda: ag.WindowCache(2).attend([1.0]), ValueError, "the cache is empty"),
    ("WindowCache", lambda: _window_cache().append([1.0, 2.0], [1.0]), ValueError, "k must have 1 entries"),
    ("window_decode", lambda: ag.window_decode(ok, np.ones((2, 2)), np.ones((2, 2)), 2), ValueError,
     r"one query per token \(n_q = n_k\): 3 != 2"),
    ("window_decode", lambda: ag.window_decode(ok, ok, np.full((3, 2), np.nan), 2), ValueError, "V must be finite"),
    ("window_decode", lambda: ag.window_decode(ok, ok, ok, 0), ValueError, "window must be a positive integer"),
    ("evict", lambda: ag.evict([[0.5, 0.5]], [[False, False]]), ValueError, r"keep allows no key in row\(s\) \[0\]"),
    ("evict", lambda: ag.evict([[-0.5, 1.5]], [[True, True]]), ValueError, "W must be non-negative"),
    ("evict", lambda: ag.evict([[0.5, 0.5]], [[1, 1]]), TypeError, "keep must be a boolean array"),
    ("evict", lambda: ag.evict([[0.5, 0.5]], [[True]]), ValueError, r"keep must have shape \(1, 2\)"),
]


def _window_cache():
    cache = ag.WindowCache(2)
    cache.append([1.0], [1.0])
    return cache


@pytest.mark.parametrize("name, call, error, message", BAD, ids=[f"{b[0]}-{k}" for k, b in enumerate(BAD)])
def test_bad_input_raises_a_clear_error(name, call, error, message):
    with pytest.raises(error, match=message):
        call()
