"""Softmax, row by row: scores become weights that are positive and sum to 1 in every row.

The chapter ``book/softmax.md`` proves, one theorem at a time, what the implementation relies on:
rows are probability distributions (``thm-rows-sum-to-one``), a constant added to a row changes
nothing (``thm-shift-invariance``, which licenses subtracting the row maximum), the temperature limits
(``thm-temperature-limits``) and the Jacobian (``thm-softmax-jacobian``). The SymPy checks behind
those labels are registered at the bottom of this module.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .registry import close_to_exact, derivation
from .validation import as_int, as_matrix, as_rng, as_scores

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["hardmax", "softmax", "softmax_jacobian", "softmax_with_temperature"]


def softmax(S, mask=None) -> np.ndarray:
    """W_ij = exp(S_ij) / Σ_l exp(S_il), row by row  (eq-softmax), computed as eq-softmax-stable.

    ``S`` is (n_q, n_k). ``mask`` is boolean (n_q, n_k), True where query i may attend to key j;
    masked entries get weight exactly 0 and every row must allow at least one key. A score of −∞ is
    a masked entry too, as PyTorch code writes masks: softmax(S with −∞ where M is False) is
    softmax(S, mask=M) (thm-masked-softmax-neighbours); +∞ and NaN are refused. The row maximum
    m_i = max_l S_il is subtracted first, W_ij = exp(S_ij − m_i) / Σ_l exp(S_il − m_i): this changes
    nothing mathematically (thm-shift-invariance) and keeps ``exp`` from overflowing, so scores of
    magnitude up to 1e300 give correct finite weights.

    >>> softmax([[0.0, 0.0], [1000.0, 0.0]])
    array([[0.5, 0.5],
           [1. , 0. ]])
    >>> softmax([[1.0, 2.0]], mask=[[True, False]])
    array([[1., 0.]])
    >>> softmax([[1.0, -np.inf]])
    array([[1., 0.]])
    """
    S, allowed = as_scores(S, mask)  # (n_q, n_k), (n_q, n_k)
    return _softmax(S, allowed)  # (n_q, n_k)


def _softmax(S: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """W_ij = exp(S_ij − m_i) / Σ_l exp(S_il − m_i), m_i = max_l S_il, over the allowed keys  (eq-softmax-stable)."""
    with np.errstate(over="ignore", invalid="ignore"):
        S_allowed = np.where(allowed, S, -np.inf)  # (n_q, n_k)
        m = np.max(S_allowed, axis=1, keepdims=True, initial=-np.inf)  # (n_q, 1)
        Z = np.where(allowed, S - m, -np.inf)  # (n_q, n_k), every entry <= 0
        E = np.exp(Z)  # (n_q, n_k), masked entries exactly 0
    return E / E.sum(axis=1, keepdims=True)  # (n_q, n_k)


def naive_softmax(S) -> np.ndarray:
    """exp(S_ij) / Σ_l exp(S_il) taken literally, WITHOUT subtracting the row maximum.

    For the chapter's demonstration only: where ``exp`` overflows to inf (or every term of a row
    underflows to 0) the result holds NaN, and that failure is what the chapter shows. It computes
    in S's own float type (float32 stays float32). Use :func:`softmax`.

    >>> naive_softmax([[1.0, 1.0]])
    array([[0.5, 0.5]])
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        E = np.exp(S)  # (n_q, n_k), inf where S is above the overflow point
        return E / E.sum(axis=1, keepdims=True)  # (n_q, n_k), NaN where inf/inf or 0/0


def _first_failure(fails, lo: float, hi: float, dtype) -> float:
    """The float of ``dtype`` closest to ``lo`` in [lo, hi] where ``fails`` holds (bisection).

    ``fails(lo)`` must be False and ``fails(hi)`` True; the answer is exact on the float grid.
    """
    lo, hi = dtype(lo), dtype(hi)
    while True:
        mid = dtype(lo + (hi - lo) / 2)
        if mid in (lo, hi):
            # lo and hi are adjacent floats (or mid rounded onto one of them): step one float.
            nxt = np.nextafter(lo, hi)
            if nxt == hi:
                return float(hi)
            mid = nxt
        if fails(mid):
            hi = mid
        else:
            lo = mid


# Binary floating-point formats: (bits of precision p, largest exponent e_max). bfloat16 keeps
# float32's exponent range with 8 bits of precision; NumPy has no bfloat16, so it is computed exactly.
FLOAT_FORMATS = {"float64": (53, 1023), "float32": (24, 127), "bfloat16": (8, 127), "float16": (11, 15)}


def exp_overflow_point(fmt: str) -> float:
    """ln of the largest finite number of ``fmt``, (2 − 2^(1−p)) 2^e_max: beyond it e^x overflows.

    Computed exactly in SymPy from the format's precision p and largest exponent e_max
    (``FLOAT_FORMATS``), so it covers bfloat16, which NumPy cannot represent.

    >>> round(exp_overflow_point("float16"), 4), round(exp_overflow_point("bfloat16"), 4)
    (11.0899, 88.7189)
    """
    if fmt not in FLOAT_FORMATS:
        raise ValueError(f"fmt must be one of {sorted(FLOAT_FORMATS)}; got {fmt!r}")
    p, e_max = FLOAT_FORMATS[fmt]
    largest = (2 - sp.Rational(1, 2 ** (p - 1))) * sp.Integer(2) ** e_max
    return float(sp.log(largest).evalf(30))


def naive_breaking_points(dtype=np.float64) -> dict[str, float]:
    """Where :func:`naive_softmax` stops giving finite weights, searched on ``dtype``'s float grid.

    ``"overflow"``: the smallest x for which the row (x, 0) gives a non-finite weight (exp(x) is
    inf). ``"underflow"``: the largest x for which the row (x, x) does (both terms underflow to 0
    and 0/0 is NaN). The max-subtracted :func:`softmax` is finite at both.

    >>> points = naive_breaking_points(np.float64)
    >>> round(points["overflow"], 3), round(points["underflow"], 3)
    (709.783, -745.133)
    """
    dtype = np.dtype(dtype).type
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"dtype must be float32 or float64 (the package's float types); got {np.dtype(dtype)}")

    def over(x):
        return not np.isfinite(naive_softmax(np.array([[x, 0]], dtype=dtype))).all()

    def under(x):  # searched on −x so that both searches move upwards
        return not np.isfinite(naive_softmax(np.array([[-x, -x]], dtype=dtype))).all()

    top = float(np.finfo(dtype).max) / 4
    return {"overflow": _first_failure(over, 0.0, top, dtype),
            "underflow": -_first_failure(under, 0.0, top, dtype)}


def _as_temperature(tau) -> float:
    try:
        tau = float(tau)
    except (TypeError, ValueError):
        raise TypeError(f"tau must be a real number; got {type(tau).__name__}") from None
    if not tau > 0:  # also refuses NaN
        raise ValueError(f"tau must be > 0 (tau -> 0 is hardmax, tau = inf is uniform); got {tau}")
    return tau


def softmax_with_temperature(S, tau, mask=None) -> np.ndarray:
    """W_ij(τ) = exp(S_ij/τ) / Σ_l exp(S_il/τ), row by row  (eq-softmax-temperature).

    ``tau`` > 0; ``tau = inf`` gives the uniform rows of the limit τ → ∞ (over the allowed keys).
    The row maximum is subtracted before dividing by τ, so a tiny τ cannot overflow: at τ = 1 the
    result is bit for bit :func:`softmax`.

    >>> softmax_with_temperature([[1.0, 3.0, 3.0, 0.0]], 1e-3)
    array([[0. , 0.5, 0.5, 0. ]])
    >>> softmax_with_temperature([[1.0, 3.0, 3.0, 0.0]], float("inf"))
    array([[0.25, 0.25, 0.25, 0.25]])
    """
    tau = _as_temperature(tau)
    S, allowed = as_scores(S, mask)  # (n_q, n_k), (n_q, n_k); −∞ is a masked entry
    if np.isinf(tau):
        E = allowed.astype(S.dtype)  # (n_q, n_k): exp(0) on every allowed key
        return E / E.sum(axis=1, keepdims=True)  # (n_q, n_k)
    with np.errstate(over="ignore", invalid="ignore", under="ignore"):
        S_allowed = np.where(allowed, S, -np.inf)  # (n_q, n_k)
        m = np.max(S_allowed, axis=1, keepdims=True, initial=-np.inf)  # (n_q, 1)
        Z = np.where(allowed, S - m, -np.inf)  # (n_q, n_k), every entry <= 0
        if tau != 1.0:
            Z = Z / S.dtype.type(tau)  # (n_q, n_k), still <= 0; -inf where a gap/τ overflows
        E = np.exp(Z)  # (n_q, n_k), the maximum gives exp(0) = 1
    return E / E.sum(axis=1, keepdims=True)  # (n_q, n_k)


def hardmax(S, mask=None) -> np.ndarray:
    """The τ → 0 limit of softmax: 1/k_i on the k_i keys where row i is maximal, 0 elsewhere.

    Ties share the weight equally (thm-temperature-limits).

    >>> hardmax([[1.0, 3.0, 3.0, 0.0], [2.0, 0.0, 0.0, 0.0]])
    array([[0. , 0.5, 0.5, 0. ],
           [1. , 0. , 0. , 0. ]])
    """
    S, allowed = as_scores(S, mask)  # (n_q, n_k), (n_q, n_k); −∞ is a masked entry
    masked = np.where(allowed, S, -np.inf)  # (n_q, n_k)
    top = masked == masked.max(axis=1, keepdims=True, initial=-np.inf)  # (n_q, n_k)
    E = top.astype(S.dtype)  # (n_q, n_k)
    return E / E.sum(axis=1, keepdims=True)  # (n_q, n_k)


def softmax_jacobian(p) -> np.ndarray:
    """J = diag(p) − p pᵀ, J_ij = ∂p_i/∂s_j at the row p = softmax(s)  (thm-softmax-jacobian).

    ``p`` is one row of weights, shape (n,): non-negative, summing to 1. J is (n, n), symmetric,
    and each of its rows sums to 0.

    >>> softmax_jacobian([0.5, 0.5])
    array([[ 0.25, -0.25],
           [-0.25,  0.25]])
    """
    p = np.asarray(p)  # (n,) expected; checked next
    if p.ndim != 1:
        raise ValueError(f"p must be one row of weights, shape (n,); got shape {p.shape}")
    p = as_matrix(p[None, :], "p", shape_doc="(n,)")[0]  # (n,)
    if p.size == 0:
        raise ValueError("p is empty: a softmax row has at least one weight")
    if (p < 0).any():
        first = int(np.argmax(p < 0))
        raise ValueError(f"p must be non-negative; found {p[first]} at index {first}")
    total = float(p.sum())
    if abs(total - 1.0) > 1e-6:
        raise ValueError(f"p must sum to 1 (a softmax row); it sums to {total}")
    return _softmax_jacobian(p)  # (n, n)


def _softmax_jacobian(p: np.ndarray) -> np.ndarray:
    """J = diag(p) − p pᵀ, J_ij = ∂p_i/∂s_j at the row p = softmax(s)  (thm-softmax-jacobian)."""
    return np.diag(p) - np.outer(p, p)  # (n, n)


def peakedness(dims, n_k: int, n_rows: int, rng: np.random.Generator) -> dict[str, list[float]]:
    """How concentrated softmax rows of random scores are, with and without the 1/√d scale.

    For each d in ``dims``: ``n_rows`` queries, each against its own ``n_k`` keys, entries standard
    normal (seeded by ``rng``). Returns, per d, the mean over rows of the largest weight
    (``max_raw``, ``max_scaled``: 1/n_k for a uniform row, 1 for a one-hot row) and of the Frobenius
    norm of the Jacobian diag(p) − p pᵀ (``jac_raw``, ``jac_scaled``: 0 for a one-hot row, where
    no gradient flows back through the softmax).
    """
    as_rng(rng)
    n_k, n_rows = as_int(n_k, "n_k", low=2), as_int(n_rows, "n_rows")
    out = {"d": [], "n_k": int(n_k), "max_raw": [], "max_scaled": [], "jac_raw": [], "jac_scaled": []}
    for d in dims:
        if int(d) < 1:
            raise ValueError(f"every d must be >= 1; got {d}")
        q = rng.standard_normal((n_rows, 1, d))  # (n_rows, 1, d)
        k = rng.standard_normal((n_rows, n_k, d))  # (n_rows, n_k, d)
        raw = np.einsum("rqd,rkd->rk", q, k)  # (n_rows, n_k): q·k for each row's keys
        out["d"].append(int(d))
        for tag, S in (("raw", raw), ("scaled", raw / np.sqrt(d))):
            W = softmax(S)  # (n_rows, n_k)
            out[f"max_{tag}"].append(float(W.max(axis=1).mean()))
            norms = [np.linalg.norm(softmax_jacobian(p)) for p in W]  # n_rows Frobenius norms
            out[f"jac_{tag}"].append(float(np.mean(norms)))
    return out


def raw_score_row(d: int, n_k: int, rng: np.random.Generator) -> np.ndarray:
    """s_j = q·k_j, unscaled, for one query q and n_k keys k_j with standard normal entries. (n_k,).

    One row of the kind :func:`peakedness` averages over; divide it by √d for the scaled scores.
    """
    as_rng(rng)
    d, n_k = as_int(d, "d"), as_int(n_k, "n_k")
    q = rng.standard_normal(d)  # (d,)
    K = rng.standard_normal((n_k, d))  # (n_k, d)
    return K @ q  # (n_k,)


# --------------------------------------------------------------------------------------------------
# Softmax in SymPy: an exact, row-wise softmax usable inside matrix expressions.
# --------------------------------------------------------------------------------------------------
class RowSoftmax(sp.MatrixExpr):
    """softmax(S) as a SymPy matrix expression, row by row; ``.doit()`` on an explicit S computes it.

    >>> s1, s2 = sp.symbols("s1 s2")
    >>> RowSoftmax(sp.Matrix([[s1, s2]])).doit()
    Matrix([[exp(s1)/(exp(s1) + exp(s2)), exp(s2)/(exp(s1) + exp(s2))]])
    """

    def __new__(cls, S):
        return sp.Basic.__new__(cls, sp.sympify(S))

    @property
    def shape(self):
        return self.args[0].shape

    def _latex(self, printer):
        return rf"\operatorname{{softmax}}\left({printer._print(self.args[0])}\right)"

    def doit(self, **hints):
        S = self.args[0].doit(**hints) if hints.get("deep", True) else self.args[0]
        if not isinstance(S, sp.MatrixBase):
            if any(not sp.sympify(dim).is_Integer for dim in S.shape):
                return RowSoftmax(S)
            S = S.as_explicit()
        E = S.applyfunc(sp.exp)
        return sp.Matrix(E.rows, E.cols, lambda i, j: E[i, j] / sum(E[i, l] for l in range(E.cols)))


def _row(n: int, name: str = "s") -> sp.Matrix:
    return sp.Matrix([[sp.Symbol(f"{name}_{j}", real=True) for j in range(1, n + 1)]])


_S_INT = [[1, 2, 0, -1], [3, 3, 1, 0], [0, 0, 0, 0]]  # (3, 4): an exact example; row 2 has a tie



_i, _j, _l = sp.symbols("i j l", integer=True, positive=True)
_n_k = sp.Symbol("n_k", integer=True, positive=True)
_S, _W, _m = sp.IndexedBase("S"), sp.IndexedBase("W"), sp.IndexedBase("m")
_tau = sp.Symbol("tau", positive=True)


def _display_softmax():
    return sp.Eq(_W[_i, _j], sp.exp(_S[_i, _j]) / sp.Sum(sp.exp(_S[_i, _l]), (_l, 1, _n_k)),
                 evaluate=False)


def _display_softmax_stable():
    def gap(index):
        return sp.Add(_S[_i, index], -_m[_i], evaluate=False)

    return sp.Eq(_W[_i, _j], sp.exp(gap(_j)) / sp.Sum(sp.exp(gap(_l)), (_l, 1, _n_k)), evaluate=False)


def _display_temperature():
    return sp.Eq(sp.IndexedBase(r"W^{(\tau)}")[_i, _j],
                 sp.exp(_S[_i, _j] / _tau) / sp.Sum(sp.exp(_S[_i, _l] / _tau), (_l, 1, _n_k)),
                 evaluate=False)


def _display_at(display, n: int, S: sp.Matrix, **extra) -> sp.Matrix:
    """Evaluate a displayed entry formula W_ij = ... on an explicit (rows, n) matrix S."""
    rhs = display.rhs
    out = sp.zeros(S.rows, n)
    for r in range(S.rows):
        for c in range(n):
            e = rhs.subs({_n_k: n, _i: r + 1, _j: c + 1, **extra}).doit()
            e = e.replace(lambda x: isinstance(x, sp.Indexed) and x.base == _S,
                          lambda x: S[int(x.indices[0]) - 1, int(x.indices[1]) - 1])
            out[r, c] = e
    return out


@derivation("eq-softmax", display=_display_softmax,
            strength="verified", scope="for 2 × 3 symbolic scores")
def _check_softmax():
    # The displayed formula, summed out for n_k = 3, is the SymPy row softmax ...
    S = sp.Matrix(2, 3, lambda r, c: sp.Symbol(f"S_{r}{c}", real=True))
    yield sp.Eq(_display_at(_display_softmax(), 3, S), RowSoftmax(S).doit(), evaluate=False)
    # ... and the package's floats equal its exact values on an integer example.
    yield close_to_exact(RowSoftmax(sp.Matrix(_S_INT)).doit(), softmax(_S_INT), rtol=1e-14)


@derivation("eq-softmax-stable", display=_display_softmax_stable,
            strength="verified", scope="for 2 × 3 symbolic scores and symbolic shifts")
def _check_softmax_stable():
    # Subtracting any m_i (in particular the row maximum) gives the definition back.
    S = sp.Matrix(2, 3, lambda r, c: sp.Symbol(f"S_{r}{c}", real=True))
    m = {_m[r + 1]: sp.Symbol(f"m_{r}", real=True) for r in range(2)}
    stable = _display_at(_display_softmax_stable(), 3, S).subs(m)
    yield sp.Eq(stable, RowSoftmax(S).doit(), evaluate=False)
    # Where the literal formula overflows, the package still gives the exact weights.
    big = [[1000, 999, 0], [-800, -800, -801]]
    yield not np.isfinite(naive_softmax(big)).all()
    yield close_to_exact(RowSoftmax(sp.Matrix(big)).doit(), softmax(big), rtol=1e-14)


@derivation("eq-softmax-temperature", display=_display_temperature,
            strength="verified", scope="for 2 × 3 symbolic scores and symbolic τ")
def _check_temperature():
    S = sp.Matrix(2, 3, lambda r, c: sp.Symbol(f"S_{r}{c}", real=True))
    tempered = _display_at(_display_temperature(), 3, S)
    yield sp.Eq(tempered, RowSoftmax(S / _tau).doit(), evaluate=False)
    yield sp.Eq(tempered.subs(_tau, 1), RowSoftmax(S).doit(), evaluate=False)
    for tau in (sp.Rational(1, 3), sp.Integer(1), sp.Integer(4)):
        yield close_to_exact(RowSoftmax(sp.Matrix(_S_INT) / tau).doit(),
                             softmax_with_temperature(_S_INT, float(tau)), rtol=1e-13)


@derivation("thm-rows-sum-to-one",
            strength="proved",
            scope="for every number of keys n_k, masked or not (symbolic sums); exactly for rows of 1 to 5")
def _check_rows_sum_to_one():
    # For every n: p_j = e^{s_j} / Σ_l e^{s_l} over symbolic n. Each weight is positive (SymPy decides
    # it from the real scores) and the weights sum to 1: Σ_j e^{s_j} / Σ_l e^{s_l}, the two sums the
    # same once their bound variables are given one name.
    n, j, l = _n_k, _j, _l
    s, M = sp.IndexedBase("s", real=True), sp.IndexedBase("M")
    Z = sp.Sum(sp.exp(s[l]), (l, 1, n))
    yield bool((sp.exp(s[j]) / Z).is_positive)
    yield sp.Eq(sp.Sum(sp.exp(s[j]) / Z, (j, 1, n)).doit().xreplace({l: j}), 1)
    # With a mask M (1 allowed, 0 forbidden), p_j = M_j e^{s_j} / Σ_l M_l e^{s_l}: a forbidden weight
    # is 0 and the allowed ones still sum to 1 (the denominator is not 0 while some key is allowed).
    Zm = sp.Sum(M[l] * sp.exp(s[l]), (l, 1, n))
    yield sp.Eq((M[j] * sp.exp(s[j]) / Zm).subs(M[j], 0), 0)
    yield sp.Eq(sp.Sum(M[j] * sp.exp(s[j]) / Zm, (j, 1, n)).doit().xreplace({l: j}), 1)
    # Exactly, for rows of 1 to 5 scores:
    for n in range(1, 6):
        p = RowSoftmax(_row(n)).doit()
        yield sp.Eq(sum(p), 1)
        for w in p:
            yield sp.Gt(w, 0)  # SymPy decides it: exp of a real number is positive
    # A masked key is a score of −∞: weight exp(−∞)/Z = 0, and the rest still sums to 1.
    s1, s3 = sp.symbols("s_1 s_3", real=True)
    p = RowSoftmax(sp.Matrix([[s1, -sp.oo, s3]])).doit()  # (1, 3)
    yield sp.Eq(p[1], 0)
    yield sp.Eq(p[0] + p[2], 1)
    # The package: every row of the integer example is a distribution, masked entries exactly 0.
    W = softmax(_S_INT, mask=np.array(_S_INT) >= 0)  # (3, 4)
    yield bool((W[np.array(_S_INT) < 0] == 0).all() and (W[np.array(_S_INT) >= 0] > 0).all())
    yield bool(np.allclose(W.sum(axis=1), 1.0, rtol=0, atol=4 * np.finfo(float).eps))


@derivation("thm-shift-invariance",
            strength="proved", scope="for every number of keys n_k and a symbolic shift (symbolic sums)")
def _check_shift_invariance():
    c = sp.Symbol(r"\Gamma", real=True)  # the shift, Γ on the page
    # For every n: e^{s_j + Γ} / Σ_l e^{s_l + Γ}, with e^{Γ} taken out of the sum, is e^{s_j} / Σ_l e^{s_l}.
    s = sp.IndexedBase("s", real=True)
    shifted = sp.expand(sp.exp(s[_j] + c) / sp.Sum(sp.exp(s[_l] + c), (_l, 1, _n_k)))
    shifted = shifted.replace(lambda e: isinstance(e, sp.Sum),
                              lambda e: sp.factor_terms(sp.Sum(sp.expand(e.function), *e.limits)))
    yield sp.Eq(shifted, sp.exp(s[_j]) / sp.Sum(sp.exp(s[_l]), (_l, 1, _n_k)), evaluate=False)
    # Exactly, for rows of 1 to 4 scores:
    for n in range(1, 5):
        s = _row(n)
        yield sp.Eq(RowSoftmax(s + c * sp.ones(1, n)).doit(), RowSoftmax(s).doit(), evaluate=False)
    # With c = −max_l s_l every term lies in (0, 1] and the largest is exactly 1: a row whose maximum
    # is M, the others below it by symbolic gaps g_l >= 0 (n = 4, any order of the entries).
    M = sp.Symbol("M", real=True)
    gaps = sp.symbols("g_1:4", nonnegative=True)
    row = [M - gaps[0], M, M - gaps[1], M - gaps[2]]
    terms = [sp.exp(x - sp.Max(*row)) for x in row]
    yield sp.Eq(terms[1], 1)
    for e in terms:
        yield sp.Gt(e, 0)
        yield sp.Le(sp.log(e), 0)  # log of the term is −g_l <= 0: the term is at most 1
    # The package: shifting each row of the integer example changes no weight beyond rounding.
    shift = np.array([[5.0], [-7.0], [100.0]])  # (3, 1), one constant per row
    yield bool(np.allclose(softmax(np.array(_S_INT) + shift), softmax(_S_INT), rtol=1e-13, atol=0))


@derivation("thm-temperature-limits",
            strength="verified", scope="for a row with k symbolic ties and two symbolic gaps")
def _check_temperature_limits():
    # A row whose maximum is attained k times, two other entries below it by gaps g1, g2 > 0.
    # Dividing numerator and denominator by exp(max/τ):
    k = sp.Symbol("k", integer=True, positive=True)
    g1, g2 = sp.symbols("g1 g2", positive=True)
    Z = k + sp.exp(-g1 / _tau) + sp.exp(-g2 / _tau)
    top, below = 1 / Z, sp.exp(-g1 / _tau) / Z
    yield sp.Eq(sp.limit(top, _tau, 0, "+"), 1 / k)
    yield sp.Eq(sp.limit(below, _tau, 0, "+"), 0)
    yield sp.Eq(sp.limit(top, _tau, sp.oo), 1 / (k + 2))
    yield sp.Eq(sp.limit(below, _tau, sp.oo), 1 / (k + 2))
    # The same limits on a concrete row with a tie, straight from the definition.
    row = sp.Matrix([[1, 3, 3, 0]])  # (1, 4)
    p = RowSoftmax(row / _tau).doit()
    yield sp.Eq(sp.Matrix([[sp.limit(w, _tau, 0, "+") for w in p]]), sp.Matrix([[0, sp.Rational(1, 2),
                                                                               sp.Rational(1, 2), 0]]))
    yield sp.Eq(sp.Matrix([[sp.limit(w, _tau, sp.oo) for w in p]]), sp.ones(1, 4) / 4)
    # The package's limits agree with them.
    yield bool(np.array_equal(hardmax([[1, 3, 3, 0]]), [[0, 0.5, 0.5, 0]]))
    yield bool(np.array_equal(softmax_with_temperature([[1, 3, 3, 0]], 1e-3), hardmax([[1, 3, 3, 0]])))
    yield bool(np.array_equal(softmax_with_temperature([[1, 3, 3, 0]], np.inf), np.full((1, 4), 0.25)))


@derivation("thm-softmax-jacobian",
            strength="proved", scope="for every number of scores n_k: the entries and the zero row sums "
                                     "(symbolic sums); the matrix form and its symmetry exactly for rows of 2 and 3")
def _check_softmax_jacobian():
    # For every n_k: differentiate p_i = e^{s_i} / Σ_l e^{s_l} with respect to s_j (SymPy differentiates
    # the sum, a Kronecker delta under it) and compare with p_i (δ_ij − p_j); then sum that over j.
    s = sp.IndexedBase("s", real=True)
    Z = sp.Sum(sp.exp(s[_l]), (_l, 1, _n_k))

    def p_(a):
        return sp.exp(s[a]) / Z

    dp = sp.diff(p_(_i), s[_j]).replace(lambda e: isinstance(e, sp.Sum) and e.has(sp.KroneckerDelta),
                                        lambda e: sp.refine(e.doit(), sp.Q.le(_j, _n_k)))  # j is one of 1..n_k
    stated = p_(_i) * (sp.KroneckerDelta(_i, _j) - p_(_j))
    yield sp.Eq(dp, stated, evaluate=False)
    row_sum = sp.refine(sp.Sum(stated, (_j, 1, _n_k)).doit(), sp.Q.le(_i, _n_k))
    row_sum = row_sum.replace(lambda e: isinstance(e, sp.Sum) and e.has(s[_j]),
                              lambda e: sp.factor_terms(e).xreplace({_j: _l}))  # Σ_j e^{s_j} is Z
    yield sp.Eq(row_sum, 0)
    for n in (2, 3):
        s = _row(n)
        p = RowSoftmax(s).doit()  # (1, n)
        J = p.jacobian(s)  # J_ij = ∂p_i/∂s_j
        yield sp.Eq(J, sp.diag(*p) - p.T * p, evaluate=False)
        yield sp.Eq(J * sp.ones(n, 1), sp.zeros(n, 1), evaluate=False)  # rows sum to 0
        yield sp.Eq(J, J.T, evaluate=False)
    # The package's J at an integer row equals the exact derivative.
    s = _row(3)
    exact = RowSoftmax(s).doit().jacobian(s).subs(dict(zip(s, [1, -2, 0])))
    yield close_to_exact(exact, softmax_jacobian(softmax([[1.0, -2.0, 0.0]])[0]), rtol=1e-13)
