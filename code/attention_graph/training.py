"""Training with the backward pass: attention learns a graph.

NumPy only, seeded, bit-reproducible. Two experiments (chapter ``book/training.md``):

A. A sequence task whose solution needs one graph (copy the previous token: edges i → i−1; reverse
   the sequence: edges i → n−1−i). A one-layer attention model, trained with Adam, puts its weight
   on exactly those edges.
B. Zachary's karate club with two labelled members (the instructor, node 0, and the administrator,
   node 33): GCN, GAT and masked dot-product attention (the attention of a Graph Transformer
   layer, without its residual, feed-forward network, normalisation or heads) trained with the same
   budget, against an attention that stays uniform over the neighbours; accuracy is recorded along
   training, and an early-stopping step is chosen on held-out members.

Every gradient is written out with the chain rule; attention's goes through
:func:`attention_graph.backward.attention_backward`.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import AttentionGraph, attention
from .backward import attention_backward, softmax_backward
from .graph import GAT_NEGATIVE_SLOPE, gcn_propagation, graph_mask, leaky_relu, mean_propagation
from .graph_tools import attention_rollout, pagerank, spectral_bipartition
from .karate import adjusted_rand_index, club_graph, standardised_pe
from .softmax import softmax

# No public name of the package: its helpers are imported from this module by name.
__all__: list[str] = []

CLUB_MODELS = ("GCN", "GAT", "masked attention", "uniform attention")
LABELLED = (0, 33)  # the instructor (Mr. Hi) and the administrator (the Officer)
RECORD_EVERY = 5  # accuracy is recorded every RECORD_EVERY Adam steps, and after the last


# --------------------------------------------------------------------------------------------------
# The optimiser and the loss
# --------------------------------------------------------------------------------------------------

def adam(params: dict, grads: dict, state: dict, lr: float,
         beta1: float = 0.9, beta2: float = 0.999, eps: float = 1e-8) -> None:
    """One Adam step (Kingma & Ba 2015), in place: θ ← θ − lr · m̂ / (√v̂ + ε).

    m and v are running means of the gradient and of its square; m̂ and v̂
    correct their start at 0. ``state`` starts as ``{}`` and keeps the step
    count and the moments.

    >>> p, s = {"x": np.array([1.0])}, {}
    >>> adam(p, {"x": np.array([2.0])}, s, lr=0.1); p["x"].round(6)
    array([0.9])
    """
    t = state["t"] = state.get("t", 0) + 1
    for name, g in grads.items():
        m = state[("m", name)] = beta1 * state.get(("m", name), 0.0) + (1 - beta1) * g
        v_old = state.get(("v", name), 0.0)
        v = state[("v", name)] = beta2 * v_old + (1 - beta2) * g * g
        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)
        params[name] = params[name] - lr * m_hat / (np.sqrt(v_hat) + eps)


def cross_entropy(logits, targets) -> tuple[float, np.ndarray]:
    """L = −mean_i log softmax(z_i)[t_i] and its gradient (softmax(z) − onehot(t)) / N.

    ``logits`` (N, C), ``targets`` (N,) integers in [0, C).

    >>> L, dz = cross_entropy(np.zeros((1, 2)), np.array([0])); round(L, 6), dz
    (0.693147, array([[-0.5,  0.5]]))
    """
    P = softmax(logits)  # (N, C)
    N = logits.shape[0]
    rows = np.arange(N)  # (N,)
    L = -float(np.mean(np.log(P[rows, targets])))
    dz = P.copy()  # (N, C)
    dz[rows, targets] -= 1.0
    return L, dz / N


# --------------------------------------------------------------------------------------------------
# Experiment A: a sequence task that needs one graph
# --------------------------------------------------------------------------------------------------

def task_source(task: str, n: int) -> np.ndarray:
    """source[i]: the position whose token position i must output. (n,) ints.

    ``"previous"``: i − 1 (position 0, with nothing before it, outputs its own token);
    ``"reverse"``: n − 1 − i.
    """
    i = np.arange(n)  # (n,)
    if task == "previous":
        return np.maximum(i - 1, 0)  # (n,)
    if task == "reverse":
        return n - 1 - i  # (n,)
    raise ValueError(f"task must be 'previous' or 'reverse'; got {task!r}")


def sequence_task(task: str, n: int, vocab: int, batch: int, rng: np.random.Generator):
    """(tokens, targets, source): ``batch`` random sequences (batch, n) and what each must output."""
    source = task_source(task, n)  # (n,)
    tokens = rng.integers(0, vocab, size=(batch, n))  # (batch, n)
    return tokens, tokens[:, source], source


def sequence_inputs(tokens, vocab: int, positions: bool = True) -> np.ndarray:
    """X = [onehot(token) | onehot(position)] for each sequence: (batch, n, vocab + n).

    With ``positions=False`` the position columns stay 0: the model sees the tokens only.
    """
    batch, n = tokens.shape
    X = np.zeros((batch, n, vocab + n))  # (batch, n, vocab + n)
    X[np.arange(batch)[:, None], np.arange(n)[None, :], tokens] = 1.0
    if positions:
        X[:, np.arange(n), vocab + np.arange(n)] = 1.0
    return X


def init_sequence_model(vocab: int, n: int, d: int, rng: np.random.Generator) -> dict:
    """W_Q, W_K, W_V (vocab + n, d) and W_O (d, vocab), entries N(0, 1/fan-in)."""
    f = vocab + n
    params = {name: rng.standard_normal((f, d)) / math.sqrt(f) for name in ("W_Q", "W_K", "W_V")}
    params["W_O"] = rng.standard_normal((d, vocab)) / math.sqrt(d)  # (d, vocab)
    return params


def sequence_model(params: dict, X) -> tuple[np.ndarray, np.ndarray]:
    """logits = softmax(Q Kᵀ/√d) V W_O with Q, K, V = X W_Q, X W_K, X W_V; (logits, W) per sequence.

    ``X`` (batch, n, f). Returns logits (batch, n, vocab) and the weights W (batch, n, n).
    """
    logits, weights = [], []
    for Xb in X:
        Y, W = attention(Xb @ params["W_Q"], Xb @ params["W_K"], Xb @ params["W_V"])  # (n, d), (n, n)
        logits.append(Y @ params["W_O"])  # (n, vocab)
        weights.append(W)
    return np.stack(logits), np.stack(weights)


def sequence_model_grads(params: dict, X, targets) -> tuple[float, dict]:
    """Cross-entropy of :func:`sequence_model` at every position, and its gradients."""
    logits, _ = sequence_model(params, X)  # (batch, n, vocab)
    batch, n, vocab = logits.shape
    flat = logits.reshape(-1, vocab)  # (B n, vocab)
    L, dz = cross_entropy(flat, targets.reshape(-1))  # dz (B n, vocab)
    dz = dz.reshape(batch, n, vocab)
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    for Xb, dzb in zip(X, dz):
        Q, K, V = (Xb @ params[f"W_{x}"] for x in "QKV")  # (n, d) each
        Y, _ = attention(Q, K, V)  # (n, d)
        grads["W_O"] += Y.T @ dzb  # (d, vocab)
        dQ, dK, dV = attention_backward(Q, K, V, dzb @ params["W_O"].T)  # (n, d) each
        grads["W_Q"] += Xb.T @ dQ
        grads["W_K"] += Xb.T @ dK
        grads["W_V"] += Xb.T @ dV
    return L, grads


def edge_share(W, source) -> float:
    """The mean over queries (and sequences) of W[i, source[i]]: the mass on the expected edges."""
    W = np.asarray(W)  # (..., n, n)
    n = W.shape[-1]
    return float(W[..., np.arange(n), np.asarray(source)].mean())


def train_sequence_model(task: str, *, n: int = 8, vocab: int = 8, d: int = 16, batch: int = 16,
                         steps: int = 200, lr: float = 0.05, seed: int = 0,
                         every: int = 10, held_out: int = 64, positions: bool = True) -> dict:
    """Train the one-layer model on ``task``; the weights before and after, and the share curve.

    A fresh batch of sequences each step (seeded); the share and the accuracy are measured on one
    held-out batch; ``positions=False`` hides the positions from the model. Returns ``source``,
    ``W_before``/``W_after`` (the held-out batch's mean W, (n, n)), ``steps``/``share``/``loss``
    every ``every`` steps, ``accuracy`` (held out, after), and the held-out batch.
    """
    rng = np.random.default_rng(seed)
    params = init_sequence_model(vocab, n, d, rng)
    tokens, targets, source = sequence_task(task, n, vocab, held_out, rng)
    X_test = sequence_inputs(tokens, vocab, positions)  # (held_out, n, f)
    W_before = sequence_model(params, X_test)[1].mean(axis=0)  # (n, n)
    state, curve = {}, {"steps": [], "share": [], "loss": []}
    for step in range(steps + 1):
        if step % every == 0:
            _, W = sequence_model(params, X_test)
            curve["steps"].append(step)
            curve["share"].append(edge_share(W, source))
            curve["loss"].append(sequence_model_grads(params, X_test, targets)[0])
        if step == steps:
            break
        tok, tgt, _ = sequence_task(task, n, vocab, batch, rng)
        _, grads = sequence_model_grads(params, sequence_inputs(tok, vocab, positions), tgt)
        adam(params, grads, state, lr)
    logits, W = sequence_model(params, X_test)
    return {"task": task, "source": source, "params": params, "W_before": W_before,
            "tokens_test": tokens, "targets_test": targets, "vocab": vocab,
            "W_after": W.mean(axis=0), "share_after": edge_share(W, source),
            "share_before": curve["share"][0],
            "accuracy": float((logits.argmax(axis=-1) == targets).mean()), **curve}


# --------------------------------------------------------------------------------------------------
# Experiment B: the karate club, two labelled members
# --------------------------------------------------------------------------------------------------

def club_features(k: int = 4) -> dict:
    """The club: A, the split, the mask A + I, one-hot features I and [I | √n · PE_k]."""
    A, club, _ = club_graph()
    n = A.shape[0]
    identity = np.eye(n)  # (n, n)
    return {"A": A, "club": club, "mask": graph_mask(A), "identity": identity,
            "with_pe": np.hstack([identity, standardised_pe(A, k)]),  # (n, n + k)
            "A_hat": gcn_propagation(A), "mean": mean_propagation(A)}


def _inputs(kind: str, data: dict) -> np.ndarray:
    """GCN and GAT read one-hot features; masked attention and its uniform twin add the PE."""
    return data["identity"] if kind in ("GCN", "GAT") else data["with_pe"]


def init_club_model(kind: str, data: dict, rng: np.random.Generator, hidden: int = 16,
                    d_k: int = 8) -> dict:
    """Two layers' parameters for ``kind`` (one of CLUB_MODELS), entries N(0, 1/fan-in)."""
    if kind not in CLUB_MODELS:
        raise ValueError(f"kind must be one of {CLUB_MODELS}; got {kind!r}")
    f = _inputs(kind, data).shape[1]
    params = {}
    for layer, (d_in, d_out) in enumerate(((f, hidden), (hidden, 2)), start=1):
        params[f"Theta{layer}"] = rng.standard_normal((d_in, d_out)) / math.sqrt(d_in)
        if kind == "GAT":
            params[f"a{layer}"] = rng.standard_normal((2, d_out)) / math.sqrt(d_out)
        if kind == "masked attention":
            params[f"W_Q{layer}"] = rng.standard_normal((d_in, d_k)) / math.sqrt(d_in)
            params[f"W_K{layer}"] = rng.standard_normal((d_in, d_k)) / math.sqrt(d_in)
    return params


def _layer(kind: str, params: dict, layer: int, H, data: dict) -> tuple[np.ndarray, dict]:
    """out = W Z, Z = H Θ, W the layer's attention (fixed for GCN and uniform); (out, cache)."""
    Z = H @ params[f"Theta{layer}"]  # (n, d_out)
    cache = {"H": H, "Z": Z}
    if kind == "GCN":
        W = data["A_hat"]  # (n, n)
    elif kind == "uniform attention":
        W = data["mean"]  # (n, n)
    elif kind == "GAT":
        a = params[f"a{layer}"]  # (2, d_out)
        pre = (Z @ a[0])[:, None] + (Z @ a[1])[None, :]  # (n, n)
        W = softmax(leaky_relu(pre), data["mask"])  # (n, n)
        cache["pre"] = pre
    else:
        Q, K = H @ params[f"W_Q{layer}"], H @ params[f"W_K{layer}"]  # (n, d_k) each
        W = softmax(Q @ K.T / math.sqrt(Q.shape[1]), data["mask"])  # (n, n)
        cache.update(Q=Q, K=K)
    cache["W"] = W
    return W @ Z, cache  # (n, d_out)


def _layer_backward(kind: str, params: dict, layer: int, cache: dict, dout, data: dict,
                    grads: dict) -> np.ndarray:
    """Gradients of one layer's parameters into ``grads``; returns dH."""
    H, Z, W = cache["H"], cache["Z"], cache["W"]
    Theta = params[f"Theta{layer}"]
    if kind == "masked attention":
        dQ, dK, dZ = attention_backward(cache["Q"], cache["K"], Z, dout, data["mask"])  # (n, ·)
        grads[f"W_Q{layer}"] = H.T @ dQ
        grads[f"W_K{layer}"] = H.T @ dK
        dH = dQ @ params[f"W_Q{layer}"].T + dK @ params[f"W_K{layer}"].T  # (n, d_in)
    else:
        dZ = W.T @ dout  # (n, d_out)
        dH = np.zeros_like(H)  # (n, d_in)
    if kind == "GAT":
        a = params[f"a{layer}"]  # (2, d_out)
        dE = softmax_backward(W, dout @ Z.T)  # (n, n), 0 off the mask
        dpre = dE * np.where(cache["pre"] >= 0, 1.0, GAT_NEGATIVE_SLOPE)  # (n, n)
        d_src, d_dst = dpre.sum(axis=1), dpre.sum(axis=0)  # (n,), (n,)
        grads[f"a{layer}"] = np.stack([Z.T @ d_src, Z.T @ d_dst])  # (2, d_out)
        dZ = dZ + np.outer(d_src, a[0]) + np.outer(d_dst, a[1])  # (n, d_out)
    grads[f"Theta{layer}"] = H.T @ dZ
    return dH + dZ @ Theta.T  # (n, d_in)


def club_model(kind: str, params: dict, data: dict) -> tuple[np.ndarray, list]:
    """logits = L₂(ReLU(L₁(X))), each L a layer of ``kind``; (logits (n, 2), the two caches)."""
    H1, c1 = _layer(kind, params, 1, _inputs(kind, data), data)  # (n, hidden)
    logits, c2 = _layer(kind, params, 2, np.maximum(H1, 0.0), data)  # (n, 2)
    c1["relu"] = H1 > 0
    return logits, [c1, c2]


def club_model_grads(kind: str, params: dict, data: dict) -> tuple[float, dict]:
    """Cross-entropy on the two labelled members and its gradient in every parameter."""
    logits, (c1, c2) = club_model(kind, params, data)
    labelled = np.array(LABELLED)  # (2,)
    L, dz = cross_entropy(logits[labelled], data["club"][labelled])  # (2, 2)
    dlogits = np.zeros_like(logits)  # (n, 2)
    dlogits[labelled] = dz
    grads: dict = {}
    dH1 = _layer_backward(kind, params, 2, c2, dlogits, data, grads)  # (n, hidden)
    _layer_backward(kind, params, 1, c1, dH1 * c1["relu"], data, grads)
    return L, grads


def train_club_model(kind: str, seed: int, *, steps: int = 100, lr: float = 0.01,
                     data: dict | None = None) -> dict:
    """Train ``kind`` from seed ``seed``; accuracy on the 32 unlabelled members, the attention
    graphs of both layers before and after training."""
    data = club_features() if data is None else data
    params = init_club_model(kind, data, np.random.default_rng(seed))
    before = [c["W"] for c in club_model(kind, params, data)[1]]
    state: dict = {}
    record_steps, history = [], []  # the steps recorded, and the logits there
    for step in range(steps + 1):
        if step % RECORD_EVERY == 0 or step == steps:
            record_steps.append(step)
            history.append(club_model(kind, params, data)[0])  # (n, 2)
        if step < steps:
            _, grads = club_model_grads(kind, params, data)
            adam(params, grads, state, lr)
    logits, caches = club_model(kind, params, data)
    unlabelled = np.setdiff1d(np.arange(len(data["club"])), LABELLED)  # (32,)
    predicted = logits.argmax(axis=1)  # (n,)
    return {"kind": kind, "seed": seed, "predicted": predicted, "params": params,
            "accuracy": float((predicted[unlabelled] == data["club"][unlabelled]).mean()),
            "W_before": before, "W_after": [c["W"] for c in caches],
            "record_steps": record_steps, "logits_history": np.array(history)}  # (records, n, 2)


def attention_readout(W, data: dict) -> dict:
    """The graph tools on one attention matrix of the club (row-stochastic, on A + I).

    ``same_faction``: the mean over members of the attention mass on members of their own faction;
    ``ari``: agreement of the spectral bipartition with the recorded split; ``pagerank`` (n,).
    """
    club = data["club"]
    same = club[:, None] == club[None, :]  # (n, n)
    return {"same_faction": float((W * same).sum(axis=1).mean()),
            "ari": adjusted_rand_index(spectral_bipartition(W), club),
            "pagerank": pagerank(W)}


def club_study(seeds: int = 20, steps: int = 100, lr: float = 0.01) -> dict:
    """Every model of CLUB_MODELS trained from seeds 0..seeds−1 with the same budget.

    Returns ``accuracy[kind]`` (seeds,), ``history[kind]`` (seeds, records, n, 2) the logits at
    ``record_steps``, and, for GAT and masked attention, the graph tools' readouts of the first
    layer's attention and of the rollout of both layers, before and after.
    """
    data = club_features()
    labels = tuple(str(i) for i in range(len(data["club"])))
    out = {"accuracy": {k: [] for k in CLUB_MODELS}, "history": {k: [] for k in CLUB_MODELS},
           "readout": {}, "steps": steps, "lr": lr, "seeds": seeds}
    for kind in CLUB_MODELS:
        for seed in range(seeds):
            run = train_club_model(kind, seed, steps=steps, lr=lr, data=data)
            out["accuracy"][kind].append(run["accuracy"])
            out["history"][kind].append(run["logits_history"])
            out["record_steps"] = run["record_steps"]
            if kind not in ("GAT", "masked attention"):
                continue
            for when in ("before", "after"):
                layers = [AttentionGraph(W, labels) for W in run[f"W_{when}"]]
                rollout = attention_rollout(layers).W  # (n, n)
                for what, W in (("layer 1", layers[0].W), ("rollout", rollout)):
                    out["readout"].setdefault((kind, what, when), []).append(
                        attention_readout(W, data))
    return out


def readout_summary(study: dict) -> dict:
    """Seed means of :func:`club_study`'s readouts: same_faction, ari, pagerank_0, pagerank_33."""
    out = {}
    for key, runs in study["readout"].items():
        out[key] = {"same_faction": float(np.mean([r["same_faction"] for r in runs])),
                    "ari": float(np.mean([r["ari"] for r in runs])),
                    "pagerank_0": float(np.mean([r["pagerank"][LABELLED[0]] for r in runs])),
                    "pagerank_33": float(np.mean([r["pagerank"][LABELLED[1]] for r in runs]))}
    return out


def held_out_members(per_faction: int = 3, seed: int = 0) -> tuple[int, ...]:
    """Members held out to choose the early-stopping step: ``per_faction`` unlabelled members of each
    faction, drawn with ``seed``; their labels are never trained on and never scored."""
    _, club, _ = club_graph()
    rng = np.random.default_rng(seed)
    unlabelled = np.setdiff1d(np.arange(len(club)), LABELLED)  # (32,)
    picked = [rng.choice(unlabelled[club[unlabelled] == f], per_faction, replace=False) for f in (0, 1)]
    return tuple(sorted(int(i) for i in np.concatenate(picked)))


def early_stopping(study: dict, held_out: tuple[int, ...] | None = None) -> dict:
    """Accuracy along training, and at the step chosen on the held-out members.

    For each model: ``curve`` (records,) the seed mean of the accuracy on the test members (neither
    labelled nor held out) at ``study["record_steps"]``; for each seed, the recorded step of lowest
    cross-entropy on the held-out members (``chosen`` (seeds,), the first if several tie) and the test
    accuracy there (``at_chosen``) and after the last step (``at_last``).
    """
    held_out = held_out_members() if held_out is None else tuple(held_out)
    _, club, _ = club_graph()
    test = np.setdiff1d(np.arange(len(club)), LABELLED + held_out)  # (n_test,)
    steps = np.asarray(study["record_steps"])  # (records,)
    out = {"held_out": held_out, "test": tuple(int(i) for i in test), "record_steps": steps}
    for kind, runs in study["history"].items():
        logits = np.asarray(runs)  # (seeds, records, n, 2)
        test_acc = (logits[:, :, test].argmax(axis=3) == club[test]).mean(axis=2)  # (seeds, records)
        held = logits[:, :, list(held_out)]  # (seeds, records, n_held, 2)
        log_p = held - np.logaddexp(held[..., :1], held[..., 1:])  # (seeds, records, n_held, 2)
        truth = club[list(held_out)]  # (n_held,)
        held_loss = -np.take_along_axis(log_p, truth[None, None, :, None], axis=3)[..., 0].mean(axis=2)
        best = held_loss.argmin(axis=1)  # (seeds,): the first record of the lowest held-out loss
        seeds = np.arange(len(logits))  # (seeds,)
        out[kind] = {"curve": test_acc.mean(axis=0), "chosen": steps[best],
                     "at_chosen": test_acc[seeds, best], "at_last": test_acc[:, -1]}
    return out

