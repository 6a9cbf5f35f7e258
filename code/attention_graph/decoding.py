"""Decoding with a KV cache: each generated token is one new node of the causal DAG, messages flowing only into it.

A decoder generates token i after tokens 0, …, i − 1 and attends causally. Token i's query meets the
keys of every token so far, itself included; no earlier token attends to it. So the earlier rows of
the causal weights never change when a token is appended (``thm-kv-new-node``), the keys and values
can be kept (the KV cache), and decoding step by step equals full causal attention
(``thm-decoding-equals-causal``). The chapter is ``book/decoding.md``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .multihead import kv_index
from .registry import derivation
from .validation import as_int, as_matrix, as_qkv

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["KVCache", "decode"]


def _as_vector(x, name: str, size: int | None) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one vector, shape ({'d' if size is None else size},); got shape {arr.shape}")
    arr = as_matrix(arr[None, :], name, shape_doc="(d,)")[0]  # (d,), finite reals or a clear error
    if size is not None and arr.size != size:
        raise ValueError(f"{name} must have {size} entries, as the cached ones; got {arr.size}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a key, value or query has at least one entry")
    return arr


def _as_heads(x, name: str, shape: tuple[int, int] | None) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be one row per head, shape (heads, d_h); got shape {arr.shape}")
    arr = as_matrix(arr, name, shape_doc="(heads, d_h)")  # (heads, d_h), finite reals or a clear error
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a key, value or query has at least one entry")
    if shape is not None and arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, as the cached ones; got {arr.shape}")
    return arr


class KVCache:
    """The keys and values of the tokens so far; ``append`` adds one token, ``attend`` one query.

    A token's key and value are one vector each (one head), or one row per key/value head: with
    ``n_kv_heads`` = H_kv, ``append`` takes k (H_kv, d_h) and v (H_kv, d_v), and ``attend`` a query
    (H, d_h) with H a multiple of H_kv; query head h reads key/value head ⌊h H_kv / H⌋ (eq-gqa).
    Storage grows by doubling, so n appends cost O(n d) in all; it holds 2 n H_kv d_h numbers
    (``nbytes``).

    >>> cache = KVCache()
    >>> cache.append([1.0, 0.0], [2.0])
    >>> cache.append([0.0, 1.0], [4.0])
    >>> cache.attend([0.0, 0.0])
    array([3.])
    >>> shared = KVCache(n_kv_heads=1)
    >>> shared.append([[1.0, 0.0]], [[2.0]])
    >>> shared.attend([[0.0, 0.0], [1.0, 1.0]])
    array([[2.],
           [2.]])
    """

    def __init__(self, n_kv_heads: int | None = None):
        self._H_kv = None if n_kv_heads is None else as_int(n_kv_heads, "n_kv_heads")
        H_kv = 1 if self._H_kv is None else self._H_kv
        self._K = np.zeros((0, H_kv, 0))  # (capacity, H_kv, d)
        self._V = np.zeros((0, H_kv, 0))  # (capacity, H_kv, d_v)
        self._n = 0

    @property
    def n(self) -> int:
        """The number of tokens in the cache."""
        return self._n

    @property
    def n_kv_heads(self) -> int:
        """H_kv, the number of key/value heads stored per token (1 for a cache of vectors)."""
        return 1 if self._H_kv is None else self._H_kv

    def _view(self, A) -> np.ndarray:
        A = A[: self._n] if self._H_kv is not None else A[: self._n, 0]  # (n, H_kv, d) or (n, d)
        A.flags.writeable = False
        return A

    @property
    def keys(self) -> np.ndarray:
        """The cached keys, one row per token (read-only view). (n, d), or (n, H_kv, d_h) with heads."""
        return self._view(self._K)

    @property
    def values(self) -> np.ndarray:
        """The cached values, one row per token (read-only view). (n, d_v), or (n, H_kv, d_v) with heads."""
        return self._view(self._V)

    @property
    def nbytes(self) -> int:
        """Bytes of the cached keys and values (not of the spare capacity): 2 n H_kv d × 8 when d_v = d."""
        return int(self.keys.nbytes + self.values.nbytes)

    def append(self, k, v) -> None:
        """Add one token: its key k (d,) and value v (d_v,), or (H_kv, d_h) and (H_kv, d_v) with heads."""
        first = self._n == 0
        if self._H_kv is None:
            k = _as_vector(k, "k", None if first else self._K.shape[2])[None, :]  # (1, d)
            v = _as_vector(v, "v", None if first else self._V.shape[2])[None, :]  # (1, d_v)
        else:
            k = _as_heads(k, "k", (self._H_kv, self._K.shape[2]) if not first else None)  # (H_kv, d_h)
            v = _as_heads(v, "v", (self._H_kv, self._V.shape[2]) if not first else None)  # (H_kv, d_v)
            for name, x in (("k", k), ("v", v)):
                if x.shape[0] != self._H_kv:
                    raise ValueError(f"{name} must have n_kv_heads = {self._H_kv} rows; got {x.shape[0]}")
        if self._n == self._K.shape[0]:  # full: double the storage
            capacity = max(4, 2 * self._K.shape[0])
            K = np.zeros((capacity, *k.shape))  # (capacity, H_kv, d)
            V = np.zeros((capacity, *v.shape))  # (capacity, H_kv, d_v)
            if self._n:
                K[: self._n], V[: self._n] = self._K[: self._n], self._V[: self._n]
            self._K, self._V = K, V
        self._K[self._n], self._V[self._n] = k, v
        self._n += 1

    def overwrite(self, j: int, k, v) -> None:
        """Replace the key and value held in row j by those of a new token (how a rolling buffer evicts)."""
        if self._n == 0:
            raise ValueError("the cache is empty: append a key and value before overwriting one")
        j = as_int(j, "j", low=0, high=self._n - 1)
        if self._H_kv is None:
            k = _as_vector(k, "k", self._K.shape[2])[None, :]  # (1, d)
            v = _as_vector(v, "v", self._V.shape[2])[None, :]  # (1, d_v)
        else:
            k = _as_heads(k, "k", self._K.shape[1:])  # (H_kv, d_h)
            v = _as_heads(v, "v", self._V.shape[1:])  # (H_kv, d_v)
        self._K[j], self._V[j] = k, v

    def weights(self, q) -> np.ndarray:
        """w_j = softmax_j(q·k_j/√d) over the cached tokens: the messages into the new node. (n,), or (H, n)."""
        if self._n == 0:
            raise ValueError("the cache is empty: append a key and value before attending")
        if self._H_kv is None:
            q = _as_vector(q, "q", self._K.shape[2])  # (d,)
            return step_weights(q, self.keys)  # (n,)
        q = _as_heads(q, "q", None)  # (H, d_h)
        if q.shape[1] != self._K.shape[2] or q.shape[0] % self._H_kv:
            raise ValueError(f"q must have shape (H, {self._K.shape[2]}) with H a multiple of "
                             f"n_kv_heads = {self._H_kv}; got {q.shape}")
        return np.stack([step_weights(q[h], self._K[: self._n, r])
                         for h, r in enumerate(kv_index(q.shape[0], self._H_kv))])  # (H, n)

    def attend(self, q) -> np.ndarray:
        """y = Σ_j w_j v_j for the query q (d,) over every cached token  (thm-decoding-equals-causal). (d_v,).

        With heads, q is (H, d_h) and y (H, d_v): head h sums the values of key/value head ⌊h H_kv / H⌋.
        """
        w = self.weights(q)  # (n,) or (H, n)
        if self._H_kv is None:
            return w @ self.values  # (d_v,)
        return np.stack([w[h] @ self._V[: self._n, r]
                         for h, r in enumerate(kv_index(w.shape[0], self._H_kv))])  # (H, d_v)


def step_weights(q, K) -> np.ndarray:
    s = K @ q / math.sqrt(q.size)  # (n,): one score per cached key
    e = np.exp(s - s.max())  # (n,)
    return e / e.sum()  # (n,)


def decode(Q, K, V) -> np.ndarray:
    """Y row by row: append (k_i, v_i) to a KV cache, then attend with q_i  (thm-decoding-equals-causal).

    ``Q``, ``K`` (n, d) and ``V`` (n, d_v) are the queries, keys and values of n tokens in order; the
    result (n, d_v) is causal attention's output, computed as a decoder does, one token at a time.
    """
    Q, K, V = as_qkv(Q, K, V)  # (n, d), (n, d), (n, d_v)
    if Q.shape[0] != K.shape[0]:
        raise ValueError(f"decoding needs one query per token (n_q = n_k): {Q.shape[0]} != {K.shape[0]}")
    return decode_steps(Q, K, V)  # (n, d_v)


def decode_steps(Q, K, V) -> np.ndarray:
    """Y row by row: token i joins the cache, then its query attends to it  (thm-decoding-equals-causal)."""
    cache = KVCache()
    Y = np.empty((Q.shape[0], V.shape[1]))  # (n, d_v)
    for i in range(Q.shape[0]):
        cache.append(K[i], V[i])  # token i joins the DAG
        Y[i] = cache.attend(Q[i])  # (d_v,): the messages into it, from every j <= i
    return Y


def causal_weights_exact(S) -> sp.Matrix:
    """W_ij = exp(S_ij + B_ij) / Σ_l exp(S_il + B_il), B_ij = 0 for j ≤ i and −∞ otherwise (exact)."""
    S = sp.Matrix(S)  # (n, n)
    E = sp.Matrix(S.rows, S.cols, lambda r, c: sp.exp(S[r, c] + (0 if c <= r else -sp.oo)))  # (n, n)
    return sp.Matrix(S.rows, S.cols, lambda r, c: E[r, c] / sum(E.row(r)))  # (n, n)


# --------------------------------------------------------------------------------------------------
# The theorems, in SymPy, with symbolic scores and values.
# --------------------------------------------------------------------------------------------------
def _scores(n: int) -> sp.Matrix:
    return sp.Matrix(n, n, lambda r, c: sp.Symbol(f"s_{r}{c}", real=True))


@derivation("thm-kv-new-node",
            strength="verified", scope="for n = 1, …, 5 tokens with symbolic scores")
def _check_kv_new_node():
    for n in range(1, 6):
        S = _scores(n + 1)
        W_next, W_now = causal_weights_exact(S), causal_weights_exact(S[:n, :n])
        # Appending token n changes no earlier row: the old graph is the new one's leading block ...
        yield sp.Eq(W_next[:n, :n], W_now, evaluate=False)
        # ... no earlier query attends to the new node (its column is 0 above the diagonal) ...
        yield sp.Eq(W_next[:n, n], sp.zeros(n, 1), evaluate=False)
        # ... and it attends to every node j <= n, itself included: messages flow only in.
        yield sp.And(*[sp.Gt(W_next[n, c], 0) for c in range(n + 1)])


@derivation("thm-decoding-equals-causal",
            strength="verified", scope="for n = 1, …, 4 tokens with symbolic scores and values; the package to 1e-15")
def _check_decoding_equals_causal():
    for n in range(1, 5):
        S = _scores(n)
        V = sp.Matrix(n, 1, lambda r, _: sp.Symbol(f"v_{r}", real=True))
        Y_causal = causal_weights_exact(S) * V  # (n, 1): full causal attention
        for i in range(n):
            # Step i sees the cache of tokens 0..i: a softmax over those keys alone.
            e = [sp.exp(S[i, c]) for c in range(i + 1)]
            y_step = sum(e[c] * V[c, 0] for c in range(i + 1)) / sum(e)
            yield sp.Eq(y_step, Y_causal[i, 0])
    # The package: decoding with the cache equals dense causal attention on the whole sequence.
    rng = np.random.default_rng(6)
    Q, K, Vn = rng.standard_normal((12, 4)), rng.standard_normal((12, 4)), rng.standard_normal((12, 3))
    S = Q @ K.T / 2.0  # (12, 12), √d = 2
    S = np.where(np.tril(np.ones((12, 12), dtype=bool)), S, -np.inf)  # (12, 12)
    W = np.exp(S - S.max(axis=1, keepdims=True))  # (12, 12)
    yield bool(np.allclose(decode(Q, K, Vn), (W / W.sum(axis=1, keepdims=True)) @ Vn, rtol=0, atol=1e-15))
