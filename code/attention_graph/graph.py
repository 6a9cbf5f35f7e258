"""The attention graph: the one representation of "attention is a graph" in the package.

Every figure and every graph tool consumes an :class:`AttentionGraph`. Its adjacency matrix is the
weight matrix W, with the book's one direction: ``W[i, j]`` is the weight of the arrow from node j
(a key) to node i (a query), which carries v_j to i. Rows sum to 1 for an attention layer; a fixed graph
(a path, a GCN propagation matrix) is an AttentionGraph too, with whatever rows it has.

The chapter ``book/graph.md`` proves that an attention layer is message passing on the complete
graph with W as adjacency, and runs GCN, mean aggregation, GAT, attention and masked attention (a
Graph Transformer layer) side by side: every layer here returns ``(Y, AttentionGraph)``. The SymPy
checks behind the chapter's equations and theorems are registered at the end of this module.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .attention import AttentionGraph, attention
from .registry import close_to_exact, derivation, evaluate
from .scores import scaled_scores
from .softmax import softmax
from .validation import as_int, as_matrix, as_rng, as_square, check_same
from .worked_example import PEOPLE, embeddings, path_adjacency

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["additive_mask_softmax", "causal_mask", "complete_attention", "five_models", "gat",
           "gat_parameters", "gat_scores", "gcn", "gcn_propagation", "graph_mask", "masked_attention",
           "mean_aggregation", "mean_propagation", "message_edge_index", "message_passing",
           "permutation_matrix", "product_mask_softmax", "relabel"]


# --------------------------------------------------------------------------------------------------
# Message passing, and five layers that are message passing on a graph.
#
# Every layer below returns (Y, graph), like `attention` returns (Y, W): Y the new representations,
# one row per node, and the AttentionGraph whose adjacency W[i, j] is the weight node i gives the
# message of node j. A is the fixed graph: A[i, j] > 0 when node i aggregates from node j.
# --------------------------------------------------------------------------------------------------


def node_labels(labels, n: int) -> tuple[str, ...]:
    """The node names: ``labels`` if given, else "0", "1", ..."""
    if labels is None:
        return tuple(str(i) for i in range(n))
    labels = tuple(str(x) for x in labels)
    if len(labels) != n:
        raise ValueError(f"labels must name the {n} nodes; got {len(labels)} labels")
    return labels


def _adjacency(A, name: str = "A") -> np.ndarray:
    """A as a square, non-negative float matrix, or a clear error naming ``name``."""
    A = as_square(A, name)  # (n, n)
    if (A < 0).any():
        where = tuple(int(i) for i in np.argwhere(A < 0)[0])
        raise ValueError(f"{name} must be non-negative (edge weights); found {A[where]} at {where}")
    return A


def _refuse_empty_rows(M: np.ndarray, what: str, labels) -> None:
    """Raise when some node i has no edge at all in row i of ``M``: it has nothing to aggregate."""
    empty = np.flatnonzero(~(M > 0).any(axis=1))  # (n_empty,)
    if empty.size:
        names = [node_labels(labels, M.shape[0])[i] for i in empty[:10]]
        raise ValueError(
            f"{what}: node(s) {names} (row(s) {empty[:10].tolist()}) have no neighbour to aggregate "
            "from (an empty row has no softmax and no average); add an edge, or self-loops with "
            "self_loops=True"
        )


def graph_mask(A, *, self_loops: bool = True) -> np.ndarray:
    """M_ij = (A + I)_ij > 0 (or A_ij > 0 without self-loops): who node i may attend to. (n, n) bool.

    ``A`` is a non-negative (n, n) adjacency (0/1, weighted or boolean; directed allowed): row i
    lists the nodes i aggregates from.

    >>> graph_mask([[0, 1], [1, 0]])
    array([[ True,  True],
           [ True,  True]])
    >>> graph_mask([[0, 1], [1, 0]], self_loops=False)
    array([[False,  True],
           [ True, False]])
    """
    A = _adjacency(A)  # (n, n)
    M = A > 0  # (n, n)
    return M | np.eye(A.shape[0], dtype=bool) if self_loops else M  # (n, n)


def causal_mask(n: int) -> np.ndarray:
    """M_ij = (j ≤ i): token i attends to itself and every earlier token. Lower-triangular (n, n) bool.

    >>> causal_mask(3).astype(int)
    array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]])
    """
    n = as_int(n, "n", what="a positive integer number of tokens")
    i = np.arange(n)  # (n,)
    return i[None, :] <= i[:, None]  # (n, n)


def message_passing(graph: AttentionGraph, V) -> np.ndarray:
    """y_i = Σ_{j : j → i} W_ij v_j, summed edge by edge over the graph  (eq-message-passing).

    ``V`` is (n, d_v), one message per node. The sum runs over the edge list of ``graph``, not over
    a matrix product: this is the graph-neural-network view of a layer. Shape (n, d_v).

    >>> g = AttentionGraph([[0.0, 1.0], [0.5, 0.5]], ["a", "b"])
    >>> message_passing(g, [[2.0], [4.0]])
    array([[4.],
           [3.]])
    """
    if not isinstance(graph, AttentionGraph):
        raise TypeError(f"graph must be an AttentionGraph; got {type(graph).__name__}")
    V = as_matrix(V, "V", shape_doc="(n, d_v)")  # (n, d_v)
    if V.shape[0] != graph.n:
        raise ValueError(f"V must have one row per node: {V.shape[0]} != {graph.n}")
    return _message_passing(graph, V)  # (n, d_v)


def _message_passing(graph: AttentionGraph, V: np.ndarray) -> np.ndarray:
    """y_i = Σ_{j : j → i} W_ij v_j, summed edge by edge over the graph  (eq-message-passing)."""
    Y = np.zeros((graph.n, V.shape[1]), dtype=np.result_type(V, graph.W))  # (n, d_v)
    for i, j, w in graph.edges():
        Y[i] += w * V[j]  # (d_v,)
    return Y


def message_edge_index(graph: AttentionGraph) -> np.ndarray:
    """The edges as messages: column (j, i) for each arrow from j to i, PyG's ``edge_index`` layout.

    The arrow from j to i (W_ij > 0) carries the message v_j to i (eq-message-passing),
    so row 0 holds the message's source j and row 1 its target i: PyTorch Geometric's
    ``edge_index``, and DGL's ``(src, dst) = (row 0, row 1)``. Shape (2, n_edges), int64, in the order of
    ``graph.edges()``; ``graph.W[row 1, row 0]`` are the edge weights.

    >>> message_edge_index(AttentionGraph([[0.0, 1.0], [0.5, 0.5]], ["a", "b"]))
    array([[1, 0, 1],
           [0, 1, 1]])
    """
    if not isinstance(graph, AttentionGraph):
        raise TypeError(f"graph must be an AttentionGraph; got {type(graph).__name__}")
    return _message_edge_index(graph)  # (2, |E|)


def _message_edge_index(graph: AttentionGraph) -> np.ndarray:
    """The edges as messages: column (j, i) for each edge i → j, PyG's ``edge_index`` layout."""
    pairs = [(j, i) for i, j, _w in graph.edges()]  # (|E|, 2): (source j, target i)
    return np.array(pairs, dtype=np.int64).reshape(-1, 2).T  # (2, |E|)


def gcn_propagation(A) -> np.ndarray:
    """Â = D̃^{-1/2} (A + I) D̃^{-1/2}, D̃_ii = Σ_j (A + I)_ij  (eq-gcn-propagation).

    ``A`` is a symmetric, non-negative (n, n) adjacency without self-loops (Kipf & Welling's
    renormalisation adds them). Â is symmetric; its rows do not sum to 1 in general. Shape (n, n).

    >>> gcn_propagation([[0, 1], [1, 0]])
    array([[0.5, 0.5],
           [0.5, 0.5]])
    """
    A = _adjacency(A)  # (n, n)
    if not np.allclose(A, A.T, rtol=0, atol=1e-12):
        raise ValueError("A must be symmetric: GCN propagates on an undirected graph")
    return _gcn_propagation(A)  # (n, n)


def _gcn_propagation(A: np.ndarray) -> np.ndarray:
    """Â = D̃^{-1/2} (A + I) D̃^{-1/2}, D̃_ii = Σ_j (A + I)_ij  (eq-gcn-propagation)."""
    A_tilde = A + np.eye(A.shape[0])  # (n, n)
    inv_sqrt = 1.0 / np.sqrt(A_tilde.sum(axis=1))  # (n,), degrees >= 1
    return inv_sqrt[:, None] * A_tilde * inv_sqrt[None, :]  # (n, n)


def mean_propagation(A, *, self_loops: bool = True) -> np.ndarray:
    """M = D̃^{-1} (A + I), or D^{-1} A without self-loops  (eq-mean-aggregation).

    Row i averages node i's neighbours (and itself): every row sums to 1. A node with no neighbour
    and no self-loop has no average and is refused with a ``ValueError``. Shape (n, n).

    >>> mean_propagation([[0, 1, 1], [1, 0, 0], [1, 0, 0]]).round(3)
    array([[0.333, 0.333, 0.333],
           [0.5  , 0.5  , 0.   ],
           [0.5  , 0.   , 0.5  ]])
    """
    A = _adjacency(A)  # (n, n)
    A_tilde = A + np.eye(A.shape[0]) if self_loops else A  # (n, n)
    _refuse_empty_rows(A_tilde, "mean aggregation D⁻¹A", None)
    return _mean_propagation(A_tilde)  # (n, n)


def _mean_propagation(A_tilde: np.ndarray) -> np.ndarray:
    """M = D̃^{-1} (A + I), or D^{-1} A without self-loops  (eq-mean-aggregation)."""
    return A_tilde / A_tilde.sum(axis=1, keepdims=True)  # (n, n)


def gcn(A, X, labels=None) -> tuple[np.ndarray, AttentionGraph]:
    """Y = Â X with Â = D̃^{-1/2} (A + I) D̃^{-1/2}, returned as (Y, graph of Â)  (eq-gcn-propagation).

    The propagation of one GCN layer (Kipf & Welling 2017) with identity weights and no
    nonlinearity, as the worked example uses identity projections. ``X`` is (n, d); Y is (n, d).
    """
    A_hat = gcn_propagation(A)  # (n, n)
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    graph = AttentionGraph(A_hat, node_labels(labels, A_hat.shape[0]))
    return message_passing(graph, X), graph


def mean_aggregation(A, X, labels=None, *, self_loops: bool = True) -> tuple[np.ndarray, AttentionGraph]:
    """Y = D̃^{-1} (A + I) X: each node the average of itself and its neighbours  (eq-mean-aggregation).

    Returns (Y, graph of D̃^{-1}(A + I)). With ``self_loops=False`` the average is over the
    neighbours only, and a node without neighbours is refused.
    """
    _refuse_empty_rows(graph_mask(A, self_loops=self_loops), "mean aggregation", labels)
    M = mean_propagation(A, self_loops=self_loops)  # (n, n)
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    graph = AttentionGraph(M, node_labels(labels, M.shape[0]))
    return message_passing(graph, X), graph


GAT_NEGATIVE_SLOPE = 0.2  # the LeakyReLU slope of Veličković et al. (2018)


def leaky_relu(x, negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """LeakyReLU(x) = x for x ≥ 0, negative_slope · x below 0 (elementwise)."""
    x = np.asarray(x, dtype=float)  # same shape as x
    if not 0.0 <= negative_slope < 1.0:
        raise ValueError(f"negative_slope must be in [0, 1); got {negative_slope}")
    return np.where(x >= 0, x, negative_slope * x)  # same shape as x


def gat_parameters(d_in: int, d_out: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Θ (d_in, d_out) and a (2 d_out,), drawn once from ``rng`` (Glorot-scaled normals).

    They stand for trained parameters: fixed by the seed, so every build shows the same GAT.
    """
    as_rng(rng)
    d_in, d_out = as_int(d_in, "d_in"), as_int(d_out, "d_out")
    Theta = rng.normal(0.0, np.sqrt(2.0 / (d_in + d_out)), size=(d_in, d_out))  # (d_in, d_out)
    a = rng.normal(0.0, np.sqrt(2.0 / (2 * d_out + 1)), size=2 * d_out)  # (2 d_out,)
    return Theta, a


def gat_scores(X, Theta, a, negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """S^GAT_ij = LeakyReLU([x̃_i ‖ x̃_j] a) = LeakyReLU(x̃_i a₁ + x̃_j a₂), rows x̃_i of XΘ  (eq-gat-scores).

    ``X`` is (n, d_in), ``Theta`` (d_in, d_out), ``a`` (2 d_out,). Scores for every pair, shape (n, n).
    """
    X = as_matrix(X, "X", shape_doc="(n, d_in)")  # (n, d_in)
    Theta = as_matrix(Theta, "Theta", shape_doc="(d_in, d_out)")  # (d_in, d_out)
    a = as_matrix(np.reshape(a, (1, -1)), "a", shape_doc="(2 d_out,)")[0]  # (2 d_out,)
    check_same(X.shape[1], Theta.shape[0],
               "X and Theta must share d_in (columns of X, rows of Theta)")
    check_same(a.shape[0], 2 * Theta.shape[1], "a must have 2 d_out entries")
    return _gat_scores(X, Theta, a, negative_slope)  # (n, n)


def _gat_scores(X, Theta, a,
                negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """S^GAT_ij = LeakyReLU([x̃_i ‖ x̃_j] a) = LeakyReLU(x̃_i a₁ + x̃_j a₂), rows x̃_i of XΘ  (eq-gat-scores)."""
    H = X @ Theta  # (n, d_out)
    d_out = Theta.shape[1]
    src, dst = H @ a[:d_out], H @ a[d_out:]  # (n,), (n,)
    return leaky_relu(src[:, None] + dst[None, :], negative_slope)  # (n, n)


def gat(A, X, Theta, a, labels=None, *,
        negative_slope: float = GAT_NEGATIVE_SLOPE) -> tuple[np.ndarray, AttentionGraph]:
    """y_i = Σ_{j ∈ N̄(i)} W_ij x̃_j, W the softmax of S^GAT over N̄(i) = N(i) ∪ {i}, x̃ = XΘ  (eq-gat-scores).

    One attention head of a GAT layer (Veličković et al. 2018), without the output nonlinearity.
    Returns (Y, graph of W; the paper's α); Y is (n, d_out), in the space of X̃ = XΘ.
    """
    e = gat_scores(X, Theta, a, negative_slope)  # (n, n)
    alpha = softmax(e, graph_mask(A, self_loops=True))  # (n, n)
    H = as_matrix(X, "X") @ as_matrix(Theta, "Theta")  # (n, d_out)
    graph = AttentionGraph(alpha, node_labels(labels, alpha.shape[0]))
    return message_passing(graph, H), graph


def complete_attention(Q, K, V, labels=None) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(Q Kᵀ/√d) V on the complete graph, returned as (Y, graph of W)  (eq-message-passing)."""
    Y, W = attention(Q, K, V)  # (n, d_v), (n, n)
    if W.shape[0] != W.shape[1]:
        raise ValueError(f"a graph needs one query per key (self-attention); got W of shape {W.shape}")
    return Y, AttentionGraph(W, node_labels(labels, W.shape[0]))


def masked_attention(Q, K, V, A, labels=None, *,
                     self_loops: bool = True) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(Q Kᵀ/√d, mask = A (+ I)) V: attention restricted to the graph  (eq-neighbour-softmax).

    The attention of a Graph Transformer layer (Dwivedi & Bresson 2021): node i attends only to its
    neighbours in ``A`` (and to itself unless ``self_loops=False``). A node with nothing to attend to
    is refused with a ``ValueError``. Returns (Y, graph of W).
    """
    mask = graph_mask(A, self_loops=self_loops)  # (n, n)
    _refuse_empty_rows(mask, "masked attention", labels)
    return _masked_attention(Q, K, V, mask, node_labels(labels, mask.shape[0]))


def _masked_attention(Q, K, V, mask: np.ndarray,
                      labels) -> tuple[np.ndarray, AttentionGraph]:
    """Y = softmax(Q Kᵀ/√d, mask = A (+ I)) V: attention restricted to the graph  (eq-neighbour-softmax)."""
    Y, W = attention(Q, K, V, mask)  # (n, d_v), (n, n)
    return Y, AttentionGraph(W, labels)


def additive_mask_softmax(S, mask, fill: float = -1e9) -> np.ndarray:
    """softmax(S + F), F_ij = 0 where allowed and ``fill`` elsewhere: masking by a finite constant.

    A common implementation of masking, shown here to be measured against the exact mask: with a
    finite ``fill`` a masked key keeps the weight exp(S_ij + fill − m_i) / Z_i, which is not 0 when
    the scores spread by as much as ``abs(fill)``, and a row with no allowed key silently becomes an
    average over forbidden keys. ``fill = -inf`` is the exact masked softmax (and refuses that row).
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    allowed = np.asarray(mask)
    if allowed.dtype != np.bool_ or allowed.shape != S.shape:
        raise TypeError(f"mask must be a boolean array of shape {S.shape}; "
                        f"got {allowed.dtype} {allowed.shape}")
    if fill == -np.inf:
        return softmax(S, allowed)  # (n_q, n_k)
    if not np.isfinite(fill) or fill >= 0:
        raise ValueError(f"fill must be a negative number or -inf; got {fill}")
    return _additive_mask_softmax(S, allowed, fill)  # (n_q, n_k)


def _additive_mask_softmax(S: np.ndarray, allowed: np.ndarray,
                           fill: float) -> np.ndarray:
    """softmax(S + F), F_ij = 0 where allowed and ``fill`` elsewhere: masking by a finite constant."""
    F = np.where(allowed, 0.0, fill)  # (n_q, n_k)
    return softmax(S + F)  # (n_q, n_k)


def product_mask_softmax(S, mask) -> np.ndarray:
    """softmax(S ∘ M): masking by multiplying the scores by 0/1, the wrong way.

    A forbidden entry gets the score 0 instead of being removed, so it keeps a positive weight
    exp(0 − m_i) / Z_i: zero is a score, not an absent edge. Shown to be measured, not used.
    """
    S = as_matrix(S, "S", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    allowed = np.asarray(mask)
    if allowed.dtype != np.bool_ or allowed.shape != S.shape:
        raise TypeError(f"mask must be a boolean array of shape {S.shape}; "
                        f"got {allowed.dtype} {allowed.shape}")
    return softmax(S * allowed)  # (n_q, n_k)


def permutation_matrix(order) -> np.ndarray:
    """P with P[r, order[r]] = 1: (P X) lists the rows of X in ``order``. Shape (n, n).

    >>> permutation_matrix([2, 0, 1]) @ np.array([[10.0], [11.0], [12.0]])
    array([[12.],
           [10.],
           [11.]])
    """
    order = np.asarray(order)
    n = order.shape[0] if order.ndim == 1 else -1
    if order.dtype.kind not in "iu" or sorted(order.tolist()) != list(range(n)):
        raise ValueError(f"order must be a permutation of 0..n-1; got {order.tolist()}")
    P = np.zeros((n, n))  # (n, n)
    P[np.arange(n), order] = 1.0
    return P


def relabel(graph: AttentionGraph, order) -> AttentionGraph:
    """The same graph with its nodes listed in ``order``: adjacency P W Pᵀ, labels permuted."""
    P = permutation_matrix(order)  # (n, n)
    if P.shape[0] != graph.n:
        raise ValueError(f"order must permute the {graph.n} nodes; got {P.shape[0]}")
    return AttentionGraph(P @ graph.W @ P.T, tuple(graph.labels[k] for k in order))


# --------------------------------------------------------------------------------------------------
# Five models side by side.
# --------------------------------------------------------------------------------------------------

MODEL_NAMES: tuple[str, ...] = ("GCN", "mean", "GAT", "attention", "masked attention")


def five_models(X, A, rng: np.random.Generator, labels=None) -> dict[str, tuple[np.ndarray, AttentionGraph]]:
    """The same nodes X through five layers, each as (Y, graph), keyed by ``MODEL_NAMES``.

    GCN, mean aggregation and GAT run on the fixed graph ``A`` (self-loops added); attention runs on
    the complete graph with Q = K = V = X (identity projections, as in the worked example); masked
    attention is the same attention restricted to ``A`` plus self-loops. The GAT parameters are
    drawn from ``rng`` with d_out = d, so its outputs live in a space of the same dimension.
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    Theta, a = gat_parameters(X.shape[1], X.shape[1], rng)  # (d, d), (2 d,)
    return {
        "GCN": gcn(A, X, labels),
        "mean": mean_aggregation(A, X, labels),
        "GAT": gat(A, X, Theta, a, labels),
        "attention": complete_attention(X, X, X, labels),
        "masked attention": masked_attention(X, X, X, A, labels),
    }


def fixed_to_computed(X, A, t: float, labels=None) -> tuple[np.ndarray, AttentionGraph]:
    """W_ij ∝ exp(s x_i·x_j/√d) (M_ij + λ(1 − M_ij)), s = min(t, 1), λ = max(t − 1, 0), M = A + I.

    One path from a fixed graph to a computed one, on the same input X (Q = sX, K = V = X):
    t = 0 is mean aggregation on A + I (every score 0), t = 1 masked attention on A + I, t = 2
    attention on the complete graph (the edges off A + I weighted by λ = 1, like the others).
    Between 0 and 1 the query grows from 0 to X; between 1 and 2 the missing edges fade in.
    Returns (Y = W X, graph of W).
    """
    if isinstance(t, bool) or not isinstance(t, (int, float, np.integer, np.floating)):
        raise TypeError(f"t must be a real number in [0, 2]; got {type(t).__name__}")
    if not 0.0 <= float(t) <= 2.0:
        raise ValueError(f"t must be in [0, 2] (0 mean, 1 masked, 2 full attention); got {t!r}")
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    M = graph_mask(A)  # (n, n)
    check_same(M.shape[0], X.shape[0], "A must have one row per row of X")
    s, lam = min(float(t), 1.0), max(float(t) - 1.0, 0.0)
    with np.errstate(divide="ignore"):
        bias = np.where(M, 0.0, np.log(lam))  # (n, n): 0 on A + I, ln λ elsewhere (−∞ at λ = 0)
    W = softmax(scaled_scores(s * X, X) + bias)  # (n, n), −∞ is a masked entry
    return W @ X, AttentionGraph(W, node_labels(labels, X.shape[0]))


# --------------------------------------------------------------------------------------------------
# Exercises: GATv2, whose ranking of the keys depends on the query.
# --------------------------------------------------------------------------------------------------

def gatv2_scores(X, Theta, a, negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """S^GATv2_ij = aᵀ LeakyReLU([x_i ‖ x_j] Θ), GATv2 (Brody et al. 2022); shape (n, n).

    ``X`` is (n, d_in), ``Theta`` (2 d_in, d_out), ``a`` (d_out,): the nonlinearity comes before a.
    """
    X = as_matrix(X, "X", shape_doc="(n, d_in)")  # (n, d_in)
    Theta = as_matrix(Theta, "Theta", shape_doc="(2 d_in, d_out)")  # (2 d_in, d_out)
    a = as_matrix(np.reshape(a, (1, -1)), "a", shape_doc="(d_out,)")[0]  # (d_out,)
    check_same(Theta.shape[0], 2 * X.shape[1], "Theta must have 2 d_in rows")
    check_same(a.shape[0], Theta.shape[1], "a must have d_out entries")
    return _gatv2_scores(X, Theta, a, negative_slope)  # (n, n)


def _gatv2_scores(X, Theta, a,
                  negative_slope: float = GAT_NEGATIVE_SLOPE) -> np.ndarray:
    """S^GATv2_ij = aᵀ LeakyReLU([x_i ‖ x_j] Θ), GATv2 (Brody et al. 2022); shape (n, n)."""
    d_in = X.shape[1]
    src, dst = X @ Theta[:d_in], X @ Theta[d_in:]  # (n, d_out), (n, d_out)
    H = leaky_relu(src[:, None, :] + dst[None, :, :], negative_slope)  # (n, n, d_out)
    return H @ a  # (n, n)


def key_rankings(e) -> int:
    """How many different orders of the keys the rows of the scores ``e`` give (1: static).

    >>> key_rankings([[3.0, 1.0], [2.0, 0.0]])
    1
    """
    e = as_matrix(e, "e", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    order = np.argsort(-e, axis=1, kind="stable")  # (n_q, n_k), best key first
    return len({tuple(row) for row in order})


# --------------------------------------------------------------------------------------------------
# The chapter's equations and theorems, checked in SymPy. Each check also compares the package's
# floats with exact values, so a wrong implementation fails the check, not only a wrong formula.
# --------------------------------------------------------------------------------------------------


def _sym_softmax(S: sp.Matrix, allowed=None) -> sp.Matrix:
    """Exact neighbour softmax: exp(S_ij) / Σ_{l allowed} exp(S_il) where allowed, exactly 0 elsewhere."""

    def ok(i, j):
        return True if allowed is None else bool(allowed[i][j])

    rows = []
    for i in range(S.rows):
        Z = sum(sp.exp(S[i, m]) for m in range(S.cols) if ok(i, m))
        rows.append([sp.exp(S[i, j]) / Z if ok(i, j) else sp.Integer(0) for j in range(S.cols)])
    return sp.Matrix(rows)


def sym_scores(Q: sp.Matrix, K: sp.Matrix) -> sp.Matrix:
    return Q * K.T / sp.sqrt(Q.cols)


def _real(name: str, rows: int, cols: int) -> sp.Matrix:
    return sp.Matrix(rows, cols, lambda i, j: sp.Symbol(f"{name}_{i}{j}", real=True))



def _example():
    return embeddings(), path_adjacency(), PEOPLE


def _raises(fn, *args, **kwargs) -> bool:
    try:
        fn(*args, **kwargs)
    except ValueError:
        return True
    return False


# The displayed equations, as SymPy objects (glued by book/graph.md, evaluated by the checks).
_i, _j, _l = sp.symbols("i j l", integer=True, positive=True)
_n = sp.Symbol("n", integer=True, positive=True)
_A_, _M_, _S_, _W_ = (sp.IndexedBase(x) for x in ("A", "M", "S", "W"))
_y_, _v_, _e_ = (sp.IndexedBase(x) for x in ("y", "v", r"S^{\mathrm{GAT}}"))
# GAT's display in rows and columns: x̃_i and x̃_j, rows i and j of X Θ (1 × d′), the halves a₁, a₂ of a (d′ × 1).
_dp = sp.Symbol("d'", integer=True, positive=True)  # d′, the columns of Θ (d is a query's length)
_zi, _zj = (sp.MatrixSymbol(rf"\tilde{{x}}_{{{k}}}", 1, _dp) for k in "ij")
_a1, _a2 = (sp.MatrixSymbol(f"a_{{{k}}}", _dp, 1) for k in "12")
LeakyReLU = sp.Function(r"\operatorname{LeakyReLU}")
_Am, _Im = sp.MatrixSymbol("A", _n, _n), sp.MatrixSymbol("I", _n, _n)
_Dt = sp.MatrixSymbol(r"\tilde{D}", _n, _n)


def _at(expr, values: dict):
    """Replace each indexed x[a, b] of a display (indices from 1) by values[x.base](a − 1, b − 1)."""
    return expr.replace(lambda x: isinstance(x, sp.Indexed) and x.base in values,
                        lambda x: values[x.base](*[int(k) - 1 for k in x.indices]))


def _entries(display, n: int, values: dict, shape) -> sp.Matrix:
    """The display's right side for every (i, j) of ``shape``, its indexed symbols from ``values``."""
    rows, cols = shape
    return sp.Matrix(rows, cols, lambda r, c: _at(display.rhs.subs({_n: n, _i: r + 1, _j: c + 1}).doit(),
                                                  values))


def display_message_passing():
    return sp.Eq(_y_[_i], sp.Sum(sp.Mul(_A_[_i, _j], _v_[_j], evaluate=False), (_j, 1, _n)), evaluate=False)


def _display_gcn():
    half = sp.MatPow(_Dt, sp.Rational(-1, 2), evaluate=False)
    return sp.Eq(sp.MatrixSymbol(r"\hat{A}", _n, _n), sp.MatMul(half, sp.MatAdd(_Am, _Im), half, evaluate=False),
                 evaluate=False)


def display_mean_aggregation():
    inverse = sp.MatPow(_Dt, -1, evaluate=False)
    return sp.Eq(sp.MatrixSymbol(r"\bar{A}", _n, _n), sp.MatMul(inverse, sp.MatAdd(_Am, _Im), evaluate=False),
                 evaluate=False)


def _display_gat_scores():
    """S^GAT_ij = LeakyReLU(x̃_i a₁ + x̃_j a₂)  (eq-gat-scores): a row times a column, twice, one line."""
    score = sp.MatAdd(sp.MatMul(_zi, _a1), sp.MatMul(_zj, _a2), evaluate=False)  # 1 × 1
    return sp.Eq(_e_[_i, _j], LeakyReLU(score), evaluate=False)


def display_neighbour_softmax():
    num = sp.Mul(_M_[_i, _j], sp.exp(_S_[_i, _j]), evaluate=False)
    den = sp.Sum(sp.Mul(_M_[_i, _l], sp.exp(_S_[_i, _l]), evaluate=False), (_l, 1, _n))
    return sp.Eq(_W_[_i, _j], num / den, evaluate=False)


@derivation("eq-message-passing", display=display_message_passing,
            strength="verified", scope="for a symbolic weighted graph on 3 nodes")
def _check_message_passing():
    # The display, summed out on a sparse directed graph with symbolic weights (the zero terms are
    # the non-edges), is row i of the product A V, column by column.
    w = sp.symbols("w_0:4", positive=True)
    A = sp.Matrix([[w[0], w[1], 0], [0, 0, w[2]], [w[3], 0, 0]])
    V = _real("v", 3, 2)
    for c in range(2):
        values = {_A_: lambda a, b: A[a, b], _v_: lambda b, c=c: V[b, c]}
        yield sp.Eq(_entries(display_message_passing(), 3, values, (3, 1)), (A * V)[:, c], evaluate=False)
    # The package's edge-by-edge sum equals the exact product on an integer example.
    Ai, Vi = [[0, 2, 0], [1, 0, 3], [0, 0, 1]], [[1, -1], [2, 0], [0, 3]]
    yield close_to_exact(sp.Matrix(Ai) * sp.Matrix(Vi), message_passing(AttentionGraph(Ai, "abc"), Vi), atol=0)


@derivation("thm-attention-is-message-passing",
            strength="verified",
            scope="for symbolic Q and K with n = 3, d = 2; (3) and (4) on the worked example")
def _check_attention_is_message_passing():
    # General Q, K (n = 3, d = 2), real symbols.
    Q, K = _real("q", 3, 2), _real("k", 3, 2)
    W = _sym_softmax(sym_scores(Q, K))
    # Every weight is positive for every input: the graph of W is complete, self-loops included.
    for i in range(3):
        for j in range(3):
            yield W[i, j] > 0
    # Weighted: each node's out-weights sum to 1.
    for i in range(3):
        yield sp.Eq(sum(W.row(i)), 1)
    # Message passing on that graph, Σ over the edges i → j of W_ij v_j, is the attention output W V:
    # in symbols that is the definition of the matrix product, so it is checked where it can fail,
    # on the package's edge-by-edge message_passing (below).
    # Directed and input-dependent, on the worked example (exact): Ana → Carla ≠ Carla → Ana, and
    # doubling the inputs changes the weights.
    X, _, names = _example()
    Xs = sp.Matrix(X.astype(int))
    We = _sym_softmax(sym_scores(Xs, Xs))
    yield bool(sp.simplify(We[1, 0] - We[0, 1]) != 0)
    yield bool(sp.simplify(_sym_softmax(sym_scores(2 * Xs, 2 * Xs))[1, 0] - We[1, 0]) != 0)
    # The package: the layer's output is message passing on its graph, whose W is the exact one.
    Y_pkg, graph = complete_attention(X, X, X, names)
    yield len(graph.edges()) == len(names) ** 2
    yield close_to_exact(We, graph.W, atol=1e-13)
    yield close_to_exact(We * Xs, message_passing(graph, X), atol=1e-13)
    yield close_to_exact(We * Xs, Y_pkg, atol=1e-13)


def _with_degrees(A: sp.Matrix, self_loops: bool = True) -> dict:
    """Values for the displays: A, I and D̃ = diag((A + I) 1); without self-loops I = 0, D̃ = diag(A 1)."""
    n = A.rows
    At = A + sp.eye(n) if self_loops else A
    return {_Am: A, _Im: sp.eye(n) if self_loops else sp.zeros(n, n), _n: n,
            _Dt: sp.diag(*[sum(At.row(r)) for r in range(n)])}


@derivation("eq-gcn-propagation", display=_display_gcn,
            strength="verified", scope="for a symbolic weighted graph on 3 nodes and the path on 4")
def _check_gcn_propagation():
    # General symmetric weights on three nodes: the displayed Â has eigenvalue 1 with eigenvector
    # D̃^{1/2} 1 (so propagating does not blow up), and it is symmetric.
    a, b, c = sp.symbols("a b c", positive=True)
    values = _with_degrees(sp.Matrix([[0, a, b], [a, 0, c], [b, c, 0]]))
    A_hat = evaluate(_display_gcn().rhs, values)
    u = sp.Matrix([sp.sqrt(values[_Dt][r, r]) for r in range(3)])
    yield sp.Eq(A_hat * u, u, evaluate=False)
    yield sp.Eq(A_hat, A_hat.T, evaluate=False)
    # The worked example's path: the display is the entrywise (A + I)_ij / √(d_i d_j), and the package
    # computes it.
    _, A, _ = _example()
    values = _with_degrees(sp.Matrix(A.astype(int)))
    A_hat, At, D = evaluate(_display_gcn().rhs, values), values[_Am] + sp.eye(4), values[_Dt]
    yield sp.Eq(A_hat, sp.Matrix(4, 4, lambda i, j: At[i, j] / sp.sqrt(D[i, i] * D[j, j])), evaluate=False)
    yield close_to_exact(A_hat, gcn_propagation(A), atol=1e-13)


@derivation("eq-mean-aggregation", display=display_mean_aggregation,
            strength="verified", scope="for a symbolic weighted graph on 3 nodes and the path on 4")
def _check_mean_aggregation():
    # Weighted rows, general: the displayed D̃^{-1}(A + I) has rows summing to 1.
    w = sp.symbols("w_0:3", positive=True)
    A = sp.Matrix([[0, w[0], w[1]], [w[0], 0, 0], [w[1], 0, w[2]]])
    A_bar = evaluate(display_mean_aggregation().rhs, _with_degrees(A))
    for i in range(3):
        yield sp.Eq(sum(A_bar.row(i)), 1)
    # The path, with and without self-loops, exactly; an isolated node is refused without them.
    _, A, _ = _example()
    for loops in (True, False):
        A_bar = evaluate(display_mean_aggregation().rhs, _with_degrees(sp.Matrix(A.astype(int)), loops))
        yield close_to_exact(A_bar, mean_propagation(A, self_loops=loops), atol=1e-15)
    yield _raises(mean_propagation, np.zeros((2, 2)), self_loops=False)


def _gat_entries(display, Z: sp.Matrix, a: sp.Matrix, slope) -> sp.Matrix:
    """The display's S^GAT_ij for every (i, j): x̃_i, x̃_j the rows i, j of ``Z``, a₁, a₂ the halves of
    ``a``, the sum computed by ``evaluate`` and the LeakyReLU as max(x, slope x)."""
    (score,) = display.rhs.args
    if display.rhs.func != LeakyReLU:
        raise ValueError(f"the GAT display must apply LeakyReLU; got {display.rhs.func}")
    half = Z.cols

    def entry(r, c):
        values = {_zi: Z.row(r), _zj: Z.row(c), _a1: a[:half, :], _a2: a[half:, :], _dp: half}
        x = evaluate(score, values)[0, 0]
        return sp.Max(x, slope * x)

    return sp.Matrix(Z.rows, Z.rows, entry)


@derivation("eq-gat-scores", display=_display_gat_scores,
            strength="verified", scope="on the path on 4 nodes with rational Θ and a")
def _check_gat_scores():
    # In row-vector form, [x̃_i ‖ x̃_j] a = x̃_i a_1 + x̃_j a_2: the concatenation splits into a query
    # part and a key part (d′ = 2, symbolic).
    a_, u, v = _real("a", 4, 1), _real("u", 1, 2), _real("v", 1, 2)
    yield sp.Eq((u.row_join(v) * a_)[0], (u * a_[:2, :])[0] + (v * a_[2:, :])[0])
    # The display, with LeakyReLU(x) = max(x, x/5), on the worked example's path with X̃ = X Θ: the
    # package's scores; normalised over N̄(i) as the GAT paper does, the package's GAT layer.
    X, A, names = _example()
    Theta = sp.Matrix([[1, sp.Rational(-1, 2)], [sp.Rational(1, 3), 2]])
    a = sp.Matrix([sp.Rational(1, 2), -1, sp.Rational(3, 4), sp.Rational(1, 5)])
    Z = sp.Matrix(X.astype(int)) * Theta
    e = _gat_entries(_display_gat_scores(), Z, a, sp.Rational(1, 5))
    near = [[j for j in range(4) if A[i, j] > 0 or i == j] for i in range(4)]
    W = sp.Matrix(4, 4, lambda i, j: sp.exp(e[i, j]) / sum(sp.exp(e[i, k]) for k in near[i])
                  if j in near[i] else 0)
    Th, av = np.array(Theta, dtype=float), np.array(a, dtype=float).ravel()
    yield sp.nsimplify(GAT_NEGATIVE_SLOPE) == sp.Rational(1, 5)
    yield close_to_exact(e, gat_scores(X, Th, av, GAT_NEGATIVE_SLOPE), atol=1e-13)
    Y_pkg, graph = gat(A, X, Th, av, names)
    yield close_to_exact(W, graph.W, atol=1e-13)
    yield close_to_exact(W * Z, Y_pkg, atol=1e-13)


@derivation("eq-neighbour-softmax", display=display_neighbour_softmax,
            strength="verified", scope="for symbolic scores on the path on 4 nodes")
def _check_neighbour_softmax():
    # The display, summed out with M = A + I of the worked example's path and symbolic scores, is the
    # masked softmax: each row sums to 1 over N̄(i) and is 0 elsewhere. The package computes it.
    X, A, names = _example()
    allowed = graph_mask(A)
    M = sp.Matrix(allowed.astype(int))
    S = _real("s", 4, 4)
    values = {_M_: lambda r, c: M[r, c], _S_: lambda r, c: S[r, c]}
    W = _entries(display_neighbour_softmax(), 4, values, (4, 4))
    yield sp.Eq(W, _sym_softmax(S, allowed.tolist()), evaluate=False)
    for i in range(4):
        yield sp.Eq(sum(W[i, j] for j in range(4) if allowed[i, j]), 1)
    Xs = sp.Matrix(X.astype(int))
    exact = W.subs(dict(zip(S, sym_scores(Xs, Xs))))
    _, graph = masked_attention(X, X, X, A, names)
    yield close_to_exact(exact, graph.W, atol=1e-13)
    yield bool((graph.W[~allowed] == 0.0).all())


@derivation("thm-constant-scores-mean-aggregation",
            strength="proved",
            scope=("for a row of any number k of allowed keys (k symbolic); whole matrices exactly on "
                   "three 4-node masks"))
def _check_constant_scores():
    # One row with k allowed keys, all scored c: each gets 1/k whatever c is.
    # The softmax of k equal scores c, written as a sum over k keys (k symbolic), is 1/k.
    c = sp.Symbol("c", real=True)
    k, l = sp.Symbol("k", integer=True, positive=True), sp.Symbol("l", integer=True, positive=True)
    s = sp.IndexedBase("s")
    weight = sp.exp(s[1]) / sp.Sum(sp.exp(s[l]), (l, 1, k))
    yield sp.Eq(weight.replace(lambda x: isinstance(x, sp.Indexed), lambda x: c).doit(), 1 / k, evaluate=False)
    # Whole matrices: a different constant per row, on three masks (path with and without
    # self-loops, causal). The forbidden entries hold other values: they must not matter.
    _, A, _ = _example()
    cs = sp.symbols("c_0:4", real=True)
    junk = sp.symbols("z_0:4", real=True)
    for allowed in (graph_mask(A), graph_mask(A, self_loops=False), causal_mask(4)):
        deg = allowed.sum(axis=1)
        S = sp.Matrix(4, 4, lambda i, j, allowed=allowed: cs[i] if allowed[i, j] else junk[j])
        mean = sp.Matrix(4, 4, lambda i, j, allowed=allowed, deg=deg: sp.Rational(int(allowed[i, j]), int(deg[i])))
        yield sp.Eq(_sym_softmax(S, allowed.tolist()), mean, evaluate=False)
    # The package: constant scores through its softmax give its mean aggregation, and masked
    # attention with Q = 0 is mean aggregation of the values.
    for const in (0.0, -3.5, 1e6):
        yield bool(np.allclose(softmax(np.full((4, 4), const), graph_mask(A)), mean_propagation(A),
                               rtol=0, atol=1e-15))
    X = _example()[0]
    Y_zero_q, _ = masked_attention(np.zeros_like(X), X, X, A)
    yield bool(np.allclose(Y_zero_q, mean_aggregation(A, X)[0], rtol=0, atol=1e-15))


@derivation("thm-masked-softmax-neighbours",
            strength="verified", scope="for a row of 3 symbolic scores, and on the path on 4")
def _check_masked_softmax():
    s = sp.symbols("s_0:3", real=True)
    Lambda = sp.Symbol(r"\Lambda", positive=True)
    allowed = [[True, True, False]]
    exact = _sym_softmax(sp.Matrix([s]), allowed)
    # Adding -Λ to the forbidden score and letting Λ → ∞ gives the neighbour softmax: -∞ is the mask.
    finite = _sym_softmax(sp.Matrix([[s[0], s[1], s[2] - Lambda]]))
    for j in range(3):
        yield sp.Eq(sp.limit(finite[0, j], Lambda, sp.oo), exact[0, j])
    # The neighbours' weights do not depend on the forbidden score at all.
    for j in range(3):
        yield sp.Eq(sp.diff(exact[0, j], s[2]), 0)
    # Equivalently: the complete-graph weights renormalised over the neighbours.
    full = _sym_softmax(sp.Matrix([s]))
    for j in range(2):
        yield sp.Eq(exact[0, j], full[0, j] / (full[0, 0] + full[0, 1]))
    # softmax(S ∘ A) is another thing: the forbidden entry has score 0, so a positive weight.
    hadamard = _sym_softmax(sp.Matrix([[s[0], s[1], 0]]))
    yield hadamard[0, 2] > 0
    # On the worked example (path with self-loops), exactly: Diego gives Carla, not his neighbour,
    # the same weight as Bruno, who is; and the package computes that weight.
    X, A, _ = _example()
    allowed = graph_mask(A)
    Xs = sp.Matrix(X.astype(int))
    S = sym_scores(Xs, Xs)
    Wh = _sym_softmax(S.multiply_elementwise(sp.Matrix(allowed.astype(int))))
    yield sp.Eq(Wh[3, 0], Wh[3, 2])
    yield Wh[3, 0] > 0
    yield close_to_exact(Wh, product_mask_softmax(scaled_scores(X, X), allowed), atol=1e-13)


@derivation("thm-gat-is-masked-attention",
            strength="verified", scope="for symbolic scores and features on the path on 3 nodes")
def _check_gat_is_masked_attention():
    # Symbolic GAT with a general score matrix e on the path (n = 3): the paper's per-neighbourhood
    # normalisation equals the masked softmax of e with mask A + I, and the GAT output Σ W_ij x̃_j is
    # the masked attention layer with values H.
    e, H = _real("e", 3, 3), _real("h", 3, 2)
    A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    near = [[j for j in range(3) if A[i, j] or i == j] for i in range(3)]
    alpha = sp.Matrix(3, 3, lambda i, j: sp.exp(e[i, j]) / sum(sp.exp(e[i, k]) for k in near[i])
                      if j in near[i] else 0)
    W = _sym_softmax(e, graph_mask(A).tolist())
    yield sp.Eq(alpha, W, evaluate=False)
    Y = sp.Matrix(3, 2, lambda i, c: sum(alpha[i, j] * H[j, c] for j in near[i]))
    yield sp.Eq(Y, W * H, evaluate=False)
    # The package's gat against the paper's layer written out here (Veličković et al. 2018): scores
    # LeakyReLU(a · [x̃_i ‖ x̃_j]) with slope 1/5, normalised over N(i) ∪ {i}, on the worked example
    # with rational Θ and a; neither the package's softmax nor its mask is used on the exact side.
    X, Ap, names = _example()
    Theta_q = sp.Matrix([[1, -1], [sp.Rational(1, 2), 2]])
    a_q = [1, -2, sp.Rational(1, 2), 1]
    Xt = sp.Matrix(X.astype(int)) * Theta_q  # (4, 2): x̃_i as rows
    n = Xt.rows
    nbrs = [[j for j in range(n) if Ap[i][j] or i == j] for i in range(n)]

    def score(i, j):
        z = sum(a_q[c] * Xt[i, c] for c in range(2)) + sum(a_q[2 + c] * Xt[j, c] for c in range(2))
        return z if z >= 0 else sp.Rational(1, 5) * z

    alpha_x = sp.Matrix(n, n, lambda i, j: sp.exp(score(i, j)) / sum(sp.exp(score(i, k)) for k in nbrs[i])
                        if j in nbrs[i] else 0)
    Y_gat, graph = gat(Ap, X, np.array(Theta_q, dtype=float), np.array(a_q, dtype=float), names)
    yield close_to_exact(alpha_x, graph.W, atol=1e-14)
    yield close_to_exact(alpha_x * Xt, Y_gat, atol=1e-13)


@derivation("thm-causal-mask-lower-triangular",
            strength="verified", scope="for n = 3 symbolic scores; the mask for n up to 6")
def _check_causal():
    n = 3
    M = causal_mask(n)
    W = _sym_softmax(_real("s", n, n), M.tolist())
    # Lower-triangular weights, rows summing to 1, the first token attending to itself only.
    for i in range(n):
        for j in range(i + 1, n):
            yield sp.Eq(W[i, j], 0)
        yield sp.Eq(sum(W.row(i)), 1)
    yield sp.Eq(W[0, 0], 1)
    # The package's mask is the lower triangle with the diagonal, for several n.
    for m in range(1, 7):
        yield bool(np.array_equal(causal_mask(m), np.tril(np.ones((m, m))) == 1))
    # Without the diagonal the first token has nothing to attend to, and the package refuses it.
    X = _example()[0]
    yield _raises(masked_attention, X, X, X, causal_mask(4) & ~np.eye(4, dtype=bool), self_loops=False)


@derivation("thm-permutation-equivariance",
            strength="verified", scope="for independent symbolic Q, K, V (n = 3) and every permutation of 3")
def _check_permutation():
    # Independent symbolic Q, K, V (n = 3, d = 2, d_v = 2) and every permutation of the three tokens.
    Q, K, V = _real("q", 3, 2), _real("k", 3, 2), _real("v", 3, 2)
    W = _sym_softmax(sym_scores(Q, K))
    M = np.array([[1, 1, 0], [1, 1, 1], [0, 1, 1]])
    W_masked = _sym_softmax(sym_scores(Q, K), M.tolist())
    for order in itertools.permutations(range(3)):
        P = sp.Matrix(permutation_matrix(list(order)).astype(int))
        W_perm = _sym_softmax(sym_scores(P * Q, P * K))
        yield sp.Eq(W_perm, P * W * P.T, evaluate=False)
        yield sp.Eq(W_perm * (P * V), P * (W * V), evaluate=False)
        # With a mask, the mask is relabelled too: P M Pᵀ.
        Mp = (np.array(P, dtype=int) @ M @ np.array(P, dtype=int).T).tolist()
        yield sp.Eq(_sym_softmax(sym_scores(P * Q, P * K), Mp), P * W_masked * P.T, evaluate=False)
    # The package on the worked example: relabelling the people relabels the graph.
    Xn, A, names = _example()
    order4 = [3, 1, 0, 2]
    Pn = permutation_matrix(order4)
    Y, graph = complete_attention(Xn, Xn, Xn, names)
    Y_p, graph_p = complete_attention(Pn @ Xn, Pn @ Xn, Pn @ Xn, [names[k] for k in order4])
    yield bool(np.allclose(graph_p.W, relabel(graph, order4).W, rtol=0, atol=1e-15))
    yield bool(np.allclose(Y_p, Pn @ Y, rtol=0, atol=1e-15))
