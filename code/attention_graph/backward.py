"""The backward pass of attention: dQ, dK, dV from the upstream gradient dY.

For Y = softmax(Q Kᵀ/√d) V and a scalar loss L whose gradient with respect to Y is dY, the chain rule
runs the forward pass backwards: dV = Wᵀ dY, dW = dY Vᵀ, dS = W ∘ (dW − rowsum(dW ∘ W)),
dQ = dS K/√d and dK = dSᵀ Q/√d. The chapter ``book/backward.md`` derives each step; the SymPy checks
below differentiate the exact symbolic layer (n_q = 2 queries, n_k = 3 keys, d = d_v = 2) and compare
the derivatives with these formulas.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from . import registry
from .registry import clearly_nonzero, derivation, evaluate, sample_point
from .scores import scaled_scores
from .softmax import softmax
from .validation import as_mask, as_matrix, as_qkv, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["attention_backward", "softmax_backward"]


def softmax_backward(W, dW) -> np.ndarray:
    """dS = W ∘ (dW − rowsum(dW ∘ W)): through a row-wise softmax  (eq-grad-s).

    ``W`` (n_q, n_k) holds softmax rows (masked entries 0), ``dW`` (n_q, n_k)
    the gradient of the loss with respect to them. Where W is 0, dS is 0: a
    forbidden entry gets no gradient.

    >>> softmax_backward([[0.5, 0.5]], [[1.0, 0.0]])
    array([[ 0.25, -0.25]])
    """
    W = as_matrix(W, "W", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    dW = as_matrix(dW, "dW", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    check_same(dW.shape, W.shape, "dW must have the shape of W (n_q, n_k)")
    return _softmax_backward(W, dW)  # (n_q, n_k)


def _softmax_backward(W: np.ndarray, dW: np.ndarray) -> np.ndarray:
    """dS = W ∘ (dW − rowsum(dW ∘ W)): through a row-wise softmax  (eq-grad-s)."""
    D = (dW * W).sum(axis=1, keepdims=True)  # (n_q, 1)
    return W * (dW - D)  # (n_q, n_k)


def attention_backward(Q, K, V, dY, mask=None):
    """dV = Wᵀ dY, dS = W ∘ (dY Vᵀ − rowsum), dQ = dS K/√d, dK = dSᵀ Q/√d  (eq-grad-q).

    ``Q`` (n_q, d), ``K`` (n_k, d), ``V`` (n_k, d_v), ``dY`` (n_q, d_v): the
    gradient of a scalar loss with respect to Y = softmax(Q Kᵀ/√d) V. ``mask``
    as in :func:`attention`. Returns (dQ, dK, dV), shaped as Q, K and V. Holds
    the whole (n_q, n_k) weight matrix; :func:`blockwise_attention_backward`
    does not.

    >>> Q, K, V = [[0.0]], [[0.0], [0.0]], [[1.0], [3.0]]
    >>> dQ, dK, dV = attention_backward(Q, K, V, dY=[[1.0]])
    >>> dQ, dK, dV
    (array([[0.]]), array([[0.],
           [0.]]), array([[0.5],
           [0.5]]))
    """
    Q, K, V = as_qkv(Q, K, V)  # (n_q, d), (n_k, d), (n_k, d_v)
    dY = as_matrix(dY, "dY", shape_doc="(n_q, d_v)")  # (n_q, d_v)
    check_same(dY.shape, (Q.shape[0], V.shape[1]),
               "dY must have the shape of Y (n_q, d_v)")
    if mask is not None:
        mask = as_mask(mask, "mask", (Q.shape[0], K.shape[0]))  # (n_q, n_k)
    dtype = np.result_type(Q, K, V, dY)
    return tuple(x.astype(dtype, copy=False) for x in _attention_backward(Q, K, V, dY, mask))


def _attention_backward(Q, K, V, dY, mask=None):
    """dV = Wᵀ dY, dS = W ∘ (dY Vᵀ − rowsum), dQ = dS K/√d, dK = dSᵀ Q/√d  (eq-grad-q)."""
    scale = math.sqrt(Q.shape[1])  # a Python float keeps float32 float32
    W = softmax(scaled_scores(Q, K), mask)  # (n_q, n_k)
    dV = W.T @ dY  # (n_k, d_v)
    dW = dY @ V.T  # (n_q, n_k)
    dS = _softmax_backward(W, dW)  # (n_q, n_k)
    dQ = dS @ K / scale  # (n_q, d)
    dK = dS.T @ Q / scale  # (n_k, d)
    return dQ, dK, dV


def central_difference(loss, X, h: float = 1e-6) -> np.ndarray:
    """∂loss/∂X entry by entry, (loss(X + h e) − loss(X − h e)) / 2h: the numerical check.

    ``loss`` maps an array of the shape of ``X`` to a float. Its error is O(h²) from the
    truncation plus O(ε/h) from rounding, about 1e-9 for h = 1e-6 on numbers of size 1.

    >>> central_difference(lambda X: float((X**2).sum()), np.array([[1.0, 2.0]])).round(6)
    array([[2., 4.]])
    """
    X = as_matrix(X, "X", shape_doc="(rows, cols)")  # (rows, cols)
    grad = np.zeros_like(X)  # (rows, cols)
    for index in np.ndindex(X.shape):
        E = np.zeros_like(X)  # (rows, cols), h at one entry
        E[index] = h
        grad[index] = (loss(X + E) - loss(X - E)) / (2 * h)
    return grad


# --------------------------------------------------------------------------------------------------
# The derivation, in SymPy: the exact layer on symbols, differentiated, against the formulas.
# Sizes: n_q = 2 queries, n_k = 3 keys, d = d_v = 2 (verified for these sizes, not in general).
# --------------------------------------------------------------------------------------------------
N_Q, N_K, D, D_V = 2, 3, 2, 2
_SIZES = "for n_q = 2, n_k = 3, d = d_v = 2, every entry a symbol"


def _sym(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda r, c: sp.Symbol(f"{name}_{r}{c}", real=True))


def sym_softmax(S: sp.Matrix, allowed=None) -> sp.Matrix:
    """Row-wise softmax of symbolic scores; entries not ``allowed`` are 0 and left out of the sum."""
    ok = (lambda i, j: True) if allowed is None else (lambda i, j: bool(allowed[i][j]))
    E = sp.Matrix(S.rows, S.cols, lambda i, j: sp.exp(S[i, j]) if ok(i, j) else 0)
    return sp.Matrix(S.rows, S.cols, lambda i, j: E[i, j] / sum(E.row(i)))


def _layer(allowed=None):
    """Symbols Q, K, V, G (= dY), the exact W and Y = W V, and the loss L = Σ G ∘ Y."""
    Q, K, V, G = _sym("q", N_Q, D), _sym("k", N_K, D), _sym("v", N_K, D_V), _sym("g", N_Q, D_V)
    W = sym_softmax(Q * K.T / sp.sqrt(D), allowed)  # (n_q, n_k)
    Y = W * V  # (n_q, d_v)
    L = sum(G[i, c] * Y[i, c] for i in range(N_Q) for c in range(D_V))  # dL/dY = G
    return Q, K, V, G, W, L


def _grad(L, X: sp.Matrix) -> sp.Matrix:
    return X.applyfunc(lambda x: sp.diff(L, x))


def _zero(M: sp.Matrix):
    """Each entry of M is 0 once every exponential is named by a symbol and fractions are cancelled.

    An entry is first evaluated exactly at one point its symbols allow (``registry.sample_point``):
    where it is clearly not 0 there, it is not 0 as a function either, and the statement is given as
    that number, which fails at once (a wrong formula costs no cancellation). Only an entry that is 0 there is
    cancelled, which proves it is 0 everywhere.
    """
    bases, names = [], {}
    for e in sorted(M.atoms(sp.exp), key=sp.default_sort_key):  # exp(2a) is named x_a²
        for k, b in enumerate(bases):
            ratio = sp.simplify(e.args[0] / b)
            if ratio.is_Integer:
                names[e] = sp.Symbol(f"x{k}", positive=True) ** ratio
                break
        else:
            names[e] = sp.Symbol(f"x{len(bases)}", positive=True)
            bases.append(e.args[0])
    for entry in M:
        entry = entry.xreplace(names)
        point = sample_point(entry)
        if point is not None and clearly_nonzero(at := entry.xreplace(point)):
            yield sp.Eq(at, 0, evaluate=False)  # not 0 at that point: a counterexample
        else:
            yield sp.Eq(sp.cancel(sp.together(entry)), 0)


def grad_v(W, G):
    return W.T * G  # (eq-grad-v)


def grad_w(G, V):
    return G * V.T  # (eq-grad-w)


def grad_s(W, dW):
    """W ∘ (dW − rowsum(dW ∘ W))  (eq-grad-s), entry by entry."""
    rowsum = [sum(dW[i, l] * W[i, l] for l in range(W.cols)) for i in range(W.rows)]
    return sp.Matrix(W.rows, W.cols, lambda i, j: W[i, j] * (dW[i, j] - rowsum[i]))


def grad_q(dS, K):
    return dS * K / sp.sqrt(K.cols)  # (eq-grad-q)


def grad_k(dS, Q):
    return dS.T * Q / sp.sqrt(Q.cols)  # (eq-grad-k)


def _formulas(Q, K, V, G, W):
    """dV, dW, dS, dQ, dK by the book's formulas, in SymPy."""
    dW = grad_w(G, V)
    dS = grad_s(W, dW)
    return grad_v(W, G), dW, dS, grad_q(dS, K), grad_k(dS, Q)


def _package_agrees(Q, K, V, G, L, allowed=None) -> list[bool]:
    """attention_backward at a rational point equals the exact derivatives of L there."""
    point = {x: sp.Rational(k % 5 - 2, 3) for k, x in enumerate(
        sorted(set(Q) | set(K) | set(V) | set(G), key=sp.default_sort_key))}
    num = [np.array(M.subs(point), dtype=float) for M in (Q, K, V, G)]
    got = attention_backward(*num, mask=None if allowed is None else np.array(allowed))
    out = []
    for exact, value in zip((_grad(L, Q), _grad(L, K), _grad(L, V)), got):
        want = np.array(exact.subs(point).evalf(30), dtype=float)
        out.append(bool(np.allclose(value, want, rtol=0, atol=1e-14)))
    return out


_M = {name: sp.MatrixSymbol(name, 2, 2) for name in ("W", "V", "Q", "K")}
_dM = {name: sp.MatrixSymbol(rf"\mathrm{{d}}{name}", 2, 2) for name in ("Y", "W", "V", "Q", "K", "S")}
_i, _j, _l = sp.symbols("i j l", integer=True)
_n_k, _d = sp.symbols("n_k d", positive=True)


@derivation("eq-grad-v", display=lambda: sp.Eq(_dM["V"], _M["W"].T * _dM["Y"], evaluate=False),
            strength="verified", scope=_SIZES)
def _check_grad_v():
    Q, K, V, G, W, L = _layer()
    yield from _zero(_grad(L, V) - _formulas(Q, K, V, G, W)[0])
    # The formula checked is the one displayed: the glued equation, computed on the same symbols.
    shown = evaluate(registry.display("eq-grad-v").rhs, {_M["W"]: W, _dM["Y"]: G})
    yield from _zero(shown - grad_v(W, G))


@derivation("eq-grad-w", display=lambda: sp.Eq(_dM["W"], _dM["Y"] * _M["V"].T, evaluate=False),
            strength="verified", scope=_SIZES)
def _check_grad_w():
    # With W held as free symbols, L = Σ G ∘ (W V): its derivative in W is G Vᵀ.
    _, _, V, G, _, _ = _layer()
    Wf = _sym("w", N_Q, N_K)
    L = sum(G[i, c] * (Wf * V)[i, c] for i in range(N_Q) for c in range(D_V))
    yield from _zero(_grad(L, Wf) - grad_w(G, V))
    shown = evaluate(registry.display("eq-grad-w").rhs, {_dM["Y"]: G, _M["V"]: V})
    yield from _zero(shown - grad_w(G, V))


def _display_grad_s():
    dS, dW, W = (sp.IndexedBase(n) for n in (r"\mathrm{d}S", r"\mathrm{d}W", "W"))
    rowsum = sp.Sum(sp.Mul(dW[_i, _l], W[_i, _l], evaluate=False), (_l, 1, _n_k))
    inner = sp.Add(dW[_i, _j], sp.Mul(-1, rowsum, evaluate=False), evaluate=False)
    return sp.Eq(dS[_i, _j], sp.Mul(W[_i, _j], inner, evaluate=False), evaluate=False)


@derivation("eq-grad-s", display=_display_grad_s, strength="verified", scope=_SIZES)
def _check_grad_s():
    # Scores S free: L(S) = Σ G ∘ (softmax(S) V); its derivative in S is the formula's dS.
    _, _, V, G, _, _ = _layer()
    S = _sym("s", N_Q, N_K)
    W = sym_softmax(S)
    L = sum(G[i, c] * (W * V)[i, c] for i in range(N_Q) for c in range(D_V))
    yield from _zero(_grad(L, S) - grad_s(W, grad_w(G, V)))
    yield from _zero(_grad_s_shown(W, grad_w(G, V)) - grad_s(W, grad_w(G, V)))


def _grad_s_shown(W: sp.Matrix, dW: sp.Matrix) -> sp.Matrix:
    """The displayed eq-grad-s, summed out for W's n_k and read entry by entry (indices from 1)."""
    rhs = _display_grad_s().rhs.subs(_n_k, W.cols).doit()
    values = {r"\mathrm{d}W": dW, "W": W}

    def entry(r, c):
        e = rhs.subs({_i: r + 1, _j: c + 1})
        return e.replace(lambda x: isinstance(x, sp.Indexed),
                         lambda x: values[str(x.base)][int(x.indices[0]) - 1, int(x.indices[1]) - 1])

    return sp.Matrix(W.rows, W.cols, entry)


def _display_grad_q():
    return sp.Eq(_dM["Q"], sp.MatMul(_dM["S"], _M["K"], 1 / sp.sqrt(_d), evaluate=False),
                 evaluate=False)


@derivation("eq-grad-q", display=_display_grad_q, strength="verified", scope=_SIZES)
def _check_grad_q():
    Q, K, V, G, W, L = _layer()
    dS = _formulas(Q, K, V, G, W)[2]
    yield from _zero(_grad(L, Q) - _formulas(Q, K, V, G, W)[3])
    shown = evaluate(_display_grad_q().rhs, {_dM["S"]: dS, _M["K"]: K, _d: D})
    yield from _zero(shown - grad_q(dS, K))
    yield from _package_agrees(Q, K, V, G, L)


def _display_grad_k():
    return sp.Eq(_dM["K"], sp.MatMul(_dM["S"].T, _M["Q"], 1 / sp.sqrt(_d), evaluate=False),
                 evaluate=False)


@derivation("eq-grad-k", display=_display_grad_k, strength="verified", scope=_SIZES)
def _check_grad_k():
    Q, K, V, G, W, L = _layer()
    dS = _formulas(Q, K, V, G, W)[2]
    yield from _zero(_grad(L, K) - _formulas(Q, K, V, G, W)[4])
    shown = evaluate(_display_grad_k().rhs, {_dM["S"]: dS, _M["Q"]: Q, _d: D})
    yield from _zero(shown - grad_k(dS, Q))


_ALLOWED = [[True, False, True], [True, True, False]]  # query 0 may not see key 1, query 1 not key 2


@derivation("thm-masked-gradient", strength="verified",
            scope="for n_q = 2, n_k = 3, d = d_v = 2 with two forbidden pairs, every entry a symbol")
def _check_masked_gradient():
    # The masked layer (forbidden entries left out of the softmax) differentiated exactly: the same
    # formulas hold, and the score of a forbidden pair gets gradient 0.
    # The cheap statements first, so a wrong layer fails before any cancellation.
    Q, K, V, G, W, L = _layer(_ALLOWED)
    dV, _, dS, dQ, dK = _formulas(Q, K, V, G, W)
    yield from [sp.Eq(dS[i, j], 0) for i in range(N_Q) for j in range(N_K) if not _ALLOWED[i][j]]
    # The key a query may not see receives nothing from it: its value and key gradients do not
    # depend on that query's upstream gradient.
    yield from [sp.Eq(sp.diff(dV[1, c], G[0, c2]), 0) for c in range(D_V) for c2 in range(D_V)]
    yield from [sp.Eq(sp.diff(dK[1, c], G[0, c2]), 0) for c in range(D) for c2 in range(D_V)]
    for got, want in ((_grad(L, V), dV), (_grad(L, Q), dQ), (_grad(L, K), dK)):
        yield from _zero(got - want)
    # The package agrees with the exact derivatives at a rational point.
    yield from _package_agrees(Q, K, V, G, L, _ALLOWED)
