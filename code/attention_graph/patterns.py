"""Attention patterns as graphs: complete, causal, the path of an RNN, sliding windows, Longformer,
BigBird; and the longest shortest path a message travels (the graph's diameter).

Every builder returns an int64 edge list (E, 2) with rows (i, j), "query i attends to key j",
sorted, without repeats, every query with its self-loop: the input of
:func:`~attention_graph.sparse.edge_attention`. A message travels j → i along the edge (i, j).
The chapter ``book/patterns.md`` compares the patterns by edge count and maximum path length
(Vaswani et al. 2017, Table 1); the SymPy checks behind its labels are registered here.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .registry import derivation
from .validation import as_edges, as_int

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["bigbird_edges", "causal_edges", "complete_edges", "hop_distances", "longformer_edges",
           "max_path_length", "path_edges", "window_edges"]


def _count(value, name: str, minimum: int = 1) -> int:
    return as_int(value, name, low=minimum, what=f"an integer >= {minimum}")


def _from_mask(M: np.ndarray) -> np.ndarray:
    """The edges (i, j) of a boolean (n, n) mask, sorted by i then j. (E, 2)."""
    return np.argwhere(M).astype(np.int64)  # (E, 2)


def complete_edges(n: int) -> np.ndarray:
    """Every ordered pair (i, j): full self-attention, n² edges. (n², 2).

    >>> complete_edges(2).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1]]
    """
    n = _count(n, "n")
    return _from_mask(np.ones((n, n), dtype=bool))  # (n², 2)


def causal_edges(n: int) -> np.ndarray:
    """(i, j) for j ≤ i: a decoder's masked self-attention, n(n + 1)/2 edges  (thm-causal-dag). (E, 2).

    >>> causal_edges(3).tolist()
    [[0, 0], [1, 0], [1, 1], [2, 0], [2, 1], [2, 2]]
    """
    n = _count(n, "n")
    return _from_mask(np.tril(np.ones((n, n), dtype=bool)))  # (E, 2)


def path_edges(n: int) -> np.ndarray:
    """(i, i) and (i, i − 1): the graph of a recurrent network, 2n − 1 edges. (E, 2).

    Token i's state reads its own input and the previous state only, as an RNN does.

    >>> path_edges(3).tolist()
    [[0, 0], [1, 0], [1, 1], [2, 1], [2, 2]]
    """
    n = _count(n, "n")
    i = np.arange(n)  # (n,)
    M = (i[:, None] == i[None, :]) | (i[:, None] == i[None, :] + 1)  # (n, n)
    return _from_mask(M)


def window_edges(n: int, w: int) -> np.ndarray:
    """(i, j) for abs(i − j) ≤ w: w tokens each side  (eq-window-edges). Shape (E, 2).

    >>> window_edges(4, 1).tolist()
    [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 1], [2, 2], [2, 3], [3, 2], [3, 3]]
    """
    return _window_edges(_count(n, "n"), _count(w, "w", minimum=0))  # (E, 2)


def _window_edges(n: int, w: int) -> np.ndarray:
    """(i, j) for abs(i − j) ≤ w: w tokens each side  (eq-window-edges). Shape (E, 2)."""
    i = np.arange(n)  # (n,)
    return _from_mask(np.abs(i[:, None] - i[None, :]) <= w)  # (E, 2)


def _global_mask(n: int, w: int, n_global: int) -> np.ndarray:
    n, w, n_global = _count(n, "n"), _count(w, "w", minimum=0), _count(n_global, "n_global", 0)
    if n_global > n:
        raise ValueError(f"n_global = {n_global} exceeds the n = {n} tokens")
    i = np.arange(n)  # (n,)
    M = np.abs(i[:, None] - i[None, :]) <= w  # (n, n): the window
    M[:n_global, :] = True  # global tokens attend to every token
    M[:, :n_global] = True  # and every token attends to them
    return M


def longformer_edges(n: int, w: int, n_global: int) -> np.ndarray:
    """A window of w each side plus the first ``n_global`` tokens global (Beltagy et al. 2020). (E, 2).

    >>> len(longformer_edges(5, 1, 1))
    19
    """
    return _from_mask(_global_mask(n, w, n_global))  # (E, 2)


def bigbird_edges(n: int, w: int, n_global: int, n_random: int, seed: int) -> np.ndarray:
    """Longformer's edges plus ``n_random`` random keys per query, seeded (Zaheer et al. 2020). (E, 2).

    Each query draws its random keys, without repeats, among the keys it does not attend to yet
    (fewer when fewer are left).

    >>> a, b = bigbird_edges(8, 1, 1, 2, seed=0), bigbird_edges(8, 1, 1, 2, seed=0)
    >>> bool((a == b).all())
    True
    """
    M = _global_mask(n, w, n_global)  # (n, n)
    n_random = _count(n_random, "n_random", minimum=0)
    rng = np.random.default_rng(_count(seed, "seed", minimum=0))
    for i in range(M.shape[0]):
        free = np.flatnonzero(~M[i])  # (n_free,)
        M[i, rng.choice(free, size=min(n_random, free.size), replace=False)] = True
    return _from_mask(M)  # (E, 2)


def hop_distances(edges, n: int) -> np.ndarray:
    """D[i, j]: the fewest edges a message from token j crosses to reach token i; −1 if it never does.

    Breadth-first search along the messages, j → i for each edge (i, j). Shape (n, n), int64.

    >>> hop_distances(path_edges(3), 3).tolist()
    [[0, -1, -1], [1, 0, -1], [2, 1, 0]]
    """
    n = _count(n, "n")
    E = as_edges(edges, "edges", n, n)  # (E, 2)
    order = np.argsort(E[:, 1], kind="stable")
    senders, receivers = E[order, 1], E[order, 0]  # (E,), (E,): j sends to i
    start = np.searchsorted(senders, np.arange(n + 1))  # (n + 1,)
    D = np.full((n, n), -1, dtype=np.int64)  # (n, n)
    for j in range(n):
        D[j, j] = 0
        frontier, hops = [j], 0
        while frontier:
            hops += 1
            nxt = []
            for s in frontier:
                for i in receivers[start[s]:start[s + 1]]:
                    if D[i, j] < 0:
                        D[i, j] = hops
                        nxt.append(int(i))
            frontier = nxt
    return D


def max_path_length(edges, n: int, n_layers: int = 1) -> int:
    """max of ⌈D[i, j]/L⌉ over connected pairs, L = ``n_layers``  (eq-window-diameter).

    The diameter of the graph of L stacked layers. A message crosses one edge per layer;
    with the residual's self-loop it may also wait, so L layers connect j to i exactly when
    D[i, j] ≤ L: their graph is the L-th power of the layer's graph. Pairs that never
    connect (later tokens of a causal pattern) are left out.

    >>> E = path_edges(8)
    >>> max_path_length(E, 8), max_path_length(E, 8, n_layers=3)
    (7, 3)
    """
    return _max_path_length(edges, n, _count(n_layers, "n_layers"))


def _max_path_length(edges, n: int, L: int) -> int:
    """max of ⌈D[i, j]/L⌉ over connected pairs, L = ``n_layers``  (eq-window-diameter)."""
    D = hop_distances(edges, n)  # (n, n)
    reached = D[D >= 0]  # (pairs,)
    return int(max(math.ceil(int(x) / L) for x in np.unique(reached)))


def named_patterns(n: int, w: int, n_global: int, n_random: int, seed: int) -> dict[str, np.ndarray]:
    """The chapter's six patterns on n tokens, by name: each an edge list (E, 2).

    >>> sorted(len(E) for E in named_patterns(4, 1, 1, 1, seed=0).values())
    [7, 10, 10, 14, 16, 16]
    """
    return {"complete": complete_edges(n), "causal": causal_edges(n), "path (RNN)": path_edges(n),
            f"window w = {w}": window_edges(n, w),
            "Longformer": longformer_edges(n, w, n_global),
            "BigBird": bigbird_edges(n, w, n_global, n_random, seed)}


def compare_patterns(ns, w: int, n_global: int, n_random: int, seed: int) -> dict[str, dict[int, dict]]:
    """{pattern: {n: {"edges": E, "max_path": D}}} for each n in ``ns``: one layer's edge count and
    maximum path length (the diameter over reachable pairs)."""
    out: dict[str, dict[int, dict]] = {}
    for n in ns:
        for name, E in named_patterns(n, w, n_global, n_random, seed).items():
            out.setdefault(name, {})[int(n)] = {"edges": int(len(E)), "max_path": max_path_length(E, n)}
    return out


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

_n, _w = sp.symbols("n w", integer=True, positive=True)


def _display_window_edges():
    return sp.Eq(sp.Symbol(r"|\mathcal{E}_{\mathrm{window}}|"),
                 sp.Add(_n * (2 * _w + 1), -_w * (_w + 1), evaluate=False), evaluate=False)


def _display_window_diameter():
    return sp.Eq(sp.Symbol(r"\operatorname{diam}_{\mathrm{window}}"), sp.ceiling((_n - 1) / _w), evaluate=False)


@derivation("eq-window-edges", display=_display_window_edges, strength="verified",
            scope="for the package's edge lists up to n = 12 (the count itself also for symbolic n and w < n)")
def _check_window_edges():
    # Proved for symbolic n and w ≤ n − 1: offset δ = j − i of size |δ| ≤ w occurs in n − |δ| rows,
    # so the count is Σ_{δ=−w}^{w} (n − |δ|).
    delta = sp.Symbol("delta", integer=True)
    count = (_n + 2 * sp.summation(_n - delta, (delta, 1, _w)))
    yield sp.Eq(count, _display_window_edges().rhs)
    # The package's edge lists have that many edges, for every n ≤ 12 and w < n.
    yield all(len(window_edges(n, w)) == n * (2 * w + 1) - w * (w + 1)
              for n in range(1, 13) for w in range(n))


@derivation("eq-window-diameter", display=_display_window_diameter, strength="verified",
            scope="for every n ≤ 24 and w < n, and for stacks of up to four layers (n ≤ 16, w ≤ 3)")
def _check_window_diameter():
    # Verified for every n ≤ 24 and 1 ≤ w < n: the package's BFS gives ⌈(n − 1)/w⌉ (a message moves
    # at most w positions per layer, and w per layer is reached).
    got = {(n, w): max_path_length(window_edges(n, w), n) for n in range(2, 25) for w in range(1, n)}
    yield all(v == _display_window_diameter().rhs.subs({_n: n, _w: w}) for (n, w), v in got.items())
    # L stacked layers: the diameter of the L-th power of the path-like window graph is ⌈(n − 1)/(wL)⌉.
    yield all(max_path_length(window_edges(n, w), n, L) == -(-(n - 1) // (w * L))
              for n in range(2, 17) for w in range(1, 4) for L in range(1, 5))
    # Identities used in the chapter: the RNN path is the window w = 1 made one-sided, and its
    # longest path has n − 1 edges; the complete graph has diameter 1.
    yield all(max_path_length(path_edges(n), n) == n - 1 and max_path_length(complete_edges(n), n) == 1
              for n in range(2, 17))


@derivation("thm-causal-dag", strength="verified",
            scope="for the package's edge lists up to n = 12 (the edge count also for symbolic n)")
def _check_causal_dag():
    # Every edge (i, j) of the causal pattern has j ≤ i: without self-loops, token order is a
    # topological order, so there is no cycle; the count Σ_{i=1}^{n} i = n(n + 1)/2 (symbolic n).
    i = sp.Symbol("i", integer=True, positive=True)
    yield sp.Eq(sp.summation(i, (i, 1, _n)), _n * (_n + 1) / 2)
    for n in range(1, 13):
        E = causal_edges(n)
        yield bool((E[:, 1] <= E[:, 0]).all()) and len(E) == n * (n + 1) // 2
    # One layer carries every token's message to every later token and none to an earlier one:
    # D[i, j] = 1 for j < i and −1 (never) for j > i, for every n ≤ 12.
    for n in range(2, 13):
        D = hop_distances(causal_edges(n), n)
        yield bool((D[np.tril_indices(n, -1)] == 1).all() and (D[np.triu_indices(n, 1)] == -1).all())
