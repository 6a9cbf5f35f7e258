"""Windows with sinks: the causal band graph plus a few sink nodes every query keeps.

Mistral 7B (Jiang et al. 2023) lets token i attend to the last ``window`` tokens only, itself
included: the causal band of the patterns chapter, of reach w = window − 1. StreamingLLM (Xiao et
al. 2024) keeps the first ``n_sink`` tokens too, because trained models park attention there (the
sinks chapter). The graph has an edge from j to i when j ≤ i and (i − j < window or j < n_sink),
0-based (``eq-sliding-window-mask``). A message moves at most w positions a layer and the sinks do
not shorten any path between other tokens (``thm-window-reach``); a cache of n_sink + window
entries is all a decoder needs, and decoding with it equals full attention under the same mask
(``thm-window-cache``). Dropping the sinks instead renormalises what is left
(``thm-sink-eviction``). The chapter is ``book/windows.md``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .decoding import KVCache
from .patterns import hop_distances
from .registry import derivation
from .softmax import softmax
from .validation import as_int, as_mask, as_matrix, as_qkv

__all__ = ["WindowCache", "evict", "sliding_window_mask", "window_decode", "window_edges_of"]


def sliding_window_mask(n: int, window: int, n_sink: int = 0) -> np.ndarray:
    """M_ij = (j ≤ i) and (i − j < window or j < n_sink), 0-based  (eq-sliding-window-mask). (n, n) bool.

    Query i attends to its last ``window`` tokens (itself included) and to the first ``n_sink``
    tokens of the sequence, the sinks.

    >>> sliding_window_mask(4, 2, n_sink=1).astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [1, 1, 1, 0],
           [1, 0, 1, 1]])
    """
    n = as_int(n, "n", what="a positive integer number of tokens")
    window = as_int(window, "window", what="a positive integer (the query's own key counts)")
    n_sink = as_int(n_sink, "n_sink", low=0)
    return window_mask_kernel(n, window, n_sink)  # (n, n)


def window_mask_kernel(n: int, window: int, n_sink: int) -> np.ndarray:
    """M_ij = (j ≤ i) and (i − j < window or j < n_sink)  (eq-sliding-window-mask). (n, n) bool."""
    i, j = np.indices((n, n))  # (n, n) each
    return (j <= i) & ((i - j < window) | (j < n_sink))  # (n, n)


def window_edges_of(mask) -> np.ndarray:
    """The edges (i, j) of a mask, one row per True entry: key j sends its value to query i. (E, 2).

    >>> window_edges_of(np.array([[True, False], [True, True]])).tolist()
    [[0, 0], [1, 0], [1, 1]]
    """
    M = np.asarray(mask)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"mask must be a square (n, n) boolean array; got shape {M.shape}")
    M = as_mask(M, "mask", M.shape)  # (n, n)
    return np.argwhere(M).astype(np.int64)  # (E, 2)


class WindowCache:
    """A bounded KV cache: the first ``n_sink`` tokens and the last ``window``, nothing else.

    Once full, a new token's key and value overwrite those of the oldest token outside the sinks
    (a rolling buffer, as in Mistral's), so it never holds more than n_sink + window entries
    (``thm-window-cache``). ``positions`` says which token each held entry belongs to.

    >>> cache = WindowCache(window=1, n_sink=1)
    >>> for t in range(3):
    ...     cache.append([float(t)], [float(t)])
    >>> cache.positions.tolist(), cache.held
    ([0, 2], 2)
    """

    def __init__(self, window: int, n_sink: int = 0):
        self.window = as_int(window, "window", what="a positive integer (the query's own key counts)")
        self.n_sink = as_int(n_sink, "n_sink", low=0)
        self._store = KVCache()  # its first n_sink + window rows, reused as a ring
        self._pos: list[int] = []  # the token held in each slot
        self._n = 0

    @property
    def n(self) -> int:
        """The number of tokens appended so far."""
        return self._n

    @property
    def held(self) -> int:
        """The number of entries the cache holds: min(n, n_sink + window)."""
        return len(self._pos)

    @property
    def positions(self) -> np.ndarray:
        """The token each held entry belongs to, in slot order (0-based). (held,)."""
        return np.array(self._pos, dtype=np.int64)  # (held,)

    @property
    def nbytes(self) -> int:
        """Bytes of the held keys and values."""
        return self._store.nbytes

    def append(self, k, v) -> None:
        """Token n joins; once full, it takes the slot of the token ``window`` places back."""
        capacity = self.n_sink + self.window
        if self._n < capacity:
            self._store.append(k, v)
            self._pos.append(self._n)
        else:
            # the slot of the oldest token outside the sinks
            slot = self.n_sink + (self._n - self.n_sink) % self.window
            self._store.overwrite(slot, k, v)
            self._pos[slot] = self._n
        self._n += 1

    def weights(self, q) -> np.ndarray:
        """w_j = softmax_j(q·k_j/√d) over the held entries, in slot order. (held,)."""
        return self._store.weights(q)  # (held,)

    def attend(self, q) -> np.ndarray:
        """y = Σ_j w_j v_j over the held entries  (thm-window-cache). (d_v,)."""
        return self._store.attend(q)  # (d_v,)


def window_decode(Q, K, V, window: int, n_sink: int = 0) -> np.ndarray:
    """Y row by row with a :class:`WindowCache`  (thm-window-cache). (n, d_v).

    Equals attention under ``sliding_window_mask(n, window, n_sink)``, with at most
    n_sink + window keys held at any step.
    """
    Q, K, V = as_qkv(Q, K, V)  # (n, d), (n, d), (n, d_v)
    if Q.shape[0] != K.shape[0]:
        raise ValueError(f"decoding needs one query per token (n_q = n_k): {Q.shape[0]} != {K.shape[0]}")
    cache = WindowCache(window, n_sink)
    Y = np.empty((Q.shape[0], V.shape[1]))  # (n, d_v)
    for i in range(Q.shape[0]):
        cache.append(K[i], V[i])  # token i joins; the token window places back leaves
        Y[i] = cache.attend(Q[i])  # (d_v,): messages from the sinks and the window only
    return Y


def evict(W, keep) -> np.ndarray:
    """W'_ij = W_ij / Σ_{l kept} W_il on the kept keys, 0 elsewhere  (thm-sink-eviction). (n_q, n_k).

    What a row of attention weights becomes when the keys outside ``keep`` leave the cache: the
    rest is renormalised, scaled by 1/(1 − the share that left).

    >>> evict([[0.5, 0.25, 0.25]], [[False, True, True]]).tolist()
    [[0.0, 0.5, 0.5]]
    """
    W = as_matrix(W, "W", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    if (W < 0).any():
        raise ValueError("W must be non-negative (attention weights)")
    keep = as_mask(keep, "keep", W.shape)  # (n_q, n_k)
    kept = np.where(keep, W, 0.0)  # (n_q, n_k)
    total = kept.sum(axis=1, keepdims=True)  # (n_q, 1)
    if (total <= 0).any():
        rows = np.flatnonzero(total[:, 0] <= 0).tolist()
        raise ValueError(f"keep leaves no weight in row(s) {rows}: nothing to renormalise")
    return evict_kernel(kept, total)  # (n_q, n_k)


def evict_kernel(kept, total) -> np.ndarray:
    """W'_ij = W_ij / Σ_{l kept} W_il  (thm-sink-eviction)."""
    return kept / total  # (n_q, n_k)


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

def _display_mask():
    i, j, w, n_s = sp.symbols(r"i j w n_{\text{sink}}", integer=True)
    rhs = sp.And(sp.Le(j, i), sp.Or(sp.Le(i - j, w), sp.Le(j, n_s)))
    return sp.Eq(sp.Symbol("M_{ij}"), sp.Symbol(sp.latex(rhs)), evaluate=False)


def _display_eviction():
    W, Wp = sp.Symbol("W_{ij}"), sp.Symbol("W'_{ij}")
    share = sp.Symbol(r"\textstyle\sum_{l \in \mathcal{D}} W_{il}")
    return sp.Eq(Wp, W / (1 - share), evaluate=False)


@derivation("eq-sliding-window-mask", display=_display_mask, strength="verified",
            scope="for every n ≤ 12, window ≤ n and n_sink ≤ n, entry by entry against the 1-based formula")
def _check_mask():
    # The displayed rule is 1-based with reach w = window − 1: M_ij = [j ≤ i]([i − j ≤ w] or [j ≤ n_sink]).
    def rule(i, j, w, n_s):
        return j <= i and (i - j <= w or j <= n_s)
    for n in range(1, 13):
        for window in range(1, n + 1):
            for n_sink in range(0, n + 1):
                M = sliding_window_mask(n, window, n_sink)
                yield all(bool(M[i - 1, j - 1]) == rule(i, j, window - 1, n_sink)
                          for i in range(1, n + 1) for j in range(1, n + 1))


@derivation("thm-window-reach", strength="verified",
            scope=("for every n ≤ 16, reach w ≤ 4 and n_sink ≤ 2, one layer and stacks of up to four"))
def _check_window_reach():
    # One layer: a message from token j ≥ n_sink reaches i > j in ⌈(i − j)/w⌉ hops; a sink reaches every
    # later token in one hop; nothing moves backwards. L layers: ⌈(i − j)/(L w)⌉ (the L-th power).
    for n in range(2, 17):
        for w in range(1, 5):
            for n_sink in range(3):
                D = hop_distances(window_edges_of(sliding_window_mask(n, w + 1, n_sink)), n)  # (n, n)
                for i in range(n):
                    for j in range(n):
                        if j > i:
                            want = -1
                        elif j == i:
                            want = 0
                        else:
                            want = 1 if j < n_sink else math.ceil((i - j) / w)
                        yield bool(D[i, j] == want)


def _exact_masked_row(s, allowed):
    e = [sp.exp(x) if ok else 0 for x, ok in zip(s, allowed)]
    return [x / sum(e) for x in e]


@derivation("thm-window-cache", strength="verified",
            scope=("with symbolic scores for n ≤ 6 and every window and n_sink; the held entries for n ≤ 30; "
                   "the package against masked attention to 1e-15"))
def _check_window_cache():
    # (1) After token i joins, the cache holds exactly the keys row i of the mask allows, and never more
    # than n_sink + window of them.
    for window in range(1, 6):
        for n_sink in range(4):
            cache = WindowCache(window, n_sink)
            M = sliding_window_mask(30, window, n_sink)
            for i in range(30):
                cache.append([float(i)], [float(i)])
                yield sorted(cache.positions.tolist()) == np.flatnonzero(M[i]).tolist()
                yield cache.held <= n_sink + window
    # (2) A softmax over the held entries is the masked softmax row, for symbolic scores: the masked
    # entries have weight exactly 0, and the normaliser sums the allowed keys only.
    for n in range(1, 7):
        s = [sp.Symbol(f"s_{j}", real=True) for j in range(n)]
        v = [sp.Symbol(f"v_{j}", real=True) for j in range(n)]
        for window in range(1, n + 1):
            for n_sink in range(0, 3):
                row = sliding_window_mask(n, window, n_sink)[n - 1]
                held = [j for j in range(n) if row[j]]
                e = [sp.exp(s[j]) for j in held]
                y_cache = sum(x * v[j] for x, j in zip(e, held)) / sum(e)
                y_full = sum(w * v[j] for j, w in enumerate(_exact_masked_row(s, row)))
                yield sp.Eq(y_cache, y_full)
    # (3) The package: window decoding equals dense attention under the same mask.
    rng = np.random.default_rng(7)
    Q, K, V = rng.standard_normal((40, 4)), rng.standard_normal((40, 4)), rng.standard_normal((40, 3))
    for window, n_sink in ((1, 0), (5, 0), (5, 2), (40, 0)):
        M = sliding_window_mask(40, window, n_sink)
        S = np.where(M, Q @ K.T / 2.0, -np.inf)  # (40, 40), √d = 2
        W = np.exp(S - S.max(axis=1, keepdims=True))  # (40, 40)
        Y = (W / W.sum(axis=1, keepdims=True)) @ V  # (40, 3)
        yield bool(np.allclose(window_decode(Q, K, V, window, n_sink), Y, rtol=0, atol=1e-15))


@derivation("thm-sink-eviction", display=_display_eviction, strength="proved",
            scope="for any scores and any set of evicted keys (symbolic normaliser and evicted mass)")
def _check_sink_eviction():
    # Row i: W_ij = e_j / Z with Z = Σ_l e^{S_il}. Evicting the keys of S (their mass z_S) leaves
    # e_j / (Z − z_S) = (e_j / Z) / (1 − z_S / Z): every kept weight divided by 1 − the evicted share.
    e, Z, z_S = sp.symbols("e Z z_S", positive=True)
    yield sp.Eq(e / (Z - z_S), (e / Z) / (1 - z_S / Z), evaluate=False)
    # The package: evicting the sinks from a masked softmax is the softmax under the smaller mask.
    rng = np.random.default_rng(11)
    S = rng.standard_normal((12, 12)) + 3.0 * (np.arange(12) == 0)  # (12, 12): key 0 scores high
    full = sliding_window_mask(12, 4, n_sink=1)  # (12, 12)
    W = softmax(S, full)  # (12, 12)
    no_sink = sliding_window_mask(12, 4)  # (12, 12)
    yield bool(np.allclose(evict(W, no_sink), softmax(S, no_sink), rtol=0, atol=1e-15))
    # Each kept weight grows by the factor 1/(1 − W_i0) when the sink (key 0) leaves row i ≥ 4.
    share = W[4:, 0]  # (8,)
    yield bool(np.allclose(evict(W, no_sink)[4:, 4:], W[4:, 4:] / (1 - share)[:, None], rtol=1e-14, atol=0))
