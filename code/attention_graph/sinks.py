"""Attention sinks: the first token of a causal graph is the only one every query sees.

In the causal graph on n tokens, query i attends to the keys j ≤ i, so key j is seen by the
n − j + 1 queries j … n (1-based): the first token is seen by all n, and by every query. Under
uniform causal attention its out-strength is the harmonic number H_n; trained causal models go
further and park the attention of queries that need nothing on it (Xiao et al. 2023). The chapter
``book/sinks.md`` proves the counts, trains a small seeded causal model in NumPy on a task where
most queries need nothing, reads the out-strength and PageRank of each position over training, and
repeats the run with a dedicated sink token (a fixed token put before every sequence).

Every gradient is written out with the chain rule; attention's goes through
:func:`attention_graph.backward.attention_backward`; the optimiser is
:func:`attention_graph.training.adam`.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .attention import attention
from .backward import attention_backward
from .graph import causal_mask
from .graph_tools import pagerank
from .patterns import causal_edges
from .registry import derivation
from .training import adam, cross_entropy
from .validation import as_edges, as_int, as_matrix

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["out_degrees", "position_out_strength", "uniform_causal_weights"]

BLANK, TRIGGER = 0, 1  # token 0: "nothing to report"; token 1: "report the previous token"


# --------------------------------------------------------------------------------------------------
# The causal graph: who sees whom
# --------------------------------------------------------------------------------------------------

def out_degrees(edges, n: int) -> np.ndarray:
    """deg_out(j) = #{i : (i, j) is an edge}: the arrows leaving key j  (thm-causal-first-token). (n,).

    One arrow goes to each query that sees key j.

    >>> out_degrees(causal_edges(4), 4).tolist()
    [4, 3, 2, 1]
    """
    n = as_int(n, "n")
    E = as_edges(edges, "edges", n, n)  # (E, 2)
    return np.bincount(E[:, 1], minlength=n).astype(np.int64)  # (n,)


def uniform_causal_weights(n: int) -> np.ndarray:
    """W[i, j] = 1/(i + 1) for j ≤ i (0-based)  (thm-uniform-causal-sink). (n, n).

    Every query spreads its attention evenly over the keys it sees.

    >>> uniform_causal_weights(2).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    n = as_int(n, "n")
    i = np.arange(n)  # (n,)
    return np.tril(np.ones((n, n))) / (i[:, None] + 1.0)  # (n, n)


def position_out_strength(W) -> np.ndarray:
    """s_out(j) = Σ_i W[b, i, j], averaged over the batch b: the weight on the arrows leaving position j. (n,).

    ``W`` one (n, n) attention matrix or a batch (B, n, n).

    >>> position_out_strength([[1.0, 0.0], [0.5, 0.5]]).tolist()
    [1.5, 0.5]
    """
    shape = np.shape(W)
    if len(shape) not in (2, 3) or shape[-1] != shape[-2]:
        raise ValueError(f"W must be one (n, n) attention matrix or a batch (B, n, n); got shape "
                         f"{shape}")
    W = as_matrix(np.reshape(W, (-1, shape[-1])), "W", shape_doc="(B n, n)").reshape(
        (-1, shape[-1], shape[-1]))  # (B, n, n)
    return W.sum(axis=1).mean(axis=0)  # (n,)


# --------------------------------------------------------------------------------------------------
# A task where most queries need nothing, and a one-layer causal model
# --------------------------------------------------------------------------------------------------

def trigger_task(n: int, vocab: int, batch: int, rng: np.random.Generator, *, p: float = 0.2,
                 sink_token: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """(tokens, targets), each (batch, n), or (batch, n + 1) with a sink token in front.

    The content tokens are 2 … vocab − 1; at each position after the first, with probability p
    (never twice in a row), the token is TRIGGER instead. The target is the token before a
    trigger, and BLANK everywhere else: most queries have nothing to fetch. With
    ``sink_token=True`` the token ``vocab`` (not a content token) comes first; its target is −1
    (no loss).
    """
    n, vocab, batch = as_int(n, "n", low=2), as_int(vocab, "vocab", low=3), as_int(batch, "batch")
    tokens = rng.integers(2, vocab, size=(batch, n))  # (batch, n)
    draw = rng.random((batch, n)) < p  # (batch, n)
    for i in range(1, n):
        tokens[:, i] = np.where(draw[:, i] & (tokens[:, i - 1] != TRIGGER), TRIGGER, tokens[:, i])
    targets = np.full((batch, n), BLANK)  # (batch, n)
    hit = tokens[:, 1:] == TRIGGER  # (batch, n − 1)
    targets[:, 1:][hit] = tokens[:, :-1][hit]
    if sink_token:
        tokens = np.hstack([np.full((batch, 1), vocab), tokens])  # (batch, n + 1)
        targets = np.hstack([np.full((batch, 1), -1), targets])  # (batch, n + 1)
    return tokens, targets


def init_sink_model(vocab: int, n: int, d: int, rng: np.random.Generator) -> dict:
    """W_E (vocab + 1, d) (row ``vocab``: the sink token), W_P (n, d), W_Q, W_K, W_V (d, d), W_U (d, vocab)."""
    s = 1 / math.sqrt(d)
    params = {"W_E": rng.standard_normal((vocab + 1, d)) * s, "W_P": rng.standard_normal((n, d)) * s}
    for m in "QKV":
        params[f"W_{m}"] = rng.standard_normal((d, d)) * s  # (d, d)
    params["W_U"] = rng.standard_normal((d, vocab)) * s  # (d, vocab)
    return params


def sink_forward(params: dict, tokens) -> tuple[np.ndarray, dict]:
    """X = W_E[tok] + W_P; X' = X + softmax(XW_Q (XW_K)ᵀ/√d + causal) X W_V; logits = X' W_U.

    ``tokens`` (n,). Returns logits (n, vocab) and the cache (X, Q, K, V, W, X_out), X_out = X'.
    """
    n = len(tokens)
    X = params["W_E"][tokens] + params["W_P"][:n]  # (n, d)
    Q, K, V = (X @ params[f"W_{m}"] for m in "QKV")  # (n, d) each
    Y, W = attention(Q, K, V, causal_mask(n))  # (n, d), (n, n)
    X_out = X + Y  # (n, d): X', the output of the attention sublayer
    return X_out @ params["W_U"], {"X": X, "Q": Q, "K": K, "V": V, "W": W, "X_out": X_out}


def sink_grads(params: dict, tokens, targets,
               forward=None, backward=None) -> tuple[float, dict]:
    """Mean cross-entropy over the positions with a target (≥ 0), and its gradients.

    ``forward`` and ``backward`` are the model's pass through one sequence and the way back through
    its attention sublayer (:func:`sink_forward` and :func:`sink_backward` unless given: the
    differential chapter passes its gated model's).
    """
    forward, backward = forward or sink_forward, backward or sink_backward
    B, n = np.shape(tokens)
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    total = 0.0
    for tok, target in zip(tokens, targets):
        rows = np.flatnonzero(target >= 0)  # (r,)
        logits, c = forward(params, tok)
        L, dz = cross_entropy(logits[rows], target[rows])  # dz (r, vocab)
        total += L / B
        dlogits = np.zeros_like(logits)  # (n, vocab)
        dlogits[rows] = dz / B
        grads["W_U"] += c["X_out"].T @ dlogits
        dX_out = dlogits @ params["W_U"].T  # (n, d)
        dX, sublayer = backward(params, c, dX_out)  # (n, d), {name: gradient}
        for name, dM in sublayer.items():
            grads[name] += dM
        np.add.at(grads["W_E"], tok, dX)
        grads["W_P"][:n] += dX
    return total, grads


def sink_backward(params: dict, c: dict, dX_out) -> tuple[np.ndarray, dict]:
    """dX = dX' + dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ back through X' = X + softmax(QKᵀ/√d + causal) V.

    ``c`` is :func:`sink_forward`'s cache and ``dX_out`` (n, d) the gradient of X'. Returns dX and
    the gradients of W_Q, W_K and W_V.
    """
    return attention_sublayer_backward(params, c, dX_out, dX_out)


def attention_sublayer_backward(params: dict, c: dict, dY, dX_res) -> tuple[np.ndarray, dict]:
    """dX = dX_res + dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ, where (dQ, dK, dV) is Y = softmax(QKᵀ/√d + causal) V's
    backward pass from dY (n, d_v); ``dX_res`` (n, d) is what reaches X by the other routes."""
    n = len(c["X"])
    dQ, dK, dV = attention_backward(c["Q"], c["K"], c["V"], dY, causal_mask(n))  # (n, d) each
    grads = {f"W_{name}": c["X"].T @ dM for name, dM in zip("QKV", (dQ, dK, dV))}
    W_Q, W_K, W_V = params["W_Q"], params["W_K"], params["W_V"]
    dX = dX_res + dQ @ W_Q.T + dK @ W_K.T + dV @ W_V.T  # (n, d)
    return dX, grads


def readout(params: dict, tokens, targets) -> dict:
    """What the trained graph looks like on a held-out batch: the mean W (n, n), the out-strength
    and PageRank of each position, the accuracy, and where the queries that need nothing attend."""
    Ws, hits, quiet = [], [], []
    for s, t in zip(tokens, targets):
        logits, c = sink_forward(params, s)
        Ws.append(c["W"])
        rows = np.flatnonzero(t >= 0)  # (r,)
        hits.extend(logits[rows].argmax(axis=1) == t[rows])
        quiet.append(c["W"][(t == BLANK)].mean(axis=0))  # (n,): a blank query's mean attention
    W = np.stack(Ws)  # (B, n, n)
    W_mean = W.mean(axis=0)  # (n, n)
    return {"W": W_mean, "out_strength": position_out_strength(W), "pagerank": pagerank(W_mean),
            "accuracy": float(np.mean(hits)), "blank_attention": np.mean(quiet, axis=0)}


def train_sink_model(seed: int, *, sink_token: bool = False, n: int = 12, vocab: int = 10,
                     d: int = 16, batch: int = 16, steps: int = 300, lr: float = 0.02,
                     every: int = 20, held_out: int = 32) -> dict:
    """Train the one-layer causal model from ``seed``; its readout every ``every`` steps."""
    rng = np.random.default_rng(seed)
    params = init_sink_model(vocab, n + int(sink_token), d, rng)
    test = trigger_task(n, vocab, held_out, rng, sink_token=sink_token)
    state: dict = {}
    curve: dict = {"steps": [], "readouts": [], "loss": []}  # loss: each step's training batch
    for step in range(steps + 1):
        if step % every == 0:
            curve["steps"].append(step)
            curve["readouts"].append(readout(params, *test))
        if step == steps:
            break
        L, grads = sink_grads(params, *trigger_task(n, vocab, batch, rng, sink_token=sink_token))
        curve["loss"].append(L)
        adam(params, grads, state, lr)
    return {"seed": seed, "sink_token": sink_token, "n": n, "params": params, "test": test, **curve}


def _plain(readout_: dict) -> dict:
    """A readout with its arrays as lists (for a JSON record)."""
    return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in readout_.items()}


def sink_study(seeds: int = 8, steps: int = 300, **kwargs) -> dict:
    """:func:`train_sink_model` from seeds 0..seeds−1, without and with a sink token.

    For each variant and seed: the readouts every ``every`` steps (the mean W, out-strength,
    PageRank, accuracy and the attention of the blank queries), as lists, and the mean W of the
    trained model.
    """
    out: dict = {"seeds": list(range(seeds)), "steps": steps, "runs": {}}
    for variant, sink_token in (("plain", False), ("sink token", True)):
        runs = []
        for seed in range(seeds):
            run = train_sink_model(seed, sink_token=sink_token, steps=steps, **kwargs)
            readouts = [_plain(r) for r in run["readouts"]]
            W_final = readouts[-1]["W"]
            for r in readouts:
                del r["W"]  # the record keeps the mean W of the trained model only
            runs.append({"steps": run["steps"], "readouts": readouts, "W_final": W_final})
        out["runs"][variant] = runs
    out["n"] = run["n"]
    return out


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

_n, _j, _k = sp.symbols("n j k", integer=True, positive=True)
_i = sp.Symbol("i", integer=True, positive=True)


def causal_out_degree(j, n):
    """deg_out(j) = Σ_{i=j}^{n} 1 = n − j + 1 (1-based): the arrows leaving key j go to the queries i ≥ j."""
    return sp.summation(sp.Integer(1), (_i, j, n))


def uniform_out_strength(j, n):
    """s_out(j) = Σ_{i=j}^{n} 1/i under uniform causal attention (1-based)."""
    return sp.summation(1 / _i, (_i, j, n))


@derivation("thm-causal-first-token", strength="proved",
            scope="for symbolic n and j; the package's counts verified for every n ≤ 12")
def _check_causal_first_token():
    # Key j is seen by the queries i = j … n: n − j + 1 of them, for symbolic n and j.
    yield sp.Eq(causal_out_degree(_j, _n), _n - _j + 1, evaluate=False)
    # The first token is seen by all n; any later one, j = 1 + k with k ≥ 1, by fewer.
    yield sp.Eq(causal_out_degree(1, _n), _n, evaluate=False)
    yield (causal_out_degree(1 + _k, _n) - _n).is_negative
    # The package's causal edge lists agree, for every n ≤ 12.
    yield all(out_degrees(causal_edges(n), n).tolist() == [n - j for j in range(n)]
              for n in range(1, 13))


@derivation("thm-uniform-causal-sink", strength="proved",
            scope="for symbolic n and j; the package's out-strengths verified for every n ≤ 12, to within 1e-13")
def _check_uniform_causal_sink():
    # Σ_{i=1}^{j−1} 1/i + Σ_{i=j}^{n} 1/i = H_n for symbolic n and j: s_out(j) = H_n − H_{j−1};
    # the first token's out-strength is H_n.
    # (kept unevaluated: the registry decides it, SymPy joining the two sums into one.)
    joined = sp.simplify(sp.Sum(1 / _i, (_i, 1, _j - 1)) + uniform_out_strength(_j, _n)).doit()
    yield sp.Eq(joined, sp.harmonic(_n), evaluate=False)
    yield sp.Eq(uniform_out_strength(1, _n), sp.harmonic(_n), evaluate=False)
    # The last token's is 1/n, the first's n H_n times as much.
    yield sp.Eq(uniform_out_strength(_n, _n), 1 / _n)
    # The package's uniform causal weights give those out-strengths (to rounding), for n ≤ 12.
    for n in range(1, 13):
        got = position_out_strength(uniform_causal_weights(n))  # (n,)
        want = [sp.harmonic(n) - sp.harmonic(j - 1) for j in range(1, n + 1)]
        yield bool(np.allclose(got, np.array(want, dtype=float), rtol=0, atol=1e-13))


def causal_symbols(n: int) -> sp.Matrix:
    """A symbolic causal W (n, n) whose rows sum to one and whose every row i ≥ 2 gives a positive
    weight m_i to its earlier tokens: every W the hypothesis of thm-causal-walk-absorbed allows is
    one of its values (the check uses no sign of an entry beyond m_i > 0).

    Row i (1-based) holds W_ii = 1 − m_i, with m_i > 0; its earlier entries are w_ij ≥ 0 for
    j < i − 1, and W_{i,i−1} = m_i − Σ_{j<i−1} w_ij takes the rest. Any single earlier entry may
    be 0 (a row may give all of m_i to one token).
    """
    W = sp.zeros(n, n)
    W[0, 0] = 1
    for a in range(1, n):
        m = sp.Symbol(f"m_{a + 1}", positive=True)  # row a + 1's weight on the earlier tokens
        for b in range(a - 1):
            W[a, b] = sp.Symbol(f"w_{a + 1}{b + 1}", nonnegative=True)
        W[a, a - 1] = m - sum(W[a, b] for b in range(a - 1))
        W[a, a] = 1 - m
    return W


@derivation("thm-causal-walk-absorbed", strength="verified",
            scope="for symbolic causal W of sizes 2 to 5 whose rows sum to one and whose every row i ≥ 2 "
                  "gives a positive weight to its earlier tokens, any single entry possibly 0")
def _check_causal_walk_absorbed():
    for n in range(2, 6):
        W = causal_symbols(n)
        # The hypothesis, as built: causal, rows summing to one.
        yield sp.Eq(W.upper_triangular(1), sp.zeros(n, n))
        yield sp.Eq(W * sp.ones(n, 1), sp.ones(n, 1))
        e1 = sp.zeros(1, n)
        e1[0] = 1
        # e₁ is stationary: e₁ W = e₁ (the first row of a causal W is e₁).
        yield sp.Eq(e1 * W, e1)
        # It is the only one: I − W has rank n − 1. Its first row is 0, and the block of rows and
        # columns 2..n is lower triangular with diagonal Σ_{j<i} W_ij = m_i > 0, so its determinant
        # is positive.
        M = (sp.eye(n) - W)[1:, 1:]
        yield sp.Eq((sp.eye(n) - W).row(0), sp.zeros(1, n))
        yield sp.factor(M.det()).is_positive is True


def sink_summary(results: dict) -> dict:
    """Per variant of a :func:`sink_study` record: how many seeds put the largest out-strength on
    position 0 after training, the medians (over seeds) of the out-strength of positions 0 and 1
    before and after, of the blank queries' attention on position 0, and of the accuracy, and the
    smallest accuracy."""
    out = {}
    for variant, runs in results["runs"].items():
        first = [r["readouts"][0] for r in runs]
        last = [r["readouts"][-1] for r in runs]
        s_last = np.array([r["out_strength"] for r in last])  # (seeds, n)
        s_first = np.array([r["out_strength"] for r in first])  # (seeds, n)
        blank = np.array([r["blank_attention"][0] for r in last])  # (seeds,)
        acc = np.array([r["accuracy"] for r in last])  # (seeds,)
        out[variant] = {"seeds": len(runs), "sink_at_0": int((s_last.argmax(axis=1) == 0).sum()),
                        "s0_before": float(np.median(s_first[:, 0])),
                        "s0_after": float(np.median(s_last[:, 0])),
                        "s1_after": float(np.median(s_last[:, 1])),
                        "blank_on_0": float(np.median(blank)),
                        "blank_on_0_min": float(blank.min()), "blank_on_0_max": float(blank.max()),
                        "pagerank_0": float(np.median([r["pagerank"][0] for r in last])),
                        "accuracy": float(np.median(acc)), "accuracy_min": float(acc.min())}
    return out
