"""The worked example of the source article: Carla, Ana, Bruno and Diego, Q = K = V = X, d = 2.

The article's embeddings were images and are lost; these integer vectors reproduce every number it
publishes. The four people and their vectors (``PEOPLE``, ``embeddings``) live in ``notation``,
whose page introduces them; this module imports them from there. The appendix ``book/recovery.md``
shows, with the SymPy checks registered here, that the published numbers confine the Gram matrix
X Xᵀ to narrow intervals holding one whole-number point, so any choice with whole-number dot
products that reproduces them has the same scores, weights and movements: the example is then
determined up to a rotation or a reflection of the plane.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp
from mpmath import iv, mpf

from .attention import AttentionGraph, attention
from .notation import PEOPLE, embeddings  # the four people, introduced on the notation page
from .qkv import rotation
from .registry import derivation
from .scores import scaled_scores
from .softmax import softmax
from .validation import as_int, as_matrix, as_square, check_same

# The package exports this module itself (attention_graph.worked_example, its data and helpers), no name of it.
__all__: list[str] = []

# What the article prints, rounded to three decimals: (matrix, row person, column person, value).
# "S" is the score matrix, "W" the weight matrix. These are the source's claims, not our results.
PUBLISHED: tuple[tuple[str, str, str, float], ...] = (
    ("S", "Bruno", "Bruno", 1.414),
    ("S", "Diego", "Diego", 1.414),
    ("W", "Ana", "Carla", 0.141),
    ("W", "Bruno", "Bruno", 0.449),
    ("W", "Diego", "Diego", 0.539),
)
PUBLISHED_DECIMALS = 3


def index(name: str) -> int:
    """Row (and column) of ``name`` in the order of ``PEOPLE``.

    >>> index("Bruno")
    2
    """
    if name not in PEOPLE:
        raise ValueError(f"name must be one of {PEOPLE}; got {name!r}")
    return PEOPLE.index(name)


def path_adjacency() -> np.ndarray:
    """A of the path Carla – Ana – Bruno – Diego (part 9 of the series), 0/1, no self-loops. (4, 4)."""
    A = np.zeros((4, 4))  # (n, n)
    for a, b in [(0, 1), (1, 2), (2, 3)]:
        A[a, b] = A[b, a] = 1.0
    return A


def attention_layer(X=None) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(X Xᵀ/√2) X and the attention graph with W as adjacency (identity projections).

    ``X`` defaults to :func:`embeddings`; any (4, 2) array of the four people may be given instead.
    """
    X = embeddings() if X is None else as_matrix(X, "X", shape_doc="(4, 2)")  # (4, 2)
    check_same(X.shape[0], len(PEOPLE), "X must have one row per person")
    return _attention_layer(X)


def _attention_layer(X: np.ndarray) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(X Xᵀ/√2) X and the attention graph with W as adjacency (identity projections)."""
    Y, W = attention(X, X, X)  # (4, 2), (4, 4)
    return Y, AttentionGraph(W, PEOPLE)


# --------------------------------------------------------------------------------------------------
# The article's published numbers, and the search for embeddings that reproduce them
# --------------------------------------------------------------------------------------------------

def published_values(S, W) -> np.ndarray:
    """The entries of S and W that the article publishes, in the order of ``PUBLISHED``.

    ``S`` and ``W`` are (4, 4), or stacks (..., 4, 4) of candidates; the result is (..., 5).
    """
    S, W = np.asarray(S, dtype=float), np.asarray(W, dtype=float)
    for name, M in (("S", S), ("W", W)):
        if M.ndim < 2 or M.shape[-2:] != (4, 4):
            raise ValueError(f"{name} must have shape (..., 4, 4); got {M.shape}")
    mats = {"S": S, "W": W}
    cols = [mats[m][..., index(i), index(j)] for m, i, j, _ in PUBLISHED]  # 5 × (...,)
    return np.stack(cols, axis=-1)  # (..., 5)


def matches_published(S, W, decimals: int = PUBLISHED_DECIMALS) -> np.ndarray:
    """True where every published entry of (S, W), rounded to ``decimals``, equals the article's. (...,)"""
    got = np.round(published_values(S, W), decimals)  # (..., 5)
    want = np.array([v for *_, v in PUBLISHED])  # (5,)
    return np.all(got == want, axis=-1)  # (...,)


def _stacked_scores_and_weights(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """S = X Xᵀ/√d and its row softmax for a stack of candidates X of shape (m, n, d)."""
    S = np.einsum("mid,mjd->mij", X, X) / np.sqrt(X.shape[-1])  # (m, n, n)
    W = softmax(S.reshape(-1, S.shape[-1])).reshape(S.shape)  # (m, n, n), row by row
    return S, W  # (m, n, n), (m, n, n)


def integer_search(values=range(-2, 3), decimals: int = PUBLISHED_DECIMALS) -> np.ndarray:
    """Every X with entries in ``values`` whose published scores and weights round to the article's.

    All ``len(values) ** 8`` choices of four 2-d vectors are tried (Q = K = V = X, d = 2). Returns the
    matches as an array of shape (m, 4, 2), in lexicographic order of the candidates.
    """
    vals = np.asarray(list(values))
    if vals.ndim != 1 or vals.size == 0 or vals.dtype.kind not in "iu":
        raise TypeError("values must be a non-empty sequence of integers; "
                        f"got {list(values)!r}")
    if len(set(vals.tolist())) != vals.size:
        raise ValueError(f"values must be distinct; got {vals.tolist()}")
    if vals.size > 7:
        raise ValueError(f"values has {vals.size} entries: the search tries "
                         "len(values)**8 choices; use at most 7")
    return _integer_search(vals, decimals)


def _integer_search(vals: np.ndarray, decimals: int) -> np.ndarray:
    """Every X with entries in ``vals`` whose published scores and weights round to the article's."""
    vectors = np.array(list(itertools.product(vals, vals)), dtype=float)  # (k², 2)
    rest = np.array(list(itertools.product(range(len(vectors)), repeat=3)))  # (k⁶, 3)
    found = []
    for first in vectors:  # one chunk per vector of Carla keeps memory small
        X = np.empty((len(rest), 4, 2))  # (k⁶, 4, 2)
        X[:, 0] = first
        X[:, 1:] = vectors[rest]
        S, W = _stacked_scores_and_weights(X)  # (k⁶, 4, 4) each
        found.append(X[matches_published(S, W, decimals)])
    return np.concatenate(found).reshape(-1, 4, 2)  # (m, 4, 2)


def square_symmetries() -> list[np.ndarray]:
    """The eight orthogonal 2 × 2 matrices that map the integer grid to itself (4 rotations, 4 reflections)."""
    out = []
    for perm in ([[1, 0], [0, 1]], [[0, 1], [1, 0]]):
        for sx, sy in itertools.product((1, -1), repeat=2):
            out.append(np.array(perm, dtype=float) @ np.diag([sx, sy]))  # (2, 2)
    return out


def orthogonal_between(X1, X2, tol: float = 1e-12) -> np.ndarray | None:
    """The orthogonal R with X2 = X1 R, or None if there is none. X1 must have rank 2. (2, 2)."""
    X1 = as_matrix(X1, "X1", shape_doc="(n, 2)")  # (n, 2)
    X2 = as_matrix(X2, "X2", shape_doc="(n, 2)")  # (n, 2)
    if X1.shape != X2.shape or X1.shape[1] != 2:
        raise ValueError(f"X1 and X2 must both have shape (n, 2); got {X1.shape} and {X2.shape}")
    if np.linalg.matrix_rank(X1) != 2:
        raise ValueError("X1 must have rank 2 for R to be determined")
    R = np.linalg.lstsq(X1, X2, rcond=None)[0]  # (2, 2)
    if np.allclose(X1 @ R, X2, rtol=0, atol=tol) and np.allclose(R.T @ R, np.eye(2), rtol=0, atol=tol):
        return R
    return None


# --------------------------------------------------------------------------------------------------
# Reading the example: distances, movements, asymmetry
# --------------------------------------------------------------------------------------------------

def distance_to_mean(X) -> np.ndarray:
    """‖x_i − x̄‖ with x̄ the mean of the rows of X. Shape (n,).

    >>> distance_to_mean([[0.0, 0.0], [2.0, 0.0]])
    array([1., 1.])
    """
    X = as_matrix(X, "X")  # (n, d)
    return np.linalg.norm(X - X.mean(axis=0), axis=1)  # (n,)


def displacement(X, Y) -> np.ndarray:
    """‖y_i − x_i‖: how far each row moves from X to Y. Shape (n,)."""
    X = as_matrix(X, "X")  # (n, d)
    Y = as_matrix(Y, "Y")  # (n, d)
    if X.shape != Y.shape:
        raise ValueError(f"X and Y must have the same shape; got {X.shape} and {Y.shape}")
    return np.linalg.norm(Y - X, axis=1)  # (n,)


def row_normalisers(S) -> np.ndarray:
    """Z_i = Σ_l exp(S_il), the denominator of row i of the softmax  (eq-worked-asymmetry). Shape (n,)."""
    S = as_matrix(S, "S", shape_doc="(n, n)")  # (n, n)
    with np.errstate(over="ignore"):
        Z = np.exp(S).sum(axis=1)  # (n,)
    if not np.isfinite(Z).all():
        raise ValueError("exp(S) overflowed: the row normalisers of S are not finite")
    return Z


def asymmetry_pairs(W) -> list[tuple[int, int, float, float]]:
    """(i, j, W_ij, W_ji) for each pair i < j, largest |W_ij − W_ji| first (ties by i, then j)."""
    W = as_square(W, "W")  # (n, n)
    pairs = [(i, j, float(W[i, j]), float(W[j, i]))
             for i in range(W.shape[0]) for j in range(i + 1, W.shape[0])]
    return sorted(pairs, key=lambda p: (-abs(p[2] - p[3]), p[0], p[1]))


def row_entropy(W) -> np.ndarray:
    """𝓗_i = −Σ_j W_ij ln W_ij (in nats), the spread of row i: ln n for a uniform row. Shape (n,)."""
    W = as_matrix(W, "W", shape_doc="(n, n)")  # (n, n)
    if (W < 0).any():
        raise ValueError("W must be non-negative to have an entropy per row")
    logs = np.log(np.where(W > 0, W, 1.0))  # (n, n), 0 ln 0 = 0
    return -(W * logs).sum(axis=1)  # (n,)


# --------------------------------------------------------------------------------------------------
# Exact forms (SymPy)
# --------------------------------------------------------------------------------------------------
z = sp.Symbol("z", positive=True)  # z = e^{1/√2}, the factor one unit of X Xᵀ contributes to exp(S)


def exact_gram() -> sp.Matrix:
    """X Xᵀ of :func:`embeddings`, exactly (integers). (4, 4)."""
    X = sp.Matrix(embeddings().astype(int))  # (4, 2)
    return X * X.T  # (4, 4)


def exact_scores() -> sp.Matrix:
    """S = X Xᵀ/√2 exactly  (eq-worked-scores). (4, 4)."""
    return exact_gram() / sp.sqrt(2)  # (4, 4)


def exact_weights(in_u: bool = False) -> sp.Matrix:
    """W = softmax(S) exactly, row by row  (eq-worked-weights). (4, 4).

    With ``in_u`` the entries are rational functions of ``z`` = e^{1/√2} (each score is a whole
    number of units 1/√2, so e^{S_ij} = z^{G_ij}); otherwise they hold exponentials.
    """
    G = exact_gram()  # (4, 4)
    E = G.applyfunc(lambda k: z**k)  # (4, 4)
    W = sp.Matrix(4, 4, lambda i, j: sp.factor(sp.cancel(E[i, j] / sum(E.row(i)))))  # (4, 4)
    return W if in_u else W.subs(z, sp.exp(1 / sp.sqrt(2)))


# The recovery of the Gram matrix from the published numbers. In the plane (d = 2), turn and reflect
# so that x_Ana = (√g, 0); Ana ⟂ Carla puts x_Carla = (0, ‖x_C‖); Ana's equal weights put x_Bruno and
# x_Diego on the line x = √g, at heights ±κ with κ² = η − g. t = x_Bruno · x_Carla.
g, eta, t = sp.symbols(r"g \eta t", real=True)
w_AC, w_BB, w_DD = sp.symbols(r"W_{\text{Ana}\,\text{Carla}} W_{\text{Bruno}\,\text{Bruno}} "
                              r"W_{\text{Diego}\,\text{Diego}}", positive=True)
_r2 = sp.sqrt(2)


def gram_in_plane() -> sp.Matrix:
    """X Xᵀ in the unknowns g = x_A·x_A, η = ‖x_B‖² = ‖x_D‖², t = x_B·x_C  (eq-worked-gram-plane). (4, 4)."""
    return sp.Matrix([[t**2 / (eta - g), 0, t, -t],
                      [0, g, g, g],
                      [t, g, eta, 2 * g - eta],
                      [-t, g, 2 * g - eta, eta]])  # (4, 4)


def _weight_formula(G: sp.Matrix, i: int, j: int) -> sp.Expr:
    """W_ij = e^{G_ij/√2} / Σ_l e^{G_il/√2}, exact, from a symbolic Gram matrix."""
    return sp.exp(G[i, j] / _r2) / sum(sp.exp(G[i, l] / _r2) for l in range(G.shape[1]))


def g_from_ana() -> sp.Expr:
    return _r2 * sp.log((1 - w_AC) / (3 * w_AC))


def _rest_of_row(w) -> sp.Expr:
    """e^{η/√2}(1 − w)/w − e^{g/√2} − e^{(2g − η)/√2}: e^{±t/√2} solved from a self-weight w."""
    return sp.exp(eta / _r2) * (1 - w) / w - sp.exp(g / _r2) - sp.exp((2 * g - eta) / _r2)


def t_from_bruno() -> sp.Expr:
    return _r2 * sp.log(_rest_of_row(w_BB))


def t_from_diego() -> sp.Expr:
    return -_r2 * sp.log(_rest_of_row(w_DD))


def recovery_intervals(decimals: int = PUBLISHED_DECIMALS) -> dict[str, tuple[float, float]]:
    """Intervals for g, η and t (from Bruno's and from Diego's row) given the published numbers.

    Each published number is known to ± half a unit of its last decimal; interval arithmetic
    (``mpmath.iv``, outward rounding) carries those ranges through the formulas of the chapter
    (eq-worked-recover-g, eq-worked-recover-t-bruno, eq-worked-recover-t-diego). Returns
    ``{"g": (lo, hi), "h": ..., "t_bruno": ..., "t_diego": ...}`` as floats rounded outward
    (each float bound lies outside, or on, the interval's exact bound).
    """
    decimals = as_int(decimals, "decimals")
    iv.dps = 30
    half = mpf(10) ** (-decimals) / 2
    pub = {(m, i, j): mpf(str(v)) for m, i, j, v in PUBLISHED}

    def around(key):
        return iv.mpf([pub[key] - half, pub[key] + half])

    r2 = iv.sqrt(2)
    s_bb = around(("S", "Bruno", "Bruno"))
    s_dd = around(("S", "Diego", "Diego"))
    s = iv.mpf([max(s_bb.a, s_dd.a), min(s_bb.b, s_dd.b)])  # both are the same score η/√2
    wa, wb, wd = (around(k) for k in [("W", "Ana", "Carla"), ("W", "Bruno", "Bruno"),
                                      ("W", "Diego", "Diego")])
    g_ = r2 * iv.log((1 - wa) / (3 * wa))
    h_ = r2 * s

    def rest(w):
        return iv.exp(h_ / r2) * (1 - w) / w - iv.exp(g_ / r2) - iv.exp((2 * g_ - h_) / r2)

    found = {"g": g_, "h": h_, "t_bruno": r2 * iv.log(rest(wb)), "t_diego": -r2 * iv.log(rest(wd))}
    return {k: _outward(v) for k, v in found.items()}


def _outward(v) -> tuple[float, float]:
    """The float bounds of an ``iv.mpf`` interval, rounded outward: lo ≤ v.a and hi ≥ v.b."""
    lo, hi = float(v.a), float(v.b)  # rounded to nearest, so possibly inside the interval
    if mpf(lo) > v.a:
        lo = math.nextafter(lo, -math.inf)
    if mpf(hi) < v.b:
        hi = math.nextafter(hi, math.inf)
    return lo, hi


def recovery_point() -> dict[str, float]:
    """g, η and t solved from the published numbers as printed (eq-worked-recover-g, -t-bruno, -t-diego)."""
    pub = {(m, i, j): sp.Rational(str(v)) for m, i, j, v in PUBLISHED}
    g_ = g_from_ana().subs(w_AC, pub[("W", "Ana", "Carla")])
    h_ = _r2 * pub[("S", "Bruno", "Bruno")]
    at = {g: g_, eta: h_}
    t_b = t_from_bruno().subs(at).subs(w_BB, pub[("W", "Bruno", "Bruno")])
    t_d = t_from_diego().subs(at).subs(w_DD, pub[("W", "Diego", "Diego")])
    return {k: float(sp.N(v, 30)) for k, v in {"g": g_, "h": h_, "t_bruno": t_b, "t_diego": t_d}.items()}


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labeled equations and theorems
# --------------------------------------------------------------------------------------------------
_S, _W, _X, _XT = (sp.Symbol(s) for s in ("S", "W", "X", r"X^{\top}"))


def _float_matrix(M: sp.Matrix) -> np.ndarray:
    return np.array(M.evalf(30).tolist(), dtype=float)


@derivation("eq-worked-scores",
            display=lambda: sp.Eq(_S, sp.MatMul(1 / _r2, sp.ImmutableMatrix(exact_gram()), evaluate=False),
                                  evaluate=False),
            strength="verified", scope="on the worked example")
def _check_worked_scores():
    X = sp.Matrix(embeddings().astype(int))  # (4, 2)
    yield sp.Eq(X * X.T, exact_gram())
    yield sp.Eq(exact_scores(), X * X.T / sp.sqrt(2))
    S = scaled_scores(embeddings(), embeddings())  # (4, 4)
    yield bool(np.allclose(S, _float_matrix(exact_scores()), rtol=0, atol=1e-14))


def _weights_by_rows() -> sp.Eq:
    """W as a column of its rows, each row its numerators in z over their common denominator, so
    the display fits a phone's column; ``as_explicit()`` is the 4 × 4 matrix (eq-worked-weights)."""
    rows = []
    for i in range(4):
        fractions = [sp.fraction(w) for w in exact_weights(in_u=True).row(i)]
        common = sp.factor(sp.lcm_list([den for _, den in fractions]))
        tops = [sp.cancel(num * common / den) for num, den in fractions]
        rows.append([sp.MatMul(1 / common, sp.ImmutableMatrix([tops]), evaluate=False)])
    return sp.Eq(_W, sp.BlockMatrix(rows), evaluate=False)


@derivation("eq-worked-weights", display=_weights_by_rows, strength="verified", scope="on the worked example")
def _check_worked_weights():
    # exp(S_ij) = z^{G_ij} with z = e^{1/√2}: each score is a whole number of units 1/√2 ...
    S, G = exact_scores(), exact_gram()  # (4, 4) each
    for i, j in itertools.product(range(4), repeat=2):
        yield sp.Eq(sp.exp(S[i, j]), sp.exp(1 / _r2) ** G[i, j])
    # ... so the softmax of S, W_ij = e^{S_ij} / Σ_l e^{S_il}, is the displayed matrix in z,
    E = G.applyfunc(lambda k: z**k)  # (4, 4)
    by_definition = sp.Matrix(4, 4, lambda i, j: E[i, j] / sum(E.row(i)))  # (4, 4)
    yield sp.Eq(exact_weights(in_u=True), by_definition)
    shown = _weights_by_rows().rhs.as_explicit()  # (4, 4): the display, row by row
    yield sp.Eq(sp.simplify(shown - by_definition), sp.zeros(4, 4))
    for i in range(4):  # every row sums to one
        yield sp.Eq(sum(exact_weights(in_u=True).row(i)), 1)
    # and the package's floats are its values.
    _, graph = attention_layer()
    yield bool(np.allclose(graph.W, _float_matrix(exact_weights()), rtol=0, atol=1e-14))


_ana_row = sp.ImmutableMatrix([[sp.Symbol(f"W_{{A{j}}}") for j in "CABD"]])  # (1, 4): Ana's row, by initials


def _display_ana_row() -> sp.Eq:
    return sp.Eq(_ana_row, sp.MatMul(1 / (1 + 3 * z), sp.ImmutableMatrix([[1, z, z, z]]), evaluate=False),
                 evaluate=False)


@derivation("eq-worked-weights-ana", display=_display_ana_row, strength="verified", scope="on the worked example",
            lines=True)
def _check_weights_ana():
    # Ana's row of X Xᵀ, from the vectors: her dot products with Carla, herself, Bruno and Diego,
    X = sp.Matrix(embeddings().astype(int))  # (4, 2)
    a = index("Ana")
    gram_row = [(X.row(a) * X.row(k).T)[0, 0] for k in range(4)]
    yield sp.Eq(sp.Matrix([gram_row]), sp.Matrix([[0, 1, 1, 1]]))
    # so e^{S_Aj} = z^{G_Aj}, and the softmax of her row is the display, entry by entry;
    powers = [z**k for k in gram_row]
    shown = _display_ana_row().rhs.as_explicit()  # (1, 4)
    for j in range(4):
        yield sp.Eq(sp.cancel(shown[0, j] - powers[j] / sum(powers)), 0)
    # and the package's floats are its values, at z = e^{1/√2}.
    _, graph = attention_layer()
    at = [float(shown[0, j].subs(z, sp.exp(1 / _r2))) for j in range(4)]
    yield bool(np.allclose(graph.W[a], at, rtol=0, atol=1e-15))


@derivation("eq-worked-weight-ana-carla",
            display=lambda: sp.Eq(w_AC, 1 / (1 + 3 * sp.exp(1 / _r2)), evaluate=False),
            strength="verified", scope="on the worked example")
def _check_weight_ana_carla():
    a, c = index("Ana"), index("Carla")
    yield sp.Eq(exact_gram()[a, c], 0)  # Ana's query and Carla's key are orthogonal
    yield sp.Eq(exact_weights()[a, c], 1 / (1 + 3 * sp.exp(1 / _r2)))
    _, graph = attention_layer()
    yield bool(abs(graph.W[a, c] - float(1 / (1 + 3 * sp.exp(1 / _r2)))) < 1e-15)


def _display_asymmetry():
    return sp.Eq(sp.Symbol("W_{ij}") / sp.Symbol("W_{ji}"), sp.Symbol("Z_{j}") / sp.Symbol("Z_{i}"), evaluate=False)


@derivation("eq-worked-asymmetry",
            display=lambda: _display_asymmetry(),
            strength="verified", scope=("for a symmetric 4 × 4 score matrix, its exponentials positive "
                                        "symbols, and on the example"))
def _check_asymmetry():
    # For a symmetric S (here Q = K), e^{S_ij} = e^{S_ji}; call it e_ij > 0. Then W_ij = e_ij / Z_i
    # and W_ij / W_ji = Z_j / Z_i, checked for a general symmetric 4 × 4 matrix ...
    e = sp.Matrix(4, 4, lambda i, j: sp.Symbol(f"e_{min(i, j)}{max(i, j)}", positive=True))
    Z = [sum(e.row(i)) for i in range(4)]
    W = sp.Matrix(4, 4, lambda i, j: e[i, j] / Z[i])
    shown = _display_asymmetry()
    names = {x.name: x for x in shown.free_symbols}
    for i, j in itertools.permutations(range(4), 2):
        values = {names["W_{ij}"]: W[i, j], names["W_{ji}"]: W[j, i], names["Z_{j}"]: Z[j], names["Z_{i}"]: Z[i]}
        yield sp.Eq(shown.lhs.subs(values), shown.rhs.subs(values))  # the display, for this pair
    # ... and on the example, exactly (in z = e^{1/√2}) and in the package's floats.
    Ez = exact_gram().applyfunc(lambda k: z**k)  # (4, 4)
    Zz = [sum(Ez.row(i)) for i in range(4)]
    Wz = exact_weights(in_u=True)
    for i, j in itertools.permutations(range(4), 2):
        yield sp.Eq(Wz[i, j] / Wz[j, i], Zz[j] / Zz[i])
    _, graph = attention_layer()
    Zf = row_normalisers(scaled_scores(embeddings(), embeddings()))  # (4,)
    yield bool(np.allclose(graph.W / graph.W.T, Zf[None, :] / Zf[:, None], rtol=1e-13, atol=0))


@derivation("thm-worked-rotation-invariance",
            strength="verified", scope="for every 4 × 2 X (symbolic entries) and every orthogonal 2 × 2 matrix")
def _check_rotation_invariance():
    # Any X (4 × 2); R(θ) a rotation and diag(1, −1) R(θ) a reflection (every orthogonal 2 × 2 matrix
    # is one of the two).
    xs = sp.Matrix(4, 2, lambda i, j: sp.Symbol(f"x_{i}{j}", real=True))
    theta = sp.Symbol("theta", real=True)
    c, s = sp.cos(theta), sp.sin(theta)
    R = sp.Matrix([[c, s], [-s, c]])
    pythagoras = {s**2: 1 - c**2}

    def reduce(M):
        return M.applyfunc(lambda x: sp.expand(sp.expand(x).subs(pythagoras)))

    Wsym = sp.Matrix(4, 4, lambda i, j: sp.Symbol(f"w_{i}{j}"))
    for Q in (R, sp.diag(1, -1) * R):
        yield sp.Eq(reduce(Q * Q.T), sp.eye(2))  # Q is orthogonal
        yield sp.Eq(reduce((xs * Q) * (xs * Q).T), xs * xs.T)  # same Gram, so the same S and W
        yield sp.Eq(Wsym * (xs * Q), (Wsym * xs) * Q)  # Y' = W (X Q) = Y Q
    # The package agrees on the example, for a few angles and their reflections.
    X = embeddings()  # (4, 2)
    Y, graph = attention_layer()
    for angle in (0.3, 1.0, 2.5):
        for Qn in (rotation(angle), np.diag([1.0, -1.0]) @ rotation(angle)):
            Y2, graph2 = attention_layer(X @ Qn)
            yield bool(np.allclose(graph2.W, graph.W, rtol=0, atol=1e-14))
            yield bool(np.allclose(Y2, Y @ Qn, rtol=0, atol=1e-14))


@derivation("eq-worked-gram-plane", display=lambda: sp.Eq(_X * _XT, gram_in_plane(), evaluate=False),
            strength="verified", scope="for symbolic lengths, with Diego's second coordinate of either sign")
def _check_gram_plane():
    # Coordinates after a rotation and a reflection: x_Ana = (√g, 0), x_Carla = (0, ‖x_C‖),
    # x_Bruno = (√g, κ), x_Diego = (√g, ±κ) (equal lengths).
    kappa, c, gp = sp.symbols("kappa c g", positive=True)
    for diego in (kappa, -kappa):
        xs = sp.Matrix([[0, c], [sp.sqrt(gp), 0], [sp.sqrt(gp), kappa], [sp.sqrt(gp), diego]])
        G = xs * xs.T  # (4, 4)
        # The article's exact statements hold in both cases: Ana ⟂ Carla, Ana's row equal, ‖B‖ = ‖D‖.
        yield sp.Eq(G[1, 0], 0)
        yield sp.Eq(G[1, 1], G[1, 2])
        yield sp.Eq(G[1, 2], G[1, 3])
        yield sp.Eq(G[2, 2], G[3, 3])
        if diego == kappa:
            # Bruno = Diego: their self-weights would be equal, but the article prints two values.
            yield sp.Eq(_weight_formula(G, 2, 2), _weight_formula(G, 3, 3))
            yield PUBLISHED[3][3] != PUBLISHED[4][3]
        else:
            yield sp.Eq(G, gram_in_plane().subs({g: gp, eta: gp + kappa**2, t: kappa * c}))


@derivation("eq-worked-recover-g", display=lambda: sp.Eq(g, g_from_ana(), evaluate=False),
            strength="proved", scope="for the symbolic weight w_AC")
def _check_recover_g():
    G = gram_in_plane()
    equation = sp.Eq(w_AC, _weight_formula(G, index("Ana"), index("Carla")))
    yield sp.Eq(equation.rhs, 1 / (1 + 3 * sp.exp(g / _r2)), evaluate=False)
    solutions = sp.solve(equation, g)
    yield len(solutions) == 1
    yield sp.Eq(solutions[0], g_from_ana())
    yield sp.Eq(equation.rhs.subs(g, g_from_ana()), w_AC)


def _check_t_formula(row: str, w, formula):
    G = gram_in_plane()
    i = index(row)
    weight = _weight_formula(G, i, i)
    yield sp.Eq(weight.subs(t, formula), w)  # the formula solves the published self-weight
    # ... and it is the only solution: the weight is strictly monotone in t.
    dw = sp.diff(weight, t)
    sign = 1 if row == "Diego" else -1  # Bruno's self-weight falls as t grows, Diego's rises
    yield sp.simplify(sign * dw * (sum(sp.exp(G[i, l] / _r2) for l in range(4))) ** 2
                      / sp.exp(eta / _r2)) .is_positive is True
    solutions = sp.solve(sp.Eq(w, weight), t)
    yield len(solutions) == 1
    point = {g: 1, eta: 2, w: sp.Rational(9, 20)}
    yield abs(sp.N(solutions[0].subs(point), 30) - sp.N(formula.subs(point), 30)) < 1e-25


@derivation("eq-worked-recover-t-bruno", display=lambda: sp.Eq(t, t_from_bruno(), evaluate=False), lines=True,
            strength="proved", scope="for symbolic g, η and weight w_BB")
def _check_recover_t_bruno():
    yield from _check_t_formula("Bruno", w_BB, t_from_bruno())


@derivation("eq-worked-recover-t-diego", display=lambda: sp.Eq(t, t_from_diego(), evaluate=False), lines=True,
            strength="proved", scope="for symbolic g, η and weight w_DD")
def _check_recover_t_diego():
    yield from _check_t_formula("Diego", w_DD, t_from_diego())


@derivation("thm-worked-gram-recovered",
            strength="verified", scope=("from the article's printed numbers, in outward-rounded interval "
                                        "arithmetic, the whole numbers picking one point in each interval"))
def _check_gram_recovered():
    box = recovery_intervals()
    lo_t = max(box["t_bruno"][0], box["t_diego"][0])
    hi_t = min(box["t_bruno"][1], box["t_diego"][1])
    ranges = {"g": box["g"], "h": box["h"], "t": (lo_t, hi_t)}
    integers = {}
    for name, (lo, hi) in ranges.items():
        inside = list(range(int(np.ceil(lo)), int(np.floor(hi)) + 1))
        yield hi - lo < 1  # each interval is shorter than one ...
        yield len(inside) == 1  # ... and holds exactly one integer
        integers[name] = inside[0]
    G = gram_in_plane().subs({g: integers["g"], eta: integers["h"], t: integers["t"]})
    yield sp.Eq(G, exact_gram())  # ... and they give the Gram matrix of the book's embeddings
    S = _float_matrix(G / _r2)  # (4, 4)
    yield bool(matches_published(S, softmax(S)))
