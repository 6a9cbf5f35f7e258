"""Scores: the compatibility of every query with every key, S = Q Kᵀ / √d.

The chapter ``book/scores.md`` derives why the scale is √d; the SymPy checks behind its labeled
equations are registered here under the same labels.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp
from sympy import stats

from . import registry
from .registry import derivation
from .validation import as_int, as_matrix, as_rng, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["scaled_scores"]


def scaled_scores(Q, K) -> np.ndarray:
    """S = Q Kᵀ / √d, shape (n_q, n_k)  (eq-scaled-scores).

    ``Q`` is (n_q, d), ``K`` is (n_k, d); row i of S holds the scores of query i against every key.

    >>> scaled_scores([[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]])
    array([[0.70710678, 0.        ]])
    """
    Q = as_matrix(Q, "Q", shape_doc="(n_q, d)")  # (n_q, d)
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    check_same(Q.shape[1], K.shape[1], "Q and K must share the dimension d (columns)")
    d = Q.shape[1]
    if d == 0:
        raise ValueError("Q and K have d = 0 columns: the scale 1/√d is undefined")
    with np.errstate(over="ignore", invalid="ignore"):
        S = _scaled_scores(Q, K)  # (n_q, n_k)
    if not np.isfinite(S).all():
        raise ValueError(
            f"Q Kᵀ/√d overflowed {S.dtype}: the scores are not finite; rescale Q or K"
        )
    return S


def _scaled_scores(Q: np.ndarray, K: np.ndarray) -> np.ndarray:
    """S = Q Kᵀ / √d, shape (n_q, n_k)  (eq-scaled-scores)."""
    d = Q.shape[1]
    return Q @ K.T / math.sqrt(d)  # (n_q, n_k); a Python float keeps float32 float32


def simulate_dot_products(d: int, n_samples: int, rng: np.random.Generator) -> np.ndarray:
    """q·k for ``n_samples`` pairs of independent standard normal vectors in dimension ``d``.

    Returns an array of shape (n_samples,). Scale it by 1/√d to get the scaled score.
    """
    as_rng(rng)
    d, n_samples = as_int(d, "d"), as_int(n_samples, "n_samples", low=2)
    q = rng.standard_normal((n_samples, d))  # (n_samples, d)
    k = rng.standard_normal((n_samples, d))  # (n_samples, d)
    return np.einsum("sd,sd->s", q, k)  # (n_samples,)


def dot_product_moments(dims, n_samples: int, rng: np.random.Generator) -> dict[str, list[float]]:
    """Sample mean and variance of q·k and of q·k/√d for each d in ``dims`` (seeded by ``rng``)."""
    out = {"d": [], "mean": [], "var": [], "var_scaled": []}
    for d in dims:
        x = simulate_dot_products(d, n_samples, rng)  # (n_samples,)
        out["d"].append(int(d))
        out["mean"].append(float(x.mean()))
        out["var"].append(float(x.var()))
        out["var_scaled"].append(float((x / np.sqrt(d)).var()))
    return out


# --------------------------------------------------------------------------------------------------
# The derivation, in SymPy. Symbols as in the book: d the dimension, q_l and k_l the entries.
# --------------------------------------------------------------------------------------------------
d, l, i, j = sp.symbols("d l i j", integer=True, positive=True)
q = sp.IndexedBase("q")
k = sp.IndexedBase("k")
Ex = sp.Function(r"\mathbb{E}")
Var = sp.Function(r"\operatorname{Var}")
_dot = sp.Sum(sp.Mul(q[l], k[l], evaluate=False), (l, 1, d))


def _zero_mean_unit_variance(name: str):
    """Distributions with mean 0 and variance 1 on which the derivation is checked exactly."""
    return [
        stats.FiniteRV(name, {-1: sp.Rational(1, 2), 1: sp.Rational(1, 2)}),
        stats.FiniteRV(name, {-1: sp.Rational(1, 3), 0: sp.Rational(1, 2), 2: sp.Rational(1, 6)}),
    ]


def _concrete_dots(max_d: int = 3):
    """(d, q·k) for concrete d and distributions, including one Normal case."""
    for d_ in range(1, max_d + 1):
        for which in range(2):
            qs = [_zero_mean_unit_variance(f"q{m}")[which] for m in range(d_)]
            ks = [_zero_mean_unit_variance(f"k{m}")[which] for m in range(d_)]
            yield d_, sum(a * b for a, b in zip(qs, ks))
    yield 1, stats.Normal("qn", 0, 1) * stats.Normal("kn", 0, 1)


def _display_scaled_scores():
    S = sp.IndexedBase("S")
    qv = sp.IndexedBase("q")
    kv = sp.IndexedBase("k")
    term = sp.Mul(qv[i, l], kv[j, l], evaluate=False)
    return sp.Eq(S[i, j], sp.Mul(sp.Sum(term, (l, 1, d)), 1 / sp.sqrt(d), evaluate=False),
                 evaluate=False)


@derivation("eq-scaled-scores", display=_display_scaled_scores, strength="verified",
            scope="for n_q = 2, n_k = 3, d = 3 with symbolic entries")
def _check_scaled_scores():
    # The matrix formula equals the sum formula entry by entry (n_q = 2, n_k = 3, d = 3) ...
    Qs = sp.Matrix(2, 3, lambda r, c: sp.Symbol(f"q_{r}{c}"))
    Ks = sp.Matrix(3, 3, lambda r, c: sp.Symbol(f"k_{r}{c}"))
    by_sum = sp.Matrix(2, 3, lambda r, c: sum(Qs[r, m] * Ks[c, m] for m in range(3)) / sp.sqrt(3))
    yield sp.Eq(Qs * Ks.T / sp.sqrt(3), by_sum, evaluate=False)
    # ... and the displayed S_ij, summed out, is that entry.
    rhs = _display_scaled_scores().rhs
    qv, kv = sp.IndexedBase("q"), sp.IndexedBase("k")
    for r in range(2):
        for c in range(3):
            e = rhs.subs({d: 3, i: r + 1, j: c + 1}).doit()
            e = e.subs({qv[r + 1, m + 1]: Qs[r, m] for m in range(3)}).subs({kv[c + 1, m + 1]: Ks[c, m]
                                                                             for m in range(3)})
            yield sp.Eq(e, by_sum[r, c])
    # ... and the package's floats equal the exact values on an integer example.
    Qi = [[1, -2, 0], [2, 1, 1]]
    Ki = [[0, 1, 1], [1, 1, -1], [2, 0, 1]]
    exact = sp.Matrix(Qi) * sp.Matrix(Ki).T / sp.sqrt(3)
    got = scaled_scores(Qi, Ki)  # (2, 3)
    yield bool(np.allclose(np.array(exact.evalf(30), dtype=float), got, rtol=0, atol=1e-14))


# Independence, as SymPy works with it: q and k are independent, so the expectation of a product
# q^a k^b is the product of their moments, E[q^a] E[k^b]. The moments are symbols; the hypotheses of
# the chapter (mean 0, variance 1) are a substitution applied only at the end.
mq, mk = sp.IndexedBase("m_q"), sp.IndexedBase("m_k")  # m_q[a] = E[q^a], m_k[b] = E[k^b]
_qs, _ks = sp.symbols("q k", real=True)
HYPOTHESES = {mq[1]: 0, mk[1]: 0, mq[2]: 1, mk[2]: 1}  # E[q] = E[k] = 0, E[q²] = E[k²] = 1


def expectation(expr) -> sp.Expr:
    """E[expr] for a polynomial in independent q, k: each monomial q^a k^b becomes m_q[a] m_k[b]."""
    poly = sp.Poly(sp.expand(expr), _qs, _ks)
    return sum(coeff * (mq[a] if a else 1) * (mk[b] if b else 1) for (a, b), coeff in poly.terms())


def _term_moments(c=1):
    """E[c q_l k_l] and E[(c q_l k_l)²] from the independence rule, in the symbolic moments."""
    return expectation(c * _qs * _ks), expectation((c * _qs * _ks) ** 2)


def _sum_moments(c=1):
    """E[Σ_l X_l] and Var[Σ_l X_l] for general d, X_l = c q_l k_l independent across l.

    E[X_l X_m] is E[X²] on the diagonal and E[X]² off it (independence across l ≠ m); SymPy sums the
    d² terms with a Kronecker delta, for symbolic d.
    """
    mean, second = _term_moments(c)
    m_ = sp.Symbol("m", integer=True, positive=True)
    delta = sp.KroneckerDelta(l, m_)
    pair = delta * second + (1 - delta) * mean**2  # E[X_l X_m]
    inner = sp.refine(sp.Sum(pair, (m_, 1, d)).doit(), sp.Q.le(l, d))  # l is one of 1..d
    square = sp.Sum(inner, (l, 1, d)).doit()  # E[(Σ X_l)²]
    total = sp.Sum(mean, (l, 1, d)).doit()  # E[Σ X_l]
    return total, sp.simplify(square - total**2)


@derivation("eq-mean-qk", display=lambda: sp.Eq(Ex(_dot), 0, evaluate=False),
            strength="proved", scope="for every d, from independence and zero means (moments as symbols); "
                                     "exactly also for d = 1, 2, 3 on two discrete laws and at d = 1 on the normal law")
def _check_mean():
    total, _ = _sum_moments()
    yield sp.Eq(total, d * mq[1] * mk[1], evaluate=False)  # linearity and independence, before the hypotheses
    shown = registry.display("eq-mean-qk")  # E of the modelled sum, and its value
    yield shown.lhs.args[0] == _dot
    yield sp.Eq(total.subs(HYPOTHESES), shown.rhs)
    for _d, dot in _concrete_dots():
        yield sp.Eq(stats.E(dot), 0)


@derivation("eq-var-term", display=lambda: sp.Eq(Var(sp.Mul(q[l], k[l], evaluate=False)), 1, evaluate=False),
            strength="proved", scope="from independence, zero means and unit variances (moments as symbols); "
                                     "exactly also on two discrete laws")
def _check_var_term():
    mean, second = _term_moments()
    var = second - mean**2
    yield sp.Eq(var, mq[2] * mk[2] - mq[1] ** 2 * mk[1] ** 2, evaluate=False)  # independence alone
    yield sp.Eq(var.subs(HYPOTHESES), registry.display("eq-var-term").rhs)
    for dist in _zero_mean_unit_variance("a"):
        other = stats.FiniteRV("b", dict(stats.density(dist).dict))
        yield sp.Eq(stats.variance(dist * other), 1)


@derivation("eq-var-qk", display=lambda: sp.Eq(Var(_dot), d, evaluate=False),
            strength="proved", scope="for every d, from independence, zero means and unit variances; "
                                     "exactly also for d = 1, 2, 3 on two discrete laws")
def _check_var_qk():
    _, var = _sum_moments()
    mean, second = _term_moments()
    yield sp.Eq(var, d * (second - mean**2), evaluate=False)  # independent terms: the variances add up
    shown = registry.display("eq-var-qk")
    yield shown.lhs.args[0] == _dot
    yield sp.Eq(var.subs(HYPOTHESES), shown.rhs)
    for d_, dot in _concrete_dots():
        yield sp.Eq(stats.variance(dot), d_)


@derivation("eq-var-scaled", display=lambda: sp.Eq(Var(_dot / sp.sqrt(d)), 1, evaluate=False),
            strength="proved", scope="for every d, from independence, zero means and unit variances; "
                                     "exactly also for d = 1, 2, 3 on two discrete laws")
def _check_var_scaled():
    # The sum of the scaled terms c q_l k_l, c = 1/√d, its variance computed from the moments as
    # before: Var[c X] = c² Var[X] comes out of the computation, it is not written in.
    c = 1 / sp.sqrt(d)
    _, var = _sum_moments()
    _, var_scaled = _sum_moments(c)
    shown = registry.display("eq-var-scaled")
    yield shown.lhs.args[0] == _dot * c
    yield sp.Eq(var_scaled, var / d, evaluate=False)  # Var[cX] = c² Var[X]
    yield sp.Eq(var_scaled.subs(HYPOTHESES), shown.rhs)
    for d_, dot in _concrete_dots():
        yield sp.Eq(stats.variance(dot / sp.sqrt(d_)), 1)


# --------------------------------------------------------------------------------------------------
# "Other sources say": claims of popular accounts, checked by code.
# --------------------------------------------------------------------------------------------------


def self_score_margins(Q, K) -> np.ndarray:
    """m_i = S_ii − max_{j≠i} S_ij with S = Q Kᵀ/√d: > 0 when i's score with itself is strictly highest.

    ``Q`` and ``K`` are (n, d) for the same n tokens. Shape (n,). Needs n >= 2.

    >>> self_score_margins([[1.0, 0.0], [0.0, 1.0]], [[0.0, 1.0], [1.0, 0.0]]).round(3)
    array([-0.707, -0.707])
    """
    S = scaled_scores(Q, K)  # (n, n)
    n = S.shape[0]
    if S.shape[1] != n or n < 2:
        raise ValueError(f"Q and K must hold the same n >= 2 tokens; got {S.shape[0]} and {S.shape[1]}")
    others = np.where(np.eye(n, dtype=bool), -np.inf, S)  # (n, n)
    return np.diag(S) - others.max(axis=1)  # (n,)


def misplaced_scale(Q, K) -> dict[str, np.ndarray]:
    """Three readings of the scale: the right one and two that move √d out of the exponent.

    * ``"right"``: softmax(Q Kᵀ/√d)  (eq-scaled-scores, then eq-softmax);
    * ``"outside"``: exp(q_i·k_j)/√d normalised over j, which equals softmax(Q Kᵀ): the scale cancels
      (eq-scale-outside-cancels);
    * ``"after"``: softmax(Q Kᵀ)/√d, not normalised again: its rows sum to 1/√d.

    Each value has shape (n_q, n_k).
    """
    Q = as_matrix(Q, "Q", shape_doc="(n_q, d)")  # (n_q, d)
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    S = scaled_scores(Q, K)  # (n_q, n_k)
    root_d = math.sqrt(Q.shape[1])
    # Each row's exponentials normalised over j (the next chapter's softmax, written out here).
    exp_right = np.exp(S - S.max(axis=1, keepdims=True))  # (n_q, n_k)
    exp_unscaled = np.exp(S * root_d - (S * root_d).max(axis=1, keepdims=True))  # (n_q, n_k)
    E = exp_unscaled / root_d  # (n_q, n_k)
    return {
        "right": exp_right / exp_right.sum(axis=1, keepdims=True),  # (n_q, n_k)
        "outside": E / E.sum(axis=1, keepdims=True),  # (n_q, n_k)
        "after": exp_unscaled / exp_unscaled.sum(axis=1, keepdims=True) / root_d,  # (n_q, n_k)
    }


def _display_scale_outside():
    s = sp.IndexedBase("s")
    lhs = sp.Mul(sp.exp(s[j]) / sp.sqrt(d),
                 1 / sp.Sum(sp.exp(s[l]) / sp.sqrt(d), (l, 1, sp.Symbol("n"))), evaluate=False)
    return sp.Eq(lhs, sp.exp(s[j]) / sp.Sum(sp.exp(s[l]), (l, 1, sp.Symbol("n"))), evaluate=False)


@derivation("eq-scale-outside-cancels", display=_display_scale_outside, strength="proved",
            scope="for every n and d (symbolic sums); exactly also for n = 4 symbolic scores and a symbolic factor")
def _check_scale_outside():
    # The display itself, for every n and d: 1/√d, constant in l, comes out of the sum and cancels.
    shown = registry.display("eq-scale-outside-cancels")
    lhs = shown.lhs.replace(lambda e: isinstance(e, sp.Sum),
                            lambda e: sp.factor_terms(sp.Sum(sp.expand(e.function), *e.limits)))
    yield sp.Eq(lhs, shown.rhs, evaluate=False)
    # A constant factor in front of every exponential cancels in the normalisation (n = 4 symbols).
    s = sp.symbols("s1:5", real=True)
    c = sp.Symbol("c", positive=True)
    for j_ in range(4):
        outside = (sp.exp(s[j_]) / c) / sum(sp.exp(x) / c for x in s)
        yield sp.Eq(outside, sp.exp(s[j_]) / sum(sp.exp(x) for x in s))
    # ... so moving √d outside the exponent is the unscaled softmax, not the scaled one.
    Qi = [[1, 0], [0, 2]]
    got = misplaced_scale(Qi, Qi)
    unscaled = np.exp(np.array(Qi) @ np.array(Qi).T)  # (2, 2)
    yield bool(np.allclose(got["outside"], unscaled / unscaled.sum(axis=1, keepdims=True), atol=1e-15))
    yield bool(not np.allclose(got["outside"], got["right"], atol=1e-3))
