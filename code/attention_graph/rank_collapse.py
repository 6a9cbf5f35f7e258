"""Depth as a random walk: rank collapse, Dobrushin's ergodicity coefficient and its bound.

A stack of attention layers without skips multiplies row-stochastic matrices, so its output is a
random walk of the input: every token's vector becomes an average of the others', and the rows
draw together (Dong et al. 2021 for attention; Li, Han and Wu 2018 for graph convolutions). How
fast is bounded by Dobrushin's ergodicity coefficient τ₁(W) = 1 − min_{i,i'} Σ_j min(W_ij, W_i'j)
(Dobrushin 1956; Seneta 2006, ch. 3): the spread of the rows shrinks by at least τ₁(W) per layer
(``thm-tau-contraction``) and τ₁ is sub-multiplicative (``thm-tau-submultiplicative``). The chapter
``book/rank_collapse.md`` measures the collapse on the complete, the causal and a window graph,
with and without residual connections and LayerNorm (Wu et al. 2023, 2024).
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .attention import attention
from .block import layer_norm
from .graph import causal_mask
from .patterns import window_edges
from .registry import derivation
from .sparse import edges_to_mask
from .validation import as_int, as_mask, as_matrix, as_rng

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["distance_from_rank_one", "ergodicity_coefficient", "product_coefficients", "row_spread"]

ROW_SUM_TOL = 1e-9


# --------------------------------------------------------------------------------------------------
# The coefficient and the two measures of collapse
# --------------------------------------------------------------------------------------------------

def _as_stochastic(W, name: str = "W") -> np.ndarray:
    """``W`` as a float (n_q, n_k) array with non-negative entries and rows summing to 1, or an error."""
    W = as_matrix(W, name, shape_doc="(n_q, n_k)")  # (n_q, n_k)
    if W.shape[0] == 0 or W.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column; got shape {W.shape}")
    if (W < 0).any():
        where = tuple(int(i) for i in np.argwhere(W < 0)[0])
        raise ValueError(f"{name} must be row-stochastic (non-negative, rows summing to 1); "
                         f"found {W[where]} at index {where}")
    tol = 1e-6 if W.dtype == np.float32 else ROW_SUM_TOL
    s = W.sum(axis=1)  # (n_q,)
    bad = np.abs(s - 1.0) > tol
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be row-stochastic (non-negative, rows summing to 1); row {i} "
                         f"sums to {float(s[i])!r}. Normalise it: {name} / {name}.sum(axis=1, keepdims=True)")
    return W


def _tau(W: np.ndarray) -> float:
    """τ₁(W) = 1 − min_{i,i'} Σ_j min(W_ij, W_i'j): one minus the least overlap of two rows."""
    overlap = np.minimum(W[:, None, :], W[None, :, :]).sum(axis=2)  # (n_q, n_q)
    return float(1.0 - overlap.min())


def ergodicity_coefficient(W) -> float:
    """τ₁(W) = 1 − min_{i,i'} Σ_j min(W_ij, W_i'j), Dobrushin's coefficient  (eq-ergodicity-coefficient).

    ``W`` (n_q, n_k) must be row-stochastic (an attention layer's weights); τ₁ lies in [0, 1], is 0
    exactly when every row is the same distribution and 1 when two rows share no key.

    >>> ergodicity_coefficient([[1.0, 0.0], [0.0, 1.0]]), ergodicity_coefficient([[0.5, 0.5], [0.5, 0.5]])
    (1.0, 0.0)
    """
    return min(max(_tau(_as_stochastic(W)), 0.0), 1.0)  # rounding cannot leave [0, 1]


def row_spread(X) -> float:
    """Δ(X) = max_{i,i'} ‖x_i − x_i'‖_∞: the widest gap between two tokens in one feature.

    ``X`` is (n, d). Δ(X) = 0 exactly when every row is the same, X = 1 xᵀ.

    >>> row_spread([[0.0, 1.0], [2.0, 1.5]])
    2.0
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X must have at least one row and one column; got shape {X.shape}")
    return float((X.max(axis=0) - X.min(axis=0)).max())


def distance_from_rank_one(X) -> float:
    """res(X) = ‖X − 1 x̄ᵀ‖_F / ‖X‖_F, x̄ the mean row: how far X is from equal rows, relative.

    ``X`` is (n, d), not all zero. 1 x̄ᵀ is the nearest matrix with equal rows (in the Frobenius
    norm), so res lies in [0, 1] and does not change when X is scaled (Dong et al. 2021's residual).

    >>> distance_from_rank_one([[1.0, 2.0], [1.0, 2.0]]), round(distance_from_rank_one([[1.0], [-1.0]]), 3)
    (0.0, 1.0)
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    norm = float(np.linalg.norm(X))
    if norm == 0.0:
        raise ValueError("X is zero: its distance from rank one, relative to its size, is undefined")
    return float(np.linalg.norm(X - X.mean(axis=0, keepdims=True)) / norm)


def product_coefficients(layers) -> dict[str, np.ndarray]:
    """τ₁(W⁽ˡ⁾ ⋯ W⁽¹⁾) and ∏_{m ≤ l} τ₁(W⁽ᵐ⁾) for l = 1, ..., T  (thm-tau-submultiplicative).

    ``layers`` is a sequence of row-stochastic (n, n) matrices, first layer first. Returns
    {"product": (T,), "bound": (T,)}; by sub-multiplicativity the first never exceeds the second.
    """
    layers = [_as_stochastic(W, f"layers[{k}]") for k, W in enumerate(layers)]
    if not layers:
        raise ValueError("layers must hold at least one weight matrix")
    n = layers[0].shape[0]
    for k, W in enumerate(layers):
        if W.shape != (n, n):
            raise ValueError(f"layers[{k}] must have shape {(n, n)} like layers[0]; got {W.shape}")
    P = np.eye(n)  # (n, n)
    product, bound, running = [], [], 1.0
    for W in layers:
        P = W @ P  # (n, n): the newest layer multiplies on the left
        running *= _tau(W)
        product.append(_tau(P))
        bound.append(running)
    return {"product": np.array(product), "bound": np.array(bound)}  # (T,), (T,)


# --------------------------------------------------------------------------------------------------
# A deep stack of attention layers
# --------------------------------------------------------------------------------------------------

def signed_permutation(d: int, rng: np.random.Generator) -> np.ndarray:
    """A random d × d signed permutation matrix: orthogonal, and it keeps every ‖·‖_∞ too. (d, d)."""
    d = as_int(d, "d")
    rng = as_rng(rng)
    U = np.zeros((d, d))  # (d, d)
    U[np.arange(d), rng.permutation(d)] = rng.choice([-1.0, 1.0], size=d)
    return U


def _layer(X, W_Q, W_K, U, mask, residual: bool, norm: bool):
    """Z = LN(X) (or X), H = softmax(Z W_Q (Z W_K)ᵀ/√d, mask) Z U, and X + H with the skip (pre-LN)."""
    d = X.shape[1]
    Z = layer_norm(X, np.ones(d), np.zeros(d)) if norm else X  # (n, d)
    Y, W = attention(Z @ W_Q, Z @ W_K, Z @ U, mask)  # (n, d), (n, n)
    return (X + Y if residual else Y), W  # (n, d), (n, n)


def deep_attention_stack(X, n_layers: int, rng: np.random.Generator, *, mask=None, residual: bool = False,
                         norm: bool = False) -> dict:
    """X⁽ˡ⁾ = [X⁽ˡ⁻¹⁾ +] W⁽ˡ⁾ Z U⁽ˡ⁾, Z = [LN](X⁽ˡ⁻¹⁾), for l = 1, ..., T: a stack of attention layers.

    Brackets are the options: ``residual`` adds the skip, ``norm`` applies LayerNorm to the layer's
    input (pre-LN, as :func:`transformer_block` by default). ``X`` is (n, d); each layer draws W_Q,
    W_K with N(0, 1/d) entries and a signed permutation U as its value map from ``rng``, so the
    same seed gives the same layers whatever the variant.
    ``mask`` (n, n) boolean as in :func:`attention`. Returns {"r": (T + 1,) distances from rank one res,
    "spread": (T + 1,) row spreads Δ, "weights": T weight matrices (n, n)}.
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    n_layers = as_int(n_layers, "n_layers")
    rng = as_rng(rng)
    n, d = X.shape
    if mask is not None:
        mask = as_mask(mask, "mask", (n, n))  # (n, n)
    for flag, name in ((residual, "residual"), (norm, "norm")):
        if not isinstance(flag, (bool, np.bool_)):
            raise TypeError(f"{name} must be True or False; got {flag!r}")
    r, spread, weights = [distance_from_rank_one(X)], [row_spread(X)], []
    for _ in range(n_layers):
        W_Q = rng.standard_normal((d, d)) / np.sqrt(d)  # (d, d)
        W_K = rng.standard_normal((d, d)) / np.sqrt(d)  # (d, d)
        U = signed_permutation(d, rng)  # (d, d)
        X, W = _layer(X, W_Q, W_K, U, mask, bool(residual), bool(norm))  # (n, d), (n, n)
        weights.append(W)
        spread.append(row_spread(X))
        r.append(distance_from_rank_one(X) if np.linalg.norm(X) > 0 else 0.0)
    return {"r": np.array(r), "spread": np.array(spread), "weights": weights}  # (T + 1,), (T + 1,)


GRAPHS = ("complete", "causal", "window")
VARIANTS = {"attention only": (False, False), "LayerNorm": (False, True),
            "residual": (True, False), "residual + LayerNorm": (True, True)}


def graph_masks(n: int, w: int) -> dict[str, np.ndarray | None]:
    """The chapter's three graphs on n tokens: complete (no mask), causal, window of reach w (the keys |i − j| ≤ w)."""
    n, w = as_int(n, "n"), as_int(w, "w", low=0, what="an integer >= 0")
    return {"complete": None, "causal": causal_mask(n), "window": edges_to_mask(window_edges(n, w), n, n)}


def collapse_study(n: int = 16, d: int = 16, n_layers: int = 40, w: int = 2, seeds=(29, 30, 31, 32, 33)) -> dict:
    """Every graph × every variant, for each seed from the same input and the same layers.

    Returns {"n", "d", "w", "seeds", "n_layers", "runs": {graph: {variant: [run per seed]}},
    "bounds": {graph: product_coefficients of the first seed's stack without skip or norm}}, each
    run as :func:`deep_attention_stack`.
    """
    n, d, n_layers, w = as_int(n, "n"), as_int(d, "d"), as_int(n_layers, "n_layers"), as_int(w, "w", low=0)
    seeds = [as_int(s, "seeds", low=0, what="a list of integers >= 0") for s in seeds]
    if not seeds:
        raise ValueError("seeds must hold at least one seed")
    runs: dict = {graph: {name: [] for name in VARIANTS} for graph in GRAPHS}
    for seed in seeds:
        X = np.random.default_rng(seed).standard_normal((n, d))  # (n, d)
        for graph, mask in graph_masks(n, w).items():
            for name, (res, ln) in VARIANTS.items():
                runs[graph][name].append(deep_attention_stack(
                    X, n_layers, np.random.default_rng(seed + 1000), mask=mask, residual=res, norm=ln))
    bounds = {graph: product_coefficients(runs[graph]["attention only"][0]["weights"]) for graph in GRAPHS}
    return {"n": n, "d": d, "w": w, "seeds": seeds, "n_layers": n_layers, "runs": runs, "bounds": bounds}


def first_below(values, threshold: float) -> int:
    """The first index l with values[l] < threshold (a depth, when values[0] is the input); -1 if none."""
    below = np.flatnonzero(np.asarray(values, dtype=float) < threshold)  # (m,)
    return int(below[0]) if below.size else -1


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------
_SIZES = (2, 3, 4, 5)
_SAMPLES = 25


def exact_tau(W: sp.Matrix):
    """τ₁(W) from the formula on the page, in exact arithmetic (rational entries: min compares exactly)."""
    return 1 - min(sum(min(W[i, j], W[i2, j]) for j in range(W.cols))
                   for i in range(W.rows) for i2 in range(W.rows))


def _exact_spread(X: sp.Matrix):
    """Δ(X) = max over columns of (largest − smallest entry), exactly."""
    return max(max(X.col(c)) - min(X.col(c)) for c in range(X.cols))


def _random_stochastic(n_q: int, n_k: int, rng: np.random.Generator) -> sp.Matrix:
    """A rational row-stochastic matrix with some zeros (masked keys), every row keeping one key."""
    counts = rng.integers(0, 6, size=(n_q, n_k))  # (n_q, n_k)
    counts[np.arange(n_q), rng.integers(0, n_k, size=n_q)] += 1
    return sp.Matrix(n_q, n_k, lambda i, j: sp.Rational(int(counts[i, j]), int(counts[i].sum())))


def _random_rational(rows: int, cols: int, rng: np.random.Generator) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Rational(int(rng.integers(-9, 10)), 4))


def _display_tau():
    W = sp.IndexedBase("W")
    i, j, i2 = sp.symbols("i j i'", integer=True)
    overlap = sp.Sum(sp.Min(W[i, j], W[i2, j]), (j, 1, sp.Symbol("n_k", integer=True, positive=True)))
    return sp.Eq(sp.Function(r"\tau_{1}")(sp.Symbol("W")),
                 sp.Add(1, sp.Mul(-1, sp.Function(r"\min_{i,i'}")(overlap), evaluate=False), evaluate=False),
                 evaluate=False)


@derivation("eq-ergodicity-coefficient", display=_display_tau, strength="verified",
            scope="for 25 seeded rational row-stochastic matrices with zeros at each n = 2, 3, 4, 5, "
                  "and for general real a, b in the step min(a, b) = (a + b − |a − b|)/2")
def _check_tau():
    a, b = sp.symbols("a b", real=True)
    # The step that turns the overlap into half an L1 distance, for general real a and b.
    yield sp.Eq((sp.Min(a, b) - (a + b - sp.Abs(a - b)) / 2).rewrite(sp.Piecewise), 0)
    rng = np.random.default_rng(1956)
    for n in _SIZES:
        for _ in range(_SAMPLES):
            W = _random_stochastic(n, n, rng)
            exact = exact_tau(W)
            half_l1 = max(sum(sp.Abs(W[i, j] - W[i2, j]) for j in range(n)) / 2
                          for i in range(n) for i2 in range(n))
            yield sp.Eq(exact, half_l1)  # the two forms agree exactly
            yield bool(0 <= exact <= 1)
            yield abs(ergodicity_coefficient(np.array(W, dtype=float)) - float(exact)) <= 1e-15
    # τ₁ = 0 for equal rows, 1 for two rows with no common key.
    yield exact_tau(sp.Matrix([[sp.Rational(1, 3), sp.Rational(2, 3)]] * 3)) == 0
    yield exact_tau(sp.eye(3)) == 1
    yield ergodicity_coefficient(np.full((3, 3), 1 / 3)) == 0.0 and ergodicity_coefficient(np.eye(3)) == 1.0


@derivation("thm-tau-contraction", strength="verified",
            scope="for 25 seeded rational W (zeros included) and X at each n = 2, 3, 4, 5, the bound "
                  "attained at the X the proof names; the package's floats within 1e-12")
def _check_tau_contraction():
    rng = np.random.default_rng(1981)
    for n in _SIZES:
        for _ in range(_SAMPLES):
            W = _random_stochastic(n, n, rng)
            X = _random_rational(n, 3, rng)
            tau = exact_tau(W)
            yield bool(_exact_spread(W * X) <= tau * _exact_spread(X))
            # Equality: the rows i, i' of least overlap, x_j = 1 where W_ij > W_i'j and 0 elsewhere.
            i, i2 = max(itertools.product(range(n), repeat=2),
                       key=lambda p: sum(abs(W[p[0], j] - W[p[1], j]) for j in range(n)))
            x = sp.Matrix([1 if W[i, j] > W[i2, j] else 0 for j in range(n)])  # (n, 1)
            yield sp.Eq((W * x)[i] - (W * x)[i2], tau)
            Wf, Xf, xf = (np.array(M, dtype=float) for M in (W, X, x))
            yield row_spread(Wf @ Xf) <= ergodicity_coefficient(Wf) * row_spread(Xf) + 1e-12
            if xf.any() and not xf.all():
                yield abs(row_spread(Wf @ xf) - ergodicity_coefficient(Wf)) <= 1e-12


@derivation("thm-tau-submultiplicative", strength="verified",
            scope="for 25 seeded pairs of rational row-stochastic matrices (zeros included) at each "
                  "n = 2, 3, 4, 5, and for general symbols at n = 2, where it is an equality")
def _check_tau_submultiplicative():
    a, b, c, e = sp.symbols("a b c e", real=True)
    # n = 2, general rows (a, 1 − a), (b, 1 − b): τ₁ = 1 − min(a, b) − min(1 − a, 1 − b) = |a − b|, and
    # the rows of W2 W1 differ by (a − b)(c − e) in their first entry, so τ₁(W2 W1) = τ₁(W2) τ₁(W1) exactly.
    W2 = sp.Matrix([[a, 1 - a], [b, 1 - b]])
    W1 = sp.Matrix([[c, 1 - c], [e, 1 - e]])
    yield sp.Eq((1 - sp.Min(a, b) - sp.Min(1 - a, 1 - b) - sp.Abs(a - b)).rewrite(sp.Piecewise), 0)
    yield sp.Eq((W2 * W1)[0, 0] - (W2 * W1)[1, 0], (W2[0, 0] - W2[1, 0]) * (W1[0, 0] - W1[1, 0]))
    point = {a: sp.Rational(1, 5), b: sp.Rational(3, 4), c: sp.Rational(2, 3), e: sp.Rational(1, 7)}
    yield sp.Eq(exact_tau((W2 * W1).subs(point)), exact_tau(W2.subs(point)) * exact_tau(W1.subs(point)))
    rng = np.random.default_rng(2006)
    for n in _SIZES:
        for _ in range(_SAMPLES):
            W2, W1 = _random_stochastic(n, n, rng), _random_stochastic(n, n, rng)
            yield bool(exact_tau(W2 * W1) <= exact_tau(W2) * exact_tau(W1))
        layers = [np.array(_random_stochastic(n, n, rng), dtype=float) for _ in range(6)]
        got = product_coefficients(layers)
        yield bool((got["product"] <= got["bound"] + 1e-12).all())
