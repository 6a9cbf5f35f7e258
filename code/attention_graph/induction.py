"""Induction heads as composed paths: a two-layer attention-only model learns to continue a repeat.

NumPy only, seeded, bit-reproducible. The task (chapter ``book/induction.md``): a sequence of
length 2T whose second half repeats its first, ``s[i] = a[i mod T]``, the T tokens of ``a`` drawn
without repeats from a vocabulary of V. At a position i ≥ T of the second half the next token is
determined: it is the token after the earlier occurrence of the current one,
``s[i + 1] = s[i − T + 1]``. A two-layer, one-head-per-layer, attention-only causal model with a
residual stream learns it; layer 1 becomes a previous-token head (edges j → j − 1), layer 2 an
induction head (edges i → i − T + 1), and their composition W⁽²⁾W⁽¹⁾ carries the edges
i → i − T, from each token to its earlier occurrence (Olsson et al. 2022; Elhage et al. 2021).

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
from .registry import derivation
from .training import adam, cross_entropy
from .validation import as_int, as_matrix

# The chapter's public names: attention_graph re-exports them (its API, documented in book/api.md,
# with bad-input rows in the tests); the other helpers are imported from this module by name.
__all__ = ["composed_graph", "head_scores", "induction_graph", "previous_token_graph"]

LAYERS = (1, 2)


# --------------------------------------------------------------------------------------------------
# The task
# --------------------------------------------------------------------------------------------------

def repeat_task(T: int, vocab: int, batch: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(tokens (batch, 2T), periods (batch,)): each sequence repeats n_per distinct tokens of [0, vocab).

    The period n_per of each sequence is drawn uniformly from T/2 … T, so ``tok[i] = a[i mod n_per]``: the
    first repeat starts at position n_per, and no fixed offset finds the answer; only the content does.
    """
    T = as_int(T, "T", low=2)
    vocab = as_int(vocab, "vocab", low=T, what=f"an integer >= T = {T} (the tokens are distinct)")
    batch = as_int(batch, "batch")
    n_per = rng.integers(T // 2, T + 1, size=batch)  # (batch,): the periods
    a = np.argsort(rng.random((batch, vocab)), axis=1)[:, :T]  # (batch, T): distinct tokens
    i = np.arange(2 * T)  # (2T,)
    return a[np.arange(batch)[:, None], i[None, :] % n_per[:, None]], n_per  # (batch, 2T), (batch,)


def predictable(n: int, n_per: int) -> np.ndarray:
    """The positions i whose next token is determined by a period n_per: i = n_per … n − 2. (n − 1 − n_per,)."""
    return np.arange(n_per, n - 1)  # (n − 1 − n_per,)


# --------------------------------------------------------------------------------------------------
# The model: embeddings, two causal attention layers with residuals, an unembedding
# --------------------------------------------------------------------------------------------------

def init_induction_model(vocab: int, n: int, d: int, rng: np.random.Generator) -> dict:
    """W_E (vocab, d), W_P (n, d), W_Q^l, W_K^l, W_V^l (d, d) for l = 1, 2, and W_U (d, vocab)."""
    s = 1 / math.sqrt(d)
    params = {"W_E": rng.standard_normal((vocab, d)) * s, "W_P": rng.standard_normal((n, d)) * s}
    for layer in LAYERS:
        for m in "QKV":
            params[f"W_{m}{layer}"] = rng.standard_normal((d, d)) * s  # (d, d)
    params["W_U"] = rng.standard_normal((d, vocab)) * s  # (d, vocab)
    return params


def induction_forward(params: dict, tokens) -> tuple[np.ndarray, list]:
    """X⁽⁰⁾ = W_E[tok] + W_P; X⁽ˡ⁾ = X⁽ˡ⁻¹⁾ + causal attention of X⁽ˡ⁻¹⁾; logits = X⁽²⁾ W_U.

    One sequence, ``tokens`` (n,). Returns logits (n, vocab) and per layer the cache (X, Q, K, V, W).
    """
    n = len(tokens)
    mask = causal_mask(n)  # (n, n)
    X = params["W_E"][tokens] + params["W_P"][:n]  # (n, d)
    caches = []
    for layer in LAYERS:
        Q, K, V = (X @ params[f"W_{m}{layer}"] for m in "QKV")  # (n, d) each
        Y, W = attention(Q, K, V, mask)  # (n, d), (n, n)
        caches.append({"X": X, "Q": Q, "K": K, "V": V, "W": W})
        X = X + Y  # (n, d): the residual stream
    return X @ params["W_U"], caches + [{"X": X}]


def induction_grads(params: dict, tokens, periods) -> tuple[float, dict]:
    """Cross-entropy of the next token at the predictable positions, and its gradients.

    ``tokens`` (B, n), ``periods`` (B,); the loss is the mean over sequences of each sequence's
    mean over its predictable positions.
    """
    B, n = np.shape(tokens)
    mask = causal_mask(n)  # (n, n)
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    total = 0.0
    for tok, n_per in zip(tokens, periods):
        rows = predictable(n, int(n_per))  # (r,)
        logits, caches = induction_forward(params, tok)
        L, dz = cross_entropy(logits[rows], tok[rows + 1])  # dz (r, vocab)
        total += L / B
        dlogits = np.zeros_like(logits)  # (n, vocab)
        dlogits[rows] = dz / B
        grads["W_U"] += caches[-1]["X"].T @ dlogits
        dH = dlogits @ params["W_U"].T  # (n, d)
        for layer, c in zip(LAYERS[::-1], caches[-2::-1]):
            dQ, dK, dV = attention_backward(c["Q"], c["K"], c["V"], dH, mask)  # (n, d) each
            for name, dM in zip("QKV", (dQ, dK, dV)):
                grads[f"W_{name}{layer}"] += c["X"].T @ dM
            dH = dH + dQ @ params[f"W_Q{layer}"].T + dK @ params[f"W_K{layer}"].T \
                + dV @ params[f"W_V{layer}"].T  # (n, d)
        np.add.at(grads["W_E"], tok, dH)
        grads["W_P"][:n] += dH
    return total, grads


def accuracy(params: dict, tokens, periods) -> float:
    """The share of predictable positions, over all sequences, whose most likely next token is right."""
    n = np.shape(tokens)[1]
    hits = []
    for tok, n_per in zip(tokens, periods):
        rows = predictable(n, int(n_per))  # (r,)
        hits.extend(induction_forward(params, tok)[0][rows].argmax(axis=1) == tok[rows + 1])
    return float(np.mean(hits))


def previous_token_graph(n: int) -> np.ndarray:
    """W⁽¹⁾ of an ideal previous-token head: W[j, j − 1] = 1 for j ≥ 1, W[0, 0] = 1. (n, n)."""
    n = as_int(n, "n")
    W = np.zeros((n, n))  # (n, n)
    W[np.arange(n), np.maximum(np.arange(n) - 1, 0)] = 1.0
    return W


def induction_graph(n: int, n_per: int) -> np.ndarray:
    """W⁽²⁾ of an ideal induction head: W[i, i − n_per + 1] = 1 for i ≥ n_per, else W[i, i] = 1.

    For period ``n_per`` (0-based positions): query i attends to the token after the earlier
    occurrence of its own token. (n, n).
    """
    n = as_int(n, "n")
    n_per = as_int(n_per, "n_per", low=1, high=n - 1, what=f"an integer in 1..{n - 1} (a period shorter than n)")
    i = np.arange(n)  # (n,)
    W = np.zeros((n, n))  # (n, n)
    W[i, np.where(i >= n_per, i - n_per + 1, i)] = 1.0
    return W


def composed_graph(W1, W2) -> np.ndarray:
    """W⁽²⁾W⁽¹⁾: the two-hop graph, (W⁽²⁾W⁽¹⁾)[i, k] = Σ_j W⁽²⁾[i, j] W⁽¹⁾[j, k]  (thm-induction-composition)."""
    W1 = as_matrix(W1, "W1", shape_doc="(n, n)")  # (n, n)
    W2 = as_matrix(W2, "W2", shape_doc="(n, n)")  # (n, n)
    if W1.shape[0] != W1.shape[1] or W2.shape != W1.shape:
        raise ValueError(f"W1 and W2 must be square matrices of one shape (n, n); got {W1.shape} "
                         f"and {W2.shape}")
    return W2 @ W1  # (n, n)


def head_scores(W1, W2, n_per: int) -> dict:
    """The mean weight on the expected edges over the predictable queries i = n_per … n − 2:
    ``induction`` W2[i, i − n_per + 1], ``composed`` (W2 W1)[i, i − n_per], and ``previous``
    W1[j, j − 1] at the keys j = i − n_per + 1 the induction head reads."""
    C = composed_graph(W1, W2)  # (n, n)
    n = C.shape[0]
    n_per = as_int(n_per, "n_per", low=1, high=n - 2, what=f"an integer in 1..{n - 2} (a period shorter than n − 1)")
    rows = predictable(n, n_per)  # (r,)
    j = rows - n_per + 1  # (r,): the keys read
    W1, W2 = np.asarray(W1, float), np.asarray(W2, float)
    return {"previous": float(W1[j, j - 1].mean()), "induction": float(W2[rows, j].mean()),
            "composed": float(C[rows, rows - n_per].mean())}


def match_keys(tokens, i: int) -> np.ndarray:
    """M(i) = {j ≤ i : tok_{j−1} = tok_i}: the keys whose previous token matches query i. (k,).

    In a sequence of period n_per they are j = i − n_per + 1, i − 2 n_per + 1, … ≥ 1: the latest is the edge of
    thm-induction-composition, the earliest, (i mod n_per) + 1, lies in the first period.
    """
    tokens = np.asarray(tokens)  # (n,)
    i = as_int(i, "i", low=0, high=len(tokens) - 1, what=f"a position in 0..{len(tokens) - 1}")
    j = np.arange(1, i + 1)  # (i,): every key with a previous token
    return j[tokens[j - 1] == tokens[i]]  # (k,)


def layer2_reads(params: dict, tokens, periods) -> dict:
    """Layer 2's weight Σ_{j ∈ M(i)} W⁽²⁾_ij on every match, on the earliest and on the latest,
    at each predictable query of each sequence; with the query's period and number of matches.

    ``tokens`` (B, n), ``periods`` (B,). Returns arrays (r,), one entry per query.
    """
    out: dict = {"period": [], "count": [], "every": [], "earliest": [], "latest": []}
    for tok, n_per in zip(np.asarray(tokens), np.asarray(periods)):
        W2 = induction_forward(params, tok)[1][1]["W"]  # (n, n)
        for i in predictable(len(tok), int(n_per)):
            M = match_keys(tok, int(i))  # (k,)
            if len(M) == 0:
                raise ValueError(f"tokens must repeat with their period; query {i} of a sequence of "
                                 f"period {n_per} has no match")
            out["period"].append(int(n_per))
            out["count"].append(len(M))
            out["every"].append(W2[i, M].sum())
            out["earliest"].append(W2[i, M[0]])
            out["latest"].append(W2[i, M[-1]])
    return {k: np.array(v) for k, v in out.items()}  # (r,) each


def reads_by_period(reads: list) -> dict:
    """Each model's :func:`layer2_reads` (a list, one per seed), averaged over the queries of each
    period: ``{period: {"count", "every", "earliest", "latest": (seeds,) arrays}}``."""
    out = {}
    for n_per in sorted(set(int(x) for x in reads[0]["period"])):
        out[n_per] = {k: np.array([r[k][r["period"] == n_per].mean() for r in reads])  # (seeds,)
                      for k in ("count", "every", "earliest", "latest")}
    return out


def recorded_reads(study: dict, sequences: int = 400, seed: int = 35) -> list:
    """:func:`layer2_reads` of each seed's recorded model (an :func:`induction_study` record) on
    ``sequences`` new sequences of the task, drawn from ``default_rng(seed)``: one dict per seed."""
    sequences = as_int(sequences, "sequences")
    tokens, periods = repeat_task(study["T"], study["vocab"], sequences,
                                  np.random.default_rng(seed))  # (sequences, n), (sequences,)
    trained = [{k: np.array(v) for k, v in p.items()} for p in study["params"]]  # one model per seed
    return [layer2_reads(p, tokens, periods) for p in trained]


def mean_head_scores(params: dict, tokens, periods) -> dict:
    """:func:`head_scores` of the trained model, averaged over the sequences."""
    scores = []
    for tok, n_per in zip(tokens, periods):
        caches = induction_forward(params, tok)[1]
        scores.append(head_scores(caches[0]["W"], caches[1]["W"], int(n_per)))
    return {k: float(np.mean([x[k] for x in scores])) for k in scores[0]}


def train_induction_model(seed: int, *, T: int = 8, vocab: int = 16, d: int = 32, batch: int = 16,
                          steps: int = 300, lr: float = 0.01, every: int = 10,
                          held_out: int = 64) -> dict:
    """Train from ``seed``: Adam on fresh batches; every ``every`` steps, the held-out accuracy and
    head scores (on its first 16 sequences). Returns the curves, the parameters, the held-out set."""
    rng = np.random.default_rng(seed)
    params = init_induction_model(vocab, 2 * T, d, rng)
    test = repeat_task(T, vocab, held_out, rng)  # (held_out, 2T), (held_out,)
    state: dict = {}
    curve = {"steps": [], "accuracy": [], "previous": [], "induction": [], "composed": [], "loss": []}
    for step in range(steps + 1):
        if step % every == 0:
            curve["steps"].append(step)
            curve["accuracy"].append(accuracy(params, *test))
            for k, v in mean_head_scores(params, test[0][:16], test[1][:16]).items():
                curve[k].append(v)
        if step == steps:
            break
        L, grads = induction_grads(params, *repeat_task(T, vocab, batch, rng))
        curve["loss"].append(L)
        adam(params, grads, state, lr)
    return {"seed": seed, "T": T, "vocab": vocab, "d": d, "batch": batch, "lr": lr,
            "params": params, "test": test, **curve}


def circuits(params: dict) -> dict:
    """The two token-to-token circuits of layer 2 (Elhage et al. 2021), (vocab, vocab) each.

    ``qk``: W_E W_Q2 (W_E W_V1 W_K2)ᵀ, the score between a query holding token a and a key whose
    layer-1 message carries token b (K-composition through layer 1's values); ``ov``:
    W_E W_V2 W_U, the logits the message of an attended token b adds. An induction head has both
    diagonals large: it looks for its own token one step back, and copies what it finds.
    """
    W_E = params["W_E"]  # (vocab, d)
    qk = (W_E @ params["W_Q2"]) @ (W_E @ params["W_V1"] @ params["W_K2"]).T  # (vocab, vocab)
    ov = W_E @ params["W_V2"] @ params["W_U"]  # (vocab, vocab)
    return {"qk": qk, "ov": ov}


def diagonal_share(M) -> float:
    """The share of rows of a square M whose largest entry is on the diagonal."""
    M = as_matrix(M, "M", shape_doc="(k, k)")  # (k, k)
    if M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be square (k, k); got shape {M.shape}")
    return float((M.argmax(axis=1) == np.arange(len(M))).mean())


def sudden_rise_step(steps, accuracy, level: float = 0.5) -> int:
    """The first step at which the accuracy reaches ``level`` (−1 if it never does)."""
    return next((int(s) for s, a in zip(steps, accuracy) if a >= level), -1)


def induction_study(seeds: int = 5, steps: int = 300, **kwargs) -> dict:
    """:func:`train_induction_model` from seeds 0..seeds−1: every curve, the final accuracies and
    head scores, seed 0's two attention graphs on its first held-out sequence of period T and its
    two circuits, each seed's :func:`diagonal_share` of both circuits, and each seed's trained
    parameters (for the page's measurements on new sequences)."""
    runs = [train_induction_model(seed, steps=steps, **kwargs) for seed in range(seeds)]
    first = runs[0]
    tokens, periods = first["test"]
    k = int(np.flatnonzero(periods == first["T"])[0])
    caches = induction_forward(first["params"], tokens[k])[1]
    keys = ("steps", "accuracy", "previous", "induction", "composed", "loss")
    qk_ov = [circuits(run["params"]) for run in runs]
    return {"seeds": list(range(seeds)), "T": first["T"], "vocab": first["vocab"], "d": first["d"],
            "batch": first["batch"], "lr": first["lr"], "steps": steps,
            "curves": [{key: [float(x) for x in run[key]] for key in keys} for run in runs],
            "example": {"tokens": [int(t) for t in tokens[k]], "period": int(periods[k]),
                        "W1": caches[0]["W"].tolist(), "W2": caches[1]["W"].tolist(),
                        "qk": qk_ov[0]["qk"].tolist(), "ov": qk_ov[0]["ov"].tolist()},
            "diagonal_share": [{k: diagonal_share(c[k]) for k in ("qk", "ov")} for c in qk_ov],
            "params": [{name: p.tolist() for name, p in run["params"].items()} for run in runs]}


# --------------------------------------------------------------------------------------------------
# The check behind the chapter's label
# --------------------------------------------------------------------------------------------------

@derivation("thm-induction-composition", strength="verified",
            scope="for every n ≤ 16 and every period 1 ≤ n_per ≤ n − 2")
def _check_induction_composition():
    # With the ideal heads, row i ≥ n_per of W⁽²⁾W⁽¹⁾ is e_{i−n_per}: the composed graph joins each token
    # of the repeat to its earlier occurrence, the key the induction head matched through layer 1.
    # The heads are built in SymPy from the theorem's own definitions, not from the package's.
    for n in range(3, 17):
        # W⁽¹⁾_{j,j−1} = 1 for j ≥ 1; the first token, with no previous one, keeps a self-loop.
        W1 = sp.Matrix(n, n, lambda j, k: 1 if k == max(j - 1, 0) else 0)
        yield bool(np.array_equal(previous_token_graph(n), np.array(W1, dtype=float)))
        for n_per in range(1, n - 1):
            # W⁽²⁾_{i,i−n_per+1} = 1 for i ≥ n_per, a self-loop otherwise.
            W2 = sp.Matrix(n, n, lambda i, k, n_per=n_per: 1 if k == (i - n_per + 1 if i >= n_per else i) else 0)
            yield bool(np.array_equal(induction_graph(n, n_per), np.array(W2, dtype=float)))
            C = W2 * W1
            yield all(C[i, k] == (1 if k == i - n_per else 0) for i in range(n_per, n) for k in range(n))
            # and the package's composed_graph is that product
            yield bool(np.array_equal(composed_graph(previous_token_graph(n), induction_graph(n, n_per)),
                                      np.array(C, dtype=float)))


def induction_summary(results: dict, rise_from: float = 0.25, rise_to: float = 0.9) -> dict:
    """Over the seeds of an :func:`induction_study` record: the final accuracy and head scores
    (median, min, max), the step at which each seed's accuracy first reaches ``rise_from`` and
    ``rise_to`` (median, min, max) and the steps between them."""
    curves = results["curves"]
    out: dict = {"seeds": len(curves)}
    for key in ("accuracy", "previous", "induction", "composed"):
        final = np.array([c[key][-1] for c in curves])  # (seeds,)
        out[key] = {"median": float(np.median(final)), "min": float(final.min()),
                    "max": float(final.max())}
    out["accuracy_start"] = float(np.median([c["accuracy"][0] for c in curves]))
    for name, level in (("rise_from", rise_from), ("rise_to", rise_to)):
        at = np.array([sudden_rise_step(c["steps"], c["accuracy"], level) for c in curves])  # (seeds,)
        out[name] = {"level": level, "median": float(np.median(at)), "min": int(at.min()),
                     "max": int(at.max())}
    width = np.array([sudden_rise_step(c["steps"], c["accuracy"], rise_to)
                      - sudden_rise_step(c["steps"], c["accuracy"], rise_from) for c in curves])
    out["rise_width"] = {"median": float(np.median(width)), "min": int(width.min()),
                         "max": int(width.max())}
    return out
