"""Linear attention: the weights as a two-hop graph from queries through F feature nodes to keys.

Replace the softmax kernel exp(q·k/√d) by a dot product of features, φ(q)·φ(k). The weight matrix
W = diag(Z)⁻¹ φ(Q) φ(K)ᵀ then factors through F feature nodes (a bipartite graph of rank at most F), and
reading the product from the right, φ(Q) (φ(K)ᵀ V), never forms the n × n matrix
(``eq-linear-attention``, ``thm-linear-equals-quadratic``; Katharopoulos et al. 2020). Causally masked,
it is a running sum, a recurrent network (``thm-causal-running-sum``). Positive random features
make φ(q)·φ(k) an unbiased estimate of the softmax kernel (``thm-random-features-unbiased``;
Performer, Choromanski et al. 2021). The chapter is ``book/linear_attention.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import sympy as sp

from .registry import derivation, evaluate, symbol_matrix
from .validation import as_int, as_matrix, as_qkv, as_rng

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["RandomFeatures", "elu_feature_map", "linear_attention", "linear_weights", "random_features"]


def elu_feature_map(X) -> np.ndarray:
    """φ(x) = elu(x) + 1, entrywise: x + 1 for x > 0, eˣ otherwise; always positive. (n, d).

    The default feature map of linear attention (Katharopoulos et al. 2020), with F = d features.

    >>> elu_feature_map([[1.0, 0.0, -1.0]]).round(3)
    array([[2.   , 1.   , 0.368]])
    """
    X = as_matrix(X, "X")  # (n, d)
    return np.where(X > 0, X + 1.0, np.exp(np.minimum(X, 0.0)))  # (n, d)


@dataclass(frozen=True, eq=False)
class RandomFeatures:
    """φ(x) = exp(Ξ x / d^(1/4) − ‖x‖²/(2√d)) / √F: Performer's positive random features.

    ``Xi`` (F, d) holds F Gaussian directions ξ_l ~ N(0, I_d) as rows; with them
    E[φ(q)·φ(k)] = exp(q·k/√d), the softmax kernel (thm-random-features-unbiased).
    """

    Xi: np.ndarray

    def __post_init__(self):
        Xi = as_matrix(self.Xi, "Xi", shape_doc="(F, d)").copy()  # (F, d)
        Xi.setflags(write=False)
        object.__setattr__(self, "Xi", Xi)

    @property
    def F(self) -> int:
        """The number of features (feature nodes)."""
        return self.Xi.shape[0]

    def __call__(self, X) -> np.ndarray:
        X = as_matrix(X, "X", shape_doc=f"(n, {self.Xi.shape[1]})")  # (n, d)
        if X.shape[1] != self.Xi.shape[1]:
            raise ValueError(f"X must have d = {self.Xi.shape[1]} columns, as Xi; got {X.shape[1]}")
        Xt = X / X.shape[1] ** 0.25  # (n, d): q/d^{1/4}, so that q̃·k̃ = q·k/√d
        with np.errstate(over="ignore"):
            return np.exp(Xt @ self.Xi.T - 0.5 * (Xt**2).sum(axis=1, keepdims=True)) / np.sqrt(self.F)  # (n, F)


def random_features(d: int, F: int, rng: np.random.Generator) -> RandomFeatures:
    """F positive random features for dimension d, their directions drawn from ``rng`` (seeded)."""
    d, F = as_int(d, "d"), as_int(F, "F")
    return RandomFeatures(as_rng(rng).standard_normal((F, d)))  # Xi (F, d)


def softmax_kernel(Q, K) -> np.ndarray:
    """exp(q_i·k_j/√d): the unnormalised softmax weights that random features estimate. (n_q, n_k)."""
    Q, K = as_matrix(Q, "Q", shape_doc="(n_q, d)"), as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_q, d), (n_k, d)
    return np.exp(Q @ K.T / np.sqrt(Q.shape[1]))  # (n_q, n_k)


def _features(feature_map, X, name: str) -> np.ndarray:
    """φ(X) checked: a finite, non-negative (n, F) array with one row per row of X."""
    Phi = np.asarray(feature_map(X))  # (n, F)
    what = f"feature_map({name})"
    if Phi.ndim != 2 or Phi.shape[0] != X.shape[0]:
        raise ValueError(f"{what} must be an array (n, F) with one row per row of {name}; got shape {Phi.shape}")
    Phi = as_matrix(Phi, what, shape_doc="(n, F)")  # (n, F): finite reals, or a clear error
    if (Phi < 0).any():
        raise ValueError(f"{what} must be non-negative (features are edge weights); found {Phi.min()}")
    return Phi


def _feature_pair(feature_map, Q, K) -> tuple[np.ndarray, np.ndarray]:
    """φ(Q) (n_q, F) and φ(K) (n_k, F), checked; the default φ is elu(x) + 1."""
    feature_map = elu_feature_map if feature_map is None else feature_map
    if not callable(feature_map):
        raise TypeError(f"feature_map must be callable, (n, d) -> (n, F); got {type(feature_map).__name__}")
    PQ, PK = _features(feature_map, Q, "Q"), _features(feature_map, K, "K")  # (n_q, F), (n_k, F)
    if PQ.shape[1] != PK.shape[1]:
        raise ValueError(f"feature_map must give Q and K the same number F of features: "
                         f"{PQ.shape[1]} != {PK.shape[1]}")
    return PQ, PK


def _key_state(PK, V) -> tuple[np.ndarray, np.ndarray]:
    """The feature nodes gather the keys: φ(K)ᵀ V (F, d_v) and φ(K)ᵀ 1 (F,)."""
    return PK.T @ V, PK.sum(axis=0)  # (F, d_v), (F,)


def read_feature_nodes(PQ, KV, z) -> np.ndarray:
    """Each query reads the feature nodes: φ(q_i)ᵀ (φ(K)ᵀ V) / φ(q_i)ᵀ (φ(K)ᵀ 1). (n_q, d_v)."""
    return (PQ @ KV) / (PQ @ z)[:, None]  # (n_q, d_v)


def linear_two_hop(PQ, PK, V) -> np.ndarray:
    """diag(Z)⁻¹ φ(Q) (φ(K)ᵀ V): the two hops, keys → feature nodes → queries. (n_q, d_v)."""
    KV, z = _key_state(PK, V)  # (F, d_v), (F,)
    return read_feature_nodes(PQ, KV, z)  # (n_q, d_v)


def causal_running_sum(PQ, PK, V) -> np.ndarray:
    # the running sum Σ_{j≤i} φ(k_j) v_jᵀ:
    S = np.zeros((PK.shape[1], V.shape[1]))  # (F, d_v)
    z = np.zeros(PK.shape[1])  # (F,): the running sum Σ_{j≤i} φ(k_j)
    Y = np.empty((PQ.shape[0], V.shape[1]))  # (n, d_v)
    for i in range(PQ.shape[0]):
        S += np.outer(PK[i], V[i])  # (F, d_v): token i's key and value join the state
        z += PK[i]  # (F,)
        Y[i] = PQ[i] @ S / (PQ[i] @ z)  # (d_v,)
    return Y


def _normalisers_positive(PQ, PK, causal: bool) -> None:
    z = np.cumsum(PK, axis=0) if causal else PK.sum(axis=0, keepdims=True)  # (n, F) or (1, F)
    den = (PQ * z).sum(axis=1)  # (n_q,)
    if (den <= 0).any():
        row = int(np.flatnonzero(den <= 0)[0])
        raise ValueError(f"the normaliser φ(q_i)·Σ_j φ(k_j) of row {row} is 0: that query has no edge "
                         "through any feature node (use a positive feature map)")


def linear_attention(Q, K, V, feature_map=None, causal: bool = False) -> np.ndarray:
    """Y = diag(Z)⁻¹ φ(Q) (φ(K)ᵀ V), Z = φ(Q) φ(K)ᵀ 1  (eq-linear-attention). (n_q, d_v).

    ``feature_map`` maps an (n, d) array to its (n, F) non-negative features; the default is
    :func:`elu_feature_map`. The product is read from the right, so memory and time grow like
    n F d_v and no n × n matrix is formed (the remark after thm-linear-equals-quadratic). With ``causal`` (n_q = n_k),
    query i sees keys j ≤ i through a running sum (thm-causal-running-sum).
    """
    Q, K, V = as_qkv(Q, K, V)  # (n_q, d), (n_k, d), (n_k, d_v)
    if not isinstance(causal, (bool, np.bool_)):
        raise TypeError(f"causal must be True or False; got {causal!r}")
    if causal and Q.shape[0] != K.shape[0]:
        raise ValueError(f"causal needs one query per key (n_q = n_k): {Q.shape[0]} != {K.shape[0]}")
    if K.shape[0] == 0:
        raise ValueError("K has no rows: a query with no key to attend to has no output")
    if causal:
        PQ, PK = _feature_pair(feature_map, Q, K)  # (n, F), (n, F)
        _normalisers_positive(PQ, PK, True)
        return causal_running_sum(PQ, PK, V)  # (n, d_v)
    return _chunked_linear(feature_map, Q, K, V)  # (n_q, d_v)


CHUNK = 2048  # rows of Q or K turned into features at a time: φ of a chunk stays in the cache


def _chunked_linear(feature_map, Q, K, V) -> np.ndarray:
    """:func:`linear_two_hop`, with φ applied CHUNK rows at a time: O(CHUNK F + F d_v) memory besides Y."""
    feature_map = elu_feature_map if feature_map is None else feature_map
    if not callable(feature_map):
        raise TypeError(f"feature_map must be callable, (n, d) -> (n, F); got {type(feature_map).__name__}")
    KV, z = 0.0, 0.0
    for a in range(0, K.shape[0], CHUNK):
        PK = _features(feature_map, K[a:a + CHUNK], "K")  # (chunk, F)
        KV_a, z_a = _key_state(PK, V[a:a + CHUNK])  # (F, d_v), (F,)
        if a and KV_a.shape != KV.shape:
            raise ValueError(f"feature_map gave {PK.shape[1]} features to rows {a}.. of K, {KV.shape[0]} before")
        KV, z = KV + KV_a, z + z_a
    Y = np.empty((Q.shape[0], V.shape[1]), dtype=np.result_type(Q, V))  # (n_q, d_v)
    for a in range(0, Q.shape[0], CHUNK):
        PQ = _features(feature_map, Q[a:a + CHUNK], "Q")  # (chunk, F)
        if PQ.shape[1] != KV.shape[0]:
            raise ValueError(f"feature_map must give Q and K the same number F of features: "
                             f"{PQ.shape[1]} != {KV.shape[0]}")
        den = PQ @ z  # (chunk,)
        if (den <= 0).any():
            row = a + int(np.flatnonzero(den <= 0)[0])
            raise ValueError(f"the normaliser φ(q_i)·Σ_j φ(k_j) of row {row} is 0: that query has no edge "
                             "through any feature node (use a positive feature map)")
        Y[a:a + CHUNK] = read_feature_nodes(PQ, KV, z)  # (chunk, d_v)
    return Y


def linear_weights(Q, K, feature_map=None, causal: bool = False) -> np.ndarray:
    """W = diag(Z)⁻¹ φ(Q) φ(K)ᵀ, formed explicitly (n_q, n_k): the graph that linear attention never builds.

    For pictures and checks at small n; row i sums to 1. With ``causal``, W_ij = 0 for j > i.
    """
    Q = as_matrix(Q, "Q", shape_doc="(n_q, d)")  # (n_q, d)
    K = as_matrix(K, "K", shape_doc="(n_k, d)")  # (n_k, d)
    PQ, PK = _feature_pair(feature_map, Q, K)  # (n_q, F), (n_k, F)
    _normalisers_positive(PQ, PK, bool(causal))
    A = PQ @ PK.T  # (n_q, n_k)
    if causal:
        A = np.tril(A)  # (n, n)
    return A / A.sum(axis=1, keepdims=True)  # (n_q, n_k)


# --------------------------------------------------------------------------------------------------
# The derivations, in SymPy. φ(Q) is n_q × F, φ(K) is n_k × F, V is n_k × d_v.
# --------------------------------------------------------------------------------------------------
_n_q, _n_k, _F, _d_v = sp.symbols("n_q n_k F d_v", integer=True, positive=True)
_PQ, _PK = sp.MatrixSymbol(r"\phi(Q)", _n_q, _F), sp.MatrixSymbol(r"\phi(K)", _n_k, _F)
_Vs, _Ys = sp.MatrixSymbol("V", _n_k, _d_v), sp.MatrixSymbol("Y", _n_q, _d_v)
_Ds = sp.MatrixSymbol(r"\operatorname{diag}(Z)", _n_q, _n_q)  # Z_i: the normaliser of row i


def _display_linear_attention():
    rhs = sp.MatMul(sp.MatPow(_Ds, -1), _PQ, sp.MatMul(_PK.T, _Vs, evaluate=False), evaluate=False)
    return sp.Eq(_Ys, rhs, evaluate=False)


@derivation("eq-linear-attention", display=_display_linear_attention,
            strength="verified", scope="for 2 queries, 3 keys, F = 2 and d_v = 2 with symbolic features and values")
def _check_linear_attention():
    # With Z = φ(Q) φ(K)ᵀ 1, the displayed product is row by row Σ_j (φ(q_i)·φ(k_j)) v_j / Σ_j φ(q_i)·φ(k_j).
    PQ = sp.Matrix(2, 2, lambda r, c: sp.Symbol(f"a_{r}{c}", positive=True))
    PK = sp.Matrix(3, 2, lambda r, c: sp.Symbol(f"b_{r}{c}", positive=True))
    V = symbol_matrix("v", 3, 2)
    A = PQ * PK.T  # (2, 3): φ(q_i)·φ(k_j)
    diag_Z = sp.diag(*[sum(A.row(r)) for r in range(2)])
    shown = evaluate(_display_linear_attention().rhs, {_Ds: diag_Z, _PQ: PQ, _PK: PK, _Vs: V,
                                                       _n_q: 2, _n_k: 3, _F: 2, _d_v: 2})
    quadratic = sp.Matrix(2, 2, lambda r, c: sum(A[r, j] * V[j, c] for j in range(3)) / sum(A.row(r)))
    yield sp.Eq(shown, quadratic, evaluate=False)
    # The package, with the identity as feature map on positive integers: exact up to rounding.
    Qi, Ki, Vi = [[1, 2], [3, 1]], [[2, 1], [1, 1], [1, 3]], [[1, 0], [0, 2], [4, 1]]
    A_int = sp.Matrix(Qi) * sp.Matrix(Ki).T
    want = sp.Matrix(2, 2, lambda r, c: sum(A_int[r, j] * Vi[j][c] for j in range(3)) / sum(A_int.row(r)))
    got = linear_attention(Qi, Ki, Vi, feature_map=lambda X: X)  # (2, 2)
    yield bool(np.allclose(got, np.array(want.evalf(30).tolist(), dtype=float), rtol=1e-15, atol=0))


def _sums_exchanged(i, n, F):
    """Entry (i, c) of (φ(Q)φ(K)ᵀ)V over the keys j = 1..n, turned into φ(q_i)ᵀ(φ(K)ᵀV): each step in SymPy."""
    j, r, c = sp.symbols("j r c", integer=True, positive=True)
    P, G, V = sp.IndexedBase("P"), sp.IndexedBase("G"), sp.IndexedBase("V")  # φ(Q), φ(K), V entries
    quadratic = sp.Sum(sp.Sum(P[i, r] * G[j, r], (r, 1, F)) * V[j, c], (j, 1, n))  # (φ(Q)φ(K)ᵀ) V
    linear = sp.Sum(P[i, r] * sp.Sum(G[j, r] * V[j, c], (j, 1, n)), (r, 1, F))  # φ(Q)(φ(K)ᵀ V)
    # Step 1: v_jc does not depend on r, so it moves inside the inner sum.
    inner = sp.Sum(P[i, r] * G[j, r] * V[j, c], (r, 1, F))
    yield sp.Eq(sp.Sum(sp.factor_terms(inner), (j, 1, n)), quadratic, evaluate=False)
    # Step 2: exchange the two finite sums; step 3: φ(q_i)_r does not depend on j and moves out.
    swapped = sp.Sum(inner, (j, 1, n)).reorder((0, 1))  # one Sum over (j, r), j now inner
    (lim_j, lim_r), summand = swapped.limits, swapped.function
    yield lim_j[0] == j and lim_r[0] == r
    yield sp.Eq(sp.Sum(sp.factor_terms(sp.Sum(summand, lim_j)), lim_r), linear, evaluate=False)
    # The normaliser is the same identity with every v_jc = 1.
    yield sp.Eq(sp.Sum(sp.factor_terms(sp.Sum(P[i, r] * G[j, r], (j, 1, n))), (r, 1, F)),
                sp.Sum(P[i, r] * sp.Sum(G[j, r], (j, 1, n)), (r, 1, F)), evaluate=False)


@derivation("thm-linear-equals-quadratic",
            strength="proved", scope="for any n_k and F (exchange of finite sums); the package measured to 1e-12")
def _check_linear_equals_quadratic():
    i, n, F = sp.symbols("i n F", integer=True, positive=True)
    yield from _sums_exchanged(i, n, F)  # the keys j = 1, ..., n
    # The package: the linear form equals the weights formed explicitly.
    rng = np.random.default_rng(3)
    Q, K, Vn = rng.standard_normal((9, 4)), rng.standard_normal((9, 4)), rng.standard_normal((9, 3))
    yield bool(np.allclose(linear_attention(Q, K, Vn), linear_weights(Q, K) @ Vn, rtol=0, atol=1e-12))


@derivation("thm-causal-running-sum",
            strength="proved",
            scope="for every position i and any F (a split finite sum, an exchange of finite sums); "
                  "the package measured to 1e-12")
def _check_causal_running_sum():
    i, j = sp.symbols("i j", integer=True, positive=True)
    x = sp.IndexedBase("x")  # x_j stands for φ(k_j) v_jᵀ (or φ(k_j) for the normaliser)
    running = sp.Sum(x[j], (j, 1, i))
    # 𝒮_{i+1} = 𝒮_i + x_{i+1}: the state after token i + 1 is the state after i plus one term.
    last = sp.Sum(x[j], (j, i + 1, i + 1))  # the one new term
    yield sp.Eq(sp.simplify(running + last - sp.Sum(x[j], (j, 1, i + 1))), 0, evaluate=False)  # ranges join
    yield sp.Eq(last.doit(), x[i + 1], evaluate=False)
    # 𝒮_1 = x_1: the first token starts the state.
    yield sp.Eq(running.subs(i, 1).doit(), x[1])
    # Row i of the masked quadratic form sums over the keys j = 1, ..., i: the exchange of sums with
    # n = i turns it into φ(q_i)ᵀ 𝒮_i (and its normaliser into φ(q_i)ᵀ 𝒵_i).
    yield from _sums_exchanged(i, i, sp.Symbol("F", integer=True, positive=True))
    # The package: the running sum equals the causally masked weights formed explicitly.
    rng = np.random.default_rng(4)
    Q, K, V = rng.standard_normal((7, 4)), rng.standard_normal((7, 4)), rng.standard_normal((7, 2))
    got = linear_attention(Q, K, V, causal=True)  # (7, 2)
    yield bool(np.allclose(got, linear_weights(Q, K, causal=True) @ V, rtol=0, atol=1e-12))
    yield bool(np.allclose(got[-1], linear_attention(Q[-1:], K, V)[0], rtol=0, atol=1e-12))


def standard_normal_density(x):
    """The density of N(0, 1) at x, exp(−x²/2)/√(2π)."""
    return sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)


@derivation("thm-random-features-unbiased",
            strength="verified",
            scope="for general q, k in d = 1 and d = 2 (the Gaussian integrals in SymPy) and any F; "
                  "the step to any d, by independent coordinates, is argued in the proof")
def _check_random_features_unbiased():
    # E_ξ[exp(ξ q − q²/2) exp(ξ k − k²/2)] = exp(q k) for ξ ~ N(0, 1): one Gaussian integral.
    xi, q, k = sp.symbols("xi q k", real=True)
    density = standard_normal_density(xi)
    features = sp.exp(xi * q - q**2 / 2) * sp.exp(xi * k - k**2 / 2)
    s = sp.Symbol("s", real=True)  # s = q + k: the ξ-dependent factor is exp(ξ s)
    yield sp.Eq(features, sp.exp(xi * s).subs(s, q + k) * sp.exp(-(q**2 + k**2) / 2))
    mgf = sp.integrate(sp.exp(xi * s) * density, (xi, -sp.oo, sp.oo))  # E[exp(ξ s)], Gaussian
    yield sp.Eq(mgf, sp.exp(s**2 / 2))
    yield sp.Eq(mgf.subs(s, q + k) * sp.exp(-(q**2 + k**2) / 2), sp.exp(q * k))
    # d = 2, exactly: the double integral of the features' product against the density of N(0, I_2).
    x1, x2, q1, q2, k1, k2 = sp.symbols("xi1 xi2 q1 q2 k1 k2", real=True)
    E2 = (sp.exp(x1 * q1 + x2 * q2 - (q1**2 + q2**2) / 2) * sp.exp(x1 * k1 + x2 * k2 - (k1**2 + k2**2) / 2)
          * standard_normal_density(x1) * standard_normal_density(x2))
    for x in (x1, x2):
        E2 = sp.integrate(sp.expand_power_exp(sp.powsimp(E2)), (x, -sp.oo, sp.oo), conds="none")
    yield sp.simplify(E2 - sp.exp(q1 * k1 + q2 * k2)) == 0
    # In d dimensions, ξ ~ N(0, I_d) has independent coordinates, and the exponent of the features'
    # product, ξ·q − ‖q‖²/2 + ξ·k − ‖k‖²/2, is a sum over the coordinates c of the one-dimensional
    # exponents; since a product of exponentials is the exponential of the sum, the integrand is a
    # product over c, and its expectation the product of the one-dimensional ones, exp(q_c k_c).
    c, d, F, r = sp.symbols("c d F r", integer=True, positive=True)
    a = sp.IndexedBase("a", real=True)
    qv, kv, xv = sp.IndexedBase("q", real=True), sp.IndexedBase("k", real=True), sp.IndexedBase(r"\xi", real=True)

    def dot(u, v):
        return sp.Sum(u[c] * v[c], (c, 1, d))

    one_d = xv[c] * qv[c] - qv[c] ** 2 / 2 + xv[c] * kv[c] - kv[c] ** 2 / 2  # coordinate c's exponent
    yield sp.Eq(sp.Sum(one_d, (c, 1, d)), dot(xv, qv) - dot(qv, qv) / 2 + dot(xv, kv) - dot(kv, kv) / 2,
                evaluate=False)
    yield sp.Eq(sp.Product(sp.exp(a[c]), (c, 1, d)), sp.exp(sp.Sum(a[c], (c, 1, d))), evaluate=False)
    yield sp.Eq(sp.Product(sp.exp(qv[c] * kv[c]), (c, 1, d)), sp.exp(dot(qv, kv)), evaluate=False)
    # With q̃ = q/d^(1/4) and k̃ = k/d^(1/4), q̃·k̃ = q·k/√d; F copies, each divided by F (the 1/√F of
    # each feature, squared), average to the same expectation.
    yield sp.Eq(sp.Sum(qv[c] / d ** sp.Rational(1, 4) * (kv[c] / d ** sp.Rational(1, 4)), (c, 1, d)),
                dot(qv, kv) / sp.sqrt(d), evaluate=False)
    m = sp.Symbol("m", positive=True)  # the expectation of one copy
    yield sp.Eq(sp.Sum(m / F, (r, 1, F)), m, evaluate=False)
