"""Real data: a Graph Transformer layer on Zachary's karate club, read with the graph tools.

The club (Zachary 1977) is shipped inside networkx: 34 members, 78 friendships, and the split the
club went through, recorded as each member's ``'club'`` attribute. The layer attends only along
friendships (and to oneself), with Laplacian positional encodings as its only input and seeded random
projections; the chapter ``book/karate.md`` asks what the graph tools find in its attention graph.
"""

from __future__ import annotations

import itertools
from math import comb

import networkx as nx
import numpy as np
import sympy as sp

from .attention import AttentionGraph
from .graph_tools import mean_graph, spectral_bipartition
from .multihead import multi_head_attention
from .positional import laplacian_pe
from .registry import derivation, evaluate
from .validation import as_int, as_matrix, as_rng, as_square, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["adjusted_rand_index", "club_graph", "graph_transformer_layer"]

FACTIONS: tuple[str, str] = ("Mr. Hi", "Officer")


def club_graph() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """(A, club, labels): the club's 0/1 adjacency (34, 34), the recorded split (34,), node names.

    ``club[i]`` is 0 for a member of Mr. Hi's faction and 1 for one of the Officer's, as recorded in
    the node attribute ``'club'`` of ``networkx.karate_club_graph()``. Friendships are unweighted.

    >>> A, club, labels = club_graph()
    >>> A.shape, int(A.sum()) // 2, int(club.sum())
    ((34, 34), 78, 17)
    """
    G = nx.karate_club_graph()
    nodes = sorted(G.nodes)
    A = nx.to_numpy_array(G, nodelist=nodes, weight=None)  # (34, 34)
    club = np.array([FACTIONS.index(G.nodes[v]["club"]) for v in nodes])  # (34,)
    return A, club, tuple(str(v) for v in nodes)


def standardised_pe(A, k: int) -> np.ndarray:
    """U_pe = √n · (the k Laplacian eigenvectors of :func:`laplacian_pe`): columns of mean square 1. (n, k).

    The eigenvectors have unit norm, so their entries are of size 1/√n; scaled by √n they are of
    size 1, like standardised features.
    """
    U_pe = laplacian_pe(A, k)  # (n, k)
    return np.sqrt(U_pe.shape[0]) * U_pe  # (n, k)


def init_projections(k: int, d: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Seeded projections C (k, d) and W_Q, W_K, W_V, W_O (d, d), entries N(0, 1/fan-in)."""
    as_rng(rng)
    k, d = as_int(k, "k"), as_int(d, "d")
    C = rng.standard_normal((k, d)) / np.sqrt(k)  # (k, d)
    W_Q, W_K, W_V, W_O = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))  # each (d, d)
    return {"C": C, "W_Q": W_Q, "W_K": W_K, "W_V": W_V, "W_O": W_O}


def graph_transformer_layer(A, P, params: dict, n_heads: int,
                            labels=None) -> tuple[np.ndarray, list[AttentionGraph]]:
    """Y = X + [W⁽¹⁾V₁ … W⁽ʰ⁾Vₕ] W_O, X = U_pe C, W⁽ʰ⁾ = softmax(Q_h K_hᵀ/√d_h) on A + I  (eq-gt-layer).

    ``A`` is the graph's symmetric 0/1 adjacency (n, n); ``P`` the positional encodings U_pe (n, k), the
    only input; ``params`` as from ``karate.init_projections``. Node i attends to node j only when they
    are neighbours or i = j. Returns Y (n, d) and one :class:`AttentionGraph` per head. Layer norm and
    the feed-forward network of a full Graph Transformer are left out (a pre-LN norm would change the
    weights; see ``block.py``).
    """
    A = as_square(A, "A")  # (n, n)
    P = as_matrix(P, "P", shape_doc="(n, k)")  # (n, k)
    n = A.shape[0]
    check_same(P.shape[0], n, "P must have one row per node of A (n)")
    missing = {"C", "W_Q", "W_K", "W_V", "W_O"} - set(params)
    if missing:
        raise ValueError(f"params lacks {sorted(missing)}; "
                         "build it with init_projections")
    C = as_matrix(params["C"], "params['C']", shape_doc="(k, d)")  # (k, d)
    check_same(C.shape[0], P.shape[1],
               "params['C'] must have one row per column of P (k)")
    labels = tuple(str(i) for i in range(n)) if labels is None else labels
    return _graph_transformer_layer(A, P, params, n_heads, labels)


def _graph_transformer_layer(A, U_pe, params: dict, n_heads: int,
                             labels) -> tuple[np.ndarray, list[AttentionGraph]]:
    """Y = X + [W⁽¹⁾V₁ … W⁽ʰ⁾Vₕ] W_O, X = U_pe C, W⁽ʰ⁾ = softmax(Q_h K_hᵀ/√d_h) on A + I  (eq-gt-layer)."""
    mask = (A + np.eye(A.shape[0])) > 0  # (n, n): friends and oneself
    X = U_pe @ params["C"]  # (n, d)
    W_QKVO = (params[name] for name in ("W_Q", "W_K", "W_V", "W_O"))
    Y_heads, W = multi_head_attention(X, X, *W_QKVO, n_heads,
                                      mask=mask)  # (n, d), (H, n, n)
    return X + Y_heads, [AttentionGraph(W_h, labels) for W_h in W]  # (n, d)


def club_run(seed: int, k: int = 4, d: int = 8, n_heads: int = 2) -> dict:
    """One seeded layer on the club: its heads, their mean graph, and the communities found in it."""
    A, club, labels = club_graph()
    params = init_projections(k, d, np.random.default_rng(seed))
    Y, heads = graph_transformer_layer(A, standardised_pe(A, k), params, n_heads, labels)  # (n, d)
    graph = mean_graph(heads)
    found = spectral_bipartition(graph)  # (n,)
    return {"seed": seed, "Y": Y, "heads": heads, "graph": graph, "found": found,
            "ari": adjusted_rand_index(found, club), "accuracy": accuracy_up_to_relabelling(found, club)}


# --------------------------------------------------------------------------------------------------
# Agreement between two splits
# --------------------------------------------------------------------------------------------------

def _labels(x, name: str) -> np.ndarray:
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of community labels; got shape {arr.shape}")
    if arr.dtype.kind not in "iub":
        raise TypeError(f"{name} must hold integer community labels; got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _contingency(a, b) -> np.ndarray:
    a, b = _labels(a, "a"), _labels(b, "b")
    check_same(len(a), len(b), "a and b must label the same nodes")
    if len(a) < 2:
        raise ValueError("an agreement between splits needs at least 2 nodes")
    _, ia = np.unique(a, return_inverse=True)
    _, ib = np.unique(b, return_inverse=True)
    N = np.zeros((ia.max() + 1, ib.max() + 1), dtype=np.int64)  # (groups of a, groups of b)
    np.add.at(N, (ia, ib), 1)
    return N


def adjusted_rand_index(a, b) -> float:
    """(Σ C(ν_ij,2) − E_0) / (½[Σ C(ν_{i·},2) + Σ C(ν_{·j},2)] − E_0)  (eq-ari).

    E_0 = Σ C(ν_{i·},2) Σ C(ν_{·j},2) / C(n,2) is the chance term.

    1 for the same split (whatever the names of the groups), 0 on average for a random split with
    the same group sizes (thm-ari-random-zero), negative when worse than that.

    >>> adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    N = _contingency(a, b)
    pairs = sum(comb(int(x), 2) for x in N.ravel())
    pa = sum(comb(int(x), 2) for x in N.sum(axis=1))
    pb = sum(comb(int(x), 2) for x in N.sum(axis=0))
    expected = pa * pb / comb(int(N.sum()), 2)
    top = (pa + pb) / 2
    if top == expected:  # both splits trivial (one group, or all singletons): nothing to adjust
        return 1.0 if pairs == expected else 0.0
    return float((pairs - expected) / (top - expected))


def accuracy_up_to_relabelling(found, truth) -> float:
    """The share of nodes put in the right group, under the best matching of group names. In [0, 1].

    >>> accuracy_up_to_relabelling([1, 1, 0, 0, 0], [0, 0, 1, 1, 0])
    0.8
    """
    N = _contingency(found, truth)
    if N.shape[0] > 8:
        raise ValueError(f"found has {N.shape[0]} groups; the matching is tried exhaustively up to 8")
    best = 0
    cols = range(N.shape[1])
    for perm in itertools.permutations(range(max(N.shape)), N.shape[0]):
        best = max(best, sum(int(N[r, c]) for r, c in enumerate(perm) if c in cols))
    return best / int(N.sum())


def random_split_scores(found, truth, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """ARI and accuracy of ``n_draws`` random splits with the group sizes of ``found`` (shuffled labels)."""
    as_rng(rng)
    found = _labels(found, "found")
    out = {"ari": np.empty(n_draws), "accuracy": np.empty(n_draws)}  # (n_draws,) each
    for t in range(n_draws):
        shuffled = rng.permutation(found)  # (n,)
        out["ari"][t] = adjusted_rand_index(shuffled, truth)
        out["accuracy"][t] = accuracy_up_to_relabelling(shuffled, truth)
    return out


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

def _pair_count(a, b) -> int:
    """Pairs of nodes together in both splits, counted pair by pair."""
    return sum(1 for s, t in itertools.combinations(range(len(a)), 2) if a[s] == a[t] and b[s] == b[t])


def _exact_ari(a, b) -> sp.Rational:
    """ARI from its definition: (index − expected index)/(max index − expected index), the expectation
    taken exactly over every relabelling of b (the permutation model)."""
    n = len(a)
    together_a = sum(1 for s, t in itertools.combinations(range(n), 2) if a[s] == a[t])
    together_b = sum(1 for s, t in itertools.combinations(range(n), 2) if b[s] == b[t])
    perms = list(itertools.permutations(b))
    expected = sp.Rational(sum(_pair_count(a, p) for p in perms), len(perms))
    return (_pair_count(a, b) - expected) / (sp.Rational(together_a + together_b, 2) - expected)


# The displayed equations (glued by book/karate.md, evaluated by the checks).
_nP, _nQ = sp.symbols(r"|\mathcal{P}| |\mathcal{Q}|", integer=True, positive=True)  # groups of a, of b
_n = sp.Symbol("n", integer=True, positive=True)  # members
_gi, _gj = sp.symbols("i j", integer=True, positive=True)
_E0 = sp.Symbol(r"\mathbb{E}_0")  # the chance term of the ARI, the index's mean under chance
_N, _dot = sp.IndexedBase(r"\nu"), sp.Symbol(r"{\cdot}")  # ν_{i·}, ν_{·j}: the group sizes, row and column sums
_d_pe, _d_model, _d_h = sp.symbols(r"d_{\text{pe}} d_model d_h", integer=True, positive=True)
_U_pe, _C = sp.MatrixSymbol(r"U_{\mathrm{pe}}", _n, _d_pe), sp.MatrixSymbol("C", _d_pe, _d_model)
_Wh = [sp.MatrixSymbol(f"W^{{({h})}}", _n, _n) for h in (1, 2)]
_Vh = [sp.MatrixSymbol(f"V_{h}", _n, _d_h) for h in (1, 2)]
_W_O = sp.MatrixSymbol("W_O", 2 * _d_h, _d_model)


def _display_ari():
    pairs = sp.Sum(sp.binomial(_N[_gi, _gj], 2), (_gi, 1, _nP), (_gj, 1, _nQ))
    pa = sp.Sum(sp.binomial(_N[_gi, _dot], 2), (_gi, 1, _nP))
    pb = sp.Sum(sp.binomial(_N[_dot, _gj], 2), (_gj, 1, _nQ))
    chance = sp.Mul(pa, pb, 1 / sp.binomial(_n, 2), evaluate=False)
    top = sp.Add(pairs, -_E0, evaluate=False)
    bottom = sp.Add(sp.Mul(sp.Rational(1, 2), sp.Add(pa, pb, evaluate=False), evaluate=False), -_E0,
                    evaluate=False)
    # The chance term, named once: shown as "..., with E_0 = ...", evaluated by Subs.doit.
    ratio = sp.Mul(top, sp.Pow(bottom, -1, evaluate=False), evaluate=False)
    return sp.Eq(sp.Symbol(r"\mathrm{ARI}"), sp.Subs(ratio, _E0, chance), evaluate=False)


def _display_gt_layer():
    heads = sp.BlockMatrix([[sp.MatMul(_Wh[0], _Vh[0]), sp.MatMul(_Wh[1], _Vh[1])]])
    return sp.Eq(sp.MatrixSymbol("Y", _n, _d_model),
                 sp.MatAdd(sp.MatMul(_U_pe, _C), sp.MatMul(heads, _W_O), evaluate=False), evaluate=False)


def _ari_from_display(a, b) -> sp.Expr:
    """The displayed ARI, summed out on the contingency table of the splits a and b."""
    N = sp.Matrix(_contingency(a, b).tolist())
    rows, cols = [sum(N.row(x)) for x in range(N.rows)], [sum(N.col(x)) for x in range(N.cols)]
    shown = _display_ari().rhs.subs({_nP: N.rows, _nQ: N.cols, _n: len(a)}).doit()
    def value(x, y):  # ν_ij, or a row sum ν_i· (y the dot), or a column sum ν_·j (x the dot)
        return rows[int(x) - 1] if y == _dot else cols[int(y) - 1] if x == _dot else N[int(x) - 1, int(y) - 1]

    return shown.replace(lambda e: isinstance(e, sp.Indexed) and e.base == _N, lambda e: value(*e.indices))


_SPLITS = [([0, 0, 0, 1, 1, 1], [0, 0, 1, 1, 1, 1]),
           ([0, 1, 0, 1, 0, 1], [0, 0, 0, 1, 1, 1]),
           ([0, 0, 1, 1, 2, 2], [0, 0, 1, 1, 1, 0]),
           ([1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1])]


@derivation("eq-ari", display=_display_ari, lines=True,
            strength="verified", scope="on four pairs of splits of six nodes")
def _check_ari():
    # The displayed contingency-table formula equals the definition (the index corrected by its exact
    # mean over every relabelling), and the package's float equals that exact value.
    for a, b in _SPLITS:
        exact = _exact_ari(a, b)
        yield sp.Eq(_ari_from_display(a, b), exact)
        yield bool(abs(adjusted_rand_index(a, b) - float(exact)) < 1e-15)


@derivation("thm-ari-random-zero",
            strength="verified", scope="over every relabelling, on three pairs of splits of six nodes")
def _check_ari_random_zero():
    # Over every relabelling of b (a random split with b's group sizes), the mean pair count is the
    # E_0 of eq-ari, Σ C(ν_i·,2) Σ C(ν_·j,2) / C(n,2); so the mean ARI is 0. The package agrees.
    for a, b in _SPLITS[:3]:
        perms = list(itertools.permutations(b))
        mean_index = sp.Rational(sum(_pair_count(a, p) for p in perms), len(perms))
        pa = sum(sp.binomial(list(a).count(g), 2) for g in set(a))
        pb = sum(sp.binomial(list(b).count(g), 2) for g in set(b))
        yield sp.Eq(mean_index, pa * pb / sp.binomial(len(a), 2))
        yield bool(abs(np.mean([adjusted_rand_index(a, list(p)) for p in perms])) < 1e-12)


@derivation("eq-gt-layer", display=_display_gt_layer,
            strength="measured", scope="to 1e-12 against the exact layer on the path on 3 nodes")
def _check_gt_layer():
    # The path 0 – 1 – 2, small integer projections: the package's layer equals the exact formula.
    A = sp.Matrix([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    P = sp.Matrix([[1, 0], [0, 1], [-1, 1]])
    C = sp.Matrix([[1, 0, 1, 0], [0, 1, 0, -1]])
    W_Q = sp.Matrix([[1, 0, 0, 1], [0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 1, 1]])
    W_K = sp.Matrix([[0, 1, 0, 0], [1, 0, 0, 1], [0, 0, 1, 0], [1, 0, 0, 1]])
    W_V = sp.eye(4)
    W_O = sp.Matrix(4, 4, lambda r, c: 1 if r == (c + 1) % 4 else 0)
    H = P * C
    Q, K, V = H * W_Q, H * W_K, H * W_V
    mask = A + sp.eye(3)
    blocks = []
    for h in range(2):
        S = Q[:, 2 * h:2 * h + 2] * K[:, 2 * h:2 * h + 2].T / sp.sqrt(2)
        E = sp.Matrix(3, 3, lambda r, c, S=S: sp.exp(S[r, c]) if mask[r, c] else 0)
        Wh = sp.Matrix(3, 3, lambda r, c, E=E: E[r, c] / sum(E.row(r)))
        blocks.append(Wh * V[:, 2 * h:2 * h + 2])
    exact = H + sp.Matrix.hstack(*blocks) * W_O
    Wh = []  # the masked per-head weights, as in eq-neighbour-softmax
    for h in range(2):
        S = Q[:, 2 * h:2 * h + 2] * K[:, 2 * h:2 * h + 2].T / sp.sqrt(2)
        E = sp.Matrix(3, 3, lambda r, c, S=S: sp.exp(S[r, c]) if mask[r, c] else 0)
        Wh.append(sp.Matrix(3, 3, lambda r, c, E=E: E[r, c] / sum(E.row(r))))
    values = {_U_pe: P, _C: C, _W_O: W_O, _Wh[0]: Wh[0], _Wh[1]: Wh[1],
              _Vh[0]: V[:, 0:2], _Vh[1]: V[:, 2:4], _n: 3, _d_pe: 2, _d_model: 4, _d_h: 2}
    yield sp.Eq(evaluate(_display_gt_layer().rhs, values), exact)
    f = lambda M: np.array(M, dtype=float)  # noqa: E731
    params = {"C": f(C), "W_Q": f(W_Q), "W_K": f(W_K), "W_V": f(W_V), "W_O": f(W_O)}
    Y, heads = graph_transformer_layer(f(A), f(P), params, n_heads=2)
    yield bool(np.allclose(np.array(exact.evalf(30), dtype=float), Y, rtol=0, atol=1e-12))
    # Node 0 and node 2 are not friends: neither gives the other any weight, in any head.
    yield all(g.W[0, 2] == 0.0 and g.W[2, 0] == 0.0 for g in heads)
