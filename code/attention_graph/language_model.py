"""A language model read as a graph: GPT-2's layout in NumPy, its backward pass, its training.

A model is its parameters, NumPy arrays keyed by GPT-2's tensor names (``wte.weight``,
``h.0.attn.c_attn.weight``, …) in GPT-2's Conv1D layout (row vectors: X @ W), with its config in
GPT-2's fields (``n_layer``, ``n_head``, ``n_embd``, ``vocab_size``, ``n_positions``,
``layer_norm_epsilon``). :func:`gpt2_forward` computes what Hugging Face's ``GPT2Model`` and its
tied head compute (Radford et al. 2019): token and learned position embeddings, pre-LN blocks
(``ln_1``, fused ``c_attn``, heads split as GPT-2 splits them, causal mask, ``c_proj``; ``ln_2``,
``c_fc``, the tanh GELU, ``c_proj``), ``ln_f``, logits through the token embedding. It returns every
layer's attention weights: the graphs. :func:`load_gpt2` and :func:`save_gpt2` read and write
safetensors files and Hugging Face's saved directories.

The backward pass (:func:`gpt2_grads`) runs the chain rule through the whole model; attention's part
goes through :func:`attention_graph.backward.attention_backward`, one head at a time, and Adam is
the training chapter's :func:`attention_graph.training.adam`. The chapter is ``book/language_model.md``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load, save_file

from .attention import attention
from .backward import attention_backward, central_difference
from .block import layer_norm
from .graph import causal_mask
from .registry import derivation
from .training import adam, cross_entropy
from .validation import as_int, as_rng

__all__ = ["GPT2", "gpt2_config", "gpt2_forward", "gpt2_grads", "gpt2_loss", "init_gpt2", "load_gpt2", "save_gpt2",
           "train_gpt2"]

CONFIG_FIELDS = ("n_layer", "n_head", "n_embd", "vocab_size", "n_positions")
LN_EPSILON = 1e-5  # GPT-2's layer_norm_epsilon
GPT2_FLAGS = {"activation_function": "gelu_new", "scale_attn_weights": True,
              "scale_attn_by_inverse_layer_idx": False, "add_cross_attention": False}
BUFFERS = ("attn.bias", "attn.masked_bias")  # the causal-mask buffers older checkpoints carry


@dataclass(frozen=True)
class GPT2:
    """A model in GPT-2's layout: ``config`` (GPT-2's fields) and ``params`` (GPT-2's tensor names)."""

    config: dict
    params: dict


def gpt2_config(n_layer: int, n_head: int, n_embd: int, vocab_size: int = 256, n_positions: int = 128,
                layer_norm_epsilon: float = LN_EPSILON) -> dict:
    """GPT-2's config fields, checked: ``n_head`` must divide ``n_embd``.

    >>> gpt2_config(2, 4, 64)["n_embd"]
    64
    """
    config = {name: as_int(value, name) for name, value in zip(
        CONFIG_FIELDS, (n_layer, n_head, n_embd, vocab_size, n_positions))}
    if config["n_embd"] % config["n_head"]:
        raise ValueError(f"n_head must divide n_embd; got n_head = {n_head}, n_embd = {n_embd}")
    if isinstance(layer_norm_epsilon, bool) or not isinstance(layer_norm_epsilon, (int, float)) \
            or not layer_norm_epsilon > 0:
        raise ValueError(f"layer_norm_epsilon must be a number > 0; got {layer_norm_epsilon!r}")
    config["layer_norm_epsilon"] = float(layer_norm_epsilon)
    return config


def gpt2_shapes(config: dict) -> dict[str, tuple[int, ...]]:
    """Every tensor of the model, named as GPT-2 names it, and its shape (Conv1D: weight (in, out))."""
    d, V, P = config["n_embd"], config["vocab_size"], config["n_positions"]
    shapes = {"wte.weight": (V, d), "wpe.weight": (P, d)}
    for layer in range(config["n_layer"]):
        for name, shape in (("ln_1.weight", (d,)), ("ln_1.bias", (d,)),
                            ("attn.c_attn.weight", (d, 3 * d)), ("attn.c_attn.bias", (3 * d,)),
                            ("attn.c_proj.weight", (d, d)), ("attn.c_proj.bias", (d,)),
                            ("ln_2.weight", (d,)), ("ln_2.bias", (d,)),
                            ("mlp.c_fc.weight", (d, 4 * d)), ("mlp.c_fc.bias", (4 * d,)),
                            ("mlp.c_proj.weight", (4 * d, d)), ("mlp.c_proj.bias", (d,))):
            shapes[f"h.{layer}.{name}"] = shape
    shapes["ln_f.weight"], shapes["ln_f.bias"] = (d,), (d,)
    return shapes


def init_gpt2(config: dict, rng: np.random.Generator, dtype=np.float64) -> GPT2:
    """GPT-2's initialisation: weights N(0, 0.02²), each residual ``c_proj`` N(0, (0.02/√(2 n_layer))²),
    biases 0, LayerNorm gains 1."""
    config = gpt2_config(**config)
    rng = as_rng(rng)
    params = {}
    for name, shape in gpt2_shapes(config).items():
        if name.endswith("bias"):
            params[name] = np.zeros(shape, dtype)
        elif ".ln_" in name or name.startswith("ln_"):
            params[name] = np.ones(shape, dtype)
        else:
            std = 0.02 / math.sqrt(2 * config["n_layer"]) if name.endswith("c_proj.weight") else 0.02
            params[name] = (rng.standard_normal(shape) * std).astype(dtype)
    return GPT2(config, params)


# --------------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------------

def as_gpt2(model, name: str = "model") -> GPT2:
    """``model`` checked: its config's fields, and exactly the tensors the config asks for, finite and
    of their shapes. A clear error names the first tensor that is missing, extra or wrong."""
    if not isinstance(model, GPT2):
        raise TypeError(f"{name} must be a GPT2 (load_gpt2(path) or init_gpt2(config, rng)); "
                        f"got {type(model).__name__}")
    config = gpt2_config(**{k: v for k, v in model.config.items()
                            if k in CONFIG_FIELDS + ("layer_norm_epsilon",)})
    shapes = gpt2_shapes(config)
    missing = [k for k in shapes if k not in model.params]
    extra = [k for k in model.params if k not in shapes]
    if missing:
        raise ValueError(f"{name} is missing tensor {missing[0]!r} ({len(missing)} missing in all) "
                         f"for its config {config}")
    if extra:
        raise ValueError(f"{name} has an extra tensor {extra[0]!r} ({len(extra)} extra in all) that "
                         f"GPT-2's layout with config {config} does not have")
    params = {}
    for key, shape in shapes.items():
        arr = np.asarray(model.params[key])
        if arr.dtype.kind != "f":
            raise TypeError(f"{name}: tensor {key!r} must hold floats; got dtype {arr.dtype}")
        if arr.shape != shape:
            raise ValueError(f"{name}: tensor {key!r} must have shape {shape} for config {config}; "
                             f"got {arr.shape}")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name}: tensor {key!r} has a non-finite entry")
        params[key] = arr
    return GPT2(config, params)


def as_tokens(tokens, config: dict, name: str = "tokens") -> np.ndarray:
    """``tokens`` as a non-empty (n,) int array of ids in [0, vocab_size), n ≤ n_positions."""
    arr = np.asarray(tokens)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-d array (n,); got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{name} must be an integer array of token ids; got dtype {arr.dtype}")
    if arr.size > config["n_positions"]:
        raise ValueError(f"{name} has {arr.size} tokens, more than the context n_positions = "
                         f"{config['n_positions']}")
    bad = (arr < 0) | (arr >= config["vocab_size"])
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}[{k}] = {int(arr[k])} is outside the vocabulary 0..{config['vocab_size'] - 1}")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------------------------------
# The forward pass
# --------------------------------------------------------------------------------------------------

GELU_C = math.sqrt(2 / math.pi)


def gelu(x) -> np.ndarray:
    """GELU(x) ≈ ½ x (1 + tanh(√(2/π) (x + 0.044715 x³))): GPT-2's tanh form (Hendrycks & Gimpel 2016).

    >>> float(gelu(np.array(0.0)))
    0.0
    """
    x = np.asarray(x)
    return 0.5 * x * (1 + np.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def gelu_backward(x, dy) -> np.ndarray:
    """dx = dy · GELU′(x), GELU′ the derivative of the tanh form."""
    x = np.asarray(x)
    t = np.tanh(GELU_C * (x + 0.044715 * x * x * x))
    return dy * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x))


def _ln(X, gamma, beta, eps):
    """layer_norm on the last axis of X (..., d): the block chapter's, rows flattened."""
    return layer_norm(X.reshape(-1, X.shape[-1]), gamma, beta, eps).reshape(X.shape)


def layer_norm_backward(X, gamma, dY, eps: float = LN_EPSILON):
    """dX = (dX̂ − mean(dX̂) − X̂ mean(dX̂ ∘ X̂)) / √(σ² + ε), dX̂ = dY ∘ γ; also dγ, dβ.

    Rows are the last axis of ``X`` (..., d); returns (dX, dγ, dβ).
    """
    mu = X.mean(axis=-1, keepdims=True)  # (..., 1)
    inv = 1 / np.sqrt(((X - mu) ** 2).mean(axis=-1, keepdims=True) + eps)  # (..., 1)
    X_hat = (X - mu) * inv  # (..., d)
    dX_hat = dY * gamma  # (..., d)
    dX = inv * (dX_hat - dX_hat.mean(axis=-1, keepdims=True)
                - X_hat * (dX_hat * X_hat).mean(axis=-1, keepdims=True))  # (..., d)
    axes = tuple(range(X.ndim - 1))
    return dX, (dY * X_hat).sum(axis=axes), dY.sum(axis=axes)


def _layer(params: dict, layer: int) -> dict:
    """The tensors of block ``layer``, named without their prefix ``h.<layer>.``."""
    pre = f"h.{layer}."
    return {k[len(pre):]: v for k, v in params.items() if k.startswith(pre)}


def _heads(QKV, H: int, mask):
    """Each head's attention on its slice of the fused Q | K | V (B, n, 3d): Y (B, n, d), W (B, H, n, n)."""
    B, n, d = QKV.shape[0], QKV.shape[1], QKV.shape[2] // 3
    d_h = d // H
    Y = np.empty((B, n, d), dtype=QKV.dtype)  # (B, n, d): the heads side by side
    W = np.empty((B, H, n, n), dtype=QKV.dtype)  # (B, H, n, n)
    for b in range(B):
        Q, K, V = QKV[b, :, :d], QKV[b, :, d:2 * d], QKV[b, :, 2 * d:]  # (n, d) each
        for h in range(H):
            c = slice(h * d_h, (h + 1) * d_h)
            Y[b, :, c], W[b, h] = attention(Q[:, c], K[:, c], V[:, c], mask)
    return Y, W


def _block(p: dict, X, H: int, eps: float, mask):
    """One pre-LN block: X + attention(LN₁(X)), then + MLP(LN₂(·)); the output, W, the cache."""
    A = _ln(X, p["ln_1.weight"], p["ln_1.bias"], eps)  # (B, n, d)
    QKV = A @ p["attn.c_attn.weight"] + p["attn.c_attn.bias"]  # (B, n, 3d)
    Y, W = _heads(QKV, H, mask)  # (B, n, d), (B, H, n, n)
    X_mid = X + Y @ p["attn.c_proj.weight"] + p["attn.c_proj.bias"]  # (B, n, d)
    A2 = _ln(X_mid, p["ln_2.weight"], p["ln_2.bias"], eps)  # (B, n, d)
    F = A2 @ p["mlp.c_fc.weight"] + p["mlp.c_fc.bias"]  # (B, n, 4d)
    M = gelu(F) @ p["mlp.c_proj.weight"]  # (B, n, d)
    X_out = X_mid + M + p["mlp.c_proj.bias"]  # (B, n, d)
    cache = {"X": X, "A": A, "QKV": QKV, "Y": Y, "X_mid": X_mid, "A2": A2, "F": F}
    return X_out, W, cache


def _forward(params: dict, config: dict, tokens: np.ndarray):
    """The model on a batch ``tokens`` (B, n): logits (B, n, V), weights (L, B, H, n, n), hidden
    states (L + 1, B, n, d) as Hugging Face returns them (the last after ln_f), and the caches."""
    n = tokens.shape[1]
    H, eps, L = config["n_head"], config["layer_norm_epsilon"], config["n_layer"]
    mask = causal_mask(n)  # (n, n)
    X = params["wte.weight"][tokens] + params["wpe.weight"][:n]  # (B, n, d)
    hidden, weights, caches = [X], [], []
    for layer in range(L):
        X, W, cache = _block(_layer(params, layer), X, H, eps, mask)  # (B, n, d)
        caches.append(cache)
        weights.append(W)
        if layer < L - 1:
            hidden.append(X)
    A_f = _ln(X, params["ln_f.weight"], params["ln_f.bias"], eps)  # (B, n, d)
    hidden.append(A_f)
    logits = A_f @ params["wte.weight"].T  # (B, n, V)
    cache = {"blocks": caches, "X_L": X, "A_f": A_f}
    return logits, np.stack(weights), np.stack(hidden), cache


def gpt2_forward(model: GPT2, tokens) -> dict:
    """z = LN_f(x_L) W_teᵀ after L pre-LN blocks on x_0 = W_te[t] + W_pe: GPT-2's forward pass.

    ``tokens`` (n,) ids. Returns ``logits`` (n, vocab_size), ``attentions`` (n_layer, n_head, n, n),
    row i of head h in layer l the weights W_ij token i gives token j (the graph), and
    ``hidden_states`` (n_layer + 1, n, n_embd) as Hugging Face's ``output_hidden_states`` gives them
    (the embeddings, each block's output, the last after ``ln_f``).
    """
    model = as_gpt2(model)
    tokens = as_tokens(tokens, model.config)  # (n,)
    logits, W, hidden, _ = _forward(model.params, model.config, tokens[None, :])
    return {"logits": logits[0], "attentions": W[:, 0], "hidden_states": hidden[:, 0]}


# --------------------------------------------------------------------------------------------------
# The backward pass
# --------------------------------------------------------------------------------------------------

def _block_backward(p: dict, c: dict, dX, H: int, eps: float, mask):
    """The gradients of one block's tensors from dX (B, n, d) at its output; returns them and dX at its input."""
    g = {}
    # the MLP sublayer: X_out = X_mid + GELU(A2 W_fc + b_fc) W_p + b_p
    g["mlp.c_proj.weight"] = np.einsum("bnf,bnd->fd", gelu(c["F"]), dX)
    g["mlp.c_proj.bias"] = dX.sum(axis=(0, 1))
    dF = gelu_backward(c["F"], dX @ p["mlp.c_proj.weight"].T)  # (B, n, 4d)
    g["mlp.c_fc.weight"] = np.einsum("bnd,bnf->df", c["A2"], dF)
    g["mlp.c_fc.bias"] = dF.sum(axis=(0, 1))
    dA2 = dF @ p["mlp.c_fc.weight"].T  # (B, n, d)
    dX_mid, g["ln_2.weight"], g["ln_2.bias"] = layer_norm_backward(
        c["X_mid"], p["ln_2.weight"], dA2, eps)  # (B, n, d)
    dX_mid = dX_mid + dX  # (B, n, d): the residual
    # the attention sublayer: X_mid = X + Y W_o + b_o, Y the heads side by side
    g["attn.c_proj.weight"] = np.einsum("bnd,bne->de", c["Y"], dX_mid)
    g["attn.c_proj.bias"] = dX_mid.sum(axis=(0, 1))
    dY = dX_mid @ p["attn.c_proj.weight"].T  # (B, n, d)
    dQKV = _heads_backward(c["QKV"], dY, H, mask)  # (B, n, 3d)
    g["attn.c_attn.weight"] = np.einsum("bnd,bne->de", c["A"], dQKV)
    g["attn.c_attn.bias"] = dQKV.sum(axis=(0, 1))
    dA = dQKV @ p["attn.c_attn.weight"].T  # (B, n, d)
    dX_in, g["ln_1.weight"], g["ln_1.bias"] = layer_norm_backward(
        c["X"], p["ln_1.weight"], dA, eps)  # (B, n, d)
    return g, dX_in + dX_mid  # (B, n, d)


def _heads_backward(QKV, dY, H: int, mask):
    """dQ | dK | dV (B, n, 3d) of every head, by :func:`attention_backward` on its slice."""
    B, d = QKV.shape[0], QKV.shape[2] // 3
    d_h = d // H
    dQKV = np.empty_like(QKV)  # (B, n, 3d)
    for b in range(B):
        for h in range(H):
            cols = [slice(part * d + h * d_h, part * d + (h + 1) * d_h) for part in range(3)]
            grads = attention_backward(*(QKV[b][:, c] for c in cols), dY[b][:, cols[0]], mask)
            for c, grad in zip(cols, grads):
                dQKV[b][:, c] = grad
    return dQKV


def _loss_grads(params: dict, config: dict, tokens: np.ndarray):
    """Next-token cross-entropy of a batch (B, n + 1) and its gradient in every tensor."""
    inputs, targets = tokens[:, :-1], tokens[:, 1:]  # (B, n), (B, n)
    logits, _, _, cache = _forward(params, config, inputs)
    B, n, V = logits.shape
    L, dz = cross_entropy(logits.reshape(-1, V), targets.reshape(-1))  # dz (B n, V)
    dz = dz.reshape(B, n, V)
    H, eps = config["n_head"], config["layer_norm_epsilon"]
    mask = causal_mask(n)  # (n, n)
    g = {k: np.zeros_like(v) for k, v in params.items()}
    g["wte.weight"] += np.einsum("bnv,bnd->vd", dz, cache["A_f"])  # (V, d): the tied head
    dA_f = dz @ params["wte.weight"]  # (B, n, d)
    dX, g["ln_f.weight"], g["ln_f.bias"] = layer_norm_backward(
        cache["X_L"], params["ln_f.weight"], dA_f, eps)  # (B, n, d)
    for layer in reversed(range(config["n_layer"])):
        c = cache["blocks"][layer]
        grads, dX = _block_backward(_layer(params, layer), c, dX, H, eps, mask)
        g.update({f"h.{layer}.{k}": v for k, v in grads.items()})
    np.add.at(g["wte.weight"], inputs, dX)  # the token embedding: each row its tokens' gradients
    g["wpe.weight"][:n] += dX.sum(axis=0)
    return L, g


def _as_batch(tokens, config: dict) -> np.ndarray:
    arr = np.asarray(tokens)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] < 2:
        raise ValueError(f"tokens must be (n + 1,) or (B, n + 1) with n + 1 >= 2 (inputs and the next "
                         f"token); got shape {arr.shape}")
    for row in arr:
        as_tokens(row[:-1], config)
        as_tokens(row[1:], config)
    return arr.astype(np.int64)


def gpt2_loss(model: GPT2, tokens) -> float:
    """L = −mean log p(t_{i+1} | t_1..t_i): the next-token cross-entropy in nats, tokens (B, n + 1)."""
    model = as_gpt2(model)
    batch = _as_batch(tokens, model.config)  # (B, n + 1)
    logits = _forward(model.params, model.config, batch[:, :-1])[0]  # (B, n, V)
    return cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1))[0]


def gpt2_grads(model: GPT2, tokens) -> tuple[float, dict]:
    """∂L/∂θ for every tensor θ by the chain rule, L the next-token cross-entropy of ``tokens``
    (B, n + 1); attention's part through :func:`attention_backward`. Returns (L, grads by name)."""
    model = as_gpt2(model)
    return _loss_grads(model.params, model.config, _as_batch(tokens, model.config))


# --------------------------------------------------------------------------------------------------
# Files: safetensors, and Hugging Face's saved directories
# --------------------------------------------------------------------------------------------------

def _strip(name: str) -> str:
    return name[len("transformer."):] if name.startswith("transformer.") else name


def _config_from(tensors: dict, metadata: dict | None, config: dict | None, n_head) -> dict:
    """The config: config.json's, else the file's metadata, else read off the shapes (n_head given)."""
    if config is None and metadata and "config" in metadata:
        config = json.loads(metadata["config"])
    if config is None:
        layers = {int(k.split(".")[1]) for k in tensors if k.startswith("h.")}
        if "wte.weight" not in tensors or "wpe.weight" not in tensors:
            raise ValueError("the file has no wte.weight or wpe.weight, and no config to read the sizes from")
        if n_head is None:
            raise ValueError("the file has no config (config.json or metadata): pass n_head")
        config = {"n_layer": len(layers), "n_head": n_head, "n_embd": tensors["wte.weight"].shape[1],
                  "vocab_size": tensors["wte.weight"].shape[0], "n_positions": tensors["wpe.weight"].shape[0]}
    elif n_head is not None and config.get("n_head") != n_head:
        raise ValueError(f"n_head = {n_head} disagrees with the file's config n_head = {config.get('n_head')}")
    missing = [f for f in CONFIG_FIELDS if f not in config]
    if missing:
        raise ValueError(f"the config lacks GPT-2's field {missing[0]!r}")
    if config.get("n_inner") not in (None, 4 * config["n_embd"]):
        raise ValueError(f"n_inner = {config['n_inner']}: only GPT-2's 4 n_embd is supported")
    for field, value in GPT2_FLAGS.items():
        if config.get(field, value) != value:
            raise ValueError(f"config {field} = {config[field]!r}: this layout computes {field} = {value!r}")
    return gpt2_config(**{f: config[f] for f in CONFIG_FIELDS},
                       layer_norm_epsilon=config.get("layer_norm_epsilon", LN_EPSILON))


def load_gpt2(path, *, n_head: int | None = None) -> GPT2:
    """A GPT-2 from ``path``: a safetensors file, or a directory as Hugging Face saves one
    (``model.safetensors`` + ``config.json``).

    Tensor names with or without the ``transformer.`` prefix; the buffers ``attn.bias`` and
    ``attn.masked_bias`` are ignored; ``lm_head.weight``, if present, must equal ``wte.weight`` (the
    tied head). A file without config (neither ``config.json`` nor :func:`save_gpt2`'s metadata)
    needs ``n_head``. Then ``gpt2_forward(load_gpt2(path), tokens)`` runs it.
    """
    path = Path(path)
    config = None
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"path {str(path)!r} is a directory without config.json")
        config = json.loads((path / "config.json").read_text())
        path = path / "model.safetensors"
    if not path.is_file():
        raise ValueError(f"path {str(path)!r}: no such safetensors file")
    with safe_open(str(path), framework="np") as f:
        metadata = f.metadata()
        tensors = {_strip(k): f.get_tensor(k) for k in f.keys()}
    return _model_from(tensors, metadata, config, n_head)


def _model_from(tensors: dict, metadata, config, n_head) -> GPT2:
    tensors = {k: v for k, v in tensors.items() if not (k.startswith("h.") and k.split(".", 2)[2] in BUFFERS)}
    head = tensors.pop("lm_head.weight", None)
    if head is not None and ("wte.weight" not in tensors or not np.array_equal(head, tensors["wte.weight"])):
        raise ValueError("lm_head.weight differs from wte.weight: this layout's head is tied")
    config = _config_from(tensors, metadata, config, n_head)
    return as_gpt2(GPT2(config, tensors))


def save_gpt2(model: GPT2, path) -> None:
    """Write ``model`` to the safetensors file ``path``, its config in the file's metadata."""
    model = as_gpt2(model)
    save_file({k: np.ascontiguousarray(v) for k, v in model.params.items()}, str(path),
              metadata={"format": "np", "config": json.dumps(model.config, sort_keys=True)})


def gpt2_from_bytes(data: bytes) -> GPT2:
    """A GPT-2 from the bytes of a safetensors file :func:`save_gpt2` wrote (package data)."""
    header = json.loads(data[8:8 + int.from_bytes(data[:8], "little")])
    return _model_from(load(data), header.get("__metadata__"), None, None)


# --------------------------------------------------------------------------------------------------
# The corpus and the book's trained models (package data)
# --------------------------------------------------------------------------------------------------

HELD_OUT = 0.1  # the last tenth of the corpus is never trained on
PRINTABLE = (32, 127)  # the random bytes of the repeated sequences: printable ASCII


def _data(name: str):
    return resources.files("attention_graph") / "data" / name


def lm_corpus() -> np.ndarray:
    """The corpus as bytes (N,) uint8: the Python language reference's topics, ``pydoc_data.topics``
    (PSF licence; ``data/lm_corpus_LICENSE.txt``), as packaged by ``tools/lm_corpus.py``."""
    return np.frombuffer(_data("lm_corpus.txt").read_bytes(), dtype=np.uint8)


def corpus_split(data: np.ndarray, held_out: float = HELD_OUT) -> tuple[np.ndarray, np.ndarray]:
    """(train, held-out): the first 1 − ``held_out`` of ``data`` and the rest, as int64 token ids."""
    cut = int(round(len(data) * (1 - held_out)))
    data = np.asarray(data, dtype=np.int64)  # (N,)
    return data[:cut], data[cut:]


def book_model(seed: int = 0) -> GPT2:
    """The book's trained model of ``seed`` (package data, written by ``python -m attention_graph.bench lm``)."""
    return gpt2_from_bytes(_data(f"lm_seed{as_int(seed, 'seed', low=0)}.safetensors").read_bytes())


def repeated_bytes(T: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """``batch`` sequences r r of T random printable bytes r, repeated once: (batch, 2T)."""
    r = as_rng(rng).integers(*PRINTABLE, size=(batch, as_int(T, "T")))  # (batch, T)
    return np.concatenate([r, r], axis=1)  # (batch, 2T)


def position_losses(model: GPT2, windows) -> np.ndarray:
    """ℓ_i = −mean over windows of log p(t_{i+1} | t_1..t_i), for each position i: (n,)."""
    model = as_gpt2(model)
    batch = _as_batch(windows, model.config)  # (B, n + 1)
    return _position_losses(model.params, model.config, batch)


def _position_losses(params: dict, config: dict, batch: np.ndarray, chunk: int = 16) -> np.ndarray:
    out = []
    for k in range(0, len(batch), chunk):
        part = batch[k:k + chunk]  # (b, n + 1)
        z = _forward(params, config, part[:, :-1])[0].astype(np.float64)  # (b, n, V)
        m = z.max(axis=-1, keepdims=True)  # (b, n, 1)
        log_p = z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))  # (b, n, V)
        out.append(-np.take_along_axis(log_p, part[:, 1:, None], axis=-1)[..., 0])  # (b, n)
    return np.concatenate(out).mean(axis=0)  # (n,)


def icl_score(losses, early: tuple[int, int], late: tuple[int, int]) -> float:
    """ℓ(late) − ℓ(early): the in-context learning score (Olsson et al. 2022), means of the per-position
    losses over two ranges of positions (0-based, end excluded). Negative: later tokens are easier."""
    losses = np.asarray(losses, dtype=float)  # (n,)
    return float(losses[late[0]:late[1]].mean() - losses[early[0]:early[1]].mean())


def prefix_matching(W, T: int) -> float:
    """The mean of W[i, i − T + 1] over the second copy i = T … 2T − 1 of a repeated sequence r r:
    the weight each token gives the token after its earlier occurrence (Olsson et al.'s prefix matching).
    ``W`` (..., 2T, 2T)."""
    W = np.asarray(W)
    i = np.arange(T, 2 * T)  # (T,)
    return float(W[..., i, i - T + 1].mean())


def previous_token(W) -> float:
    """The mean of W[i, i − 1] over i ≥ 1: the weight on the sub-diagonal. ``W`` (..., n, n)."""
    W = np.asarray(W)
    i = np.arange(1, W.shape[-1])  # (n − 1,)
    return float(W[..., i, i - 1].mean())


ICL_EARLY, ICL_LATE = (8, 16), (112, 128)  # positions (0-based, end excluded) the ICL score compares


def lm_windows(data, n: int, count: int, seed: int) -> np.ndarray:
    """``count`` windows of n + 1 consecutive tokens of ``data`` drawn with ``seed``: (count, n + 1)."""
    return lm_batches(np.asarray(data, dtype=np.int64), as_int(n, "n"), as_int(count, "count"),
                      np.random.default_rng(as_int(seed, "seed", low=0)))


def head_readout(model: GPT2, text, repeats) -> list[dict]:
    """Every head read with the graph tools: its previous-token score and first-token out-strength on
    the windows ``text`` (B, n), its prefix-matching score on the repeated sequences ``repeats``
    (B', 2T). One dict per head: layer, head (0-based), previous_token, first_out_strength,
    prefix_matching."""
    model = as_gpt2(model)
    text, repeats = np.asarray(text), np.asarray(repeats)
    for rows, name in ((text, "text"), (repeats, "repeats")):
        for row in rows:
            as_tokens(row, model.config, name)
    W_text = _forward(model.params, model.config, text)[1]  # (L, B, H, n, n)
    W_rep = _forward(model.params, model.config, repeats)[1]  # (L, B', H, 2T, 2T)
    T = repeats.shape[1] // 2
    out = []
    for layer in range(W_text.shape[0]):
        for h in range(W_text.shape[2]):
            out.append({"layer": layer, "head": h, "previous_token": previous_token(W_text[layer, :, h]),
                        "first_out_strength": float(W_text[layer, :, h, :, 0].sum(axis=-1).mean()),
                        "prefix_matching": prefix_matching(W_rep[layer, :, h], T)})
    return out


def ngram_loss(train, held_out, order: int) -> float:
    """The held-out cross-entropy (nats) of a unigram (``order`` 1) or bigram (2) byte model counted on
    ``train``, with add-one smoothing over the 256 bytes."""
    train, held_out = np.asarray(train), np.asarray(held_out)
    if order == 1:
        p = (np.bincount(train, minlength=256) + 1.0) / (len(train) + 256)  # (256,)
        return float(-np.log(p[held_out[1:]]).mean())
    if order == 2:
        C = np.ones((256, 256))  # (256, 256): add-one
        np.add.at(C, (train[:-1], train[1:]), 1.0)
        P = C / C.sum(axis=1, keepdims=True)  # (256, 256)
        return float(-np.log(P[held_out[:-1], held_out[1:]]).mean())
    raise ValueError(f"order must be 1 (unigram) or 2 (bigram); got {order!r}")


# --------------------------------------------------------------------------------------------------
# Training
# --------------------------------------------------------------------------------------------------

def lm_batches(data: np.ndarray, n: int, batch: int, rng: np.random.Generator) -> np.ndarray:
    """``batch`` windows of n + 1 consecutive tokens of ``data``, drawn uniformly: (batch, n + 1)."""
    starts = rng.integers(0, len(data) - n - 1, size=batch)  # (batch,)
    return data[starts[:, None] + np.arange(n + 1)[None, :]]  # (batch, n + 1)


def _clip(grads: dict, max_norm: float) -> float:
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
    if norm > max_norm:
        for k in grads:
            grads[k] = grads[k] * (max_norm / norm)
    return norm


def train_gpt2(config: dict, train: np.ndarray, held_out: np.ndarray, *, steps: int, batch: int, seed: int,
               lr: float = 3e-3, warmup: int = 50, every: int = 25, eval_windows: int = 32,
               dtype=np.float32, max_norm: float = 1.0, log=None) -> dict:
    """Adam on the next-token loss of windows of ``train``; warm-up then cosine decay of the step size.

    Every ``every`` steps the loss on ``eval_windows`` fixed windows of ``held_out`` is recorded.
    Returns the model, the curve (steps, train loss, held-out loss) and the settings.
    """
    rng = np.random.default_rng(seed)
    model = init_gpt2(config, rng, dtype)
    params, n = dict(model.params), config["n_positions"]
    probe = lm_batches(held_out, n, eval_windows, np.random.default_rng(10_000 + seed))  # (E, n + 1)
    T = n // 2
    repeats = repeated_bytes(T, 8, np.random.default_rng(20_000 + seed)) if config["vocab_size"] >= PRINTABLE[1] \
        else None  # (8, n): repeated random printable bytes, for a byte-level model
    state: dict = {}
    curve = {"steps": [], "train_loss": [], "held_out_loss": [], "position_losses": [], "prefix_matching": [],
             "previous_token": [], "repeat_losses": []}
    running = []
    for step in range(steps + 1):
        if step % every == 0 or step == steps:
            per_position = _position_losses(params, config, probe)  # (n,)
            held = float(per_position.mean())
            curve["steps"].append(step)
            curve["held_out_loss"].append(held)
            curve["position_losses"].append(per_position.tolist())
            curve["train_loss"].append(float(np.mean(running)) if running else held)
            running = []
            if log is not None:
                log(f"step {step}: held-out loss {held:.4f}")
        if (step % every == 0 or step == steps) and config["vocab_size"] >= PRINTABLE[1]:  # bytes: read the heads
            W = _forward(params, config, repeats)[1]  # (L, 8, H, n, n)
            curve["prefix_matching"].append([[prefix_matching(W[l, :, h], T) for h in range(W.shape[2])]
                                             for l in range(W.shape[0])])
            curve["previous_token"].append([[previous_token(W[l, :, h]) for h in range(W.shape[2])]
                                            for l in range(W.shape[0])])
            rep = _position_losses(params, config, np.concatenate([repeats, repeats[:, :1]], axis=1))  # (n,)
            curve["repeat_losses"].append([float(rep[:T - 1].mean()), float(rep[T:n - 1].mean())])
        if step == steps:
            break
        L, grads = _loss_grads(params, config, lm_batches(train, n, batch, rng))
        running.append(L)
        _clip(grads, max_norm)
        t = step + 1
        rate = lr * min(1.0, t / warmup) * 0.5 * (1 + math.cos(math.pi * min(1.0, step / steps)))
        adam(params, grads, state, rate)
        for k in params:
            params[k] = params[k].astype(dtype, copy=False)
    return {"model": GPT2(config, params), "curve": curve, "seed": seed, "steps": steps, "batch": batch,
            "lr": lr, "warmup": warmup}


def _check_gradients(seed: int = 0):
    """Every entry of every gradient of a tiny model against central differences, to 1e-6."""
    config = gpt2_config(n_layer=2, n_head=2, n_embd=4, vocab_size=7, n_positions=5)
    model = init_gpt2(config, np.random.default_rng(seed))
    params = {k: v + 0.3 * np.random.default_rng(seed + 1).standard_normal(v.shape)
              for k, v in model.params.items()}  # off the initial point: LN gains and biases not 1, 0
    tokens = np.random.default_rng(seed + 2).integers(0, 7, size=(2, 5))  # (B, n + 1)
    _, grads = _loss_grads(params, config, tokens)
    for name, value in params.items():
        def loss(X, name=name, shape=value.shape):
            return _loss_grads({**params, name: X.reshape(shape)}, config, tokens)[0]
        numeric = central_difference(loss, value.reshape(value.shape[0], -1))  # (rows, cols)
        yield bool(np.allclose(grads[name].reshape(numeric.shape), numeric, rtol=1e-6, atol=1e-8))


@derivation("thm-lm-backward", strength="measured",
            scope="to 1e-6 against central differences, every entry of every tensor of a 2-layer, "
                  "2-head model with n_embd = 4, vocabulary 7, on 2 windows of 5 tokens")
def _check_lm_backward():
    yield from _check_gradients()
