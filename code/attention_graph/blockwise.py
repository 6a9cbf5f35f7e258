"""Blockwise attention and the online softmax: the weighted sum, one block of keys at a time.

Dense attention holds the whole (n_q, n_k) weight matrix. Each output row, though, is only a weighted
average of the values, and a weighted average can be accumulated block by block if we keep, per
query, three running numbers: the maximum score m seen so far, the normaliser ℓ = Σ e^{s_j − m} and the
average o of the values seen so far (Milakov & Gimelshein 2018; Dao et al. 2022). Two such summaries
merge into the summary of their union (:func:`merge`); the chapter ``book/blockwise.md`` proves it with
SymPy (the checks are registered below under the labels the page shows).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
import sympy as sp

from . import registry
from .registry import derivation
from .scores import scaled_scores
from .validation import as_int, as_matrix, as_qkv, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["block_state", "blockwise_attention", "blockwise_attention_backward", "merge"]


class BlockState(NamedTuple):
    """The summary of a set of keys, per query: (m, ℓ, o).

    ``m`` (n_q, 1) is the largest score, ``ell`` (n_q, 1) the normaliser Σ_j e^{s_j − m} and ``o``
    (n_q, d_v) the softmax-weighted average of the values of those keys. The fields may also hold SymPy
    expressions: the book's proofs run :func:`merge` on symbols.
    """

    m: Any
    ell: Any
    o: Any


def block_state(S, V) -> BlockState:
    """m = max_j s_j, ℓ = Σ_j e^{s_j − m}, o = Σ_j e^{s_j − m} v_j / ℓ  (eq-block-output).

    ``S`` is (n_q, n_b): the scores of every query against the n_b keys of one
    block; ``V`` is (n_b, d_v), the values of those keys. Every exponent is at
    most 0, so nothing overflows.

    >>> block_state([[0.0, 0.0]], [[1.0], [3.0]])
    BlockState(m=array([[0.]]), ell=array([[2.]]), o=array([[2.]]))
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_b)")  # (n_q, n_b)
    V = as_matrix(V, "V", shape_doc="(n_b, d_v)")  # (n_b, d_v)
    check_same(S.shape[1], V.shape[0], "S must have one column per row of V")
    if S.shape[1] == 0:
        raise ValueError("S has no columns: a block needs at least one key")
    return _block_state(S, V)


def _block_state(S: np.ndarray, V: np.ndarray) -> BlockState:
    """m = max_j s_j, ℓ = Σ_j e^{s_j − m}, o = Σ_j e^{s_j − m} v_j / ℓ  (eq-block-output)."""
    m = S.max(axis=1, keepdims=True)  # (n_q, 1)
    with np.errstate(over="ignore"):  # s_j − m < −1.8e308 gives e^{−inf} = 0
        P = np.exp(S - m)  # (n_q, n_b), entries in [0, 1]
    ell = P.sum(axis=1, keepdims=True)  # (n_q, 1), at least 1
    o = P @ V / ell  # (n_q, d_v)
    return BlockState(m, ell, o)


def merge(a: BlockState, b: BlockState, *, exp=np.exp, maximum=np.maximum) -> BlockState:
    """The state of the union of two disjoint blocks of keys  (eq-merge-output).

    m = max(m_A, m_B)
    ℓ = e^{m_A − m} ℓ_A + e^{m_B − m} ℓ_B
    o = (e^{m_A − m} ℓ_A o_A + e^{m_B − m} ℓ_B o_B) / ℓ

    for the states ``a`` and ``b`` of two blocks of keys 𝒜 and ℬ.

    ``exp`` and ``maximum`` are NumPy's by default; the book's SymPy proofs
    call this same function with ``sympy.exp`` and ``sympy.Max`` on symbols.

    >>> a = BlockState(np.array([[0.0]]), np.array([[1.0]]), np.array([[1.0]]))
    >>> b = BlockState(np.array([[0.0]]), np.array([[1.0]]), np.array([[3.0]]))
    >>> merge(a, b)
    BlockState(m=array([[0.]]), ell=array([[2.]]), o=array([[2.]]))
    """
    return _merge(_as_state(a, "a"), _as_state(b, "b"), exp=exp, maximum=maximum)


def _merge(A: BlockState, B: BlockState, *,
           exp=np.exp, maximum=np.maximum) -> BlockState:
    """The state of the union of two disjoint blocks of keys  (eq-merge-output)."""
    with np.errstate(over="ignore"):  # m_A − m < −1.8e308 gives e^{−inf} = 0
        m = maximum(A.m, B.m)  # (n_q, 1)
        alpha = exp(A.m - m)  # (n_q, 1), e^{m_A − m} in [0, 1]
        beta = exp(B.m - m)  # (n_q, 1), e^{m_B − m} in [0, 1]
    ell = alpha * A.ell + beta * B.ell  # (n_q, 1)
    o = (alpha * A.ell * A.o + beta * B.ell * B.o) / ell  # (n_q, d_v)
    return BlockState(m, ell, o)


def _as_state(state, name: str) -> BlockState:
    """``state`` as a BlockState with consistent shapes and ℓ > 0; SymPy states pass unchanged."""
    if not isinstance(state, BlockState):
        raise TypeError(f"{name} must be a BlockState (m, ell, o); got {type(state).__name__}")
    if any(isinstance(x, (sp.Basic, sp.MatrixBase)) for x in state):
        return state
    m = as_matrix(state.m, f"{name}.m", shape_doc="(n_q, 1)")  # (n_q, 1)
    ell = as_matrix(state.ell, f"{name}.ell", shape_doc="(n_q, 1)")  # (n_q, 1)
    o = as_matrix(state.o, f"{name}.o", shape_doc="(n_q, d_v)")  # (n_q, d_v)
    if m.shape[1] != 1 or ell.shape != m.shape or o.shape[0] != m.shape[0]:
        raise ValueError(f"{name} has inconsistent shapes: m {m.shape}, ell {ell.shape}, o {o.shape}; "
                         "expected (n_q, 1), (n_q, 1), (n_q, d_v)")
    if not (ell > 0).all():
        raise ValueError(f"{name}.ell must be positive: a normaliser is a sum of exponentials")
    return BlockState(m, ell, o)


def check_block_size(block_size) -> int:
    """``block_size`` as a positive int, or a TypeError/ValueError saying what is wrong."""
    return as_int(block_size, "block_size", what="a positive integer (keys per block)")


def blockwise_attention(Q, K, V, block_size: int, *, return_lse: bool = False):
    """Y = softmax(Q Kᵀ / √d) V, one block of keys at a time  (thm-merge-is-union).

    ``Q`` is (n_q, d), ``K`` is (n_k, d), ``V`` is (n_k, d_v); ``block_size``
    keys are read at a time. Returns Y, (n_q, d_v): the same as
    ``attention(Q, K, V)[0]``, without ever holding more than an
    (n_q, block_size) slice of the scores, so the extra memory is
    O(n_q · (block_size + d_v)). Input checks and dtypes follow :func:`attention`.

    With ``return_lse=True`` it returns (Y, lse): lse (n_q,) is each query's log-sum-exp of
    scores, m + log ℓ of the final state (eq-lse-weights), all the backward pass needs to rebuild
    any block of weights.

    >>> Q, K, V = [[1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]], [[1.0], [3.0]]
    >>> blockwise_attention(Q, K, V, block_size=1).round(3)
    array([[1.66]])
    """
    n_b = check_block_size(block_size)
    Q, K, V = as_qkv(Q, K, V)  # (n_q, d), (n_k, d), (n_k, d_v)
    n_k = K.shape[0]
    if n_k == 0:
        if Q.shape[0] > 0:
            raise ValueError("K has no rows: a query with no key has no softmax")
        Y = np.zeros((0, V.shape[1]), dtype=np.result_type(Q, K, V))  # (0, d_v)
        return (Y, np.zeros(0, dtype=Y.dtype)) if return_lse else Y
    Y, lse = _blockwise_attention(Q, K, V, n_b)  # (n_q, d_v), (n_q,)
    return (Y, lse) if return_lse else Y


def _blockwise_attention(Q, K, V, n_b: int) -> tuple[np.ndarray, np.ndarray]:
    """Y = softmax(Q Kᵀ / √d) V, one block of n_b keys at a time, and lse  (thm-merge-is-union)."""
    state = None
    for start in range(0, K.shape[0], n_b):
        S = scaled_scores(Q, K[start:start + n_b])  # (n_q, n_b)
        block = _block_state(S, V[start:start + n_b])  # the state of these keys
        state = block if state is None else _merge(state, block)
    return state.o, (state.m + np.log(state.ell))[:, 0]  # (n_q, d_v), (n_q,)


def delta_rows(dY, Y):
    """D_i = rowsum(dY ∘ Y), which equals rowsum(dW ∘ W)  (eq-flash-delta). (n_q, 1)."""
    return (dY * Y).sum(axis=1, keepdims=True)  # (n_q, 1)


def blockwise_attention_backward(Q, K, V, dY, block_size: int):
    """dQ, dK, dV of attention, a block of keys at a time, W rebuilt  (eq-flash-delta).

    ``Q`` (n_q, d), ``K`` (n_k, d), ``V`` (n_k, d_v), ``dY`` (n_q, d_v) as in
    :func:`attention_backward`, which it equals. The forward pass is rerun
    blockwise for Y and the log-sum-exp lse; each block of weights is then
    W_b = exp(S_b − lse) (eq-lse-weights), and D = rowsum(dY ∘ Y) stands in
    for rowsum(dW ∘ W) (eq-flash-delta). No (n_q, n_k) array is ever made:
    the extra memory is O(n_q · (block_size + d_v)).

    >>> dQ, dK, dV = blockwise_attention_backward([[0.0]], [[0.0], [0.0]], [[1.0], [3.0]],
    ...                                           [[1.0]], block_size=1)
    >>> dV
    array([[0.5],
           [0.5]])
    """
    n_b = check_block_size(block_size)
    Q, K, V = as_qkv(Q, K, V)  # (n_q, d), (n_k, d), (n_k, d_v)
    dY = as_matrix(dY, "dY", shape_doc="(n_q, d_v)")  # (n_q, d_v)
    check_same(dY.shape, (Q.shape[0], V.shape[1]),
               "dY must have the shape of Y (n_q, d_v)")
    dtype = np.result_type(Q, K, V, dY)
    Q, K, V, dY = (x.astype(dtype, copy=False) for x in (Q, K, V, dY))
    if K.shape[0] == 0:
        if Q.shape[0] > 0:
            raise ValueError("K has no rows: a query with no key has no softmax")
        return np.zeros_like(Q), np.zeros_like(K), np.zeros_like(V)  # (0, d), (0, d), (0, d_v)
    return _blockwise_attention_backward(Q, K, V, dY, n_b)


def _blockwise_attention_backward(Q, K, V, dY, n_b: int):
    """dQ, dK, dV of attention, a block of keys at a time, W rebuilt  (eq-flash-delta)."""
    dQ = np.zeros_like(Q)  # (n_q, d)
    dK = np.zeros_like(K)  # (n_k, d)
    dV = np.zeros_like(V)  # (n_k, d_v)
    Y, lse = _blockwise_attention(Q, K, V, n_b)  # (n_q, d_v), (n_q,)
    D = delta_rows(dY, Y)  # (n_q, 1)
    scale = math.sqrt(Q.shape[1])  # a Python float keeps float32 float32
    for start in range(0, K.shape[0], n_b):
        keys = slice(start, start + n_b)
        W = np.exp(scaled_scores(Q, K[keys]) - lse[:, None])  # (n_q, n_b): this block
        dV[keys] = W.T @ dY  # (n_b, d_v)
        dS = W * (dY @ V[keys].T - D)  # (n_q, n_b)
        dQ += dS @ K[keys] / scale  # (n_q, d)
        dK[keys] = dS.T @ Q / scale  # (n_b, d)
    return dQ, dK, dV


def online_trace(q, K, V, block_size: int) -> list[dict]:
    """The running (m, ℓ, o) of one query after each block of keys, as a list of dicts.

    ``q`` is one query (d,), ``K`` (n_k, d), ``V`` (n_k, d_v). Each entry has ``keys`` (the indices of
    the block read), ``m`` and ``ell`` (floats) and ``o`` (a list of d_v floats). The last entry is the
    attention output of ``q``.
    """
    q = as_matrix(np.atleast_2d(q), "q", shape_doc="(1, d)")  # (1, d)
    if q.shape[0] != 1:
        raise ValueError(f"q must be a single query of shape (d,) or (1, d); got shape {q.shape}")
    n_b = check_block_size(block_size)
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    V = as_matrix(V, "V", shape_doc="(n_k, d_v)")  # (n_k, d_v)
    check_same(K.shape[0], V.shape[0], "K and V must have the same number of rows (n_k)")
    trace, state = [], None
    for start in range(0, K.shape[0], n_b):
        block = block_state(scaled_scores(q, K[start:start + n_b]), V[start:start + n_b])
        state = block if state is None else merge(state, block)
        trace.append({"keys": list(range(start, min(start + n_b, K.shape[0]))),
                      "m": float(state.m[0, 0]), "ell": float(state.ell[0, 0]),
                      "o": [float(x) for x in state.o[0]]})
    return trace


# --------------------------------------------------------------------------------------------------
# The derivation, in SymPy. One query; scores s_j and values v_j (rows of two entries) are symbols.
# --------------------------------------------------------------------------------------------------
_SYM = dict(exp=sp.exp, maximum=sp.Max)
_j, _n = sp.symbols("j n", integer=True, positive=True)
_s, _v = sp.IndexedBase("s"), sp.IndexedBase("v")
m_, ell_, o_ = sp.symbols(r"m \ell o")
m_A, m_B, ell_A, ell_B, o_A, o_B = sp.symbols(r"m_{\mathcal{A}} m_{\mathcal{B}} \ell_{\mathcal{A}} \ell_{\mathcal{B}} "
                                              r"o_{\mathcal{A}} o_{\mathcal{B}}")


def _scores(names: str):
    return list(sp.symbols(names, real=True))


def _values(count: int, first: int = 1):
    """Rows v_j = (v_j1, v_j2), j = first, ..., first + count − 1."""
    return [sp.Matrix([[sp.Symbol(f"v_{k}{c}", real=True) for c in (1, 2)]])
            for k in range(first, first + count)]


def sym_block_state(s, v) -> BlockState:
    """m = max_j s_j, then (eq-block-normaliser) and (eq-block-output) on symbols, as displayed."""
    m = sp.Max(*s)
    ell = sum(sp.exp(sj - m) for sj in s)
    o = sum((sp.exp(sj - m) * vj for sj, vj in zip(s, v)), sp.zeros(1, 2)) / ell
    return BlockState(m, ell, o)


def _softmax_sum(s, v):
    """Σ_j softmax(s)_j v_j with no shift at all: the attention output over these keys."""
    return sum((sp.exp(sj) * vj for sj, vj in zip(s, v)), sp.zeros(1, 2)) / sum(sp.exp(sj) for sj in s)


def _matrix_zero(M) -> list:
    return [sp.Eq(e, 0) for e in M]


def _general_state(name: str) -> BlockState:
    """An arbitrary state of block 𝒜, ℬ or 𝒞 (``name`` "A", "B", "C"): m real, ℓ positive, o a row of two reals."""
    block = rf"\mathcal{{{name}}}"
    return BlockState(sp.Symbol(f"m_{{{block}}}", real=True), sp.Symbol(rf"\ell_{{{block}}}", positive=True),
                      sp.Matrix([[sp.Symbol(f"o_{{{block},{c}}}", real=True) for c in (1, 2)]]))


def _shifted():
    """e^{s_j − m}, written in that order."""
    return sp.exp(sp.Add(_s[_j], -m_, evaluate=False), evaluate=False)


def _merge_shown(display, A: BlockState, B: BlockState, merged: BlockState, column: int | None = None):
    """A displayed merge formula with the symbols of two states (and of their merge) put in."""
    values = {m_A: A.m, m_B: B.m, ell_A: A.ell, ell_B: B.ell, m_: merged.m, ell_: merged.ell}
    if column is not None:
        values.update({o_A: A.o[column], o_B: B.o[column]})
    return display.rhs.subs(values)


def _block_shown(display, s, v=None, column: int = 0, **values):
    """A displayed block formula summed out over the scores ``s`` (and the rows ``v``, one column)."""
    e = display.rhs.subs(_n, len(s)).doit().subs({_s[k + 1]: x for k, x in enumerate(s)})
    if v is not None:
        e = e.subs({_v[k + 1]: row[column] for k, row in enumerate(v)})
    return e.subs(values)


_SPLITS = [(2, 3), (4, 1)]  # blocks A = s_1..s_p and B = the rest, of five symbolic scores


@derivation("eq-block-normaliser",
            display=lambda: sp.Eq(ell_, sp.Sum(_shifted(), (_j, 1, _n)), evaluate=False),
            strength="verified", scope="for a block of 3 symbolic scores and a symbolic shift")
def _check_block_normaliser():
    # Shifting every score by m divides the normaliser by e^{m}: the weights e^{s_j − m}/ℓ do not move.
    s = _scores("s1:4")
    t = sp.Symbol("t", real=True)
    ell_m = sum(sp.exp(sj - t) for sj in s)
    yield sp.Eq(_block_shown(registry.display("eq-block-normaliser"), s).subs(m_, t), ell_m)
    yield sp.Eq(ell_m * sp.exp(t), sum(sp.exp(sj) for sj in s))
    for sj in s:
        yield sp.Eq(sp.exp(sj - t) / ell_m, sp.exp(sj) / sum(sp.exp(x) for x in s))
    # With m the maximum, each term is at most 1 and the largest is exactly 1: 1 <= ℓ <= n. Whichever
    # key has the largest score, the other two lie below it by gaps a, b >= 0: the normaliser is
    # 1 + e^{−a} + e^{−b}, and e^{−x} <= 1 for every x >= 0 (SymPy finds no x >= 0 with e^{−x} > 1).
    a, b, x = sp.Symbol("a", nonnegative=True), sp.Symbol("b", nonnegative=True), sp.Symbol("x", real=True)
    for top in range(3):
        low = [k for k in range(3) if k != top]
        below = {s[low[0]]: s[top] - a, s[low[1]]: s[top] - b}
        terms = [sp.exp(sj - sp.Max(*s)).subs(below) for sj in s]
        yield sp.Eq(terms[top], 1)
        yield sp.Eq(sum(terms), 1 + sp.exp(-a) + sp.exp(-b))
    yield sp.solveset(sp.exp(-x) > 1, x, sp.Interval(0, sp.oo)) == sp.S.EmptySet
    yield bool(np.isclose(float(block_state([[3.0, 1.0, -2.0]], np.eye(3)).ell[0, 0]),
                          float(sum(sp.exp(x - 3) for x in (3, 1, -2))), rtol=1e-15))


def _display_block_output():
    term = sp.Mul(_shifted(), _v[_j], evaluate=False)
    return sp.Eq(o_, sp.Mul(1 / ell_, sp.Sum(term, (_j, 1, _n)), evaluate=False), evaluate=False)


@derivation("eq-block-output", display=_display_block_output,
            strength="verified", scope="for a block of 3 symbolic scores and values")
def _check_block_output():
    # The state's o is the softmax-weighted sum of the block's values, whatever m is.
    s, v = _scores("s1:4"), _values(3)
    yield from _matrix_zero(sym_block_state(s, v).o - _softmax_sum(s, v))
    state = sym_block_state(s, v)
    for c in range(2):  # the display, summed out with m and ℓ of the block, column by column
        shown = _block_shown(registry.display("eq-block-output"), s, v, c).subs({m_: state.m, ell_: state.ell})
        yield sp.Eq(shown, _softmax_sum(s, v)[c])
    # The package's block_state gives the exact value on a small example.
    S, Vi = [[sp.Integer(2), sp.Integer(0), sp.Integer(-1)]], [[1, 2], [0, -1], [3, 1]]
    exact = _softmax_sum(S[0], [sp.Matrix([row]) for row in Vi])
    got = block_state(np.array(S, dtype=float), Vi).o  # (1, 2)
    yield bool(np.allclose(np.array(exact.evalf(30), dtype=float), got, rtol=0, atol=1e-15))


@derivation("eq-merge-max", display=lambda: sp.Eq(m_, sp.Max(m_A, m_B), evaluate=False),
            strength="verified", scope="for 5 symbolic scores split 2 + 3 and 4 + 1")
def _check_merge_max():
    # The maximum of the union is the larger of the two blocks' maxima.
    s, v = _scores("s1:6"), _values(5)
    for p, _ in _SPLITS:
        A, B = sym_block_state(s[:p], v[:p]), sym_block_state(s[p:], v[p:])
        yield sp.Eq(merge(A, B, **_SYM).m - sp.Max(*s), 0)
        yield sp.Eq(_merge_shown(registry.display("eq-merge-max"), A, B, merge(A, B, **_SYM)) - sp.Max(*s), 0)


def _display_merge_normaliser():
    return sp.Eq(ell_, sp.exp(m_A - m_) * ell_A + sp.exp(m_B - m_) * ell_B, evaluate=False)


@derivation("eq-merge-normaliser", display=_display_merge_normaliser,
            strength="verified", scope="for 5 symbolic scores split 2 + 3 and 4 + 1")
def _check_merge_normaliser():
    # Rescaling by e^{m_𝒜 − m} moves every term of block 𝒜 to the common reference m ...
    s_j, t = sp.symbols("s_j t", real=True)
    yield sp.Eq(sp.exp(m_A - t) * sp.exp(s_j - m_A), sp.exp(s_j - t))
    # ... so the merged ℓ is the union's normaliser Σ e^{s_j − m}, m its maximum.
    s, v = _scores("s1:6"), _values(5)
    for p, _ in _SPLITS:
        A, B = sym_block_state(s[:p], v[:p]), sym_block_state(s[p:], v[p:])
        M = merge(A, B, **_SYM)
        yield sp.Eq(M.ell, sum(sp.exp(sj - sp.Max(*s)) for sj in s))
        yield sp.Eq(_merge_shown(registry.display("eq-merge-normaliser"), A, B, M), M.ell)


def _display_merge_output():
    num = sp.exp(m_A - m_) * ell_A * o_A + sp.exp(m_B - m_) * ell_B * o_B
    return sp.Eq(o_, sp.Mul(num, 1 / ell_, evaluate=False), evaluate=False)


@derivation("eq-merge-output", display=_display_merge_output,
            strength="proved", scope=("for two general states (m and ℓ > 0 symbols; o a row of two symbolic "
                                      "entries, each coordinate merged alike)"))
def _check_merge_output():
    # The merged o is the union's weighted average Σ e^{s_j − m} v_j / ℓ ...
    s, v = _scores("s1:6"), _values(5)
    A, B = sym_block_state(s[:2], v[:2]), sym_block_state(s[2:], v[2:])
    yield from _matrix_zero(merge(A, B, **_SYM).o - sym_block_state(s, v).o)
    # ... and a convex combination of o_𝒜 and o_ℬ: the two coefficients are positive and sum to 1.
    A, B = _general_state("A"), _general_state("B")
    M = merge(A, B, **_SYM)
    w_A = sp.exp(A.m - M.m) * A.ell / M.ell
    w_B = sp.exp(B.m - M.m) * B.ell / M.ell
    yield sp.Eq(w_A + w_B, 1, evaluate=False)
    yield from _matrix_zero(M.o - (w_A * A.o + w_B * B.o))
    for c in range(2):  # the display, with the symbols of the two states, is merge's o
        yield sp.Eq(_merge_shown(registry.display("eq-merge-output"), A, B, M, c), M.o[c])
    yield bool(w_A.is_positive)
    yield bool(w_B.is_positive)


@derivation("thm-merge-is-union",
            strength="proved", scope="for blocks of any size (their sums as symbols); "
                                      "exactly for 5 scores split 2 + 3 and 4 + 1")
def _check_merge_is_union():
    # Blocks of any size: write a block's sums as symbols, Z = Σ e^{s_j} > 0 and U = Σ e^{s_j} v_j,
    # so its state is (m, Z e^{-m}, U / Z) whatever its size. Over a disjoint union both sums add:
    # the merged state must have ℓ e^{m} = Z_𝒜 + Z_ℬ and o = (U_𝒜 + U_ℬ) / (Z_𝒜 + Z_ℬ).
    Z_A, Z_B = sp.symbols(r"Z_{\mathcal{A}} Z_{\mathcal{B}}", positive=True)
    U_A, U_B = (sp.Matrix([[sp.Symbol(rf"U_{{\mathcal{{{x}}},{c}}}", real=True) for c in (1, 2)]]) for x in "AB")
    m_A_, m_B_ = sp.symbols(r"m_{\mathcal{A}} m_{\mathcal{B}}", real=True)
    A = BlockState(m_A_, Z_A * sp.exp(-m_A_), U_A / Z_A)
    B = BlockState(m_B_, Z_B * sp.exp(-m_B_), U_B / Z_B)
    M = merge(A, B, **_SYM)
    yield sp.Eq(M.ell * sp.exp(M.m), Z_A + Z_B)
    yield from _matrix_zero(M.o - (U_A + U_B) / (Z_A + Z_B))
    # Two blocks of symbolic scores and values (2 + 3 and 4 + 1 of five keys): merging their states
    # gives the state of the union, whose o is the softmax-weighted sum of all five values.
    s, v = _scores("s1:6"), _values(5)
    attention_output = _softmax_sum(s, v)
    for p, _ in _SPLITS:
        A, B = sym_block_state(s[:p], v[:p]), sym_block_state(s[p:], v[p:])
        M = merge(A, B, **_SYM)
        yield from _matrix_zero(M.o - attention_output)
        yield sp.Eq(M.m, sp.Max(*s))
        yield sp.Eq(M.ell * sp.exp(M.m), sum(sp.exp(sj) for sj in s))


@derivation("thm-merge-order",
            strength="proved", scope=("for three general states (m and ℓ > 0 symbols; o a row of two symbolic "
                                      "entries, each coordinate merged alike)"))
def _check_merge_order():
    # Arbitrary states (m real, ℓ > 0, o a row of two): merge is commutative and associative.
    A, B, C = _general_state("A"), _general_state("B"), _general_state("C")
    AB, BA = merge(A, B, **_SYM), merge(B, A, **_SYM)
    yield sp.Eq(AB.m - BA.m, 0)
    yield sp.Eq(AB.ell, BA.ell, evaluate=False)
    yield from _matrix_zero(AB.o - BA.o)
    left = merge(merge(A, B, **_SYM), C, **_SYM)
    right = merge(A, merge(B, C, **_SYM), **_SYM)
    yield sp.Eq(left.m - right.m, 0)
    yield sp.Eq(left.ell, right.ell)
    yield from _matrix_zero(left.o - right.o)



# --------------------------------------------------------------------------------------------------
# The backward pass (Dao et al. 2022; Dao 2023): weights rebuilt from the log-sum-exp.
# --------------------------------------------------------------------------------------------------
_c, _dv = sp.symbols("c d_v", integer=True, positive=True)
_nk = sp.Symbol("n_k", integer=True, positive=True)


def _display_lse_weights():
    W, S, lse = sp.IndexedBase("W"), sp.IndexedBase("s"), sp.IndexedBase(r"\mathrm{lse}")
    i = sp.Symbol("i", integer=True)
    shifted = sp.Add(S[i, _j], -lse[i], evaluate=False)
    return sp.Eq(W[i, _j], sp.exp(shifted, evaluate=False), evaluate=False)


@derivation("eq-lse-weights", display=_display_lse_weights,
            strength="verified", scope="for 5 symbolic scores split 2 + 3 and 4 + 1")
def _check_lse_weights():
    # lse = m + log ℓ of the merged state of two blocks (2 + 3 and 4 + 1 symbolic scores):
    # e^{s_j − lse} is the softmax weight of key j among all five.
    s, v = _scores("s1:6"), _values(5)
    total = sum(sp.exp(x) for x in s)
    for p, _ in _SPLITS:
        M = merge(sym_block_state(s[:p], v[:p]), sym_block_state(s[p:], v[p:]), **_SYM)
        lse = M.m + sp.log(M.ell)
        yield sp.Eq(sp.exp(lse), total)
        for sj in s:
            yield sp.Eq(sp.exp(sj - lse), sp.exp(sj) / total)
    # The package's lse on a small example, against log Σ e^{s_j} evaluated exactly.
    S = [sp.Integer(2), sp.Integer(0), sp.Integer(-1)]
    _, lse = blockwise_attention([[2.0], [0.0]], [[1.0], [0.0], [-0.5]], np.eye(3), 2,
                                 return_lse=True)
    exact = sp.log(sum(sp.exp(x) for x in S))  # d = 1: S = Q Kᵀ
    yield bool(abs(float(lse[0]) - float(exact.evalf(30))) < 1e-14)


def _display_flash_delta():
    dY, Y, dW, W = (sp.IndexedBase(n) for n in (r"\mathrm{d}Y", "Y", r"\mathrm{d}W", "W"))
    i = sp.Symbol("i", integer=True)
    return sp.Eq(sp.Sum(sp.Mul(dY[i, _c], Y[i, _c], evaluate=False), (_c, 1, _dv)),
                 sp.Sum(sp.Mul(dW[i, _j], W[i, _j], evaluate=False), (_j, 1, _nk)),
                 evaluate=False)


@derivation("eq-flash-delta", display=_display_flash_delta,
            strength="verified", scope="for n_k = 1, …, 4 keys and d_v = 1, 2, 3, every entry a symbol")
def _check_flash_delta():
    # For one query with any weights w_j (free symbols), values v_j and upstream g:
    # y = Σ_j w_j v_j and dW_j = g · v_j, so Σ_c g_c y_c = Σ_j dW_j w_j. Verified for
    # n_k = 1..4 keys and d_v = 1..3 value columns.
    for n_k in range(1, 5):
        for d_v in range(1, 4):
            w = sp.symbols(f"w1:{n_k + 1}", real=True)
            V = sp.Matrix(n_k, d_v, lambda j, c: sp.Symbol(f"v_{j}{c}", real=True))
            g = sp.Matrix(1, d_v, lambda _, c: sp.Symbol(f"g_{c}", real=True))
            y = sum((w[j] * V.row(j) for j in range(n_k)), sp.zeros(1, d_v))
            dW = [(g * V.row(j).T)[0, 0] for j in range(n_k)]
            D = delta_rows(np.array(g.tolist(), dtype=object), np.array(y.tolist(), dtype=object))
            yield sp.Eq(D[0, 0], sum(dW[j] * w[j] for j in range(n_k)))
