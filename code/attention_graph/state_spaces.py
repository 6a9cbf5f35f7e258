"""State spaces as causal graphs: the state-space duality of Mamba-2 (Dao & Gu 2024).

A scalar-decay state-space model reads its inputs x_j through a state of size N × p:
h_i = a_i h_{i−1} + B_i x_iᵀ and y_i = h_iᵀ C_i (the recurrent form). Unrolled, it is
y_i = Σ_{j≤i} Π_ij (C_i·B_j) x_j with Π_ij = a_{j+1} ⋯ a_i (``eq-ssd``): masked linear attention
on the causal graph, queries C, keys B, values X, whose edge from j to i carries the product of
the decays along the chain's one path from j to i (the quadratic form). The two forms are equal
(``thm-ssd-duality``); Π is 1-semiseparable, Π_ij = α_i/α_j with α_i = a_1 ⋯ a_i, and it is
(I − A)⁻¹ for the chain's weighted adjacency A (``thm-ssd-semiseparable``); with every a_i = 1 it is
the running sum of causal linear attention without its normaliser (``thm-ssd-linear-attention``).
The chapter is ``book/state_spaces.md``; mathematics counts from 1, the code from 0.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .linear_attention import linear_attention
from .registry import derivation
from .validation import as_matrix, check_same

__all__ = ["ssd", "decay_mask"]

FORMS = ("recurrent", "quadratic")


def as_decays(a, n: int) -> np.ndarray:
    """``a`` as a float (n,) array of decays in (0, 1], or a clear error naming it."""
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"a must hold real numbers; got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"a must be a 1-d array of n = {n} decays, one per token; got shape {arr.shape}")
    arr = arr.astype(np.float64 if arr.dtype.kind != "f" else arr.dtype, copy=False)
    bad = ~(np.isfinite(arr) & (arr > 0) & (arr <= 1))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"a must hold decays in (0, 1]; found {float(arr[k])!r} at index {k}")
    return arr


def decay_mask(a) -> np.ndarray:
    """Π_ij = a_{j+1} ⋯ a_i for j ≤ i, 0 above the diagonal  (thm-ssd-semiseparable). (n, n).

    The weight the chain of decays gives the path from token j to token i; Π_ii = 1. Computed from
    sums of log a over each segment, so that no product underflows on a long sequence.

    >>> decay_mask([1.0, 0.5, 0.5]).tolist()
    [[1.0, 0.0, 0.0], [0.5, 1.0, 0.0], [0.25, 0.5, 1.0]]
    """
    if np.ndim(a) != 1:
        raise ValueError(f"a must be a 1-d array of decays, one per token; got shape {np.shape(a)}")
    a = as_decays(a, np.shape(a)[0])  # (n,)
    return segment_products(a)  # (n, n)


def segment_products(a) -> np.ndarray:
    """exp(Σ_{t=j+1}^{i} log a_t) below the diagonal, 0 above. (n, n).

    Each entry sums the logs of its own segment only (a running sum down each column, as Mamba-2's
    reference code does), so that Π_ij is as accurate as the decays between j and i allow, not
    spoilt by the long running sum of the whole sequence.
    """
    n = len(a)
    E = np.tril(np.broadcast_to(np.log(a)[:, None], (n, n)), -1)  # (n, n): E[t, j] = log a_t for t > j
    np.cumsum(E, axis=0, out=E)  # (n, n): E[i, j] = Σ_{t=j+1}^{i} log a_t
    k = np.arange(n)  # (n,)
    E[np.less.outer(k, k)] = -np.inf  # (n, n) bool: above the diagonal, no edge
    return np.exp(E, out=E)  # (n, n)


def ssd_recurrent(X, a, B, C) -> np.ndarray:
    """h_i = a_i h_{i−1} + B_i x_iᵀ, y_i = h_iᵀ C_i: one pass over the tokens, state (N, p). (n, p)."""
    h = np.zeros((B.shape[1], X.shape[1]))  # (N, p): the state
    Y = np.empty_like(X)  # (n, p)
    for i in range(X.shape[0]):
        h *= a[i]  # the state decays
        h += np.outer(B[i], X[i])  # (N, p): token i writes into it
        Y[i] = C[i] @ h  # (p,): token i reads it
    return Y


def ssd_quadratic(X, a, B, C) -> np.ndarray:
    """Y = (Π ∘ C Bᵀ) X: masked attention on the causal graph, formed as an n × n matrix. (n, p)."""
    M = C @ B.T  # (n, n): C_i · B_j
    M *= segment_products(a)  # (n, n): the edge from j to i
    return M @ X  # (n, p)


def ssd(X, a, B, C, form: str = "recurrent") -> np.ndarray:
    """y_i = Σ_{j≤i} (Π_{t=j+1}^{i} a_t) (C_i · B_j) x_j  (eq-ssd), in either form. (n, p).

    ``X`` (n, p) the inputs, ``a`` (n,) the decays in (0, 1], ``B`` and ``C`` (n, N) the input and
    output projections of each token (keys and queries, read as attention). ``form="recurrent"``
    runs the state through the tokens in O(n N p) time and O(N p) memory besides the output;
    ``form="quadratic"`` forms the n × n matrix Π ∘ C Bᵀ, O(n² (N + p)) time and O(n²) memory.
    They are equal (thm-ssd-duality).

    >>> ssd([[1.0], [1.0]], [1.0, 0.5], [[1.0], [1.0]], [[1.0], [1.0]]).tolist()
    [[1.0], [1.5]]
    """
    if form not in FORMS:
        raise ValueError(f"form must be one of {FORMS}; got {form!r}")
    X = as_matrix(X, "X", shape_doc="(n, p)")  # (n, p)
    B = as_matrix(B, "B", shape_doc="(n, N)")  # (n, N)
    C = as_matrix(C, "C", shape_doc="(n, N)")  # (n, N)
    check_same(B.shape[0], X.shape[0], "B must have one row per row of X (n)")
    check_same(C.shape[0], X.shape[0], "C must have one row per row of X (n)")
    check_same(B.shape[1], C.shape[1], "B and C must have the same number of columns (the state size N)")
    a = as_decays(a, X.shape[0])  # (n,)
    dtype = np.result_type(X, B, C, a)
    X, B, C, a = (M.astype(dtype, copy=False) for M in (X, B, C, a))
    if form == "recurrent":
        return ssd_recurrent(X, a, B, C)  # (n, p)
    return ssd_quadratic(X, a, B, C)  # (n, p)


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels. Products of decays are written as exponentials of
# sums of g_t = log a_t, so that SymPy can split and join their ranges.
# --------------------------------------------------------------------------------------------------
_i, _j, _t = sp.symbols("i j l", integer=True, positive=True)  # l: the book's index over tokens between
_n = sp.Symbol("n", integer=True, positive=True)
_g = sp.IndexedBase("g", real=True)  # g_t = log a_t
_a = sp.IndexedBase(r"\varrho", positive=True)  # the decays a_l (ϱ_l on the page)
_xs, _Bs, _Cs = sp.IndexedBase("v"), sp.IndexedBase("k"), sp.IndexedBase("q")  # x_j, B_j, C_i as v_j, k_j, q_i
_Ys = sp.IndexedBase("y")


def path_weight(j, i):
    """Π_ij = exp(Σ_{t=j+1}^{i} log a_t) = a_{j+1} ⋯ a_i, the weight of the chain's path from j to i."""
    return sp.exp(sp.Sum(_g[_t], (_t, j + 1, i)))


class RowDot(sp.Expr):
    """C_i · B_j = Σ_{k=1}^{N} C_ik B_jk (q_i · k_j on the page), shown as a dot product; ``.doit()`` sums it."""

    def __new__(cls, i, j, N):
        return sp.Expr.__new__(cls, sp.sympify(i), sp.sympify(j), sp.sympify(N))

    def _latex(self, printer):
        i, j, _ = (printer._print(x) for x in self.args)
        return rf"\left(q_{{{i}}} \cdot k_{{{j}}}\right)"

    def doit(self, **hints):
        i, j, N = self.args
        k = sp.Dummy("k", integer=True, positive=True)
        return sp.Sum(_Cs[i, k] * _Bs[j, k], (k, 1, N)).doit()


_N = sp.Symbol("N", integer=True, positive=True)


def _display_ssd():
    rhs = sp.Sum(sp.Mul(sp.Product(_a[_t], (_t, sp.Add(_j, 1, evaluate=False), _i)), RowDot(_i, _j, _N), _xs[_j],
                        evaluate=False),
                 (_j, 1, _i))
    return sp.Eq(_Ys[_i], rhs, evaluate=False)


def _ranges_join(lo, mid, hi):
    """Σ_{t=lo}^{mid} g_t + Σ_{t=mid+1}^{hi} g_t = Σ_{t=lo}^{hi} g_t, as a statement SymPy decides."""
    return sp.Eq(sp.simplify(sp.Sum(_g[_t], (_t, lo, mid)) + sp.Sum(_g[_t], (_t, mid + 1, hi))
                             - sp.Sum(_g[_t], (_t, lo, hi))), 0, evaluate=False)


def ssd_loop_exact(x, a, B, C):
    """eq-ssd summed out in SymPy for explicit lists: y_i = Σ_{j≤i} (a_{j+1} ⋯ a_i)(C_i · B_j) x_j."""
    n = len(x)
    return [[sum(sp.prod(a[j + 1:i + 1]) * sum(C[i][k] * B[j][k] for k in range(len(B[0]))) * x[j][c]
                 for j in range(i + 1)) for c in range(len(x[0]))] for i in range(n)]


def recurrence_exact(x, a, B, C):
    """The recurrent form run in SymPy for explicit lists: h_i = a_i h_{i−1} + B_i x_iᵀ, y_i = h_iᵀ C_i."""
    N, p = len(B[0]), len(x[0])
    h = sp.zeros(N, p)
    out = []
    for i in range(len(x)):
        h = a[i] * h + sp.Matrix(B[i]) * sp.Matrix([x[i]])
        out.append(list(sp.Matrix([C[i]]) * h))
    return out


@derivation("eq-ssd", display=_display_ssd, strength="verified",
            scope="for n = 3 tokens, N = 2 and p = 1 with symbolic decays, projections and inputs; the package "
                  "within 1e-14 of exact values")
def _check_ssd():
    n = 3
    x = [[sp.Symbol(f"x_{k}")] for k in range(1, n + 1)]
    a = [sp.Symbol(f"a_{k}", positive=True) for k in range(1, n + 1)]
    B = [[sp.Symbol(f"b_{k}{c}") for c in (1, 2)] for k in range(1, n + 1)]
    C = [[sp.Symbol(f"c_{k}{c}") for c in (1, 2)] for k in range(1, n + 1)]
    # The display, summed out at i = 3 and N = 2, is the formula written out; the recurrence gives it.
    want = sum(sp.prod(a[j + 1:n]) * (C[n - 1][0] * B[j][0] + C[n - 1][1] * B[j][1]) * x[j][0] for j in range(n))
    shown = _display_ssd().rhs.subs({_i: n, _N: 2}).doit()
    values = {_a[k + 1]: a[k] for k in range(n)} | {_xs[k + 1]: x[k][0] for k in range(n)}
    values |= {_Bs[k + 1, c + 1]: B[k][c] for k in range(n) for c in range(2)}
    values |= {_Cs[k + 1, c + 1]: C[k][c] for k in range(n) for c in range(2)}
    yield sp.Eq(sp.expand(shown.subs(values)), sp.expand(want))
    yield sp.Eq(sp.expand(recurrence_exact(x, a, B, C)[n - 1][0]), sp.expand(want))
    # The package on exact binary fractions, both forms.
    xi, ai = [[1.0, 2.0], [-1.0, 0.5], [3.0, 1.0], [0.0, 2.0]], [1.0, 0.5, 0.75, 0.25]
    Bi, Ci = [[1.0, 0.0], [2.0, 1.0], [0.5, -1.0], [1.0, 1.0]], [[1.0, 1.0], [0.0, 2.0], [1.0, 0.5], [-1.0, 1.0]]
    exact = sp.Matrix(ssd_loop_exact([[sp.nsimplify(v) for v in r] for r in xi], [sp.nsimplify(v) for v in ai],
                                     [[sp.nsimplify(v) for v in r] for r in Bi],
                                     [[sp.nsimplify(v) for v in r] for r in Ci]))
    for form in FORMS:
        got = ssd(xi, ai, Bi, Ci, form=form)  # (4, 2)
        yield bool(np.allclose(got, np.array(exact.evalf(30).tolist(), dtype=float), rtol=0, atol=1e-14))


@derivation("thm-ssd-duality", strength="proved",
            scope="for every position i and any decays (split ranges of finite sums and products); the package "
                  "measured to 1e-10")
def _check_ssd_duality():
    F = sp.Function("F")  # F(j) stands for the term Π_{j,i+1} B_j x_jᵀ of the state
    u = sp.IndexedBase("u")  # u_j = B_j x_jᵀ, entry by entry
    # The path from j to i + 1 is the path from j to i, then the edge of weight a_{i+1}.
    yield _ranges_join(_j + 1, _i, _i + 1)
    yield sp.Eq(sp.exp(sp.Sum(_g[_t], (_t, _j + 1, _i)) + _g[_i + 1]),
                path_weight(_j, _i) * sp.exp(_g[_i + 1]), evaluate=False)
    # The empty path: Π_ii = 1, so the new token enters with weight 1.
    yield sp.Eq(path_weight(_i + 1, _i + 1).doit(), 1, evaluate=False)
    # The sum over j ≤ i + 1 is the sum over j ≤ i and the term j = i + 1.
    yield sp.Eq(sp.simplify(sp.Sum(F(_j), (_j, 1, _i)) + sp.Sum(F(_j), (_j, _i + 1, _i + 1))
                            - sp.Sum(F(_j), (_j, 1, _i + 1))), 0, evaluate=False)
    yield sp.Eq(sp.Sum(F(_j), (_j, _i + 1, _i + 1)).doit(), F(_i + 1), evaluate=False)
    # So h_i = Σ_{j≤i} Π_ij u_j satisfies h_{i+1} = a_{i+1} h_i + u_{i+1}; at i = 1, h_1 = u_1.
    h = sp.Sum(path_weight(_j, _i) * u[_j], (_j, 1, _i))
    yield sp.Eq(h.subs(_i, 1).doit(), u[1], evaluate=False)
    # The readout: C_i does not depend on j, so C_i · h_i = Σ_j Π_ij (C_i · B_j) x_j term by term.
    c = sp.Symbol("c")  # one entry of C_i
    yield sp.Eq(sp.simplify(c * sp.Sum(path_weight(_j, _i) * u[_j], (_j, 1, _i))
                            - sp.Sum(c * path_weight(_j, _i) * u[_j], (_j, 1, _i))), 0, evaluate=False)
    # The package: the two forms agree on random inputs, short and long.
    rng = np.random.default_rng(2024)
    for n, N, p in ((7, 3, 2), (200, 4, 3)):
        X, B, C = rng.standard_normal((n, p)), rng.standard_normal((n, N)), rng.standard_normal((n, N))
        a = rng.uniform(0.5, 1.0, n)  # (n,)
        yield bool(np.allclose(ssd(X, a, B, C, "recurrent"), ssd(X, a, B, C, "quadratic"), rtol=0, atol=1e-10))


@derivation("thm-ssd-semiseparable", strength="proved",
            scope="for any positions j ≤ i (split ranges of finite sums); (I − A)⁻¹ verified for n = 5 with "
                  "symbolic decays; the package's lower blocks measured to rank 1")
def _check_ssd_semiseparable():
    # Π_ij = α_i / α_j with α_i = exp(Σ_{t≤i} g_t): the ranges 1..j and j+1..i join into 1..i.
    yield _ranges_join(1, _j, _i)
    alpha = lambda k: sp.exp(sp.Sum(_g[_t], (_t, 1, k)))  # noqa: E731
    yield sp.Eq(sp.exp(sp.Sum(_g[_t], (_t, 1, _i)) - sp.Sum(_g[_t], (_t, 1, _j))),
                alpha(_i) / alpha(_j), evaluate=False)
    # The chain j → j+1 → … → i is the only path from j to i: (I − A)⁻¹ = Σ_k A^k is Π, for n = 5.
    n = 5
    a = [sp.Symbol(f"a_{k}", positive=True) for k in range(1, n + 1)]
    A = sp.zeros(n, n)
    for k in range(1, n):
        A[k, k - 1] = a[k]  # the edge from token k to token k + 1 (1-based), weight a_{k+1}
    Pi = sp.Matrix(n, n, lambda r, s: sp.prod(a[s + 1:r + 1]) if s <= r else 0)
    yield sp.Eq((sp.eye(n) - A).inv(), Pi)
    # The package: every block of rows i ≥ r and columns j ≤ r has one non-zero singular value.
    rng = np.random.default_rng(5)
    P = decay_mask(rng.uniform(0.3, 1.0, 12))  # (12, 12)
    for r in range(12):
        s = np.linalg.svd(P[r:, :r + 1], compute_uv=False)
        yield bool(s[1:].max(initial=0.0) < 1e-12 * s[0])


@derivation("thm-ssd-linear-attention", strength="proved",
            scope="for any positions j ≤ i (an empty product of decays); the package measured to 1e-12")
def _check_ssd_linear_attention():
    # With every a_t = 1 each path weighs 1: Π_ij = 1 for j ≤ i, the causal mask itself.
    yield sp.Eq(sp.Product(sp.Integer(1), (_t, _j + 1, _i)), 1, evaluate=False)
    yield sp.Eq(path_weight(_j, _i).xreplace({_g[_t]: sp.Integer(0)}), 1, evaluate=False)
    # The package: ssd with a = 1 is causal linear attention (φ the identity, queries C, keys B,
    # values X) times its normaliser C_i · Σ_{j≤i} B_j.
    rng = np.random.default_rng(6)
    n, N, p = 9, 3, 2
    X, B, C = rng.standard_normal((n, p)), rng.uniform(0.1, 1.0, (n, N)), rng.uniform(0.1, 1.0, (n, N))
    D = (C * np.cumsum(B, axis=0)).sum(axis=1)  # (n,)
    running = linear_attention(C, B, X, feature_map=lambda M: M, causal=True)  # (n, p)
    for form in FORMS:
        yield bool(np.allclose(ssd(X, np.ones(n), B, C, form), D[:, None] * running, rtol=0, atol=1e-12))
