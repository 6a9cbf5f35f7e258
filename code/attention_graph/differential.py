"""Signed edges and gates: differential attention, and gated attention on the sinks chapter's model.

Differential attention (Ye et al. 2024) subtracts a second softmax map from a first:
W± = softmax(Q⁺K⁺ᵀ/√d) − ϑ softmax(Q⁻K⁻ᵀ/√d) (``eq-differential``; the paper's λ is ϑ here, since
λ is the book's eigenvalue). W± is a signed graph whose rows sum to 1 − ϑ
(``thm-differential-rows``); what the two maps share is cancelled (``thm-differential-common-mode``);
the random walk and PageRank need non-negative rows that sum to 1 and do not apply, while the signed
Laplacian of Kunegis et al. (2010) stays positive semidefinite (``thm-signed-laplacian``).

Gated attention (Qiu et al. 2025) multiplies each query's incoming message by a sigmoid gate computed
from the query's own input, Y_gate = sigmoid(X W_gate) ∘ softmax(QKᵀ/√d) V (``eq-gated-attention``):
a query that needs nothing can close its gate instead of parking its attention on a sink. The
module trains the sinks chapter's one-layer causal model (:mod:`attention_graph.sinks`) with and
without the gate, from the same seeds, and reads the first token's out-strength. The chapter is
``book/differential.md``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from .attention import attention
from .graph import causal_mask
from .registry import close_to_exact, derivation, symbol_matrix
from .sinks import (
    BLANK,
    TRIGGER,
    attention_sublayer_backward,
    init_sink_model,
    position_out_strength,
    sink_backward,
    sink_forward,
    sink_grads,
    trigger_task,
)
from .softmax import RowSoftmax, softmax
from .training import adam
from .validation import as_int, as_matrix, as_rng, as_square, check_same

__all__ = ["differential_attention", "gated_attention", "signed_laplacian"]


# --------------------------------------------------------------------------------------------------
# Differential attention: a signed graph
# --------------------------------------------------------------------------------------------------

def as_weight(lam, name: str = "lam") -> float:
    """``lam`` as a finite real number, or a clear error naming it."""
    if isinstance(lam, (bool, np.bool_)) or not isinstance(lam, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a real number; got {lam!r} of type {type(lam).__name__}")
    if not math.isfinite(float(lam)):
        raise ValueError(f"{name} must be finite; got {lam!r}")
    return float(lam)


def signed_difference(W_plus, W_minus, lam: float) -> np.ndarray:
    """W± = W⁺ − ϑ W⁻: the two maps' edges, the second counted against the first. (n_q, n_k)."""
    return W_plus - lam * W_minus  # (n_q, n_k)


def differential_attention(Q1, K1, Q2, K2, V, lam, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Y = (softmax(Q⁺K⁺ᵀ/√d) − ϑ softmax(Q⁻K⁻ᵀ/√d)) V, returned as (Y, W±)  (eq-differential).

    ``Q1``, ``Q2`` (n_q, d) and ``K1``, ``K2`` (n_k, d) are the two maps' queries and keys (Q⁺, K⁺,
    Q⁻, K⁻ on the page), ``V`` (n_k, d_v) the values they share, ``lam`` the real weight ϑ of the
    second map (the paper's λ). ``mask`` as in :func:`attention_graph.attention`, for both
    maps. Returns Y (n_q, d_v) and the signed weight matrix W± (n_q, n_k), whose rows sum to 1 − ϑ
    (thm-differential-rows). The paper's per-head normalisation and its (1 − λ_init) scale come after
    this and are not part of it.

    >>> Y, W = differential_attention([[1.0]], [[1.0], [0.0]], [[1.0]], [[0.0], [0.0]], [[1.0], [0.0]], 0.5)
    >>> W.sum(axis=1).round(6).tolist()
    [0.5]
    """
    lam = as_weight(lam)
    Q1 = as_matrix(Q1, "Q1", shape_doc="(n_q, d)")  # (n_q, d)
    Q2 = as_matrix(Q2, "Q2", shape_doc="(n_q, d)")  # (n_q, d)
    K1 = as_matrix(K1, "K1", shape_doc="(n_k, d)")  # (n_k, d)
    K2 = as_matrix(K2, "K2", shape_doc="(n_k, d)")  # (n_k, d)
    check_same(Q1.shape[0], Q2.shape[0], "Q1 and Q2 must have the same number of rows (n_q)")
    check_same(K1.shape[0], K2.shape[0], "K1 and K2 must have the same number of rows (n_k)")
    check_same(Q1.shape[1], K1.shape[1], "Q1 and K1 must have the same number of columns (d)")
    check_same(Q2.shape[1], K2.shape[1], "Q2 and K2 must have the same number of columns (d)")
    _, W_plus = attention(Q1, K1, V, mask)  # (n_q, n_k)
    _, W_minus = attention(Q2, K2, V, mask)  # (n_q, n_k)
    W = signed_difference(W_plus, W_minus, lam)  # (n_q, n_k)
    return W @ np.asarray(V, dtype=W.dtype), W  # (n_q, d_v), (n_q, n_k)


def signed_laplacian(A) -> np.ndarray:
    """L̄ = D̄ − A, D̄ = diag(Σ_j abs(A_ij)): the Laplacian of a signed graph  (thm-signed-laplacian). (n, n).

    ``A`` is a symmetric (n, n) signed weight matrix, e.g. (W± + W±ᵀ)/2 (Kunegis et al. 2010).
    Positive semidefinite whatever the signs.

    >>> signed_laplacian([[0.0, -1.0], [-1.0, 0.0]]).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    A = as_square(A, "A")  # (n, n)
    if not np.allclose(A, A.T, rtol=0, atol=1e-12):
        raise ValueError("A must be symmetric (the signed Laplacian is for undirected graphs); "
                         "symmetrise it first: (A + A.T) / 2")
    return signed_degree_laplacian(A)  # (n, n)


def signed_degree_laplacian(A) -> np.ndarray:
    """D̄ − A with D̄_ii = Σ_j abs(A_ij), the degree counting every edge by its magnitude. (n, n)."""
    return np.diag(np.abs(A).sum(axis=1)) - A  # (n, n)


def common_mode_scores(n_q: int, n_k: int, rng: np.random.Generator, *, signal: float = 2.0,
                       common: float = 1.0, sink: float = 2.0, private: float = 0.2
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores of two maps that share a common-mode part: (S⁺, S⁻, r), S± (n_q, n_k), r (n_q,).

    Both maps see the same noise N (each entry N(0, common²)) and the same bias ``sink`` on key 0;
    each adds its own noise (N(0, private²)); only the first adds ``signal`` at query i's relevant
    key r_i (drawn from 1 … n_k − 1).
    """
    n_q, n_k, rng = as_int(n_q, "n_q"), as_int(n_k, "n_k", low=2), as_rng(rng)
    r = rng.integers(1, n_k, size=n_q)  # (n_q,)
    N = common * rng.standard_normal((n_q, n_k))  # (n_q, n_k): the common mode
    N[:, 0] += sink
    S_plus = N + private * rng.standard_normal((n_q, n_k))  # (n_q, n_k)
    S_plus[np.arange(n_q), r] += signal
    S_minus = N + private * rng.standard_normal((n_q, n_k))  # (n_q, n_k)
    return S_plus, S_minus, r


def noise_share(W, r) -> np.ndarray:
    """Σ_{j ≠ r_i} abs(W_ij) / Σ_j abs(W_ij): the share of row i's edge magnitude not on its key r_i. (n_q,)."""
    W = as_matrix(W, "W", shape_doc="(n_q, n_k)")  # (n_q, n_k)
    r = np.asarray(r)
    if r.shape != (W.shape[0],) or r.dtype.kind not in "iu" or (r < 0).any() or (r >= W.shape[1]).any():
        raise ValueError(f"r must hold one key index in 0 … {W.shape[1] - 1} per row of W; got {r!r}")
    total = np.abs(W).sum(axis=1)  # (n_q,)
    if (total == 0).any():
        raise ValueError("W has a row of zeros: its noise share is undefined")
    return 1.0 - np.abs(W[np.arange(W.shape[0]), r]) / total  # (n_q,)


def common_mode_sweep(thetas, privates, *, n_q: int = 2000, n_k: int = 16, seed: int = 0) -> dict:
    """The mean noise share of W± = W⁺ − ϑ W⁻ over ``thetas``, for each level of private noise.

    For each ``private`` in ``privates`` the scores come from :func:`common_mode_scores` (seeded,
    the same draw for every ϑ). Returns {"thetas": [...], "privates": [...], "noise": [[...] per
    private], "sink": [[...] per private]} with the mean shares of |W±| off the relevant key and on
    the sink key 0.
    """
    out: dict = {"thetas": [float(t) for t in thetas], "privates": [float(p) for p in privates],
                 "noise": [], "sink": []}
    for private in privates:
        S_plus, S_minus, r = common_mode_scores(n_q, n_k, np.random.default_rng(seed), private=private)
        W_plus, W_minus = softmax(S_plus), softmax(S_minus)  # (n_q, n_k) each
        noise, sink = [], []
        for lam in thetas:
            W = signed_difference(W_plus, W_minus, float(lam))  # (n_q, n_k)
            noise.append(float(noise_share(W, r).mean()))
            sink.append(float((np.abs(W[:, 0]) / np.abs(W).sum(axis=1)).mean()))
        out["noise"].append(noise)
        out["sink"].append(sink)
    return out


# --------------------------------------------------------------------------------------------------
# Gated attention: a sigmoid gate on each node's incoming message
# --------------------------------------------------------------------------------------------------

def sigmoid(G) -> np.ndarray:
    """1 / (1 + e^{−G}), entrywise, computed without overflow."""
    E = np.exp(-np.abs(G))  # e^{−|G|} ≤ 1
    return np.where(G >= 0, 1.0 / (1.0 + E), E / (1.0 + E))


def gate_messages(G, Y) -> np.ndarray:
    """sigmoid(G) ∘ Y: each query's incoming message, scaled coordinate by coordinate. (n_q, d_v)."""
    return sigmoid(G) * Y  # (n_q, d_v)


def gated_attention(Q, K, V, G, mask=None) -> tuple[np.ndarray, np.ndarray]:
    """Y_gate = sigmoid(G) ∘ softmax(QKᵀ/√d) V, returned as (Y_gate, W)  (eq-gated-attention).

    ``G`` (n_q, d_v) holds the gate logits, G = X W_gate in Qiu et al. (2025): one per query and
    value coordinate. W is the attention's own weight matrix, rows summing to 1 as always; the gate
    scales what reaches the query, not where it comes from.

    >>> Y, W = gated_attention([[0.0]], [[0.0]], [[2.0]], [[0.0]])
    >>> Y.tolist(), W.tolist()
    ([[1.0]], [[1.0]])
    """
    Y, W = attention(Q, K, V, mask)  # (n_q, d_v), (n_q, n_k)
    G = as_matrix(G, "G", shape_doc="(n_q, d_v)")  # (n_q, d_v)
    if G.shape != Y.shape:
        raise ValueError(f"G must have one gate logit per query and value coordinate, shape {Y.shape}; "
                         f"got {G.shape}")
    return gate_messages(G, Y), W  # (n_q, d_v), (n_q, n_k)


def init_gate(d: int, seed: int) -> np.ndarray:
    """W_gate (d, d), drawn from its own stream (seed, 1) so the rest of the model is the sinks chapter's."""
    return np.random.default_rng([seed, 1]).standard_normal((d, d)) / math.sqrt(d)  # (d, d)


def gated_forward(params: dict, tokens) -> tuple[np.ndarray, dict]:
    """X' = X + sigmoid(X W_gate) ∘ softmax(XW_Q (XW_K)ᵀ/√d + causal) X W_V; logits = X' W_U.

    Without ``W_gate`` in ``params`` this is :func:`attention_graph.sinks.sink_forward`, the sinks
    chapter's model. ``tokens`` (n,). Returns the logits (n, vocab) and the cache.
    """
    if "W_gate" not in params:
        return sink_forward(params, tokens)
    n = len(tokens)
    X = params["W_E"][tokens] + params["W_P"][:n]  # (n, d)
    Q, K, V = (X @ params[f"W_{m}"] for m in "QKV")  # (n, d) each
    Y, W = attention(Q, K, V, causal_mask(n))  # (n, d), (n, n)
    G = X @ params["W_gate"]  # (n, d): the gate logits
    X_out = X + gate_messages(G, Y)  # (n, d)
    cache = {"X": X, "Q": Q, "K": K, "V": V, "W": W, "Y": Y, "G": G, "X_out": X_out}
    return X_out @ params["W_U"], cache


def gated_backward(params: dict, c: dict, dX_out) -> tuple[np.ndarray, dict]:
    """dX back through X' = X + sigmoid(G) ∘ Y, G = X W_gate, with sigmoid' = g (1 − g).

    ``c`` is :func:`gated_forward`'s cache and ``dX_out`` (n, d) the gradient of X'; the attention's
    part is :func:`attention_graph.sinks.attention_sublayer_backward`. Returns dX and the gradients
    of W_Q, W_K, W_V and W_gate. Pass it to :func:`attention_graph.sinks.sink_grads` with
    :func:`gated_forward`.
    """
    g = sigmoid(c["G"])  # (n, d)
    dY = dX_out * g  # (n, d): through the gate to the attention's output
    dG = dX_out * c["Y"] * g * (1.0 - g)  # (n, d): sigmoid' = g (1 − g)
    dX, grads = attention_sublayer_backward(params, c, dY, dX_out + dG @ params["W_gate"].T)  # (n, d)
    grads["W_gate"] = c["X"].T @ dG  # (d, d)
    return dX, grads


def gated_readout(params: dict, tokens, targets) -> dict:
    """On a held-out batch: the out-strength of each position, the accuracy, where the blank queries
    attend, and the mean gate of the blank and of the trigger queries (1 without a gate)."""
    Ws, hits, quiet, gate_blank, gate_trigger = [], [], [], [], []
    for s, t in zip(tokens, targets):
        logits, c = gated_forward(params, s)
        Ws.append(c["W"])
        rows = np.flatnonzero(t >= 0)  # (r,)
        hits.extend(logits[rows].argmax(axis=1) == t[rows])
        quiet.append(c["W"][t == BLANK].mean(axis=0))  # (n,)
        g = sigmoid(c["G"]).mean(axis=1) if "G" in c else np.ones(len(s))  # (n,): a query's mean gate
        gate_blank.extend(g[t == BLANK])
        gate_trigger.extend(g[s == TRIGGER])
    W = np.stack(Ws)  # (B, n, n)
    return {"out_strength": position_out_strength(W).tolist(), "accuracy": float(np.mean(hits)),
            "blank_attention": np.mean(quiet, axis=0).tolist(),
            "gate_blank": float(np.mean(gate_blank)), "gate_trigger": float(np.mean(gate_trigger))}


def train_gated_model(seed: int, *, gate: bool = True, n: int = 12, vocab: int = 10, d: int = 16,
                      batch: int = 16, steps: int = 300, lr: float = 0.02, every: int = 20,
                      held_out: int = 32) -> dict:
    """The sinks chapter's training run (:func:`attention_graph.sinks.train_sink_model`, no sink
    token) from ``seed``, with a sigmoid gate on the attention's output when ``gate``; the same
    parameters, batches and held-out batch, the gate drawn from its own stream."""
    rng = np.random.default_rng(seed)
    params = init_sink_model(vocab, n, d, rng)
    if gate:
        params["W_gate"] = init_gate(d, seed)
    test = trigger_task(n, vocab, held_out, rng)
    forward, backward = (gated_forward, gated_backward) if gate else (sink_forward, sink_backward)
    state: dict = {}
    out: dict = {"seed": seed, "gate": gate, "steps": [], "readouts": [], "loss": []}
    for step in range(steps + 1):
        if step % every == 0:
            out["steps"].append(step)
            out["readouts"].append(gated_readout(params, *test))
        if step == steps:
            break
        L, grads = sink_grads(params, *trigger_task(n, vocab, batch, rng), forward, backward)
        out["loss"].append(L)
        adam(params, grads, state, lr)
    out["params"] = params
    return out


def gate_study(seeds: int = 8, steps: int = 300, **kwargs) -> dict:
    """:func:`train_gated_model` from seeds 0..seeds−1, without and with the gate: the readouts."""
    out: dict = {"seeds": list(range(seeds)), "steps": steps, "runs": {}}
    for variant, gate in (("plain", False), ("gated", True)):
        out["runs"][variant] = []
        for seed in range(seeds):
            run = train_gated_model(seed, gate=gate, steps=steps, **kwargs)
            out["runs"][variant].append({"steps": run["steps"], "readouts": run["readouts"]})
    out["n"] = len(out["runs"]["plain"][0]["readouts"][0]["out_strength"])
    return out


def gate_summary(results: dict) -> dict:
    """Per variant of a :func:`gate_study` record: the medians over seeds, after training, of the
    first token's out-strength, of a blank query's attention on it, of the accuracy and of the
    gates of blank and trigger queries; and the first token's out-strength seed by seed."""
    out = {}
    for variant, runs in results["runs"].items():
        last = [r["readouts"][-1] for r in runs]
        s0 = np.array([r["out_strength"][0] for r in last])  # (seeds,)
        out[variant] = {"s0_after": float(np.median(s0)), "s0_by_seed": s0.tolist(),
                        "s0_before": float(np.median([r["readouts"][0]["out_strength"][0] for r in runs])),
                        "blank_on_0": float(np.median([r["blank_attention"][0] for r in last])),
                        "accuracy": float(np.median([r["accuracy"] for r in last])),
                        "accuracy_min": float(min(r["accuracy"] for r in last)),
                        "gate_blank": float(np.median([r["gate_blank"] for r in last])),
                        "gate_trigger": float(np.median([r["gate_trigger"] for r in last]))}
    return out


# --------------------------------------------------------------------------------------------------
# The SymPy checks behind the chapter's labels
# --------------------------------------------------------------------------------------------------

class EntrywiseSigmoid(sp.MatrixExpr):
    """sigmoid(G) entrywise, as a SymPy matrix expression; ``.doit()`` on an explicit G computes it."""

    def __new__(cls, G):
        return sp.Basic.__new__(cls, sp.sympify(G))

    @property
    def shape(self):
        return self.args[0].shape

    def _latex(self, printer):
        return rf"\operatorname{{sigmoid}}\left({printer._print(self.args[0])}\right)"

    def doit(self, **hints):
        G = self.args[0].doit(**hints)
        if not isinstance(G, sp.MatrixBase):
            if any(not sp.sympify(dim).is_Integer for dim in G.shape):
                return EntrywiseSigmoid(G)
            G = G.as_explicit()
        return G.applyfunc(sigmoid_exact)


def sigmoid_exact(x):
    """1 / (1 + e^{−x}), the logistic function, in SymPy."""
    return 1 / (1 + sp.exp(-x))


_n_q, _n_k, _d, _d_v, _dm = sp.symbols("n_q n_k d d_v d_model", integer=True, positive=True)
_vartheta = sp.Symbol("vartheta", real=True)
_Qp, _Kp = sp.MatrixSymbol("Q^{+}", _n_q, _d), sp.MatrixSymbol("K^{+}", _n_k, _d)
_Qm, _Km = sp.MatrixSymbol("Q^{-}", _n_q, _d), sp.MatrixSymbol("K^{-}", _n_k, _d)
_Wpm = sp.MatrixSymbol(r"W^{\pm}", _n_q, _n_k)
_Qs, _Ks, _Vs = sp.MatrixSymbol("Q", _n_q, _d), sp.MatrixSymbol("K", _n_k, _d), sp.MatrixSymbol("V", _n_k, _d_v)
_Xs, _Wg = sp.MatrixSymbol("X", _n_q, _dm), sp.MatrixSymbol(r"W_{\mathrm{gate}}", _dm, _d_v)
_Yg = sp.MatrixSymbol(r"Y^{\mathrm{gate}}", _n_q, _d_v)


def _display_differential():
    rhs = sp.MatAdd(RowSoftmax(sp.MatMul(_Qp, _Kp.T) / sp.sqrt(_d)),
                    sp.MatMul(sp.Integer(-1), _vartheta, RowSoftmax(sp.MatMul(_Qm, _Km.T) / sp.sqrt(_d)),
                              evaluate=False),
                    evaluate=False)
    return sp.Eq(_Wpm, rhs, evaluate=False)


def _display_gated():
    rhs = sp.HadamardProduct(EntrywiseSigmoid(sp.MatMul(_Xs, _Wg)),
                             sp.MatMul(RowSoftmax(sp.MatMul(_Qs, _Ks.T) / sp.sqrt(_d)), _Vs))
    return sp.Eq(_Yg, rhs, evaluate=False)


_DIFF_INT = ([[1, 0], [0, 1]], [[1, 1], [0, 2], [2, 0]], [[0, 1], [1, 0]], [[1, 0], [1, 1], [0, 1]],
             [[1, 0], [0, 2], [3, 1]])  # Q⁺ (2, 2), K⁺ (3, 2), Q⁻, K⁻, V (3, 2)


@derivation("eq-differential", display=_display_differential, lines=True, strength="verified",
            scope="for 2 queries, 3 keys and d = 2, symbolic; the package within 1e-15 of the exact values")
def _check_differential():
    Qp, Kp, Qm, Km = (symbol_matrix(s, r, 2) for s, r in (("a", 2), ("b", 3), ("c", 2), ("e", 3)))
    shown = _display_differential().rhs.subs({_Qp: Qp, _Kp: Kp, _Qm: Qm, _Km: Km, _d: 2}).doit()

    def softmax_row(Qx, Kx, a):  # exp(q_a·k_b/√2)/Σ_c exp(q_a·k_c/√2), written out
        e = [sp.exp(sum(Qx[a, t] * Kx[b, t] for t in range(2)) / sp.sqrt(2)) for b in range(3)]
        return [x / sum(e) for x in e]

    want = sp.Matrix([[p - _vartheta * m for p, m in zip(softmax_row(Qp, Kp, a), softmax_row(Qm, Km, a))]
                      for a in range(2)])
    yield sp.Eq(sp.Matrix(shown), want, evaluate=False)
    # The package on integers, ϑ = 1/2, against the exact weights and outputs.
    Qp_i, Kp_i, Qm_i, Km_i, V_i = _DIFF_INT
    exact = sp.Matrix([[p - sp.Rational(1, 2) * m for p, m in zip(softmax_row(sp.Matrix(Qp_i), sp.Matrix(Kp_i), a),
                                                                  softmax_row(sp.Matrix(Qm_i), sp.Matrix(Km_i), a))]
                       for a in range(2)])
    Y, W = differential_attention(Qp_i, Kp_i, Qm_i, Km_i, V_i, 0.5)
    yield close_to_exact(exact, W, atol=1e-15)
    yield close_to_exact(exact * sp.Matrix(V_i), Y, atol=1e-15)


@derivation("thm-differential-rows", strength="proved",
            scope="for any number of keys and any real ϑ (a finite sum split in two); the package measured to 1e-12")
def _check_differential_rows():
    i, j, n = sp.symbols("i j n", integer=True, positive=True)
    wp, wm = sp.IndexedBase("W^{+}"), sp.IndexedBase("W^{-}")
    row = sp.Sum(wp[i, j] - _vartheta * wm[i, j], (j, 1, n))
    split = sp.Sum(wp[i, j], (j, 1, n)) - _vartheta * sp.Sum(wm[i, j], (j, 1, n))
    # The sum of a difference is the difference of the sums (linearity of a finite sum).
    yield sp.Eq(row.expand(), split, evaluate=False)
    # Each softmax row sums to 1 (thm-rows-sum-to-one): the signed row sums to 1 − ϑ.
    one = {sp.Sum(wp[i, j], (j, 1, n)): 1, sp.Sum(wm[i, j], (j, 1, n)): 1}
    yield sp.Eq(split.subs(one), 1 - _vartheta)
    # The package: rows of W± sum to 1 − ϑ on random inputs, with and without a causal mask.
    rng = np.random.default_rng(39)
    Q1, K1, Q2, K2, V = (rng.standard_normal((6, 3)) for _ in range(5))
    for lam, mask in ((0.8, None), (0.3, causal_mask(6)), (-0.5, None)):
        _, W = differential_attention(Q1, K1, Q2, K2, V, lam, mask)
        yield bool(np.allclose(W.sum(axis=1), 1 - lam, rtol=0, atol=1e-12))


@derivation("thm-differential-common-mode", strength="proved",
            scope="for general positive exponentials and a real signal β; the package measured to 1e-12")
def _check_differential_common_mode():
    # One row. u_j = e^{S⁻_ij} > 0; S⁺ equals S⁻ except at the relevant key r, where it is larger by β.
    u_j, u_r, Z, beta = sp.symbols("u_j u_r Z beta", positive=True)  # Z = Z_i⁻ = Σ_l u_l
    Z_plus = Z + u_r * (sp.exp(beta) - 1)  # Z_i⁺: only key r's term changes
    theta = Z / Z_plus  # ϑ = Z⁻/Z⁺
    # A key j ≠ r: u_j/Z⁺ − ϑ u_j/Z⁻ = 0 with that ϑ, and with no other.
    yield sp.Eq(u_j / Z_plus - theta * u_j / Z, 0, evaluate=False)
    yield sp.Eq(sp.solve(sp.Eq(u_j / Z_plus - _vartheta * u_j / Z, 0), _vartheta)[0], theta, evaluate=False)
    # Key r keeps u_r e^β/Z⁺ − ϑ u_r/Z⁻ = 1 − ϑ: the whole row sum, on the one key.
    yield sp.Eq(u_r * sp.exp(beta) / Z_plus - theta * u_r / Z, 1 - theta, evaluate=False)
    # The package, d = 1: keys s_j read by the query 1; the first map's key r is larger by β.
    s, r, b = np.array([[0.3], [1.5], [-0.2], [2.0], [0.7]]), 2, 1.2  # (5, 1)
    s_plus = s.copy()
    s_plus[r] += b
    e = np.exp(s[:, 0])  # (5,)
    lam = e.sum() / (e.sum() + e[r] * (np.exp(b) - 1))  # Z⁻/Z⁺
    _, W = differential_attention([[1.0]], s_plus, [[1.0]], s, np.eye(5), lam)
    yield bool(np.allclose(W[0], (1 - lam) * np.eye(5)[r], rtol=0, atol=1e-12))


def _signed_quadratic_form(A: sp.Matrix, x: sp.Matrix):
    """xᵀ (D̄ − A) x for an explicit symmetric A, D̄_ii = Σ_j |A_ij|, in SymPy."""
    n = A.rows
    D = sp.diag(*[sum(sp.Abs(A[a, b]) for b in range(n)) for a in range(n)])
    return sp.expand((x.T * (D - A) * x)[0, 0])


@derivation("thm-signed-laplacian", strength="proved",
            scope="for one edge or self-loop of either sign, general weight and ends; every sign pattern on 3 "
                  "nodes with "
                  "symbolic weights; the package measured to 1e-12")
def _check_signed_laplacian():
    w = sp.Symbol("w", positive=True)  # |A_ij|
    x_i, x_j = sp.symbols("x_i x_j", real=True)
    # One edge of weight s·w (s = ±1) adds w x_i² + w x_j² − 2 s w x_i x_j to xᵀ L̄ x: w (x_i − s x_j)².
    for s in (1, -1):
        yield sp.Eq(w * x_i**2 + w * x_j**2 - 2 * s * w * x_i * x_j, w * (x_i - s * x_j) ** 2, evaluate=False)
        # A self-loop of weight s·w adds w x_i² − s w x_i², half of w (x_i − s x_i)².
        yield sp.Eq(w * x_i**2 - s * w * x_i**2, w * (x_i - s * x_i) ** 2 / 2, evaluate=False)
    # Every sign pattern of a symmetric A on 3 nodes: xᵀ L̄ x is the sum of the edges' squares.
    x = sp.Matrix(sp.symbols("x_1 x_2 x_3", real=True))
    ws = sp.symbols("w_12 w_13 w_23", positive=True)
    pairs = ((0, 1), (0, 2), (1, 2))
    for signs in ((1, 1, 1), (1, 1, -1), (1, -1, -1), (-1, -1, -1), (-1, 1, 1), (1, -1, 1)):
        A = sp.zeros(3, 3)
        for (a, b), s, wt in zip(pairs, signs, ws):
            A[a, b] = A[b, a] = s * wt
        squares = sum(wt * (x[a] - s * x[b]) ** 2 for (a, b), s, wt in zip(pairs, signs, ws))
        yield sp.Eq(_signed_quadratic_form(A, x), sp.expand(squares))
    # The package: the signed Laplacian of a symmetrised W± has no negative eigenvalue; D − A with
    # signed degrees (the plain Laplacian) has one.
    rng = np.random.default_rng(7)
    Q1, K1, Q2, K2, V = (rng.standard_normal((8, 4)) * 1.5 for _ in range(5))
    _, W = differential_attention(Q1, K1, Q2, K2, V, 0.8)
    A = (W + W.T) / 2  # (8, 8)
    yield bool(np.linalg.eigvalsh(signed_laplacian(A)).min() >= -1e-12)
    yield bool(np.linalg.eigvalsh(np.diag(A.sum(axis=1)) - A).min() < -1e-3)


@derivation("eq-gated-attention", display=_display_gated, lines=True, strength="verified",
            scope="for 2 queries, 2 keys, d = d_v = 2 and d_model = 2, symbolic; the package within 1e-15 of "
                  "the exact values")
def _check_gated():
    Q, K, V, X, Wg = (symbol_matrix(s, 2, 2) for s in ("q", "k", "v", "x", "g"))
    shown = _display_gated().rhs.subs({_Qs: Q, _Ks: K, _Vs: V, _Xs: X, _Wg: Wg, _d: 2, _n_q: 2,
                                       _n_k: 2, _d_v: 2, _dm: 2}).doit()
    G = X * Wg

    def entry(a, c):  # sigmoid(g_ac) Σ_b W_ab v_bc, written out
        e = [sp.exp((Q[a, 0] * K[b, 0] + Q[a, 1] * K[b, 1]) / sp.sqrt(2)) for b in range(2)]
        return 1 / (1 + sp.exp(-G[a, c])) * sum(e[b] / sum(e) * V[b, c] for b in range(2))

    yield sp.Eq(sp.Matrix(shown), sp.Matrix(2, 2, entry), evaluate=False)
    # The package on integers, against the exact values.
    Qi, Ki, Vi, Gi = [[1, 0], [1, 1]], [[0, 1], [2, 0]], [[1, 2], [3, -1]], [[0, 1], [-2, 3]]
    e = sp.Matrix(2, 2, lambda a, b: sp.exp(sum(Qi[a][t] * Ki[b][t] for t in range(2)) / sp.sqrt(2)))
    Wx = sp.Matrix(2, 2, lambda a, b: e[a, b] / (e[a, 0] + e[a, 1]))
    exact = sp.Matrix(2, 2, lambda a, c: sigmoid_exact(Gi[a][c]) * (Wx * sp.Matrix(Vi))[a, c])
    Y, _ = gated_attention(Qi, Ki, Vi, Gi)
    yield close_to_exact(exact, Y, atol=1e-15)
