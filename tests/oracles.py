"""The tests' independent implementations (oracles), in plain NumPy, SciPy and networkx: one of each.

The package is checked against these, never against itself. They share no code with
``attention_graph``: the softmax is :func:`scipy.special.softmax`, the masks are applied by
``np.where``. Row-vector convention: Q is (n_q, d), K is (n_k, d), V is (n_k, d_v).
"""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import scipy.special

# The worked example's embeddings, typed once from the series (part 10), not read from the package:
# one row per person, Carla, Ana, Bruno, Diego. (4, 2)
X_WORKED = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [1.0, -1.0]])
X_WORKED.setflags(write=False)  # shared by every test: a test that needs to change it copies it


def softmax(S, mask=None) -> np.ndarray:
    """Row-wise softmax of S (…, n_k); with ``mask``, over the True entries only, 0 elsewhere."""
    S = np.asarray(S, dtype=float)
    if mask is not None:
        S = np.where(np.asarray(mask, dtype=bool), S, -np.inf)
    return scipy.special.softmax(S, axis=-1)


def scaled_scores(Q, K) -> np.ndarray:
    """S = Q Kᵀ / √d. (n_q, n_k)."""
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    return Q @ K.T / np.sqrt(Q.shape[-1])


def attention(Q, K, V, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Y = softmax(Q Kᵀ/√d) V and W, the weights. ((n_q, d_v), (n_q, n_k))."""
    W = softmax(scaled_scores(Q, K), mask)
    return W @ np.asarray(V, dtype=float), W


def edges_mask(edges, n_q: int, n_k: int) -> np.ndarray:
    """M[i, j] = True exactly on the rows (i, j) of ``edges``. (n_q, n_k)."""
    edges = np.asarray(edges)
    M = np.zeros((n_q, n_k), dtype=bool)
    M[edges[:, 0], edges[:, 1]] = True
    return M


def central_difference(loss, X, h: float = 1e-6) -> np.ndarray:
    """∂loss/∂X by central differences, entry by entry: (loss(X + h e) − loss(X − h e)) / 2h."""
    X = np.array(X, dtype=float)
    grad = np.zeros_like(X)
    for index in np.ndindex(X.shape):
        old = X[index]
        X[index] = old + h
        up = loss(X.copy())
        X[index] = old - h
        down = loss(X.copy())
        X[index] = old
        grad[index] = (up - down) / (2 * h)
    return grad



def assert_gradients(loss_and_grads, params: dict, atol: float = 1e-8) -> None:
    """Every gradient loss_and_grads(params) returns, (L, {name: dL/dP}), against central differences."""
    _, grads = loss_and_grads(params)
    assert set(grads) == set(params)
    for name, P in params.items():
        numeric = central_difference(lambda M, name=name: loss_and_grads({**params, name: M})[0], P)
        np.testing.assert_allclose(grads[name], numeric, atol=atol, err_msg=name)

# --- Multi-head attention, the Transformer block, attention patterns (PyTorch layout, networkx) ----

def multi_head(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """Multi-head attention the PyTorch way: reshape to (n, H, d_h), one einsum for all heads."""
    n_q, d = np.shape(X_q)
    n_k = np.shape(X_kv)[0]
    d_h = d // n_heads
    Q = (X_q @ W_Q).reshape(n_q, n_heads, d_h).transpose(1, 0, 2)  # (H, n_q, d_h)
    K = (X_kv @ W_K).reshape(n_k, n_heads, d_h).transpose(1, 0, 2)  # (H, n_k, d_h)
    V = (X_kv @ W_V).reshape(n_k, n_heads, d_h).transpose(1, 0, 2)  # (H, n_k, d_h)
    S = np.einsum("hqc,hkc->hqk", Q, K) / math.sqrt(d_h)  # (H, n_q, n_k)
    if mask is not None:
        S = np.where(mask[None], S, -np.inf)
    W = softmax(S)  # (H, n_q, n_k)
    Y_heads = np.einsum("hqk,hkc->qhc", W, V).reshape(n_q, d)  # (n_q, d)
    return Y_heads @ W_O, W


def layer_norm(X, gamma, beta, eps=1e-5) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    return gamma * (X - X.mean(axis=1, keepdims=True)) / np.sqrt(X.var(axis=1, keepdims=True) + eps) + beta


def block(X, p, norm_first=True, mask=None) -> np.ndarray:
    """The Transformer block from its definition, with the oracles above."""
    def mha(Z):
        return multi_head(Z, Z, p.W_Q, p.W_K, p.W_V, p.W_O, p.n_heads, mask)[0]

    def ffn(Z):
        return np.maximum(Z @ p.W_1 + p.b_1, 0.0) @ p.W_2 + p.b_2

    if norm_first:
        H = X + mha(layer_norm(X, p.gamma_1, p.beta_1))
        return H + ffn(layer_norm(H, p.gamma_2, p.beta_2))
    H = layer_norm(X + mha(X), p.gamma_1, p.beta_1)
    return layer_norm(H + ffn(H), p.gamma_2, p.beta_2)


def torch_encoder_layer(state: dict, X, n_heads: int, norm_first: bool) -> np.ndarray:
    """PyTorch's nn.TransformerEncoderLayer forward (ReLU, dropout off, eps 1e-5), in PyTorch's own
    layout and names: nn.Linear computes x Aᵀ + b, in_proj_weight stacks the q, k, v projections."""
    d = X.shape[1]

    def linear(x, name):
        b = state.get(name + ".bias")
        return x @ state[name + ".weight"].T + (0.0 if b is None else b)

    def norm(x, name):
        b = state.get(name + ".bias")
        return layer_norm(x, state[name + ".weight"], 0.0 if b is None else b)

    def self_attn(x):
        w, b = state["self_attn.in_proj_weight"], state.get("self_attn.in_proj_bias", np.zeros(3 * d))
        q, k, v = (x @ w[s * d:(s + 1) * d].T + b[s * d:(s + 1) * d] for s in range(3))
        n, d_h = x.shape[0], d // n_heads
        q, k, v = (t.reshape(n, n_heads, d_h).transpose(1, 0, 2) for t in (q, k, v))
        attn = softmax(q @ k.transpose(0, 2, 1) / math.sqrt(d_h))
        out = (attn @ v).transpose(1, 0, 2).reshape(n, d)
        return linear(out, "self_attn.out_proj")

    def ff(x):
        return linear(np.maximum(linear(x, "linear1"), 0.0), "linear2")

    if norm_first:
        x = X + self_attn(norm(X, "norm1"))
        return x + ff(norm(x, "norm2"))
    x = norm(X + self_attn(X), "norm1")
    return norm(x + ff(x), "norm2")


def digraph_of_messages(edges, n: int) -> nx.DiGraph:
    """A networkx DiGraph with an arc j → i for every edge (i, j): the direction messages travel."""
    G = nx.DiGraph()
    G.add_nodes_from(range(n))
    G.add_edges_from((int(j), int(i)) for i, j in edges)
    return G


def max_path_length(edges, n: int, n_layers: int = 1) -> int:
    """The diameter over connected pairs of the n_layers-th power of the graph, by networkx."""
    G = digraph_of_messages(edges, n)
    if n_layers > 1:
        A = nx.to_numpy_array(G, nodelist=range(n), weight=None) + np.eye(n)  # self-loops: waiting
        P = np.linalg.matrix_power((A > 0).astype(np.int64), n_layers) > 0
        G = nx.from_numpy_array(P.astype(int), create_using=nx.DiGraph)
    lengths = dict(nx.all_pairs_shortest_path_length(G))
    return max(max(row.values()) for row in lengths.values())


# --- Sequences: biased attention (PyTorch's reference, in NumPy) ------------------------------------

def biased_attention(Q, K, V, B, mask=None):
    """softmax(Q Kᵀ/√d + B) V: PyTorch's scaled_dot_product_attention with a float attn_mask B (its
    documented reference: attn_weight = softmax(q kᵀ · scale + attn_bias)), here in NumPy."""
    S = scaled_scores(Q, K) + np.asarray(B, dtype=float)
    W = softmax(S, mask)
    return W @ np.asarray(V, dtype=float), W
