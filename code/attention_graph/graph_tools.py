"""Graph tools on attention: strengths, the walk on W, PageRank, the Laplacian, communities, rollout, heads.

Every tool takes an :class:`~attention_graph.attention.AttentionGraph` (or its matrix W) with the book's
one direction: ``W[i, j]`` is the weight of the arrow from node j to node i. Read as a Markov chain,
a walker goes against the arrows: at node i it steps to node j with probability ``W[i, j]``, from
the one who attends to the one attended. The chapter ``book/graph_tools.md`` derives each tool; the SymPy checks
behind its labeled equations and theorems are registered here under the same labels.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import networkx as nx
import numpy as np
import sympy as sp

from . import registry
from .attention import AttentionGraph, attention
from .multihead import multi_head_attention
from .positional import normalized_laplacian
from .registry import close_to_exact, derivation, evaluate
from .softmax import RowSoftmax, softmax
from .validation import as_int, as_matrix, check_same

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["attention_rollout", "head_graphs", "laplacian_spectrum", "mean_graph", "pagerank",
           "random_walk_laplacian", "spectral_bipartition", "stationary_distribution", "symmetrised"]

ROW_SUM_TOL = 1e-9


# --------------------------------------------------------------------------------------------------
# Input: one representation
# --------------------------------------------------------------------------------------------------

def as_graph(graph_or_W, name: str = "graph_or_W") -> AttentionGraph:
    """The :class:`AttentionGraph` itself, or one built from a square non-negative matrix W.

    Nodes of a bare matrix are labelled ``"0"``, ``"1"``, ...

    >>> as_graph([[0.5, 0.5], [1.0, 0.0]]).labels
    ('0', '1')
    """
    if isinstance(graph_or_W, AttentionGraph):
        return graph_or_W
    W = as_matrix(graph_or_W, name, shape_doc="(n, n)")  # (n, n)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"{name} must be a square matrix (n, n); got shape {W.shape}")
    return AttentionGraph(W, tuple(str(i) for i in range(W.shape[0])))


def _stochastic(graph_or_W, what: str) -> AttentionGraph:
    """The graph, after checking that every row of W sums to 1 (an attention layer's W does)."""
    graph = as_graph(graph_or_W)
    if graph.n == 0:
        raise ValueError(f"{what} needs at least one node; the graph is empty")
    tol = 1e-6 if graph.W.dtype == np.float32 else ROW_SUM_TOL
    s = graph.in_strength()  # (n,)
    bad = np.abs(s - 1.0) > tol
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{what} needs a row-stochastic W (every row sums to 1, as softmax gives); row {i} "
            f"sums to {float(s[i])!r}. Normalise the rows first: W / W.sum(axis=1, keepdims=True)"
        )
    return graph


# --------------------------------------------------------------------------------------------------
# W as a Markov chain: stationary distribution and PageRank
# --------------------------------------------------------------------------------------------------

def stationary_distribution(graph_or_W) -> np.ndarray:
    """r⋆ with r⋆_j = Σ_i r⋆_i W_ij and Σ_i r⋆_i = 1, shape (n,)  (eq-stationary).

    The walker at i steps to j with probability W_ij, against the arrow j → i; r⋆ is where it
    spends its time in the long run.
    Refuses a walk whose stationary distribution is not unique (two closed classes or more, as a
    block-diagonal mask can make).

    >>> stationary_distribution([[0.5, 0.5], [0.25, 0.75]]).round(6)
    array([0.333333, 0.666667])
    """
    graph = _stochastic(graph_or_W, "stationary_distribution")
    n = graph.n
    I_minus_W = np.eye(n) - graph.W  # (n, n)
    if np.linalg.matrix_rank(I_minus_W) < n - 1:
        raise ValueError(
            "the walk on W has more than one stationary distribution (W has several "
            "closed classes of nodes that never reach one another); use pagerank, whose "
            "damping makes it unique"
        )
    return _stationary_distribution(graph.W)  # (n,)


def _stationary_distribution(W: np.ndarray) -> np.ndarray:
    """r⋆ with r⋆_j = Σ_i r⋆_i W_ij and Σ_i r⋆_i = 1, shape (n,)  (eq-stationary)."""
    n = W.shape[0]
    I_minus_W = np.eye(n) - W  # (n, n)
    # r⋆ (I − W) = 0 and Σ r⋆ = 1, stacked:
    M = np.vstack([I_minus_W.T, np.ones((1, n))])  # (n + 1, n)
    b = np.zeros(n + 1)  # (n + 1,)
    b[-1] = 1.0
    r_star, *_ = np.linalg.lstsq(M, b, rcond=None)  # (n,)
    return r_star


def pagerank(graph_or_W, damping: float = 0.85) -> np.ndarray:
    """r_j = (1 − α)/n + α Σ_i r_i W_ij, α = ``damping``; shape (n,)  (eq-pagerank).

    The walker at i steps against the arrows to j with probability α W_ij and, with probability 1 − α,
    jumps to a node chosen uniformly (Page et al. 1999). A node ranks high when it is attended by
    nodes that rank high. Solved exactly as (I − α Wᵀ) r = (1 − α)/n · 1 (unique for 0 ≤ α < 1).

    >>> pagerank([[0.0, 1.0], [1.0, 0.0]]).round(6)
    array([0.5, 0.5])
    """
    graph = _stochastic(graph_or_W, "pagerank")
    real = (int, float, np.floating, np.integer)
    if isinstance(damping, bool) or not isinstance(damping, real):
        raise TypeError(f"damping must be a real number in [0, 1); "
                        f"got {type(damping).__name__}")
    alpha = float(damping)
    if not 0.0 <= alpha < 1.0:
        raise ValueError(
            f"damping must be in [0, 1); got {damping!r} (at 1 the walk never jumps and "
            "PageRank is the stationary distribution, which may not be unique: use "
            "stationary_distribution)"
        )
    return _pagerank(graph.W, alpha)  # (n,)


def _pagerank(W: np.ndarray, alpha: float) -> np.ndarray:
    """r_j = (1 − α)/n + α Σ_i r_i W_ij, solved as (I − α Wᵀ) r = (1 − α)/n · 1  (eq-pagerank)."""
    n = W.shape[0]
    rhs = np.full(n, (1.0 - alpha) / n)  # (n,)
    return np.linalg.solve(np.eye(n) - alpha * W.T.astype(float), rhs)  # (n,)


# --------------------------------------------------------------------------------------------------
# The random-walk Laplacian and its spectrum
# --------------------------------------------------------------------------------------------------

def random_walk_laplacian(graph_or_W) -> np.ndarray:
    """L_rw = I − D⁻¹ W with D = diag(W 1), the in-strengths; I − W for an attention graph  (eq-rw-laplacian).

    The walk goes against the arrows, so a walker at i leaves along the arrows arriving at i: D
    holds their weights, the row sums.

    >>> random_walk_laplacian([[0.5, 0.5], [0.0, 1.0]])
    array([[ 0.5, -0.5],
           [ 0. ,  0. ]])
    """
    graph = as_graph(graph_or_W)
    s = graph.in_strength()  # (n,)
    if (s <= 0).any():
        i = int(np.flatnonzero(s <= 0)[0])
        raise ValueError(f"node {graph.labels[i]!r} has in-strength 0 (row sum 0): D⁻¹ is undefined")
    return np.eye(graph.n) - graph.W / s[:, None]  # (n, n)


def laplacian_spectrum(graph_or_W) -> np.ndarray:
    """Eigenvalues of L_rw = I − D⁻¹W, complex, sorted by real part then imaginary part. Shape (n,).

    For an attention graph every eigenvalue λ satisfies ``abs(λ − 1) ≤ 1``, and λ = 0 is one of them
    (thm-laplacian-disc).

    >>> laplacian_spectrum([[0.5, 0.5], [0.5, 0.5]]).real.round(6)
    array([0., 1.])
    """
    lam = np.linalg.eigvals(random_walk_laplacian(graph_or_W)).astype(complex)  # (n,)
    return lam[np.lexsort((lam.imag.round(12), lam.real.round(12)))]  # (n,)


# --------------------------------------------------------------------------------------------------
# Communities: spectral clustering of the symmetrised graph
# --------------------------------------------------------------------------------------------------

def symmetrised(graph_or_W) -> AttentionGraph:
    """A_s = (W + Wᵀ)/2, the undirected graph of mutual attention, shape (n, n)  (eq-spectral-bipartition).

    >>> symmetrised([[0.0, 1.0], [0.0, 1.0]]).W
    array([[0. , 0.5],
           [0.5, 1. ]])
    """
    graph = as_graph(graph_or_W)
    return AttentionGraph((graph.W + graph.W.T) / 2, graph.labels)


def fiedler_vector(graph_or_W, tol: float = 1e-9) -> tuple[float, np.ndarray]:
    """(λ₂, û): second-smallest solution of L û = λ D û for A_s = (W + Wᵀ)/2  (eq-spectral-bipartition).

    L = D − A_s and D = diag(A_s 1): the eigenvectors of the random-walk Laplacian I − D⁻¹A_s of the
    symmetrised graph (Shi and Malik's normalised cut; von Luxburg 2007). Computed from the symmetric
    D^{-1/2} L D^{-1/2}; û is scaled so that û D û = 1 and its largest-magnitude entry is positive.
    Refuses a disconnected graph (λ₂ = 0) and a repeated λ₂ (the split would not be determined).
    """
    A_s = symmetrised(graph_or_W).W.astype(float)  # (n, n)
    n = A_s.shape[0]
    if n < 2:
        raise ValueError(f"a bipartition needs at least 2 nodes; got {n}")
    deg = A_s.sum(axis=1)  # (n,)
    if (deg <= 0).any():
        lonely = int(np.flatnonzero(deg <= 0)[0])
        raise ValueError(f"node {lonely} has no edge in (W + Wᵀ)/2")
    lam, u_hat = _fiedler_vector(A_s)  # (n,), (n,)
    if lam[1] < tol:
        raise ValueError("the symmetrised graph is disconnected (λ₂ = 0): its connected "
                         "components are already its communities")
    if n > 2 and lam[2] - lam[1] < tol:
        raise ValueError(f"λ₂ = {lam[1]:.6g} is repeated: the spectral bipartition is "
                         "not determined")
    return float(lam[1]), u_hat


def _fiedler_vector(A_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(λ, û): every λ of L û = λ D û, ascending, and û for λ₂, û D û = 1  (eq-spectral-bipartition)."""
    inv_sqrt = 1.0 / np.sqrt(A_s.sum(axis=1))  # (n,), D^{-1/2}
    L_sym = normalized_laplacian(A_s)  # (n, n), I − D^{-1/2} A_s D^{-1/2}
    lam, V = np.linalg.eigh(L_sym)  # (n,), (n, n), ascending; eigenvectors u of 𝓛
    u_hat = inv_sqrt * V[:, 1]  # (n,), the generalised eigenvector D^{-1/2} u
    pivot = int(np.argmax(np.abs(u_hat) > np.abs(u_hat).max() - 1e-12))
    return lam, u_hat * np.sign(u_hat[pivot])  # (n,), (n,)


def spectral_bipartition(graph_or_W) -> np.ndarray:
    """Communities 0/1 by the sign of the Fiedler vector û of A_s = (W + Wᵀ)/2, shape (n,).

    Node i goes to community 1 when û_i > 0; the labels are then swapped, if needed, so that node 0
    is in community 0 (a split has no preferred names).

    >>> W = [[.5, .5, 0, 0], [.4, .4, .2, 0], [0, .2, .4, .4], [0, 0, .5, .5]]
    >>> spectral_bipartition(W)
    array([0, 0, 1, 1])
    """
    _, u_hat = fiedler_vector(graph_or_W)  # (n,)
    groups = (u_hat > 0).astype(int)  # (n,)
    return groups if groups[0] == 0 else 1 - groups


# --------------------------------------------------------------------------------------------------
# Several heads: one adjacency matrix per head (a multigraph)
# --------------------------------------------------------------------------------------------------

def head_graphs(Q, K, n_heads: int, labels: Sequence[str],
                mask=None) -> list[AttentionGraph]:
    """One :class:`AttentionGraph` per head, W⁽ʰ⁾ = softmax(Q_h K_hᵀ/√d_h)  (eq-head-weights).

    ``Q`` and ``K`` are (n, d), already projected: head h reads their h-th block of d/H
    columns. It is :func:`~attention_graph.multi_head_attention` with identity projections,
    read as graphs.

    >>> I = [[1.0, 0.0], [0.0, 1.0]]
    >>> g1, g2 = head_graphs(I, I, 2, ["a", "b"])
    >>> g2.W.round(3)
    array([[0.5  , 0.5  ],
           [0.269, 0.731]])
    """
    Q = as_matrix(Q, "Q", shape_doc="(n, d)")  # (n, d)
    K = as_matrix(K, "K", shape_doc="(n, d)")  # (n, d)
    check_same(Q.shape[0], K.shape[0],
               "self-attention: Q and K need one row per node (n)")
    check_same(Q.shape[1], K.shape[1], "Q and K must share the dimension d (columns)")
    return _head_graphs(Q, K, n_heads, labels, mask)


def _head_graphs(Q, K, n_heads: int, labels: Sequence[str],
                 mask=None) -> list[AttentionGraph]:
    """One :class:`AttentionGraph` per head, W⁽ʰ⁾ = softmax(Q_h K_hᵀ/√d_h)  (eq-head-weights)."""
    I = np.eye(Q.shape[1], dtype=np.result_type(Q, K))  # (d, d)
    _, W = multi_head_attention(Q, K, I, I, I, I, n_heads, mask=mask)  # (H, n, n)
    return [AttentionGraph(W_h, labels) for W_h in W]


def mean_graph(graphs: Sequence[AttentionGraph]) -> AttentionGraph:
    """The average of the heads' adjacency matrices, (1/h) Σ_h W⁽ʰ⁾: row-stochastic again. (n, n)."""
    graphs = _same_nodes(graphs, "graphs")
    return AttentionGraph(np.mean([g.W for g in graphs], axis=0), graphs[0].labels)  # (n, n)


def multigraph(graphs: Sequence[AttentionGraph]):
    """A ``networkx.MultiDiGraph``: one edge i → j per head h with W⁽ʰ⁾[i, j] > 0, key h, ``weight``."""
    graphs = _same_nodes(graphs, "graphs")
    G = nx.MultiDiGraph()
    G.add_nodes_from(graphs[0].labels)
    for h, g in enumerate(graphs):
        for a, b, w in g.edges():
            G.add_edge(g.labels[a], g.labels[b], key=h, weight=w, head=h)
    return G


def _same_nodes(graphs, name: str) -> list[AttentionGraph]:
    graphs = [as_graph(g, f"{name}[{k}]") for k, g in enumerate(graphs)]
    if not graphs:
        raise ValueError(f"{name} is empty: need at least one graph")
    for k, g in enumerate(graphs[1:], 1):
        if g.labels != graphs[0].labels:
            raise ValueError(f"{name}[{k}] has nodes {g.labels[:5]}..., not those of {name}[0] "
                             f"{graphs[0].labels[:5]}...: every graph must be on the same nodes")
    return graphs


# --------------------------------------------------------------------------------------------------
# Several layers: attention rollout
# --------------------------------------------------------------------------------------------------

def _residual(residual) -> float:
    if isinstance(residual, bool) or not isinstance(residual, (int, float, np.floating, np.integer)):
        raise TypeError(f"residual must be a real number in [0, 1]; got {type(residual).__name__}")
    if not 0.0 <= float(residual) <= 1.0:
        raise ValueError(f"residual must be in [0, 1] (the share of the identity); got {residual!r}")
    return float(residual)


def attention_rollout(layers: Sequence[AttentionGraph],
                      residual: float = 0.5) -> AttentionGraph:
    """ℛ = Ã⁽ᴸ⁾ ⋯ Ã⁽¹⁾ with Ã⁽ˡ⁾ = ρ I + (1 − ρ) W⁽ˡ⁾, ρ = ``residual``  (eq-rollout).

    ``layers`` runs from the first layer to the last. R[i, j] is how much of input token j reaches
    output i along every path through the layers (Abnar and Zuidema 2020 use ρ = 1/2). Each W⁽ˡ⁾ must
    be row-stochastic; R then is too.

    >>> attention_rollout([[[0.0, 1.0], [1.0, 0.0]]] * 2, residual=0.0).W
    array([[1., 0.],
           [0., 1.]])
    """
    rho = _residual(residual)
    layers = _same_nodes(layers, "layers")
    for k, g in enumerate(layers):
        _stochastic(g, f"attention_rollout (layers[{k}])")
    return _attention_rollout(layers, rho)


def _attention_rollout(layers: Sequence[AttentionGraph],
                       rho: float) -> AttentionGraph:
    """ℛ = Ã⁽ᴸ⁾ ⋯ Ã⁽¹⁾ with Ã⁽ˡ⁾ = ρ I + (1 − ρ) W⁽ˡ⁾  (eq-rollout)."""
    n = layers[0].n
    R = np.eye(n)  # (n, n)
    for g in layers:
        A_tilde = rho * np.eye(n) + (1.0 - rho) * g.W  # (n, n)
        R = A_tilde @ R  # (n, n): the newest layer multiplies on the left
    return AttentionGraph(R, layers[0].labels)


def residual_attention_stack(X, n_layers: int, labels: Sequence[str],
                             residual: float = 0.5) -> tuple[np.ndarray, list[AttentionGraph]]:
    """X⁽ˡ⁾ = ρ X⁽ˡ⁻¹⁾ + (1 − ρ) W⁽ˡ⁾ X⁽ˡ⁻¹⁾, W⁽ˡ⁾ = softmax(X⁽ˡ⁻¹⁾X⁽ˡ⁻¹⁾ᵀ/√d)  (thm-rollout-exact).

    ``n_layers`` attention layers with identity projections (Q = K = V = X, as in the worked example)
    and a residual mix ρ. Returns X⁽ᴸ⁾, (n, d), and the layers' graphs, first to last.
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    rho = _residual(residual)
    n_layers = as_int(n_layers, "n_layers")
    graphs = []
    for _ in range(n_layers):
        Y, W = attention(X, X, X)  # (n, d), (n, n)
        graphs.append(AttentionGraph(W, labels))
        X = rho * X + (1.0 - rho) * Y  # (n, d)
    return X, graphs


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------
_i, _j, _n = sp.symbols("i j n", integer=True, positive=True)
_alpha = sp.Symbol(r"\alpha")
_W = sp.IndexedBase("W")
_r_star = sp.IndexedBase(r"r^{\star}")  # the stationary distribution r⋆
_r = sp.IndexedBase("r")
# Matrix symbols of the displayed equations (glued by book/graph_tools.md, evaluated by the checks).
_Wm, _Dm, _Im = (sp.MatrixSymbol(x, _n, _n) for x in ("W", "D", "I"))
_Lm = sp.MatrixSymbol("L", _n, _n)
_u = sp.MatrixSymbol(r"\hat{u}", _n, 1)
_lam = sp.Symbol(r"\lambda")
_d_h = sp.Symbol("d_h", integer=True, positive=True)
_Qh, _Kh = sp.MatrixSymbol("Q_h", _n, _d_h), sp.MatrixSymbol("K_h", _n, _d_h)
_rho = sp.Symbol(r"\rho")
_R_now, _R_before = sp.MatrixSymbol(r"\mathcal{R}^{(l)}", _n, _n), sp.MatrixSymbol(r"\mathcal{R}^{(l-1)}", _n, _n)
_W_layer = sp.MatrixSymbol("W^{(l)}", _n, _n)


def _display_rw_laplacian():
    inverse = sp.MatPow(_Dm, -1, evaluate=False)
    return sp.Eq(sp.MatrixSymbol(r"L_{\mathrm{rw}}", _n, _n),
                 sp.MatAdd(_Im, sp.MatMul(-1, inverse, _Wm, evaluate=False), evaluate=False), evaluate=False)


def _display_spectral_bipartition():
    return sp.Eq(sp.MatMul(_Lm, _u, evaluate=False), sp.MatMul(_lam, _Dm, _u, evaluate=False), evaluate=False)


def _display_head_weights():
    scores = sp.MatMul(sp.Pow(sp.sqrt(_d_h), -1, evaluate=False), _Qh, _Kh.T, evaluate=False)
    return sp.Eq(sp.MatrixSymbol("W^{(h)}", _n, _n), RowSoftmax(scores), evaluate=False)


def _display_rollout():
    step = sp.MatAdd(sp.MatMul(_rho, _Im, evaluate=False), sp.MatMul(1 - _rho, _W_layer, evaluate=False),
                     evaluate=False)
    return sp.Eq(_R_now, sp.MatMul(step, _R_before, evaluate=False), evaluate=False)


def _rollout_step(W, R, rho):
    """One step of the displayed recursion R⁽ˡ⁾ = (ρI + (1 − ρ)W⁽ˡ⁾) R⁽ˡ⁻¹⁾, exactly (for the checks)."""
    n = sp.Matrix(W).rows
    return evaluate(_display_rollout().rhs, {_W_layer: W, _R_before: R, _Im: sp.eye(n), _rho: rho, _n: n})


def stochastic_symbols(n: int, name: str = "w") -> sp.Matrix:
    """A symbolic n×n row-stochastic matrix: the last entry of each row is 1 minus the others."""
    M = sp.Matrix(n, n, lambda a, b: sp.Symbol(f"{name}_{a}{b}"))
    for a in range(n):
        M[a, n - 1] = 1 - sum(M[a, b] for b in range(n - 1))
    return M


EXAMPLE = sp.Matrix([[sp.Rational(1, 2), sp.Rational(1, 3), sp.Rational(1, 6)],
                      [sp.Rational(1, 4), sp.Rational(1, 4), sp.Rational(1, 2)],
                      [sp.Rational(0), sp.Rational(2, 5), sp.Rational(3, 5)]])



@derivation("thm-out-strength-sums-to-n",
            strength="proved", scope=("for every n (finite sums exchanged); the package's out-strengths of seeded "
                                      "stochastic W of sizes 2 to 6, to 1e-12"))
def _check_out_strength():
    # For every n: Σ_j s_out(j) = Σ_j Σ_i W_ij; exchanging the two finite sums gives Σ_i Σ_j W_ij, and
    # the hypothesis (each row of W sums to 1) turns each inner sum into 1.
    Wb, n = sp.IndexedBase("W"), sp.Symbol("n", integer=True, positive=True)
    i, j = sp.symbols("i j", integer=True, positive=True)
    total = sp.Sum(Wb[i, j], (i, 1, n), (j, 1, n))  # Σ_j (Σ_i W_ij)
    row_sum = sp.Sum(Wb[i, j], (j, 1, n))
    yield sp.Eq(total.reorder((0, 1)), sp.Sum(row_sum, (i, 1, n)), evaluate=False)

    def rows_are_one(e):  # the innermost sum over j of W_ij is a row sum: 1 by hypothesis
        return sp.Sum(1, *e.limits[1:]) if len(e.limits) > 1 else sp.Integer(1)

    swapped = total.reorder((0, 1))
    is_row_sum = lambda e: isinstance(e, sp.Sum) and e.limits[0][0] == j and e.function == Wb[i, j]  # noqa: E731
    yield sp.Eq(swapped.replace(is_row_sum, rows_are_one).doit(), n)
    # The package's out-strengths (column sums, computed by AttentionGraph) of seeded stochastic W add
    # up to n; a symbolic W whose last column is 1 minus the rest would only restate the hypothesis.
    rng = np.random.default_rng(2)
    for n in range(2, 7):
        E = rng.random((n, n)) + 0.01  # (n, n), positive
        s_out = AttentionGraph(E / E.sum(axis=1, keepdims=True), list(range(n))).out_strength()  # (n,)
        yield bool(abs(s_out.sum() - n) < 1e-12)
    # The package agrees on an exact example.
    got = AttentionGraph(np.array(EXAMPLE, dtype=float), "abc").out_strength()  # (3,)
    yield close_to_exact(sp.ones(1, 3) * EXAMPLE, got, atol=1e-12, reshape=True)


@derivation("eq-stationary",
            display=lambda: sp.Eq(_r_star[_j], sp.Sum(_r_star[_i] * _W[_i, _j], (_i, 1, _n)), evaluate=False),
            strength="verified", scope="for the general two-state chain and one 3-state chain")
def _check_stationary():
    # Two states: r⋆ = (b, a)/(a + b) is stationary for [[1 − a, a], [b, 1 − b]].
    a, b = sp.symbols("a b", positive=True)
    W2 = sp.Matrix([[1 - a, a], [b, 1 - b]])
    pi2 = sp.Matrix([[b, a]]) / (a + b)
    yield sp.Eq(pi2 * W2, pi2)
    # ... the displayed equation, summed out for n = 2, holds for it entry by entry.
    shown = registry.display("eq-stationary")
    for c in range(2):
        e = shown.rhs.subs({_n: 2, _j: c + 1}).doit()
        e = e.subs({_r_star[r + 1]: pi2[r] for r in range(2)}).subs({_W[r + 1, c + 1]: W2[r, c] for r in range(2)})
        yield sp.Eq(e, pi2[c])
    # The package's r⋆ on an exact 3-state example is the exact left null vector of I − W, summing to 1.
    null = (sp.eye(3) - EXAMPLE).T.nullspace()
    yield sp.Eq(len(null), 1)
    exact = null[0] / sum(null[0])
    yield close_to_exact(exact, stationary_distribution(np.array(EXAMPLE, dtype=float)), atol=1e-12, reshape=True)


@derivation("eq-pagerank", display=lambda: sp.Eq(
    _r[_j], sp.Add((1 - _alpha) / _n, _alpha * sp.Sum(_r[_i] * _W[_i, _j], (_i, 1, _n)), evaluate=False),
    evaluate=False),
            strength="verified", scope="for one 3-state chain with damping 17/20")
def _check_pagerank():
    alpha = sp.Rational(17, 20)
    r = sp.Matrix(sp.symbols("r0:3"))
    sol = sp.solve(list(r - (1 - alpha) / 3 * sp.ones(3, 1) - alpha * EXAMPLE.T * r), list(r), dict=True)
    yield sp.Eq(len(sol), 1)
    exact = r.subs(sol[0])
    # The displayed equation, summed out for n = 3 with this α, holds for the solution.
    shown = registry.display("eq-pagerank")
    for c in range(3):
        e = shown.rhs.subs({_n: 3, _j: c + 1, _alpha: alpha}).doit()
        e = e.subs({_r[k + 1]: exact[k] for k in range(3)}).subs({_W[k + 1, c + 1]: EXAMPLE[k, c]
                                                                   for k in range(3)})
        yield sp.Eq(e, exact[c])
    yield close_to_exact(exact, pagerank(np.array(EXAMPLE, dtype=float), damping=0.85), atol=1e-12, reshape=True)


@derivation("thm-pagerank-unique",
            strength="verified", scope="for the general two-state chain and symbolic α; one 3-state chain")
def _check_pagerank_unique():
    a, b = sp.symbols("a b", nonnegative=True)
    al = sp.Symbol("alpha", nonnegative=True)
    W2 = sp.Matrix([[1 - a, a], [b, 1 - b]])
    M = sp.eye(2) - al * W2.T
    # det(I − αWᵀ) = (1 − α)(1 − α(1 − a − b)): non-zero for α < 1, since |1 − a − b| ≤ 1.
    yield sp.Eq(M.det(), (1 - al) * (1 - al * (1 - a - b)))
    r = M.LUsolve((1 - al) / 2 * sp.ones(2, 1))
    yield sp.Eq(sp.simplify(sum(r)), 1)
    # Summing eq-pagerank over j: s = (1 − α) + α s, whose only solution is s = 1.
    s = sp.Symbol("s")
    yield sp.Eq(sp.FiniteSet(*sp.solve(sp.Eq(s, (1 - al) + al * s), s)), sp.FiniteSet(1))
    # Neumann series r = (1 − α)/n Σ_k α^k (Wᵀ)^k 1: positive, and its partial sums approach r.
    alpha = sp.Rational(1, 2)
    term, partial = sp.ones(3, 1), sp.zeros(3, 1)
    for _ in range(60):
        partial, term = partial + term, alpha * EXAMPLE.T * term
    exact = (sp.eye(3) - alpha * EXAMPLE.T).LUsolve(sp.ones(3, 1))
    yield all(e > 0 for e in exact)
    yield bool(max(abs(x) for x in (exact - partial).evalf()) < 1e-15)


@derivation("thm-symmetric-scores-reversible",
            strength="verified", scope="for symbolic symmetric positive E of size 3")
def _check_reversible():
    # E_ij = exp(S_ij) > 0 with S = Sᵀ, so E = Eᵀ; W = D⁻¹E with d_i = Σ_j E_ij.
    e = {}
    for a in range(3):
        for b in range(a, 3):
            e[(a, b)] = e[(b, a)] = sp.Symbol(f"e_{a}{b}", positive=True)
    E = sp.Matrix(3, 3, lambda a, b: e[(a, b)])
    d = [sum(E.row(a)) for a in range(3)]
    W = sp.Matrix(3, 3, lambda a, b: E[a, b] / d[a])
    pi = sp.Matrix([d]) / sum(d)
    yield sp.Eq(pi * W, pi)  # stationary
    for a, b in itertools.product(range(3), repeat=2):
        yield sp.Eq(pi[a] * W[a, b], pi[b] * W[b, a])  # detailed balance
    Dh = sp.diag(*[sp.sqrt(x) for x in d])
    M = Dh * W * Dh.inv()
    yield sp.Eq(M, M.T)  # W is similar to a symmetric matrix: real eigenvalues
    # The package on the worked example's scores: r⋆ = d / Σ d.
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [1.0, -1.0]])  # (4, 2)
    S = X @ X.T / np.sqrt(2)  # (4, 4)
    dd = np.exp(S).sum(axis=1)  # (4,)
    yield bool(np.allclose(stationary_distribution(softmax(S)), dd / dd.sum(), rtol=0, atol=1e-12))


@derivation("eq-rw-laplacian", display=_display_rw_laplacian,
            strength="verified", scope="for symbolic row-stochastic W of size 3 and one weighted 3-node graph")
def _check_rw_laplacian():
    # The display with D = diag(W 1): for a row-stochastic W, D = I and L_rw 1 = 0.
    W = stochastic_symbols(3)
    L = evaluate(_display_rw_laplacian().rhs, {_Wm: W, _Dm: sp.diag(*list(W * sp.ones(3, 1))),
                                               _Im: sp.eye(3), _n: 3})
    yield sp.Eq(L, sp.eye(3) - W)
    yield sp.Eq(L * sp.ones(3, 1), sp.zeros(3, 1))
    # On unnormalised weights, the display is what the package computes.
    A = sp.Matrix([[0, 2, 1], [1, 0, 0], [3, 3, 2]])
    exact = evaluate(_display_rw_laplacian().rhs, {_Wm: A, _Dm: sp.diag(*[sum(A.row(a)) for a in range(3)]),
                                                   _Im: sp.eye(3), _n: 3})
    yield close_to_exact(exact, random_walk_laplacian(np.array(A, dtype=float)), atol=1e-12, reshape=True)
    got = random_walk_laplacian(np.array(EXAMPLE, dtype=float))  # (3, 3)
    yield close_to_exact(sp.eye(3) - EXAMPLE, got, atol=1e-12, reshape=True)


@derivation("thm-laplacian-disc",
            strength="verified",
            scope="for symbolic row-stochastic W with positive entries of size 3 (Gershgorin discs),"
                  " and of size 2")
def _check_laplacian_disc():
    W = stochastic_symbols(3)
    yield sp.Eq((sp.eye(3) - W) * sp.ones(3, 1), sp.zeros(3, 1))  # λ = 0, eigenvector 1
    # Gershgorin on I − W, from the symbolic W: disc i has centre c_i = 1 − W_ii and radius
    # r_i = Σ_{j≠i} |W_ij|. The row sums make r_i = c_i, and a disc |λ − c| ≤ c with 0 ≤ c ≤ 1 lies
    # inside |λ − 1| ≤ 1: its farthest point from 1 is at distance |1 − c| + c = 1. W is written
    # W_ij = a_ij / Σ_l a_il with a_ij > 0, so that SymPy knows its entries are non-negative.
    a = sp.Matrix(3, 3, lambda r, c: sp.Symbol(f"a_{r}{c}", positive=True))
    W = sp.Matrix(3, 3, lambda r, c: a[r, c] / sum(a.row(r)))
    for i in range(3):
        centre = (sp.eye(3) - W)[i, i]
        radius = sum(sp.Abs(W[i, j]) for j in range(3) if j != i)
        yield sp.Eq(radius, centre)
        yield sp.Eq(sp.Abs(1 - centre) + radius, 1)
    # Two states: the eigenvalues of I − W are 0 and a + b, inside |λ − 1| ≤ 1 for a, b ∈ [0, 1].
    a, b, lam = sp.symbols("a b lambda")
    W2 = sp.Matrix([[1 - a, a], [b, 1 - b]])
    yield sp.Eq(sp.FiniteSet(*sp.solve((sp.eye(2) - W2 - lam * sp.eye(2)).det(), lam)), sp.FiniteSet(0, a + b))
    # The package's spectrum of an exact example: 0 is there and all lie in the disc.
    got = laplacian_spectrum(np.array(EXAMPLE, dtype=float))
    yield bool(np.isclose(np.abs(got).min(), 0.0, atol=1e-12) and (np.abs(got - 1) <= 1 + 1e-12).all())
    exact = [complex(x) for x in (sp.eye(3) - EXAMPLE).eigenvals(multiple=True)]
    yield bool(np.allclose(np.sort_complex(np.array(exact)), np.sort_complex(got), atol=1e-12))


def _path_weights() -> sp.Matrix:
    return sp.Matrix([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])


@derivation("eq-spectral-bipartition", display=_display_spectral_bipartition,
            strength="verified", scope="for a symbolic weighted triangle and the path on 4 nodes")
def _check_spectral_bipartition():
    # If D^{-1/2} L D^{-1/2} v = λ v then u = D^{-1/2} v solves the display L u = λ D u:
    # D^{1/2} L_sym = L D^{-1/2}, with L = D − A.
    a, b, c = sp.symbols("a b c", positive=True)
    A = sp.Matrix([[0, a, b], [a, 0, c], [b, c, 0]])
    deg = [sum(A.row(k)) for k in range(3)]
    D_half = sp.diag(*[sp.sqrt(x) for x in deg])
    L = sp.diag(*deg) - A
    L_sym = D_half.inv() * L * D_half.inv()
    yield sp.Eq(D_half * L_sym, L * D_half.inv())
    # The path 0 – 1 – 2 – 3: λ₂ = 1/2 exactly, and the sign of u splits it in the middle.
    P = _path_weights()
    Dp = sp.diag(*[sum(P.row(k)) for k in range(4)])
    lam2 = sorted(sp.solve((Dp - P - sp.Symbol("x") * Dp).det(), sp.Symbol("x")))[1]
    yield sp.Eq(lam2, sp.Rational(1, 2))
    u = ((Dp - P) - lam2 * Dp).nullspace()[0]
    shown = _display_spectral_bipartition()
    values = {_Lm: Dp - P, _Dm: Dp, _u: u, _n: 4}
    yield sp.Eq(evaluate(shown.lhs, values), evaluate(shown.rhs, values).subs(_lam, lam2))
    lam_pkg, u_pkg = fiedler_vector(np.array(P, dtype=float))
    yield bool(np.isclose(lam_pkg, 0.5, atol=1e-12))
    u_exact = np.array(u.evalf(), dtype=float).ravel()  # (4,)
    u_exact = u_exact / np.sqrt(u_exact @ np.diag(np.array(Dp, dtype=float).diagonal()) @ u_exact)
    yield bool(min(np.abs(u_pkg - u_exact).max(), np.abs(u_pkg + u_exact).max()) < 1e-12)
    yield spectral_bipartition(np.array(P, dtype=float)).tolist() == [0, 0, 1, 1]


@derivation("eq-head-weights", display=_display_head_weights,
            strength="measured", scope="to 1e-12 against the display, for d_model = 4 and H = 2 heads")
def _check_head_weights():
    # Head h is the displayed softmax of its own block of d_h = d_model / H columns (exact, d_model = 4,
    # H = 2); the package's floats agree.
    Q = sp.Matrix([[1, 0, 2, -1], [0, 1, 1, 1], [1, 1, 0, 2]])
    K = sp.Matrix([[0, 1, 1, 0], [2, 0, -1, 1], [1, 1, 1, 1]])
    got = head_graphs(np.array(Q, dtype=float), np.array(K, dtype=float), 2, "abc")
    for h in range(2):
        values = {_Qh: Q[:, 2 * h:2 * h + 2], _Kh: K[:, 2 * h:2 * h + 2], _d_h: 2, _n: 3}
        yield close_to_exact(evaluate(_display_head_weights().rhs, values), got[h].W, atol=1e-12, reshape=True)
    # One head is plain attention.
    one = head_graphs(np.array(Q, dtype=float), np.array(K, dtype=float), 1, "abc")[0].W
    yield bool(np.allclose(one, attention(np.array(Q, dtype=float), np.array(K, dtype=float),
                                          np.array(K, dtype=float))[1], rtol=0, atol=1e-15))


@derivation("eq-rollout", display=_display_rollout,
            strength="verified", scope="for symbolic stochastic 2 × 2 layers; one 3-state example to 1e-12")
def _check_rollout():
    # The displayed recursion from ℛ⁽⁰⁾ = I, two layers, is what the package's rollout computes.
    rho = sp.Rational(1, 2)
    W1 = EXAMPLE
    W2 = sp.Matrix([[sp.Rational(1, 5), sp.Rational(3, 5), sp.Rational(1, 5)],
                    [sp.Rational(1, 3), sp.Rational(1, 3), sp.Rational(1, 3)],
                    [sp.Rational(1, 2), sp.Rational(0), sp.Rational(1, 2)]])
    exact = _rollout_step(W2, _rollout_step(W1, sp.eye(3), rho), rho)
    yield sp.Eq(exact, (rho * sp.eye(3) + (1 - rho) * W2) * (rho * sp.eye(3) + (1 - rho) * W1))
    got = attention_rollout([np.array(W1, dtype=float), np.array(W2, dtype=float)], residual=0.5)
    yield close_to_exact(exact, got.W, atol=1e-12, reshape=True)
    # Products of row-stochastic matrices are row-stochastic.
    A1, A2 = stochastic_symbols(2, "a"), stochastic_symbols(2, "b")
    yield sp.Eq((A2 * A1) * sp.ones(2, 1), sp.ones(2, 1))


@derivation("thm-rollout-exact",
            strength="verified", scope="for two layers of symbolic stochastic 2 × 2 W and symbolic ρ")
def _check_rollout_exact():
    # Two layers, symbolic stochastic W⁽¹⁾, W⁽²⁾ and symbolic X⁽⁰⁾: the residual stack is R X⁽⁰⁾.
    rho = sp.Symbol("rho")
    W1, W2 = stochastic_symbols(2, "a"), stochastic_symbols(2, "b")
    X0 = sp.Matrix(2, 2, lambda a, b: sp.Symbol(f"x_{a}{b}"))
    X1 = rho * X0 + (1 - rho) * W1 * X0
    X2 = rho * X1 + (1 - rho) * W2 * X1
    At = [rho * sp.eye(2) + (1 - rho) * W for W in (W1, W2)]
    yield sp.Eq(X2, At[1] * At[0] * X0)
    yield sp.Eq(At[1] * At[0] * sp.ones(2, 1), sp.ones(2, 1))
    # The package: its stack and its rollout agree on the worked example.
    X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [1.0, -1.0]])  # (4, 2)
    XL, graphs = residual_attention_stack(X, 3, "CABD", residual=0.5)
    yield bool(np.allclose(attention_rollout(graphs, residual=0.5).W @ X, XL, rtol=0, atol=1e-13))
