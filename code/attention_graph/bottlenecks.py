"""Bottlenecks in the causal DAG: early tokens have more paths to the last one, and more influence.

Across T causal layers with self-loops (attention lets a token read itself, so a message may
wait), a message from token j reaches the last token n along every non-decreasing sequence of
positions j ≤ i_1 ≤ ... ≤ i_{T-1} ≤ n:
there are C(n − j + T − 1, T − 1) of them (``thm-causal-path-count``), more the earlier j is. With
the weights held fixed, the last output is a sum over those walks of the products of their weights
(``thm-walk-sensitivity``), so early tokens weigh more in what the last position computes
(Barbero et al. 2024, over-squashing in decoder-only Transformers). The chapter
``book/bottlenecks.md`` counts the paths and measures ‖∂y_n/∂x_j‖ in random causal stacks with the
book's backward pass.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp

from .attention import attention
from .backward import attention_backward
from .graph import causal_mask
from .registry import derivation
from .validation import as_int, as_matrix, as_rng

__all__ = ["causal_path_counts", "causal_stack", "init_causal_stack", "last_token_sensitivity",
           "path_share", "sensitivity_study", "uniform_walk_share"]

MAX_COUNT = 2**62  # counts are int64: larger ones are refused, not wrapped around


def _walk_counts(n: int, T: int) -> np.ndarray:
    """walks[j] = walks of T steps from j to the last token: T reversed cumulative sums of e_n. (n,)."""
    walks = np.zeros(n, dtype=np.int64)  # (n,)
    walks[-1] = 1  # zero steps: only the last token itself
    for _ in range(T):
        walks = np.cumsum(walks[::-1])[::-1]  # (n,): j may step to any i >= j
    return walks


def causal_path_counts(n: int, n_layers: int) -> np.ndarray:
    """walks_T(j) = C(n − j + T − 1, T − 1): walks from token j to token n in T causal layers  (thm-causal-path-count).

    Tokens are numbered 1..n; entry j − 1 of the result is walks_T(j). Self-loops count (a message may
    stay put for a layer). Shape (n,), int64.

    >>> causal_path_counts(4, 3).tolist()
    [10, 6, 3, 1]
    """
    n, T = as_int(n, "n"), as_int(n_layers, "n_layers")
    if math.comb(n + T - 2, T - 1) > MAX_COUNT:
        raise ValueError(f"n = {n} and n_layers = {T} give more than 2**62 paths (int64 would overflow)")
    return _walk_counts(n, T)


def path_share(n: int, n_layers: int) -> np.ndarray:
    """walks_T(j) / Σ_j' walks_T(j'): the share of all T-step walks into token n that start at j. (n,)."""
    walks = causal_path_counts(n, n_layers)  # (n,)
    return walks / walks.sum()  # (n,)


def uniform_walk_share(n: int, n_layers: int) -> np.ndarray:
    """Row n of the T-th power of Ā, Ā_ij = 1/i for j ≤ i: the last token's mix under uniform causal attention. (n,)."""
    n, T = as_int(n, "n"), as_int(n_layers, "n_layers")
    M = causal_mask(n)  # (n, n)
    W = M / M.sum(axis=1, keepdims=True)  # (n, n)
    row = np.zeros(n)  # (n,)
    row[-1] = 1.0
    for _ in range(T):
        row = row @ W  # (n,)
    return row


def init_causal_stack(d: int, n_layers: int, rng: np.random.Generator, scale: float = 1.0) -> list[dict]:
    """T layers of projections W_Q, W_K, W_V with N(0, scale²/d) entries, drawn from ``rng``. Each (d, d)."""
    d, T, rng = as_int(d, "d"), as_int(n_layers, "n_layers"), as_rng(rng)
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not scale >= 0:
        raise ValueError(f"scale must be a real number >= 0; got {scale!r}")
    return [{name: rng.standard_normal((d, d)) * scale / math.sqrt(d) for name in ("W_Q", "W_K", "W_V")}
            for _ in range(T)]


def _checked_layers(layers, d: int) -> list[dict]:
    if not isinstance(layers, (list, tuple)) or not layers:
        raise TypeError("layers must be a non-empty list of dicts with W_Q, W_K, W_V (init_causal_stack)")
    out = []
    for k, p in enumerate(layers):
        if not isinstance(p, dict) or set(p) != {"W_Q", "W_K", "W_V"}:
            raise ValueError(f"layers[{k}] must be a dict with exactly W_Q, W_K and W_V")
        q = {name: as_matrix(M, f"layers[{k}][{name!r}]", shape_doc="(d, d)") for name, M in p.items()}
        for name, M in q.items():
            if M.shape != (d, d):
                raise ValueError(f"layers[{k}][{name!r}] must have shape {(d, d)} (d = columns of X); got {M.shape}")
        out.append(q)
    return out


def _forward(X, layers, residual: bool):
    """Every layer's input and weights: X⁽ˡ⁾ = [X⁽ˡ⁻¹⁾ +] softmax_causal(Q Kᵀ/√d) V."""
    mask = causal_mask(X.shape[0])  # (n, n)
    inputs, weights = [], []
    for p in layers:
        inputs.append(X)
        Y, W = attention(X @ p["W_Q"], X @ p["W_K"], X @ p["W_V"], mask)  # (n, d), (n, n)
        weights.append(W)
        X = X + Y if residual else Y  # (n, d)
    return X, inputs, weights


def causal_stack(X, layers, *, residual: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
    """Y = X⁽ᵀ⁾ of a causal stack, X⁽ˡ⁾ = [X⁽ˡ⁻¹⁾ +] softmax_causal(X W_Q (X W_K)ᵀ/√d) X W_V; and the T weights.

    ``X`` is (n, d), ``layers`` as :func:`init_causal_stack` gives. Returns (Y (n, d), [W (n, n)]).
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    layers = _checked_layers(layers, X.shape[1])
    if not isinstance(residual, (bool, np.bool_)):
        raise TypeError(f"residual must be True or False; got {residual!r}")
    Y, _, weights = _forward(X, layers, bool(residual))
    return Y, weights


def _input_gradient(inputs, layers, dY, residual: bool):
    """dL/dX⁽⁰⁾ from dL/dX⁽ᵀ⁾ = dY, layer by layer down through attention_backward. (n, d)."""
    mask = causal_mask(dY.shape[0])  # (n, n)
    for X, p in zip(reversed(inputs), reversed(layers)):
        Q, K, V = X @ p["W_Q"], X @ p["W_K"], X @ p["W_V"]  # (n, d) each
        dQ, dK, dV = attention_backward(Q, K, V, dY, mask)  # (n, d) each
        dX = dQ @ p["W_Q"].T + dK @ p["W_K"].T + dV @ p["W_V"].T  # (n, d)
        # the skip passes dY through unchanged:
        dY = dY + dX if residual else dX  # (n, d)
    return dY


def last_token_sensitivity(X, layers, *, residual: bool = False) -> np.ndarray:
    """s_j = ‖∂y_n/∂x_j‖_F for every input token j, by the backward pass, one output feature at a time. (n,).

    ``X`` (n, d) and ``layers`` as in :func:`causal_stack`; y_n is the last row of its output.
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    layers = _checked_layers(layers, X.shape[1])
    if not isinstance(residual, (bool, np.bool_)):
        raise TypeError(f"residual must be True or False; got {residual!r}")
    _, inputs, _ = _forward(X, layers, bool(residual))
    n, d = X.shape
    J = np.zeros((n, d, d))  # (n, d, d): J[j, c, :] = ∂y_{n,c}/∂x_j
    for c in range(d):
        dY = np.zeros((n, d))  # (n, d)
        dY[-1, c] = 1.0
        J[:, c, :] = _input_gradient(inputs, layers, dY, bool(residual))
    return np.sqrt((J**2).sum(axis=(1, 2)))  # (n,)


def sensitivity_study(n: int = 16, d: int = 16, depths=(1, 2, 4, 8), seeds=(0, 1, 2, 3, 4),
                      residual: bool = False) -> dict:
    """For each depth T and seed: the share s_j / Σ s of the last token's sensitivity, with the
    path share and the uniform walk's share. Inputs and layers are seeded (seed, and seed + 100).

    Returns {"n", "d", "seeds", "residual", "by_depth": {T: {"sensitivity_share": [(n,) per seed],
    "path_share": (n,), "walk_share": (n,)}}}.
    """
    n, d = as_int(n, "n"), as_int(d, "d")
    seeds = [as_int(s, "seeds", low=0, what="a list of integers >= 0") for s in seeds]
    by_depth = {}
    for T in depths:
        T = as_int(T, "depths", what="a list of positive integers")
        shares = []
        for seed in seeds:
            X = np.random.default_rng(seed).standard_normal((n, d))  # (n, d)
            layers = init_causal_stack(d, T, np.random.default_rng(seed + 100))
            s = last_token_sensitivity(X, layers, residual=residual)  # (n,)
            shares.append(s / s.sum())
        by_depth[T] = {"sensitivity_share": shares, "path_share": path_share(n, T),
                       "walk_share": uniform_walk_share(n, T)}
    return {"n": n, "d": d, "seeds": seeds, "residual": bool(residual), "by_depth": by_depth}


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------
_s, _T = sp.symbols("s T", integer=True, positive=True)  # s = n − j, the distance to the last token
_t = sp.Symbol("t", integer=True, nonnegative=True)


def path_count_formula(s, T):
    """walks_T(j) with s = n − j, as the theorem on the page states it."""
    return sp.binomial(s + T - 1, T - 1)


@derivation("thm-causal-path-count", strength="proved",
            scope="for symbolic n − j and T (induction on T, the step by SymPy's summation and Pascal's rule); "
                  "the package's counts are verified against powers of the causal adjacency up to n = 9, T = 6")
def _check_causal_path_count():
    # Base, T = 1: one step j → n (n attends to j) for every j ≤ n, a single walk; the formula gives C(s, 0) = 1.
    yield sp.Eq(path_count_formula(_s, 1), 1)
    # Step: a walk of T + 1 steps is a walk of T steps to some m with j ≤ m ≤ n, then the step m → n,
    # so walks_{T+1}(s) = Σ_{t=0}^{s} walks_T(t); the sum is the formula at T + 1 (hockey stick).
    yield sp.Eq(sp.summation(path_count_formula(_t, _T), (_t, 0, _s)), path_count_formula(_s, _T + 1))
    # The same step by Pascal's rule, and s = 0 (j = n): only self-loops, one walk.
    yield sp.Eq(sp.expand_func(path_count_formula(_s, _T + 1) - path_count_formula(_s - 1, _T + 1)
                               - path_count_formula(_s, _T)), 0)
    yield sp.Eq(path_count_formula(0, _T), 1)
    # Earlier tokens have more walks: walks(s)/walks(s − 1) = (s + T − 1)/s, which exceeds 1 by (T − 1)/s.
    ratio = sp.combsimp(path_count_formula(_s, _T) / path_count_formula(_s - 1, _T))
    yield sp.Eq(ratio - 1, (_T - 1) / _s)
    # The counts over j = 1..n (s = 0..n − 1) add up to C(n + T − 1, T).
    n = sp.Symbol("n", integer=True, positive=True)
    yield sp.Eq(sp.summation(path_count_formula(_t, _T), (_t, 0, n - 1)), sp.binomial(n + _T - 1, _T))
    # The package against the T-th power of the causal adjacency (with self-loops), exactly.
    for size in range(1, 10):
        A = sp.Matrix(size, size, lambda i, j: 1 if j <= i else 0)  # A_ij = 1: i attends to j
        for T in range(1, 7):
            row = (A**T).row(size - 1)  # walks into the last token, from each j
            yield [int(x) for x in row] == causal_path_counts(size, T).tolist()
            yield [int(x) for x in row] == [int(path_count_formula(size - 1 - j, T)) for j in range(size)]


def _walks(n: int, T: int, j: int):
    """Every non-decreasing sequence j = p_0 ≤ p_1 ≤ ... ≤ p_L = n − 1 (0-based positions)."""
    for middle in itertools.combinations_with_replacement(range(j, n), T - 1):
        yield (j, *middle, n - 1)


@derivation("thm-walk-sensitivity", strength="verified",
            scope="for general symbolic causal weights at (n, T) = (3, 2), (3, 3), (4, 2); the package's backward "
                  "pass against the exact uniform walk at n = 6, d = 3, T = 1 to 4, within 1e-12")
def _check_walk_sensitivity():
    for n, T in ((3, 2), (3, 3), (4, 2)):
        Ws = [sp.Matrix(n, n, lambda i, j, l=l: sp.Symbol(f"w{l}_{i}{j}") if j <= i else 0) for l in range(T)]
        P = sp.eye(n)
        for W in Ws:
            P = W * P  # the newest layer on the left
        for j in range(n):
            total = sum(sp.Mul(*[Ws[l][p[l + 1], p[l]] for l in range(T)]) for p in _walks(n, T, j))
            yield sp.Eq(sp.expand(P[n - 1, j]), sp.expand(total))
    # Q = K = 0 makes every causal row uniform and independent of X; with V = X the stack is X ↦ B X
    # with B the T-th power of Ā, so ∂y_n/∂x_j = B_{nj} I and its Frobenius norm is √d B_{nj}.
    n, d = 6, 3
    Abar = sp.Matrix(n, n, lambda i, j: sp.Rational(1, i + 1) if j <= i else 0)
    X = np.random.default_rng(3).standard_normal((n, d))  # (n, d)
    for T in range(1, 5):
        layers = [{"W_Q": np.zeros((d, d)), "W_K": np.zeros((d, d)), "W_V": np.eye(d)} for _ in range(T)]
        want = [float(sp.sqrt(d) * x) for x in (Abar**T).row(n - 1)]
        yield bool(np.allclose(last_token_sensitivity(X, layers), want, rtol=0, atol=1e-12))
