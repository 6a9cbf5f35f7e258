"""Shared keys and latent keys: H query heads read H_kv < H key/value heads, or one latent per token.

Grouped-query attention (Ainslie et al. 2023) gives each group of H/H_kv query heads one key/value
head; H_kv = 1 is multi-query attention (Shazeer 2019) and H_kv = H is multi-head attention. Read
as graphs, the layer still has H attention graphs, one per query head, but the key/value nodes
that feed them are shared by a group. The layer itself is
``multi_head_attention(..., n_kv_heads=H_kv)`` (``multihead.py``) and its cache
``KVCache(n_kv_heads=H_kv)`` (``decoding.py``); this module holds what is new here: the cache
arithmetic and multi-head latent attention (DeepSeek-AI 2024), where every key and value is
read off one low-rank latent c_j = x_j W_DKV per token, so the cache holds c_j alone. Absorbing the
key up-projection into the query gives the same scores (``thm-absorbed-scores``); the rotary part
cannot be absorbed and travels in a few extra, decoupled columns. The chapter is ``book/kv_sharing.md``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .attention import attention
from .multihead import kv_index, multi_head_attention, split_heads
from .registry import close_to_exact, derivation, symbol_matrix
from .sequence_positions import rotary
from .softmax import softmax
from .validation import as_int, as_mask, as_matrix, check_same

__all__ = ["absorbed_latent_attention", "grouped_step", "kv_cache_numbers", "latent_attention",
           "latent_cache_numbers", "latent_step"]


# --------------------------------------------------------------------------------------------------
# The cache: numbers per token
# --------------------------------------------------------------------------------------------------

def kv_cache_numbers(n_layers: int, n_kv_heads: int, d_h: int) -> int:
    """2 L H_kv d_h: the numbers a KV cache holds per token, keys and values of every layer.

    >>> kv_cache_numbers(80, 8, 128)  # Llama 2 70B
    163840
    """
    L, H_kv, d_h = (as_int(v, name) for v, name in ((n_layers, "n_layers"), (n_kv_heads, "n_kv_heads"),
                                                     (d_h, "d_h")))
    return 2 * L * H_kv * d_h


def latent_cache_numbers(n_layers: int, d_c: int, d_R: int = 0) -> int:
    """L (d_c + d_R): the numbers a latent cache holds per token, a latent and a rotary key per layer.

    >>> latent_cache_numbers(60, 512, 64)  # DeepSeek-V2
    34560
    """
    L = as_int(n_layers, "n_layers")
    d_c = as_int(d_c, "d_c")
    d_R = as_int(d_R, "d_R", low=0)
    return L * (d_c + d_R)


# --------------------------------------------------------------------------------------------------
# One decoding step with shared keys: the kernel the benchmark times
# --------------------------------------------------------------------------------------------------

def grouped_step(q, K, V) -> np.ndarray:
    """y_h = Σ_j softmax_j(q_h·k_{γ(h), j}/√d_h) v_{γ(h), j}: one new token's H heads  (eq-gqa). (H, d_v).

    ``q`` is (H, d_h), ``K`` (n, H_kv, d_h) and ``V`` (n, H_kv, d_v) the cache, H a multiple of H_kv.

    >>> grouped_step(np.zeros((2, 1)), np.zeros((3, 1, 1)), np.arange(3.0).reshape(3, 1, 1)).tolist()
    [[1.0], [1.0]]
    """
    q = as_matrix(q, "q", shape_doc="(H, d_h)")  # (H, d_h)
    K, V = _as_cache(K, "K"), _as_cache(V, "V")  # (n, H_kv, d_h), (n, H_kv, d_v)
    check_same(K.shape[:2], V.shape[:2], "K and V must hold the same tokens and key/value heads")
    if q.shape[1] != K.shape[2]:
        raise ValueError(f"q and K must share d_h: {q.shape[1]} != {K.shape[2]}")
    if q.shape[0] % K.shape[1]:
        raise ValueError(f"q has {q.shape[0]} heads, not a multiple of the cache's n_kv_heads = {K.shape[1]}")
    return grouped_step_kernel(q, K, V)  # (H, d_v)


def grouped_step_kernel(q, K, V) -> np.ndarray:
    """y_h = Σ_j softmax_j(q_h·k_{γ(h), j}/√d_h) v_{γ(h), j}  (eq-gqa). (H, d_v)."""
    H, d_h = q.shape
    H_kv = K.shape[1]
    K_r = K.transpose(1, 0, 2)  # (H_kv, n, d_h): head-major view
    V_r = V.transpose(1, 0, 2)  # (H_kv, n, d_v)
    q_g = q.reshape(H_kv, H // H_kv, d_h)  # (H_kv, G, d_h): G query heads a group
    S = q_g @ K_r.transpose(0, 2, 1) / math.sqrt(d_h)  # (H_kv, G, n): shared keys
    W = np.exp(S - S.max(axis=2, keepdims=True))  # (H_kv, G, n)
    W /= W.sum(axis=2, keepdims=True)
    return (W @ V_r).reshape(H, -1)  # (H, d_v)


def _as_cache(A, name: str) -> np.ndarray:
    A = np.asarray(A)
    if A.ndim != 3:
        raise ValueError(f"{name} must be a cache of shape (n, n_kv_heads, d); got shape {A.shape}")
    flat = as_matrix(A.reshape(A.shape[0], -1), name, shape_doc="(n, n_kv_heads, d)")  # (n, H_kv d)
    if A.size == 0:
        raise ValueError(f"{name} is empty: a cache holds at least one token")
    return flat.reshape(A.shape)  # (n, H_kv, d)


# --------------------------------------------------------------------------------------------------
# Multi-head latent attention (DeepSeek-V2)
# --------------------------------------------------------------------------------------------------

def _latent_inputs(X, W_Q, W_DKV, W_UK, W_UV, W_O, n_heads, mask, W_QR, W_KR):
    X = as_matrix(X, "X", shape_doc="(n, d_model)")  # (n, d_model)
    n, d_model = X.shape
    H = as_int(n_heads, "n_heads")
    if d_model % H:
        raise ValueError(f"d_model = {d_model} is not divisible into n_heads = {H} heads of equal width")
    W_DKV = as_matrix(W_DKV, "W_DKV", shape_doc="(d_model, d_c)")  # (d_model, d_c)
    d_c = W_DKV.shape[1]
    shapes = {"W_Q": (d_model, d_model), "W_DKV": (d_model, d_c), "W_UK": (d_c, d_model),
              "W_UV": (d_c, d_model), "W_O": (d_model, d_model)}
    Ws = {}
    for name, W in (("W_Q", W_Q), ("W_DKV", W_DKV), ("W_UK", W_UK), ("W_UV", W_UV), ("W_O", W_O)):
        Ws[name] = as_matrix(W, name, shape_doc=str(shapes[name]))  # shapes[name]
        if Ws[name].shape != shapes[name]:
            raise ValueError(f"{name} must have shape {shapes[name]} (d_model = {d_model}, d_c = {d_c}); "
                             f"got {Ws[name].shape}")
    if (W_QR is None) != (W_KR is None):
        raise ValueError("W_QR and W_KR come together (the decoupled rotary part): give both or neither")
    if W_QR is not None:
        W_KR = as_matrix(W_KR, "W_KR", shape_doc="(d_model, d_R)")  # (d_model, d_R)
        d_R = W_KR.shape[1]
        W_QR = as_matrix(W_QR, "W_QR", shape_doc="(d_model, n_heads·d_R)")  # (d_model, H d_R)
        if W_KR.shape[0] != d_model or d_R % 2 or W_QR.shape != (d_model, H * d_R):
            raise ValueError(f"W_KR must be (d_model, d_R) with d_R even and W_QR (d_model, n_heads·d_R); "
                             f"got {W_KR.shape} and {W_QR.shape}")
        Ws["W_QR"], Ws["W_KR"] = W_QR, W_KR
    allowed = None if mask is None else as_mask(mask, "mask", (n, n))  # (n, n)
    return X, Ws, H, allowed


def latent_parts(X, Ws, H):
    """C = X W_DKV, the per-head queries and, when given, the rotary queries and the shared rotary key."""
    C = X @ Ws["W_DKV"]  # (n, d_c): one latent node per token
    Qs = split_heads(X @ Ws["W_Q"], H, "Q")  # H × (n, d_h)
    if "W_KR" not in Ws:
        return C, Qs, [None] * H, None
    p = np.arange(X.shape[0])  # (n,): positions 0..n−1
    K_R = rotary(X @ Ws["W_KR"], p)  # (n, d_R): one rotary key per token, shared by the heads
    Q_R = [rotary(Q, p) for Q in split_heads(X @ Ws["W_QR"], H, "Q_R")]  # H × (n, d_R)
    return C, Qs, Q_R, K_R


def latent_attention(X, W_Q, W_DKV, W_UK, W_UV, W_O, n_heads: int, mask=None,
                     W_QR=None, W_KR=None) -> tuple[np.ndarray, np.ndarray]:
    """K_h = C W_UK^(h), V_h = C W_UV^(h), C = X W_DKV; Y = [Y_1 ⋯ Y_H] W_O  (thm-absorbed-scores).

    Multi-head latent attention, as trained: the keys and values of every head are read off one
    latent c_j = x_j W_DKV (d_c numbers) per token. ``X`` is (n, d_model); ``W_Q`` and ``W_O`` are
    (d_model, d_model), ``W_DKV`` (d_model, d_c), ``W_UK`` and ``W_UV`` (d_c, d_model), split into
    H heads of d_h = d_model/H columns. The optional decoupled rotary part (``W_QR``
    (d_model, H·d_R) and ``W_KR`` (d_model, d_R)) adds q^R_{h,i}·k^R_j to head h's scores, with
    RoPE at positions 0..n−1 and one rotary key per token for all heads; the scale is then
    √(d_h + d_R). Returns Y (n, d_model) and the weights (H, n, n).
    """
    X, Ws, H, allowed = _latent_inputs(X, W_Q, W_DKV, W_UK, W_UV, W_O, n_heads, mask, W_QR, W_KR)
    C, Qs, Q_R, K_R = latent_parts(X, Ws, H)
    Ks, Vs = split_heads(C @ Ws["W_UK"], H, "K"), split_heads(C @ Ws["W_UV"], H, "V")  # H × (n, d_h)
    heads = [latent_head(Q_h, K_h, V_h, Q_Rh, K_R, allowed)
             for Q_h, K_h, V_h, Q_Rh in zip(Qs, Ks, Vs, Q_R)]  # H × ((n, d_h), (n, n))
    return np.hstack([Y_h for Y_h, _ in heads]) @ Ws["W_O"], np.stack([W_h for _, W_h in heads])


def latent_head(Q_h, K_h, V_h, Q_Rh, K_R, allowed):
    """W_h = softmax((Q_h K_hᵀ + Q^R_h K^Rᵀ)/√(d_h + d_R)), Y_h = W_h V_h: one head, keys materialised."""
    d_R = 0 if K_R is None else K_R.shape[1]
    S = Q_h @ K_h.T  # (n, n)
    if K_R is not None:
        S = S + Q_Rh @ K_R.T  # (n, n): the decoupled rotary scores
    W_h = softmax(S / math.sqrt(Q_h.shape[1] + d_R), allowed)  # (n, n)
    return W_h @ V_h, W_h  # (n, d_h), (n, n)


def absorbed_latent_attention(X, W_Q, W_DKV, W_UK, W_UV, W_O, n_heads: int, mask=None,
                              W_QR=None, W_KR=None) -> tuple[np.ndarray, np.ndarray]:
    """S_h = (Q_h W_UK^(h)ᵀ) Cᵀ/√(d_h + d_R): the scores read the latents themselves  (thm-absorbed-scores).

    The same layer as :func:`latent_attention`, computed as at inference: no key or value is ever
    formed. Query head h is mapped into the latent space once, q̃ = Q_h W_UK^(h)ᵀ (n, d_c), and
    scores the latents C; the output sums latents, W_h C, and maps them up afterwards by
    W_UV^(h). Same arguments and results.
    """
    X, Ws, H, allowed = _latent_inputs(X, W_Q, W_DKV, W_UK, W_UV, W_O, n_heads, mask, W_QR, W_KR)
    C, Qs, Q_R, K_R = latent_parts(X, Ws, H)
    UK, UV = split_heads(Ws["W_UK"], H, "W_UK"), split_heads(Ws["W_UV"], H, "W_UV")  # H × (d_c, d_h)
    heads = [absorbed_head(Q_h, UK_h, UV_h, C, Q_Rh, K_R, allowed)
             for Q_h, UK_h, UV_h, Q_Rh in zip(Qs, UK, UV, Q_R)]  # H × ((n, d_h), (n, n))
    return np.hstack([Y_h for Y_h, _ in heads]) @ Ws["W_O"], np.stack([W_h for _, W_h in heads])


def absorbed_head(Q_h, UK_h, UV_h, C, Q_Rh, K_R, allowed):
    """W_h = softmax(((Q_h W_UKᵀ) Cᵀ + Q^R_h K^Rᵀ)/√(d_h + d_R)), Y_h = (W_h C) W_UV: one head on the latents."""
    d_R = 0 if K_R is None else K_R.shape[1]
    Q_tilde = Q_h @ UK_h.T  # (n, d_c): the query, absorbed into the latent space
    S = Q_tilde @ C.T  # (n, n)
    if K_R is not None:
        S = S + Q_Rh @ K_R.T  # (n, n)
    W_h = softmax(S / math.sqrt(Q_h.shape[1] + d_R), allowed)  # (n, n)
    return (W_h @ C) @ UV_h, W_h  # (n, d_h), (n, n)


def latent_step(q_tilde, C, UV, d_h: int) -> np.ndarray:
    """y_h = (Σ_j softmax_j(q̃_h·c_j/√d_h) c_j) W_UV^(h): one new token's H heads on a latent cache. (H, d_h).

    ``q_tilde`` (H, d_c) are the absorbed queries, ``C`` (n, d_c) the cached latents, ``UV``
    (H, d_c, d_h) the value up-projections; no rotary part.

    >>> latent_step(np.zeros((1, 2)), np.eye(2), np.ones((1, 2, 1)), 1).tolist()
    [[1.0]]
    """
    q_tilde = as_matrix(q_tilde, "q_tilde", shape_doc="(H, d_c)")  # (H, d_c)
    C = as_matrix(C, "C", shape_doc="(n, d_c)")  # (n, d_c)
    d_h = as_int(d_h, "d_h")
    if q_tilde.shape[1] != C.shape[1]:
        raise ValueError(f"q_tilde and C must share d_c: {q_tilde.shape[1]} != {C.shape[1]}")
    UV = np.asarray(UV, dtype=float)  # (H, d_c, d_h)
    if UV.shape != (q_tilde.shape[0], C.shape[1], d_h):
        raise ValueError(f"UV must have shape (H, d_c, d_h) = {(q_tilde.shape[0], C.shape[1], d_h)}; got {UV.shape}")
    return latent_step_kernel(q_tilde, C, UV, d_h)  # (H, d_h)


def latent_step_kernel(q_tilde, C, UV, d_h: int) -> np.ndarray:
    """y_h = (Σ_j softmax_j(q̃_h·c_j/√d_h) c_j) W_UV^(h). (H, d_h)."""
    S = q_tilde @ C.T / math.sqrt(d_h)  # (H, n): every head scores the same latent nodes
    W = np.exp(S - S.max(axis=1, keepdims=True))  # (H, n)
    W /= W.sum(axis=1, keepdims=True)
    return np.einsum("hc,hcd->hd", W @ C, UV)  # (H, d_h)


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

_h, _H, _H_kv = sp.symbols("h H H_kv", integer=True, positive=True)


def _gamma(h, H, H_kv):
    """γ(h) = ⌈h H_kv / H⌉, 1-based: the key/value head of query head h."""
    return sp.ceiling(h * H_kv / H)


def _display_gqa():
    Y_h, S = sp.Symbol("Y_h"), sp.Function(r"\operatorname{softmax}")
    r = r"\lceil h H_{\text{kv}} / H \rceil"
    Q_h = sp.Symbol("Q_h", commutative=False)
    K, V = sp.Symbol(f"K_{{{r}}}^\\top", commutative=False), sp.Symbol(f"V_{{{r}}}", commutative=False)
    rhs = sp.Mul(S(Q_h * K / sp.sqrt(sp.Symbol("d_h"))), V, evaluate=False)
    return sp.Eq(Y_h, rhs, evaluate=False)


def _softmax_entries(S, allowed=None):
    """W_ij = exp(S_ij) / Σ_l exp(S_il) over the allowed keys, written out entry by entry."""
    ok = (lambda a, b: True) if allowed is None else (lambda a, b: bool(allowed[a][b]))
    return sp.Matrix(S.rows, S.cols, lambda a, b: (sp.exp(S[a, b]) if ok(a, b) else 0)
                     / sum(sp.exp(S[a, l]) for l in range(S.cols) if ok(a, l)))


def _f(M) -> np.ndarray:
    return np.array(M, dtype=float)


# A small exact example: three tokens, d_model = 4, H = 4 heads of width 1.
_X = sp.Matrix([[1, 0, 2, -1], [0, 1, 1, 1], [1, 1, 0, 2]])
_W_Q = sp.Matrix([[1, 0, 0, 1], [0, 1, 1, 0], [1, 0, 0, 0], [0, 0, 1, 1]])
_W_O = sp.Matrix([[1, 0, 0, 1], [0, 2, 0, 0], [1, 1, 1, 0], [0, 0, 0, 1]])


def _exact_gqa(X, W_Q, W_K, W_V, W_O, H, H_kv, allowed=None):
    """[Y_1 ⋯ Y_H] W_O with Y_h = softmax(Q_h K_γ(h)ᵀ/√d_h) V_γ(h), from the formula (1-based γ)."""
    d_h = W_Q.cols // H
    Q, K, V = X * W_Q, X * W_K, X * W_V
    cols = lambda M, r: M[:, (r - 1) * d_h:r * d_h]  # noqa: E731 -- head r's columns, 1-based
    Ys = []
    for h in range(1, H + 1):
        r = int(_gamma(h, H, H_kv))
        Ys.append(_softmax_entries(cols(Q, h) * cols(K, r).T / sp.sqrt(d_h), allowed) * cols(V, r))
    return sp.Matrix.hstack(*Ys) * W_O


@derivation("eq-gqa", display=_display_gqa, strength="verified",
            scope=("for three tokens and four query heads of width 1 sharing two key/value heads and one, "
                   "with and without a mask; the 1-based group map equals the package's for every size"))
def _check_gqa():
    W_K = {2: sp.Matrix([[0, 1], [1, 0], [0, 1], [1, 1]]), 1: sp.Matrix([[1], [0], [-1], [1]])}
    W_V = {2: sp.Matrix([[1, 2], [0, 1], [0, 0], [1, 0]]), 1: sp.Matrix([[1], [2], [0], [1]])}
    for H_kv in (2, 1):
        for mask in (None, [[1, 0, 0], [1, 1, 0], [1, 1, 1]]):
            exact = _exact_gqa(_X, _W_Q, W_K[H_kv], W_V[H_kv], _W_O, 4, H_kv, mask)
            m = None if mask is None else np.array(mask, dtype=bool)
            Y, W = multi_head_attention(_f(_X), _f(_X), _f(_W_Q), _f(W_K[H_kv]), _f(W_V[H_kv]), _f(_W_O), 4,
                                        mask=m, n_kv_heads=H_kv)
            yield close_to_exact(exact, Y, atol=1e-12) and W.shape == (4, 3, 3)
    # The page writes γ 1-based, ⌈h H_kv/H⌉; the package 0-based, ⌊h₀/G⌋ with G = H/H_kv. With
    # h₀ = aG + b (0 ≤ b < G), h = h₀ + 1: ⌈(aG + b + 1)/G⌉ = a + 1 for every a ≥ 0, b = s, G = s + 1 + r.
    a, r, s = sp.symbols("a r s", integer=True, nonnegative=True)
    G = s + 1 + r
    yield sp.Eq(sp.ceiling(a + (s + 1) / G), a + 1, evaluate=False)
    yield all(int(_gamma(h + 1, H, H_kv)) - 1 == int(kv_index(H, H_kv)[h])
              for H in range(1, 13) for H_kv in range(1, H + 1) if H % H_kv == 0 for h in range(H))


@derivation("thm-gqa-extremes", strength="proved",
            scope=("for every number of heads H and every head h (the group map); the package bit for bit "
                   "against its multi-head layer"))
def _check_gqa_extremes():
    # H_kv = H: γ(h) = ⌈h H/H⌉ = h, every query head reads its own keys (multi-head attention).
    yield sp.Eq(_gamma(_h, _H, _H), _h, evaluate=False)
    # H_kv = 1: γ(h) = ⌈h/H⌉ = 1 for 1 ≤ h ≤ H; write h = s + 1 and H = h + r with r, s ≥ 0.
    r, s = sp.symbols("r s", integer=True, nonnegative=True)
    yield sp.Eq(_gamma(s + 1, s + 1 + r, 1), 1, evaluate=False)
    # The package: n_kv_heads = H is the multi-head layer to the last bit; n_kv_heads = 1 is the
    # multi-head layer whose H key (and value) heads are copies of the one shared head.
    rng = np.random.default_rng(39)
    X, W_Q, W_K, W_V, W_O = rng.standard_normal((5, 6)), *rng.standard_normal((4, 6, 6))  # (5, 6), 4 × (6, 6)
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (5, 6) each: three heads of width 2
    heads = [attention(Q[:, c], K[:, c], V[:, c]) for c in (slice(0, 2), slice(2, 4), slice(4, 6))]
    Y, W = np.hstack([Y_h for Y_h, _ in heads]) @ W_O, np.stack([W_h for _, W_h in heads])  # the multi-head layer
    Y_g, W_g = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 3, n_kv_heads=3)
    yield bool(np.allclose(Y, Y_g, rtol=0, atol=1e-12) and np.allclose(W, W_g, rtol=0, atol=1e-15))
    Y_1, W_1 = multi_head_attention(X, X, W_Q, W_K[:, :2], W_V[:, :2], W_O, 3, n_kv_heads=1)
    Y_c, W_c = multi_head_attention(X, X, W_Q, np.tile(W_K[:, :2], 3), np.tile(W_V[:, :2], 3), W_O, 3)
    yield bool(np.allclose(Y_1, Y_c, rtol=0, atol=1e-12) and np.allclose(W_1, W_c, rtol=0, atol=1e-15))


@derivation("thm-absorbed-scores", strength="proved",
            scope=("for matrices of any shapes (n tokens, latent width d_c, head width d_h); the package's two "
                   "forms to 1e-12 with and without the rotary part"))
def _check_absorbed_scores():
    n, d_c, d_h, d_m = sp.symbols("n d_c d_h d_model", integer=True, positive=True)
    Q_h, C = sp.MatrixSymbol("Q_h", n, d_h), sp.MatrixSymbol("C", n, d_c)
    UK, UV, O_h = sp.MatrixSymbol("U_K", d_c, d_h), sp.MatrixSymbol("U_V", d_c, d_h), sp.MatrixSymbol("O_h", d_h, d_m)
    W_h = sp.MatrixSymbol("W_h", n, n)
    # Scores: Q_h K_hᵀ with K_h = C W_UK equals (Q_h W_UKᵀ) Cᵀ: (C U)ᵀ = Uᵀ Cᵀ, then associativity.
    yield sp.Eq((Q_h * (C * UK).T).doit(), (Q_h * UK.T) * C.T, evaluate=False)
    # Values: W_h V_h W_O^(h) with V_h = C W_UV equals (W_h C)(W_UV W_O^(h)): the up-projection can be
    # folded into W_O as well, so the output is a weighted sum of latents.
    yield sp.Eq(sp.MatMul(W_h, C * UV, O_h).doit(), sp.MatMul(W_h * C, UV * O_h).doit(), evaluate=False)
    # Entry by entry for symbolic 2 × 3 latents and 3 × 2 up-projections.
    Qs, Cs, Us = symbol_matrix("q", 2, 2), symbol_matrix("c", 2, 3), symbol_matrix("u", 3, 2)
    yield sp.Eq(Qs * (Cs * Us).T, (Qs * Us.T) * Cs.T)
    # The package: both forms give the same layer, with and without the decoupled rotary part.
    rng = np.random.default_rng(2024)
    X = rng.standard_normal((6, 4))  # (n, d_model)
    args = (X, rng.standard_normal((4, 4)), rng.standard_normal((4, 3)), rng.standard_normal((3, 4)),
            rng.standard_normal((3, 4)), rng.standard_normal((4, 4)), 2)
    rope = {"W_QR": rng.standard_normal((4, 4)), "W_KR": rng.standard_normal((4, 2))}
    causal = np.tril(np.ones((6, 6), dtype=bool))
    for kw in ({}, rope, {"mask": causal, **rope}):
        Y_a, W_a = latent_attention(*args, **kw)
        Y_b, W_b = absorbed_latent_attention(*args, **kw)
        yield bool(np.allclose(Y_a, Y_b, rtol=0, atol=1e-12) and np.allclose(W_a, W_b, rtol=0, atol=1e-12))
