"""Positions in a sequence: sinusoidal encodings, rotary positions (RoPE), ALiBi and distance biases.

A sequence is a path graph: token i follows token i − 1. The chapter ``book/sequence_positions.md``
reads each of the three classic position schemes on that graph. The sinusoidal encoding's dot
product depends only on the offset of two positions (``thm-sinusoidal-offset``); rotating queries
and keys by their positions makes the score depend only on i − j and keeps norms
(``thm-rope-relative``); ALiBi's bias is minus a slope times the path's shortest-path distance
(``eq-alibi``), and Graphormer's spatial bias is the same idea on any graph.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from scipy.sparse.csgraph import shortest_path

from .registry import close_to_exact, derivation
from .validation import as_int, as_matrix, as_square

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["alibi_bias", "distance_bias", "rotary", "shortest_path_distances", "sinusoidal_encoding"]


def _as_base(base) -> float:
    if isinstance(base, (bool, np.bool_)) or not isinstance(base, (int, float, np.integer, np.floating)):
        raise TypeError(f"base must be a real number > 1; got {base!r} of type {type(base).__name__}")
    if not (math.isfinite(float(base)) and float(base) > 1):
        raise ValueError(f"base must be a finite real number > 1; got {base!r}")
    return float(base)


def _as_even(d, name: str = "d") -> int:
    d = as_int(d, name, low=2, what="an even integer >= 2 (coordinates come in pairs)")
    if d % 2:
        raise ValueError(f"{name} must be an even integer >= 2 (coordinates come in pairs); got {d}")
    return d


def frequencies(d: int, base: float = 10000.0) -> np.ndarray:
    """ω_l = base^(−2l/d) for l = 0, …, d/2 − 1: one angular frequency per pair of coordinates. (d/2,)."""
    d, base = _as_even(d), _as_base(base)
    return base ** (-2.0 * np.arange(d // 2) / d)  # (d/2,)


def sinusoidal_kernel(positions, omega) -> np.ndarray:
    angles = np.outer(positions, omega)  # (n, d/2): i ω_l
    P = np.empty((angles.shape[0], 2 * angles.shape[1]))  # (n, d)
    P[:, 0::2] = np.sin(angles)  # PE_{i, 2l} = sin(i ω_l)
    P[:, 1::2] = np.cos(angles)  # PE_{i, 2l+1} = cos(i ω_l)
    return P


def sinusoidal_encoding(n: int, d: int, base: float = 10000.0) -> np.ndarray:
    """PE_{i,2l} = sin((i − 1) ω_l), PE_{i,2l+1} = cos((i − 1) ω_l), ω_l = base^(−2l/d)  (eq-sinusoidal). (n, d).

    Row r (from 0) is the encoding of the paper's position r, token r + 1 of the book (Vaswani et al. 2017).

    >>> sinusoidal_encoding(2, 2).round(3)
    array([[0.   , 1.   ],
           [0.841, 0.54 ]])
    """
    n = as_int(n, "n")
    return sinusoidal_kernel(np.arange(n), frequencies(d, base))  # (n, d)


def rotation_angles(positions, d: int, base: float = 10000.0) -> np.ndarray:
    """θ_{i,l} = p_i ω_l: the angle by which pair l of row i is turned (thm-rope-relative). (n, d/2)."""
    p = np.asarray(positions)
    if p.ndim != 1 or p.dtype.kind not in "biuf" or p.dtype == np.bool_:
        raise ValueError(f"positions must be a 1-d array of real numbers, one per row; got "
                         f"shape {p.shape} and dtype {p.dtype}")
    p = p.astype(np.float64)  # (n,)
    if not np.isfinite(p).all():
        raise ValueError(f"positions must be finite; found {p[~np.isfinite(p)][0]}")
    return np.outer(p, frequencies(d, base))  # (n, d/2)


def rotate_pairs(X, theta) -> np.ndarray:
    x, y = X[:, 0::2], X[:, 1::2]  # (n, d/2) each: the pairs (x_{2l}, x_{2l+1})
    c, s = np.cos(theta), np.sin(theta)  # (n, d/2)
    out = np.empty_like(X)  # (n, d)
    out[:, 0::2] = x * c - y * s
    out[:, 1::2] = x * s + y * c
    return out


def rotary(X, positions, base: float = 10000.0) -> np.ndarray:
    """Row i of X, its pair l turned by the angle p_i ω_l: RoPE  (thm-rope-relative). (n, d).

    ``X`` is (n, d) with d even, ``positions`` (n,) the position p_i of each row. Pair l of row i,
    (x_{2l}, x_{2l+1}), is multiplied by the 2 × 2 rotation R(p_i ω_l), ω_l = base^(−2l/d)
    (Su et al. 2021). Rotated queries and keys score q_iᵀ R((p_j − p_i) ω) k_j.

    >>> rotary([[1.0, 0.0]], [np.pi / 2], base=10000.0).round(12)
    array([[0., 1.]])
    """
    X = as_matrix(X, "X", shape_doc="(n, d), d even")  # (n, d)
    _as_even(X.shape[1], "X's number of columns d")
    theta = rotation_angles(positions, X.shape[1], base)  # (n, d/2)
    if theta.shape[0] != X.shape[0]:
        raise ValueError(f"positions must have one entry per row of X: {theta.shape[0]} != {X.shape[0]}")
    return rotate_pairs(X, theta.astype(X.dtype))  # (n, d)


def alibi_kernel(n: int, slope: float) -> np.ndarray:
    i = np.arange(n)  # (n,)
    offset = (i[:, None] - i[None, :]).astype(float)  # (n, n): i − j
    # 0.0 − x keeps 0 unsigned:
    return np.where(offset >= 0, 0.0 - slope * offset, -np.inf)  # (n, n)


def _as_slope(slope) -> float:
    if isinstance(slope, (bool, np.bool_)) or not isinstance(slope, (int, float, np.integer, np.floating)):
        raise TypeError(f"slope must be a real number >= 0; got {slope!r} of type {type(slope).__name__}")
    if not (math.isfinite(float(slope)) and float(slope) >= 0):
        raise ValueError(f"slope must be a finite real number >= 0; got {slope!r}")
    return float(slope)


def alibi_bias(n: int, slope: float) -> np.ndarray:
    """B_ij = −ζ (i − j) for j ≤ i, −∞ for j > i: ALiBi's causal bias, ζ the slope  (eq-alibi). (n, n).

    Added to the scores (``attention(..., bias=B)``), it penalises each key by its distance back
    along the sequence (Press et al. 2022); the −∞ entries are the causal mask.

    >>> alibi_bias(3, 0.5)
    array([[ 0. , -inf, -inf],
           [-0.5,  0. , -inf],
           [-1. , -0.5,  0. ]])
    """
    return alibi_kernel(as_int(n, "n"), _as_slope(slope))  # (n, n)


def shortest_path_distances(A) -> np.ndarray:
    """dist(i, j): the fewest edges on a path i → j of the graph A (A_ij > 0 an edge); ∞ if none. (n, n)."""
    A = as_square(A, "A")  # (n, n)
    if (A < 0).any():
        raise ValueError("A must be non-negative (an adjacency matrix)")
    return shortest_path(A > 0, method="D", directed=True, unweighted=True)  # (n, n)


def distance_bias(A, slope: float) -> np.ndarray:
    """B_ij = −ζ dist(i, j) on the graph A, −∞ where j cannot be reached: a spatial bias. (n, n).

    Graphormer (Ying et al. 2021) adds to each score a learned scalar B_ij set by dist(i, j); this is
    the linear choice B_ij = −ζ dist(i, j), which on the path graph, causally masked, is ALiBi.
    """
    slope = _as_slope(slope)
    dist = shortest_path_distances(A)  # (n, n)
    with np.errstate(invalid="ignore"):
        return np.where(np.isfinite(dist), 0.0 - slope * dist, -np.inf)  # (n, n)


# --------------------------------------------------------------------------------------------------
# The derivations, in SymPy. Positions i, j; pair index l; frequency ω_l; slope ζ.
# --------------------------------------------------------------------------------------------------
_i, _j = sp.symbols("i j", integer=True, nonnegative=True)
_l = sp.Symbol("l", integer=True, nonnegative=True)
_d = sp.Symbol("d", integer=True, positive=True)
_BASE = sp.Integer(10000)  # the paper's base, written as a number in the display
_zeta = sp.Symbol(r"\zeta", nonnegative=True)
_PE, _Bb = sp.IndexedBase(r"\mathrm{PE}"), sp.IndexedBase("B")


def frequency_display():
    """ω_l = 1 / 10000^(2l/d), as the paper writes it: the factor of the angle in the display."""
    return sp.Pow(sp.Pow(_BASE, 2 * _l / _d, evaluate=False), -1, evaluate=False)


def display_sinusoidal():
    """The displayed eq-sinusoidal: token i = 1, …, n is at the paper's position i − 1 (row i − 1 of the code)."""
    lhs = sp.Matrix([_PE[_i, 2 * _l], _PE[_i, 2 * _l + 1]])
    angle = sp.Mul(_i - 1, frequency_display(), evaluate=False)  # (i − 1) / 10000^(2l/d)
    rhs = sp.Matrix([sp.sin(angle), sp.cos(angle)])
    return sp.Eq(lhs, rhs, evaluate=False)


def _display_alibi():
    return sp.Eq(_Bb[_i, _j], sp.Piecewise((-_zeta * (_i - _j), _j <= _i), (-sp.oo, True)), evaluate=False)


@derivation("eq-sinusoidal", display=display_sinusoidal,
            strength="verified", scope="for n = 5 positions and d = 4, base 10000, to 1e-15")
def _check_sinusoidal():
    # The displayed formula, entry by entry, against the package's floats.
    n, d, base = 5, 4, 10000
    rhs = display_sinusoidal().rhs
    exact = sp.Matrix(n, d, lambda r, c: rhs[c % 2].subs({_i: r + 1, _l: c // 2, _d: d}))  # token r + 1 is row r
    yield close_to_exact(exact, sinusoidal_encoding(n, d, float(base)), atol=1e-15)
    # Token 1 is (0, 1, 0, 1, ...): every sine is 0 and every cosine 1.
    yield sp.Eq(exact.row(0), sp.Matrix([[0, 1] * (d // 2)]), evaluate=False)


@derivation("thm-sinusoidal-offset",
            strength="proved", scope="for general positions i, j, c and the frequency ω_l of any pair l "
            "(the dot product sums the pairs); the package's encodings of 12 positions, d = 8, to 1e-12")
def _check_sinusoidal_offset():
    # Every part can fail: the first two read pair l from the displayed eq-sinusoidal, the last two the
    # package's encodings (tests/test_sequence_positions.py breaks each in turn).
    i, j, c = sp.symbols("i j c", real=True)
    w = sp.IndexedBase(r"\omega", real=True)
    pair = display_sinusoidal().rhs.xreplace({frequency_display(): w[_l]})  # (2, 1): pair l, any ω_l

    def product(x, y):  # pair l's share of PE_x · PE_y
        return (pair.subs(_i, x).T * pair.subs(_i, y))[0, 0]

    # Shifting both positions by c leaves pair l's product unchanged ...
    yield sp.Eq(product(i + c, j + c), product(i, j), evaluate=False)
    # ... because it is cos((i − j)ω_l), a function of the offset alone; PE_i · PE_j sums it over l.
    yield sp.Eq(product(i, j), sp.cos((i - j) * w[_l]), evaluate=False)
    # The package: shifting every position by 37 leaves the Gram matrix unchanged ...
    n, d = 12, 8
    omega = 10000.0 ** (-2.0 * np.arange(d // 2) / d)  # (d/2,): the paper's frequencies, written anew
    P, P_shift = sinusoidal_kernel(np.arange(n), omega), sinusoidal_kernel(np.arange(n) + 37, omega)  # (n, d) each
    yield bool(np.allclose(P @ P.T, P_shift @ P_shift.T, rtol=0, atol=1e-12))
    # ... and the Gram matrix of its encodings is the kernel Σ_l cos((i − j)ω_l), entry by entry.
    offset = np.arange(n)[:, None] - np.arange(n)[None, :]  # (n, n): i − j
    kernel = np.cos(offset[..., None] * omega).sum(axis=-1)  # (n, n)
    P = sinusoidal_encoding(n, d)  # (n, d)
    yield bool(np.allclose(P @ P.T, kernel, rtol=0, atol=1e-12))


def _rotation(theta):
    return sp.Matrix([[sp.cos(theta), -sp.sin(theta)], [sp.sin(theta), sp.cos(theta)]])


@derivation("thm-rope-relative",
            strength="proved", scope="for a general 2-d block, angle θ and positions i, j")
def _check_rope_relative():
    i, j, c, theta = sp.symbols("i j c theta", real=True)
    q = sp.Matrix(sp.symbols("q_x q_y", real=True))  # a general vector of the 2-d block
    k = sp.Matrix(sp.symbols("k_x k_y", real=True))
    score = ((_rotation(i * theta) * q).T * (_rotation(j * theta) * k))[0, 0]
    # The rotated score is q·R((j − i)θ)k: it depends on the positions through j − i alone ...
    yield sp.Eq(sp.expand_trig(score), sp.expand_trig((q.T * _rotation((j - i) * theta) * k)[0, 0]), evaluate=False)
    yield sp.Eq(sp.expand_trig(score.subs({i: i + c, j: j + c})), sp.expand_trig(score), evaluate=False)
    # ... and a rotation keeps the norm.
    rq = _rotation(i * theta) * q
    yield sp.Eq(sp.simplify((rq.T * rq)[0, 0]), (q.T * q)[0, 0])
    # The package: shifting every position by the same amount leaves every score unchanged.
    rng = np.random.default_rng(5)
    Q, K = rng.standard_normal((6, 8)), rng.standard_normal((6, 8))  # (6, 8) each
    pos = np.arange(6.0)  # (6,)
    S = rotary(Q, pos) @ rotary(K, pos).T  # (6, 6)
    S_shift = rotary(Q, pos + 37.0) @ rotary(K, pos + 37.0).T  # (6, 6)
    yield bool(np.allclose(S, S_shift, rtol=0, atol=1e-12))
    yield bool(np.allclose(np.linalg.norm(rotary(Q, pos), axis=1), np.linalg.norm(Q, axis=1), rtol=1e-14))


def _path_distances(n: int) -> list[list[int]]:
    """Breadth-first search on the path 0 − 1 − … − (n − 1), from every node: the hop counts."""
    dist = []
    for s in range(n):
        seen, frontier, row = {s: 0}, [s], [0] * n
        while frontier:
            nxt = []
            for u in frontier:
                for v in (u - 1, u + 1):
                    if 0 <= v < n and v not in seen:
                        seen[v] = seen[u] + 1
                        nxt.append(v)
            frontier = nxt
        for v, hops in seen.items():
            row[v] = hops
        dist.append(row)
    return dist


@derivation("eq-alibi", display=_display_alibi,
            strength="verified", scope="for n = 1, …, 7 with a symbolic slope ζ; the package at ζ = 1/2")
def _check_alibi():
    rhs = _display_alibi().rhs
    for n in range(1, 8):
        dist = _path_distances(n)
        shown = sp.Matrix(n, n, lambda r, c: rhs.subs({_i: r, _j: c}))
        # On the causal edges j <= i the displayed bias is −ζ times the path's hop count.
        causal = sp.Matrix(n, n, lambda r, c, dist=dist: -_zeta * dist[r][c] if c <= r else -sp.oo)
        yield shown == causal  # entry by entry, −∞ included (−∞ − (−∞) would be NaN)
    # The package, at slope 1/2 (exact in floating point).
    n = 7
    want = np.array(sp.Matrix(n, n, lambda r, c: rhs.subs({_i: r, _j: c, _zeta: sp.Rational(1, 2)})).tolist(),
                    dtype=float)  # (7, 7)
    yield bool(np.array_equal(alibi_bias(n, 0.5), want))
