"""The whole Transformer block: multi-head self-attention and a ReLU feed-forward network, each with
a residual connection and a layer normalisation, pre-LN or post-LN.

Row-vector convention: X @ W. Read as message passing (Gilmer et al. 2017), the attention sublayer is
message and aggregation, the residual a self-loop that bypasses the messages, layer normalisation and
the feed-forward network node-wise updates. The chapter ``book/block.md`` derives it; the SymPy checks
behind its labels are registered here. :func:`params_from_torch` maps the state dict of PyTorch's
``nn.TransformerEncoderLayer`` onto :class:`BlockParams` (torch itself is not needed).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np
import sympy as sp

from . import registry
from .multihead import exact_heads, multi_head_attention
from .registry import close_to_exact, derivation, symbol_matrix
from .validation import as_int, as_matrix, as_rng

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["BlockParams", "block_weights", "feed_forward", "init_block_params", "layer_norm",
           "params_from_torch", "params_to_torch", "transformer_block"]

LN_EPS = 1e-5  # PyTorch's default eps of nn.LayerNorm


@dataclass(frozen=True)
class BlockParams:
    """The weights of one block, named as in the book; row-vector convention (X @ W).

    ``W_Q``, ``W_K``, ``W_V``, ``W_O``: (d, d) attention projections, no biases;
    ``W_1`` (d, d_ff), ``b_1`` (d_ff,), ``W_2`` (d_ff, d), ``b_2`` (d,): the feed-forward
    network; ``gamma_1``, ``beta_1`` (d,): gain and bias of the layer norm of the attention
    sublayer; ``gamma_2``, ``beta_2`` (d,): of the feed-forward sublayer; ``n_heads``: H,
    which must divide d.
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    gamma_1: np.ndarray
    beta_1: np.ndarray
    gamma_2: np.ndarray
    beta_2: np.ndarray
    n_heads: int


def _vector(x, name: str, length: int) -> np.ndarray:
    arr = as_matrix(np.asarray(x)[None, :] if np.ndim(x) == 1 else x, name, shape_doc=f"({length},)")
    if arr.shape != (1, length):
        raise ValueError(f"{name} must be a vector of shape ({length},); got shape {np.shape(x)}")
    return arr[0]  # (length,)


def layer_norm(X, gamma, beta, eps: float = LN_EPS) -> np.ndarray:
    """LN(x) = γ ⊙ (x − μ)/√(σ² + ε) + β, row by row, μ and σ² the row's mean and variance  (eq-layer-norm).

    ``X`` is (n, d); ``gamma`` and ``beta`` are (d,). σ² divides by d (as PyTorch's ``nn.LayerNorm``).

    >>> layer_norm([[1.0, 3.0]], [1.0, 1.0], [0.0, 0.0], eps=0.0)
    array([[-1.,  1.]])
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    d = X.shape[1]
    gamma, beta = _vector(gamma, "gamma", d), _vector(beta, "beta", d)  # (d,), (d,)
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not eps >= 0:
        raise ValueError(f"eps must be a real number >= 0; got {eps!r}")
    if d == 0:
        raise ValueError("X has d = 0 columns: a row with no entries has no mean")
    mu = X.mean(axis=1, keepdims=True)  # (n, 1)
    var = ((X - mu) ** 2).mean(axis=1, keepdims=True)  # (n, 1)
    if eps == 0 and (var == 0).any():
        raise ValueError("a row of X is constant and eps = 0: (x − μ)/√σ² divides by zero")
    dtype = np.result_type(X, gamma, beta)
    return ((X - mu) / np.sqrt(var + eps) * gamma + beta).astype(dtype, copy=False)  # (n, d)


def feed_forward(X, W_1, b_1, W_2, b_2) -> np.ndarray:
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2, row by row  (eq-ffn).

    >>> feed_forward([[1.0, -1.0]], [[1.0], [1.0]], [0.5], [[2.0, 0.0]], [0.0, 1.0])
    array([[1., 1.]])
    """
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    W_1 = as_matrix(W_1, "W_1", shape_doc="(d, d_ff)")  # (d, d_ff)
    W_2 = as_matrix(W_2, "W_2", shape_doc="(d_ff, d)")  # (d_ff, d)
    if W_1.shape[0] != X.shape[1]:
        raise ValueError(f"W_1 must have one row per column of X (d = {X.shape[1]}); got {W_1.shape}")
    if W_2.shape != (W_1.shape[1], X.shape[1]):
        raise ValueError(f"W_2 must have shape (d_ff, d) = {(W_1.shape[1], X.shape[1])}; got {W_2.shape}")
    b_1, b_2 = _vector(b_1, "b_1", W_1.shape[1]), _vector(b_2, "b_2", X.shape[1])  # (d_ff,), (d,)
    hidden = np.maximum(X @ W_1 + b_1, 0)  # (n, d_ff)
    return hidden @ W_2 + b_2  # (n, d)


def _checked(params) -> BlockParams:
    if not isinstance(params, BlockParams):
        raise TypeError(f"params must be a BlockParams; got {type(params).__name__} (build one with "
                        "BlockParams(**fields), params_from_torch or init_block_params)")
    return _validated(params)


def transformer_block(X, params: BlockParams, *, norm_first: bool = True, mask=None) -> np.ndarray:
    """Pre-LN: H = X + MHA(LN_1(X)), Y = H + FFN(LN_2(H)); post-LN: H = LN_1(X + MHA(X)),
    Y = LN_2(H + FFN(H))  (eq-pre-ln, eq-post-ln).

    ``X`` is (n, d); ``params`` a :class:`BlockParams`; MHA is :func:`multi_head_attention` (self-
    attention, ``mask`` (n, n) boolean, True where i may attend to j); LN is :func:`layer_norm` with
    eps 1e-5; FFN is :func:`feed_forward`. ``norm_first=True`` is the pre-LN block of most current
    models, ``False`` the post-LN block of the original Transformer. Returns Y (n, d).

    >>> p = init_block_params(4, 8, 2, np.random.default_rng(0))
    >>> transformer_block(np.eye(3, 4), p).shape
    (3, 4)
    """
    p = _checked(params)
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    d = np.shape(p.W_Q)[0]
    if X.shape[1] != d:
        raise ValueError(f"X must have d = {d} columns, the size of params.W_Q (d, d); got X of "
                         f"shape {X.shape}")
    if not isinstance(norm_first, bool):
        raise TypeError(f"norm_first must be True (pre-LN) or False (post-LN); got {norm_first!r}")

    def mha(Z):  # (n, d) -> (n, d)
        return multi_head_attention(Z, Z, p.W_Q, p.W_K, p.W_V, p.W_O, p.n_heads, mask)[0]

    def ffn(Z):  # (n, d) -> (n, d)
        return feed_forward(Z, p.W_1, p.b_1, p.W_2, p.b_2)

    def ln_1(Z):  # (n, d) -> (n, d)
        return layer_norm(Z, p.gamma_1, p.beta_1)

    def ln_2(Z):  # (n, d) -> (n, d)
        return layer_norm(Z, p.gamma_2, p.beta_2)

    return wire_block(X, mha, ln_1, ln_2, ffn, norm_first)  # (n, d)


def block_weights(X, params: BlockParams, *, norm_first: bool = True, mask=None) -> np.ndarray:
    """W⁽ʰ⁾ = softmax(Q_h K_hᵀ/√d_h) of the block's attention sublayer, Q = Z W_Q, K = Z W_K, with
    Z = LN_1(X) in the pre-LN block and Z = X in the post-LN block. Shape (H, n, n).

    >>> p = init_block_params(4, 8, 2, np.random.default_rng(0))
    >>> block_weights(np.eye(3, 4), p).shape
    (2, 3, 3)
    """
    p = _checked(params)
    X = as_matrix(X, "X", shape_doc="(n, d)")  # (n, d)
    if not isinstance(norm_first, bool):
        raise TypeError(f"norm_first must be True (pre-LN) or False (post-LN); got {norm_first!r}")
    Z = layer_norm(X, p.gamma_1, p.beta_1) if norm_first else X  # (n, d)
    return multi_head_attention(Z, Z, p.W_Q, p.W_K, p.W_V, p.W_O, p.n_heads, mask)[1]  # (H, n, n)


def wire_block(X, mha, ln_1, ln_2, ffn, norm_first: bool):
    """The block's wiring, shared by the package, the exact check and the display."""
    if norm_first:
        X_prime = X + mha(ln_1(X))  # (n, d): X'; the residual bypasses LN, attention
        return X_prime + ffn(ln_2(X_prime))  # (n, d): Y
    X_prime = ln_1(X + mha(X))  # (n, d): X'
    return ln_2(X_prime + ffn(X_prime))  # (n, d): Y


def init_block_params(d: int, d_ff: int, n_heads: int, rng: np.random.Generator) -> BlockParams:
    """Seeded weights: projections N(0, 1/fan-in), biases N(0, 0.1²), γ near 1 and β near 0."""
    rng = as_rng(rng)
    d, d_ff, n_heads = as_int(d, "d"), as_int(d_ff, "d_ff"), as_int(n_heads, "n_heads")
    if d % n_heads:
        raise ValueError(f"d = {d} is not divisible into n_heads = {n_heads} heads of equal width")
    W_Q, W_K, W_V, W_O = rng.standard_normal((4, d, d)) / np.sqrt(d)  # 4 × (d, d)
    return BlockParams(W_Q=W_Q, W_K=W_K, W_V=W_V, W_O=W_O,
                       W_1=rng.standard_normal((d, d_ff)) / np.sqrt(d),  # (d, d_ff)
                       b_1=0.1 * rng.standard_normal(d_ff),  # (d_ff,)
                       W_2=rng.standard_normal((d_ff, d)) / np.sqrt(d_ff),  # (d_ff, d)
                       b_2=0.1 * rng.standard_normal(d),  # (d,)
                       gamma_1=1 + 0.1 * rng.standard_normal(d), beta_1=0.1 * rng.standard_normal(d),
                       gamma_2=1 + 0.1 * rng.standard_normal(d), beta_2=0.1 * rng.standard_normal(d),
                       n_heads=int(n_heads))


# PyTorch's names → the book's. torch.nn.Linear computes x Aᵀ + b, so every weight is transposed.
TORCH_NAMES = {
    "self_attn.in_proj_weight": "W_Q, W_K, W_V: rows [0, d), [d, 2d), [2d, 3d), each transposed",
    "self_attn.out_proj.weight": "W_O, transposed",
    "linear1.weight": "W_1, transposed", "linear1.bias": "b_1",
    "linear2.weight": "W_2, transposed", "linear2.bias": "b_2",
    "norm1.weight": "gamma_1", "norm1.bias": "beta_1",
    "norm2.weight": "gamma_2", "norm2.bias": "beta_2",
}


def params_from_torch(state: dict, n_heads: int) -> BlockParams:
    """:class:`BlockParams` from the state dict of ``torch.nn.TransformerEncoderLayer``.

    ``state`` maps PyTorch's names to arrays (``{k: v.numpy() for k, v in layer.state_dict().items()}``,
    with ``batch_first`` either way, ``activation="relu"``, ``layer_norm_eps=1e-5``); ``n_heads`` is
    the layer's ``nhead``. The attention biases ``self_attn.in_proj_bias`` and
    ``self_attn.out_proj.bias`` must be absent or zero (this block has none); a missing feed-forward
    or norm bias (``bias=False``) is read as zero. Run the result with the layer's ``norm_first``.

    >>> d, f = 2, 3
    >>> state = {"self_attn.in_proj_weight": np.arange(3 * d * d).reshape(3 * d, d),
    ...          "self_attn.out_proj.weight": np.eye(d), "linear1.weight": np.ones((f, d)),
    ...          "linear2.weight": np.ones((d, f)), "norm1.weight": np.ones(d),
    ...          "norm2.weight": np.ones(d)}
    >>> params_from_torch(state, n_heads=1).W_K
    array([[4., 6.],
           [5., 7.]])
    """
    if not isinstance(state, dict):
        raise TypeError(f"state must be a dict of arrays (a state dict); got {type(state).__name__}")
    required = ["self_attn.in_proj_weight", "self_attn.out_proj.weight", "linear1.weight",
                "linear2.weight", "norm1.weight", "norm2.weight"]
    missing = [k for k in required if k not in state]
    if missing:
        raise ValueError(f"state lacks {missing}: not the state dict of a TransformerEncoderLayer")
    in_proj = as_matrix(state["self_attn.in_proj_weight"], "state['self_attn.in_proj_weight']",
                        shape_doc="(3d, d)")  # (3d, d)
    d = in_proj.shape[1]
    if in_proj.shape != (3 * d, d):
        raise ValueError(f"state['self_attn.in_proj_weight'] must have shape (3d, d) = {(3 * d, d)}; "
                         f"got {in_proj.shape}")
    for k in ("self_attn.in_proj_bias", "self_attn.out_proj.bias"):
        if k in state and np.any(np.asarray(state[k]) != 0):
            raise ValueError(f"state[{k!r}] is not zero: this block has no attention biases (build the "
                             "PyTorch layer with bias=False, or fold the biases in yourself)")
    W_1 = as_matrix(state["linear1.weight"], "state['linear1.weight']", shape_doc="(d_ff, d)").T  # (d, d_ff)
    d_ff = W_1.shape[1]

    def get(key, length):  # a bias, zero when absent
        return np.asarray(state[key], dtype=float) if key in state else np.zeros(length)  # (length,)

    params = BlockParams(
        W_Q=in_proj[:d].T, W_K=in_proj[d:2 * d].T, W_V=in_proj[2 * d:].T,  # (d, d) each
        W_O=as_matrix(state["self_attn.out_proj.weight"], "state['self_attn.out_proj.weight']",
                      shape_doc="(d, d)").T,  # (d, d)
        W_1=W_1, b_1=get("linear1.bias", d_ff),
        W_2=as_matrix(state["linear2.weight"], "state['linear2.weight']", shape_doc="(d, d_ff)").T,
        b_2=get("linear2.bias", d),
        gamma_1=np.asarray(state["norm1.weight"], dtype=float), beta_1=get("norm1.bias", d),
        gamma_2=np.asarray(state["norm2.weight"], dtype=float), beta_2=get("norm2.bias", d),
        n_heads=n_heads)
    return _validated(params)


def params_to_torch(params: BlockParams) -> dict[str, np.ndarray]:
    """The inverse of :func:`params_from_torch`: a state dict in the layout of PyTorch's
    ``nn.TransformerEncoderLayer`` (attention biases zero), to load with ``load_state_dict`` after
    ``torch.from_numpy``.

    >>> sorted(params_to_torch(init_block_params(2, 3, 1, np.random.default_rng(0))))[:3]
    ['linear1.bias', 'linear1.weight', 'linear2.bias']
    """
    p = _checked(params)
    d = np.shape(p.W_Q)[0]
    return {"self_attn.in_proj_weight": np.vstack([p.W_Q.T, p.W_K.T, p.W_V.T]),  # (3d, d)
            "self_attn.in_proj_bias": np.zeros(3 * d),  # (3d,)
            "self_attn.out_proj.weight": p.W_O.T, "self_attn.out_proj.bias": np.zeros(d),
            "linear1.weight": p.W_1.T, "linear1.bias": p.b_1,  # (d_ff, d), (d_ff,)
            "linear2.weight": p.W_2.T, "linear2.bias": p.b_2,  # (d, d_ff), (d,)
            "norm1.weight": p.gamma_1, "norm1.bias": p.beta_1,
            "norm2.weight": p.gamma_2, "norm2.bias": p.beta_2}


def _validated(p: BlockParams) -> BlockParams:
    """Check every field's shape against d = W_Q's size and d_ff = W_1's columns."""
    d = as_matrix(p.W_Q, "params.W_Q", shape_doc="(d, d)").shape[0]
    d_ff = as_matrix(p.W_1, "params.W_1", shape_doc="(d, d_ff)").shape[1]
    shapes = {"W_Q": (d, d), "W_K": (d, d), "W_V": (d, d), "W_O": (d, d), "W_1": (d, d_ff),
              "b_1": (d_ff,), "W_2": (d_ff, d), "b_2": (d,), "gamma_1": (d,), "beta_1": (d,),
              "gamma_2": (d,), "beta_2": (d,)}
    for f in fields(p):
        if f.name in shapes and np.shape(getattr(p, f.name)) != shapes[f.name]:
            raise ValueError(f"params.{f.name} must have shape {shapes[f.name]}; "
                             f"got {np.shape(getattr(p, f.name))}")
    n_heads = as_int(p.n_heads, "params.n_heads")
    if d % n_heads:
        raise ValueError(f"d = {d} is not divisible into n_heads = {n_heads} heads of equal width")
    return p


# --------------------------------------------------------------------------------------------------
# Displays and the SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

_F = {name: sp.Function(name) for name in ("MHA", "LN_1", "LN_2", "FFN")}


def _display_block(norm_first: bool):
    """Pre-LN X' = X + MHA(LN_1(X)), Y = X' + FFN(LN_2(X')); post-LN X' = LN_1(X + MHA(X)),
    Y = LN_2(X' + FFN(X'))  (eq-pre-ln, eq-post-ln): the block in two named steps, as the page shows it."""
    X, X_, Y = sp.Symbol("X"), sp.Symbol("X'"), sp.Symbol("Y")
    MHA, LN_1, LN_2, FFN = (_F[name] for name in ("MHA", "LN_1", "LN_2", "FFN"))
    if norm_first:
        steps = (sp.Eq(X_, sp.Add(X, MHA(LN_1(X)), evaluate=False), evaluate=False),
                 sp.Eq(Y, sp.Add(X_, FFN(LN_2(X_)), evaluate=False), evaluate=False))
    else:
        steps = (sp.Eq(X_, LN_1(sp.Add(X, MHA(X), evaluate=False)), evaluate=False),
                 sp.Eq(Y, LN_2(sp.Add(X_, FFN(X_), evaluate=False)), evaluate=False))
    return registry.Steps(*steps)


def _display_layer_norm():
    l, d = sp.symbols("l d", integer=True, positive=True)
    x, gamma, beta = sp.IndexedBase("x"), sp.IndexedBase("gamma"), sp.IndexedBase("beta")
    mu, sigma, eps = sp.symbols("mu sigma epsilon", positive=True)
    lhs = sp.Indexed(sp.IndexedBase(r"\operatorname{LN}(x)"), l)
    centred = sp.Add(x[l], -mu, evaluate=False) / sp.sqrt(sigma**2 + eps)
    rhs = sp.Add(sp.Mul(gamma[l], centred, evaluate=False), beta[l], evaluate=False)
    return sp.Eq(lhs, rhs, evaluate=False)


def _display_ffn():
    x, W_1, b_1, W_2, b_2 = (sp.Symbol(s, commutative=False) for s in ("x", "W_1", "b_1", "W_2", "b_2"))
    relu = sp.Function(r"\max")(0, sp.Add(x * W_1, b_1, evaluate=False))
    return sp.Eq(sp.Function("FFN")(sp.Symbol("x")), sp.Add(relu * W_2, b_2, evaluate=False),
                 evaluate=False)


_EPS_EXACT = sp.Rational(1, 100000)  # PyTorch's ε = 1e-5, exactly


def exact_ln(X: sp.Matrix, gamma, beta, eps=_EPS_EXACT) -> sp.Matrix:
    d = X.cols
    out = []
    for r in range(X.rows):
        row = X.row(r)
        mu = sum(row) / d
        var = sum((v - mu) ** 2 for v in row) / d
        out.append([gamma[c] * (row[c] - mu) / sp.sqrt(var + eps) + beta[c] for c in range(d)])
    return sp.Matrix(out)


def _exact_ffn(X: sp.Matrix, W_1, b_1, W_2, b_2) -> sp.Matrix:
    Z = X * W_1 + sp.ones(X.rows, 1) * sp.Matrix([b_1])
    return Z.applyfunc(lambda z: sp.Max(0, z)) * W_2 + sp.ones(X.rows, 1) * sp.Matrix([b_2])


_Q = sp.Rational
_P = dict(W_Q=sp.Matrix([[1, 0, 1, 0], [0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 1, -1]]),
          W_K=sp.Matrix([[0, 1, 0, 0], [1, 0, 1, 0], [0, 0, 1, 1], [1, 0, 0, 0]]),
          W_V=sp.Matrix([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]]),
          W_O=sp.Matrix([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 1, 0], [0, 1, 0, 1]]),
          W_1=sp.Matrix([[1, -1, 0], [0, 1, 1], [1, 0, -1], [0, 1, 0]]), b_1=[_Q(1, 2), -1, 0],
          W_2=sp.Matrix([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 2, 1]]), b_2=[0, _Q(1, 4), 0, -1],
          gamma_1=[1, 2, 1, _Q(1, 2)], beta_1=[0, 1, 0, -1], gamma_2=[2, 1, 1, 1], beta_2=[1, 0, 0, 0])
_X_BLOCK = sp.Matrix([[1, 0, 2, -1], [0, 1, 1, 1], [2, 1, 0, 0]])


def _params_float() -> BlockParams:
    return BlockParams(n_heads=2, **{k: np.array(v, dtype=float) for k, v in _P.items()})


def _exact_sublayers(eps=_EPS_EXACT):
    """MHA, LN_1, LN_2 and FFN of the example in 40-digit arithmetic (nested radicals inside
    exponentials would otherwise grow without bound)."""
    def mha(Z):
        heads = exact_heads(Z, Z, _P["W_Q"], _P["W_K"], _P["W_V"], 2)
        return (sp.Matrix.hstack(*heads) * _P["W_O"]).evalf(40)

    return (mha, lambda Z: exact_ln(Z, _P["gamma_1"], _P["beta_1"], eps).evalf(40),
            lambda Z: exact_ln(Z, _P["gamma_2"], _P["beta_2"], eps).evalf(40),
            lambda Z: _exact_ffn(Z, _P["W_1"], _P["b_1"], _P["W_2"], _P["b_2"]).evalf(40))


def _wired_by_hand(X, mha, ln_1, ln_2, ffn, norm_first: bool):
    """The block as the page writes it, wired here and not by ``wire_block``: the exact side of the checks."""
    if norm_first:  # pre-LN: Z = X + MHA(LN_1(X)), Y = Z + FFN(LN_2(Z))
        Z = X + mha(ln_1(X))
        return Z + ffn(ln_2(Z))
    Z = ln_1(X + mha(X))  # post-LN: Z = LN_1(X + MHA(X)), Y = LN_2(Z + FFN(Z))
    return ln_2(Z + ffn(Z))


# eq-pre-ln and eq-post-ln define the block: there is nothing to prove, and what the check measures is
# the package's code against the definition, so the badge says that in plain words.
_DEFINITION_SCOPE = ("on one fixed example of three tokens and two heads. This equation is a definition. The "
                     "check computes it by hand from the formula, in 40-digit arithmetic, and finds that the "
                     "package's code agrees to 1e-12")


def _check_block(norm_first: bool):
    # The displayed steps, composed into one equation, are the page's wiring written out here by
    # hand, and the package's wiring gives the same expression, all with the same undefined sublayers.
    label = "eq-pre-ln" if norm_first else "eq-post-ln"
    X = sp.Symbol("X")
    shown = registry.display(label).rhs
    by_hand = _wired_by_hand(X, _F["MHA"], _F["LN_1"], _F["LN_2"], _F["FFN"], norm_first)
    yield sp.Eq(shown, by_hand, evaluate=False)
    yield sp.Eq(wire_block(X, _F["MHA"], _F["LN_1"], _F["LN_2"], _F["FFN"], norm_first), by_hand,
                evaluate=False)
    # The package equals that wiring filled with LN (ε = 1/100000), two-head attention and the ReLU
    # network in 40-digit arithmetic.
    exact = _wired_by_hand(_X_BLOCK, *_exact_sublayers(), norm_first)
    got = transformer_block(np.array(_X_BLOCK, dtype=float), _params_float(), norm_first=norm_first)
    yield close_to_exact(exact, got, atol=1e-12)
    # The other placement gives another output: the check tells pre-LN from post-LN.
    other = transformer_block(np.array(_X_BLOCK, dtype=float), _params_float(), norm_first=not norm_first)
    yield not close_to_exact(exact, other, atol=1e-3)


@derivation("eq-pre-ln", display=lambda: _display_block(True), strength="measured",
            scope=_DEFINITION_SCOPE)
def _check_pre_ln():
    yield from _check_block(True)


@derivation("eq-post-ln", display=lambda: _display_block(False), strength="measured",
            scope=_DEFINITION_SCOPE)
def _check_post_ln():
    yield from _check_block(False)


def _ln_from_display(x: sp.Matrix, gamma, beta, eps) -> sp.Matrix:
    """The displayed LN, its symbols filled in: μ and σ² the mean and variance of the row's entries."""
    shown = registry.display("eq-layer-norm").rhs
    l_, = (a for a in shown.free_symbols if a.name == "l")
    d = len(x)
    mu = sum(x) / d
    sigma2 = sum((v - mu) ** 2 for v in x) / d
    syms = {a.name: a for a in shown.free_symbols if isinstance(a, sp.Symbol)}
    out = []
    for c in range(d):
        e = shown.subs(l_, c + 1).subs({sp.Symbol("mu", positive=True): mu,
                                        syms["sigma"] ** 2: sigma2, syms["epsilon"]: eps})
        e = e.replace(lambda a: isinstance(a, sp.Indexed) and a.base.label.name == "x",
                      lambda a: x[int(a.indices[0]) - 1])
        e = e.replace(lambda a: isinstance(a, sp.Indexed) and a.base.label.name == "gamma",
                      lambda a: gamma[int(a.indices[0]) - 1])
        e = e.replace(lambda a: isinstance(a, sp.Indexed) and a.base.label.name == "beta",
                      lambda a: beta[int(a.indices[0]) - 1])
        out.append(e)
    return sp.Matrix([out])


@derivation("eq-layer-norm", display=_display_layer_norm, strength="verified",
            scope="for a symbolic vector of three entries; the package agrees with the displayed formula to 1e-12")
def _check_layer_norm():
    # The displayed formula itself, for symbolic x (d = 3), γ = 1 and β = 0 and μ, σ² the mean and
    # variance of x's entries: the entries of LN(x) have mean 0 and mean square σ²/(σ² + ε).
    eps = sp.Symbol("epsilon", positive=True)
    x = symbol_matrix("x", 1, 3)
    z = _ln_from_display(x, [1, 1, 1], [0, 0, 0], eps)
    mu = sum(x) / 3
    var = sum((v - mu) ** 2 for v in x) / 3
    yield sp.Eq(sum(z), 0, evaluate=False)
    yield sp.Eq(sum(v**2 for v in z) / 3, var / (var + eps), evaluate=False)
    # The package equals the displayed formula with γ, β and PyTorch's ε = 1e-5, row by row.
    X = sp.Matrix([[1, 3, 2, 0], [0, 0, 1, -1]])
    exact = sp.Matrix.vstack(*[_ln_from_display(X.row(r), _P["gamma_1"], _P["beta_1"], sp.Rational(1, 100000))
                               for r in range(X.rows)])
    got = layer_norm(np.array(X, dtype=float), np.array(_P["gamma_1"], dtype=float),
                     np.array(_P["beta_1"], dtype=float))
    yield close_to_exact(exact, got, atol=1e-12)


@derivation("eq-ffn", display=_display_ffn, strength="verified",
            scope="on an exact example in which the ReLU cuts a unit")
def _check_ffn():
    X = sp.Matrix([[1, 0, 2, -1], [0, 1, 1, 1]])
    exact = _exact_ffn(X, _P["W_1"], _P["b_1"], _P["W_2"], _P["b_2"])
    p = _params_float()
    yield close_to_exact(exact, feed_forward(np.array(X, dtype=float), p.W_1, p.b_1, p.W_2, p.b_2),
                         atol=1e-12)
    # One hidden unit is negative on the first row and is cut to 0 by the ReLU.
    yield (X * _P["W_1"])[0, 1] + _P["b_1"][1] < 0


@derivation("thm-node-wise-update", strength="verified",
            scope=("for three tokens with d = d_ff = 2 and symbolic weights, gains, biases and ε (the displayed "
                   "LN); the package's LN and FFN on seeded inputs, bit for bit; with identity projections, one row "
                   "of attention holds every token's entries"))
def _check_node_wise_update():
    # Symbolic rows x_1, x_2, x_3 (d = 2), symbolic γ, β, W_1 (2 × 2), b_1, W_2, b_2 and ε: row i of
    # FFN(LN(X)), LN as displayed in eq-layer-norm with μ and σ² over the row, holds no entry of any
    # other row.
    X = symbol_matrix("x", 3, 2)
    g, b = symbol_matrix("g", 1, 2), symbol_matrix("b", 1, 2)
    W_1, W_2 = symbol_matrix("u", 2, 2), symbol_matrix("v", 2, 2)
    b_1, b_2 = symbol_matrix("c", 1, 2), symbol_matrix("e", 1, 2)
    eps = sp.Symbol("epsilon", positive=True)
    LN = sp.Matrix.vstack(*[_ln_from_display(X.row(r), list(g), list(b), eps) for r in range(3)])
    Z = _exact_ffn(LN, W_1, list(b_1), W_2, list(b_2))
    for i in range(3):
        others = {s for r in range(3) if r != i for s in X.row(r)}
        yield not (Z.row(i).free_symbols & others)
        yield set(X.row(i)) <= Z.row(i).free_symbols
    # The package's LN and FFN: changing the other tokens leaves row i unchanged, bit for bit, and
    # changing token i changes it.
    rng = np.random.default_rng(25)
    Xn, W1n, W2n = rng.standard_normal((5, 4)), rng.standard_normal((4, 6)), rng.standard_normal((6, 4))  # (5, 4), ...
    gn, bn, b1n, b2n = rng.standard_normal(4), rng.standard_normal(4), rng.standard_normal(6), rng.standard_normal(4)

    def update(A):  # (5, 4) -> (5, 4)
        return feed_forward(layer_norm(A, gn, bn), W1n, b1n, W2n, b2n)

    base = update(Xn)  # (5, 4)
    for i in range(5):
        moved = Xn + rng.standard_normal(Xn.shape) * (np.arange(5) != i)[:, None]  # (5, 4): other rows moved
        yield bool(np.array_equal(update(moved)[i], base[i]))
        mine = Xn + rng.standard_normal(Xn.shape) * (np.arange(5) == i)[:, None]  # (5, 4): row i moved
        yield not np.allclose(update(mine)[i], base[i])
    # Attention is not node-wise: one row of MHA(X) holds entries of every row.
    H = sp.Matrix.hstack(*exact_heads(X, X, sp.eye(2), sp.eye(2), sp.eye(2), 1))
    yield set(X) <= H.row(0).free_symbols
