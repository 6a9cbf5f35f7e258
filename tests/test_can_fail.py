"""Every check can fail: for each registered label, a broken variant that its check must catch.

One row per label: the module and name to replace, and the wrong thing to put there: a package
function that computes something else (wrong scale, wrong orientation, a forgotten normalisation),
a displayed formula with an error in it, or a statement with a changed hypothesis. With the row
applied, ``registry.verify(label)`` must raise ``DerivationError``. A check that still passed would
not be checking its statement.

A label registered without a row fails ``test_every_label_has_a_broken_variant``: a new result must
come with its broken variant, as a new public function comes with its bad inputs
(tests/test_validation.py). A chapter keeps its rows in its own test file, ``tests/test_<stem>.py``,
as a table ``BROKEN`` of the same form; they are gathered here.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import sympy as sp

import booktools as bt
from attention_graph import registry


def _module(name):
    # importlib, not "from attention_graph import attention": the package exports functions of the
    # same names as some modules (attention, softmax).
    return importlib.import_module(f"attention_graph.{name}")


att, bw, gr, gt = _module("attention"), _module("blockwise"), _module("graph"), _module("graph_tools")
ka, po, qk, sc = _module("karate"), _module("positional"), _module("qkv"), _module("scores")
sm, spm, we = _module("softmax"), _module("sparse"), _module("worked_example")
bk = _module("backward")


_merge, _expectation = bw.merge, sc.expectation  # the originals, for the variants that call them
_sym_softmax = bk.sym_softmax


def after(fn, change):
    """``fn`` followed by ``change`` applied to its result (``fn`` is the original, bound now)."""
    return lambda *args, **kwargs: change(fn(*args, **kwargs))


def _uniform_layer(Q, K, V, mask=None):
    """A layer that forgets the scores: every query attends uniformly."""
    V = np.asarray(V, float)
    W = np.full((len(Q), len(V)), 1 / len(V))
    return W @ V, W


def _no_rescale(a, b, *, exp, maximum):
    """Merges two states but forgets e^{m_A − m}: wrong whenever the maxima differ."""
    ell = a.ell + b.ell
    return bw.BlockState(maximum(a.m, b.m), ell, (a.ell * a.o + b.ell * b.o) / ell)


def _keep_last(a, b, *, exp, maximum):
    """Neither commutative nor the union."""
    return bw.BlockState(maximum(a.m, b.m), a.ell + b.ell, b.o)


def _hypotheses(mean=0, second=1):
    return {sc.mq[1]: mean, sc.mk[1]: mean, sc.mq[2]: second, sc.mk[2]: second}


def _transposed_graph(result):
    Y, graph = result
    return Y, gr.AttentionGraph(graph.W.T, graph.labels)


_i, _j = sp.symbols("i j", integer=True, positive=True)

# label: (module, name, wrong value, what is broken)

mh, bl, pa = _module("multihead"), _module("block"), _module("patterns")
_mh_bipartite, _pa_window, _block_orig = mh.bipartite_adjacency, pa.window_edges, bl.transformer_block
rc, bn = _module("rank_collapse"), _module("bottlenecks")


def _mha_wrong_scale(X_q, X_kv, W_Q, W_K, W_V, W_O, n_heads, mask=None):
    """Multi-head attention whose heads divide the scores by √d_model instead of √d_h."""
    Q, K, V = (np.asarray(a, float) @ W for a, W in ((X_q, W_Q), (X_kv, W_K), (X_kv, W_V)))
    d, H = Q.shape[1], n_heads
    d_h = d // H
    heads = [att.attention(Q[:, h * d_h:(h + 1) * d_h] * np.sqrt(d_h / d), K[:, h * d_h:(h + 1) * d_h],
                           V[:, h * d_h:(h + 1) * d_h], mask=mask) for h in range(H)]
    return np.hstack([Y for Y, _ in heads]) @ W_O, np.stack([W for _, W in heads])


def _ln_sample_variance(X, gamma, beta, eps=1e-5):
    X = np.asarray(X, float)
    return gamma * (X - X.mean(axis=1, keepdims=True)) / np.sqrt(X.var(axis=1, ddof=1, keepdims=True) + eps) + beta


def _other_placement(X, params, *, norm_first=True, mask=None):
    return _block_orig(X, params, norm_first=not norm_first, mask=mask)


def _layer_norm_across_tokens(X, gamma, beta, eps=1e-5):
    """LayerNorm's formula applied down each column (over the tokens): mixes the rows."""
    X = np.asarray(X, float)
    return gamma * (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + eps) + beta


sk, ind = _module("sinks"), _module("induction")
_sk_causal = sk.causal_symbols


def _induction_one_back(n, varpi):
    """An induction head that attends to the earlier occurrence, i − ϖ, not the token after it."""
    W = np.zeros((n, n))
    i = np.arange(n)
    W[i, np.where(i >= varpi, i - varpi, i)] = 1.0
    return W


BROKEN = {
    # backward
    "eq-grad-v": (bk, "grad_v", lambda W, G: 2 * (W.T * G), "dV doubled"),
    "eq-grad-w": (bk, "grad_w", lambda G, V: G * V.T + sp.ones(G.rows, V.rows), "dW shifted by 1"),
    "eq-grad-s": (bk, "grad_s", lambda W, dW: W.multiply_elementwise(dW), "the row sum forgotten"),
    "eq-grad-q": (bk, "grad_q", lambda dS, K: dS * K, "no 1/√d"),
    "eq-grad-k": (bk, "grad_k", lambda dS, Q: dS.T * Q, "no 1/√d"),
    "thm-masked-gradient": (bk, "sym_softmax", lambda S, allowed=None: _sym_softmax(S),
                            "the mask is ignored"),
    "eq-lse-weights": (bw, "merge", _no_rescale, "no rescaling by e^{m_A − m}"),
    "eq-flash-delta": (bw, "delta_rows", lambda dY, Y: dY.sum(axis=1, keepdims=True),
                       "D_i = rowsum(dY), Y forgotten"),
    # attention
    "eq-weighted-sum": (att, "weighted_sum", lambda W, V: np.asarray(W) @ np.asarray(V) + 1e-9,
                        "the weighted sum is off by 1e-9"),
    "eq-attention": (att, "attention", _uniform_layer, "the layer ignores the scores"),
    "thm-convex-combination": (att, "attention", lambda Q, K, V, mask=None: (
        2.0 * (np.asarray(V, float) + 1.0), _uniform_layer(Q, K, V)[1]), "outputs outside the hull"),
    "thm-pull-toward-centre": (att, "pull", lambda W, V: (np.zeros(len(V)), np.asarray(V, float)),
                               "no pull"),
    "thm-key-value-permutation": (att, "attention", lambda Q, K, V, mask=None: (
        np.asarray(V, float)[: len(Q)], _uniform_layer(Q, K, V)[1]), "outputs follow the key order"),
    # blockwise
    "eq-block-normaliser": (bw, "block_state", after(bw.block_state, lambda st: bw.BlockState(
        st.m, 2 * st.ell, st.o)), "the normaliser doubled"),
    "eq-block-output": (bw, "sym_block_state", lambda s, v: bw.BlockState(
        sp.Max(*s), 1, sum((sp.exp(x - sp.Max(*s)) * y for x, y in zip(s, v)), sp.zeros(1, 2))),
        "o not divided by ℓ"),
    "eq-merge-max": (bw, "merge", lambda a, b, *, exp, maximum: bw.BlockState(
        a.m, *_merge(a, b, exp=exp, maximum=maximum)[1:]), "the merged maximum is m_A"),
    "eq-merge-normaliser": (bw, "merge", _no_rescale, "no rescaling by e^{m_A − m}"),
    "eq-merge-output": (bw, "merge", _keep_last, "the merged o is o_b"),
    "thm-merge-is-union": (bw, "merge", _no_rescale, "no rescaling by e^{m_A − m}"),
    "thm-merge-order": (bw, "merge", _keep_last, "the merged o is o_b"),
    # graph
    "eq-message-passing": (gr, "display_message_passing", after(gr.display_message_passing, lambda eq: eq.replace(
        lambda e: isinstance(e, sp.Indexed) and e.base.label.name == "A", lambda e: e.base[e.indices[::-1]])),
        "the display sums A_ji instead of A_ij"),
    "thm-attention-is-message-passing": (gr, "message_passing", lambda graph, V: graph.W.T @ np.asarray(V),
                                         "messages flow along the edges, i → j"),
    "eq-gcn-propagation": (gr, "gcn_propagation", lambda A, **kw: gr.mean_propagation(A),
                           "one-sided normalisation"),
    "eq-mean-aggregation": (gr, "display_mean_aggregation", after(gr.display_mean_aggregation, lambda eq: eq.replace(
        lambda e: isinstance(e, sp.MatPow) and e.exp == -1, lambda e: e.base)),
        "the display multiplies by D̃ instead of dividing"),
    "eq-gat-scores": (gr, "gat_scores", after(gr.gat_scores, lambda e: e.T), "query and key swapped"),
    "eq-neighbour-softmax": (gr, "display_neighbour_softmax", after(gr.display_neighbour_softmax, lambda eq: sp.Eq(
        eq.lhs, eq.rhs.xreplace({sp.IndexedBase("M")[eq.lhs.indices]: 1}), evaluate=False)),
        "the display forgets M_ij in the numerator"),
    "thm-constant-scores-mean-aggregation": (gr, "mean_propagation", lambda A, self_loops=True: gr.gcn_propagation(A),
                                             "GCN in place of the mean"),
    "thm-masked-softmax-neighbours": (gr, "product_mask_softmax",
                                      lambda S, allowed: sm.softmax(S, allowed),
                                      "S ∘ M computed as the exact mask"),
    "thm-gat-is-masked-attention": (gr, "gat", after(gr.gat, lambda r: (r[0] + 1.0, r[1])),
                                    "GAT output shifted"),
    "thm-causal-mask-lower-triangular": (gr, "causal_mask", lambda n: np.triu(np.ones((n, n))) == 1,
                                         "an upper-triangular mask"),
    "thm-permutation-equivariance": (gr, "sym_scores", lambda Q, K: Q * K.T / sp.sqrt(Q.cols) + sp.Matrix(
        Q.rows, K.rows, lambda r, c: c), "scores with a bias by key position"),
    # graph_tools
    "thm-in-strength-sums-to-n": (gr.AttentionGraph, "in_strength", lambda self: self.W.max(axis=0),
                                  "the in-strength takes the largest weight, not the sum"),
    "eq-stationary": (gt, "stationary_distribution", lambda W: np.full(len(W), 1 / len(W)),
                      "the uniform distribution"),
    "eq-pagerank": (gt, "pagerank", lambda W, damping=0.85: np.linalg.solve(
        np.eye(len(W)) - damping * np.asarray(W, float), np.full(len(W), (1 - damping) / len(W))),
        "the walker goes from the attended to the attender"),
    "thm-pagerank-unique": (gt, "EXAMPLE", sp.Matrix([[sp.Rational(3, 2), sp.Rational(-1, 2), 0],
                                                       [0, 1, 0], [0, 0, 1]]),
                            "rows sum to 1 but an entry is negative: not a stochastic W"),
    "thm-symmetric-scores-reversible": (gt, "stationary_distribution",
                                        lambda W: np.full(len(W), 1 / len(W)), "the uniform distribution"),
    "eq-rw-laplacian": (gt, "random_walk_laplacian", lambda W: np.eye(len(W)) - np.asarray(W, float),
                        "D⁻¹ forgotten"),
    "thm-laplacian-disc": (gt, "laplacian_spectrum", after(gt.laplacian_spectrum, lambda lam: 3 * lam),
                           "eigenvalues outside the disc"),
    "eq-spectral-bipartition": (gt, "spectral_bipartition", lambda W: np.array([0, 1, 0, 1]),
                                "an alternating split"),
    "eq-head-weights": (gt, "head_graphs", after(gt.head_graphs, lambda heads: heads[::-1]),
                        "heads in the wrong order"),
    "eq-rollout": (gt, "attention_rollout", lambda layers, residual=0.5: gr.AttentionGraph(
        np.linalg.multi_dot([np.eye(len(np.asarray(layers[0])))] + [
            residual * np.eye(len(np.asarray(W))) + (1 - residual) * np.asarray(W) for W in layers]),
        [str(k) for k in range(len(np.asarray(layers[0])))]), "layers multiplied in the wrong order"),
    "thm-rollout-exact": (gt, "residual_attention_stack", after(gt.residual_attention_stack,
                                                                lambda r: (r[0] + 1e-6, r[1])),
                          "the stack's output shifted"),
    # karate
    "eq-ari": (ka, "adjusted_rand_index", lambda a, b: 0.5, "a constant index"),
    "thm-ari-random-zero": (ka, "adjusted_rand_index", lambda a, b: 0.1, "chance scores 0.1"),
    "eq-gt-layer": (ka, "graph_transformer_layer", after(ka.graph_transformer_layer,
                                                         lambda r: (r[0] + 1e-6, r[1])), "output shifted"),
    # positional
    "eq-normalized-laplacian": (po, "normalized_laplacian", lambda A: np.eye(len(A)) - np.asarray(A) / 2,
                                "I − A/2 whatever the degrees"),
    "eq-laplacian-kernel": (po, "normalized_laplacian", lambda A: np.eye(len(A)) - np.asarray(A) / 2,
                            "I − A/2 whatever the degrees"),
    "thm-path-cosines": (po, "path_modes", after(po.path_modes, lambda r: (2 * r[0], r[1])),
                         "eigenvalues 2(1 − cos θ)"),
    "thm-cycle-fourier": (po, "cycle_eigenvalue", lambda n, chi: float(1 + np.cos(2 * np.pi * chi / n)),
                          "1 + cos θ in place of 1 − cos θ"),
    # qkv
    "eq-qkv": (qk, "project", lambda X, W_Q, W_K, W_V: tuple(
        np.asarray(X, float) @ np.asarray(W, float) + 1e-9 for W in (W_Q, W_K, W_V)), "products off by 1e-9"),
    "eq-identity-projections": (qk, "project", lambda X, W_Q, W_K, W_V: (np.asarray(X, float) * 2,) * 3,
                                "the projections double X"),
    "thm-symmetric-scores": (qk, "project", lambda X, W_Q, W_K, W_V: (
        np.asarray(X, float) @ np.asarray(W_Q, float),
        np.asarray(X, float) @ np.asarray(W_K, float) @ np.array([[1.0, 1.0], [0.0, 1.0]]),
        np.asarray(X, float) @ np.asarray(W_V, float)), "K sheared: W_Q = W_K is not shared"),
    # scores
    "eq-scaled-scores": (sc, "scaled_scores", lambda Q, K: np.asarray(Q) @ np.asarray(K).T, "no 1/√d"),
    "eq-mean-qk": (sc, "HYPOTHESES", _hypotheses(mean=1), "the statement with mean 1"),
    "eq-var-term": (sc, "HYPOTHESES", _hypotheses(second=2), "the statement with variance 2"),
    "eq-var-qk": (sc, "expectation", lambda expr: _expectation(expr.subs(*sorted(
        (s for s in expr.free_symbols if s.name in "kq"), key=lambda s: s.name))),
                  "q and k the same variable: not independent"),
    "eq-var-scaled": (sc, "HYPOTHESES", _hypotheses(mean=1), "the statement with mean 1"),
    "eq-scale-outside-cancels": (sc, "misplaced_scale", after(sc.misplaced_scale, lambda r: {
        **r, "outside": r["right"]}), "the outside reading made equal to the right one"),
    # softmax
    "eq-softmax": (sm, "softmax", lambda S, mask=None: np.exp(np.asarray(S, float)), "not normalised"),
    "eq-softmax-stable": (sm, "softmax", lambda S, mask=None: sm.naive_softmax(S), "no maximum subtracted"),
    "eq-softmax-temperature": (sm, "softmax_with_temperature", lambda S, tau, mask=None: sm.softmax(S),
                               "τ ignored"),
    "thm-rows-sum-to-one": (sm, "softmax", lambda S, mask=None: np.exp(np.asarray(S, float)) / 2,
                            "rows not normalised"),
    "thm-shift-invariance": (sm, "softmax", lambda S, mask=None: np.asarray(S, float) / np.asarray(S, float).sum(),
                             "a linear normalisation"),
    "thm-temperature-limits": (sm, "hardmax", lambda S, mask=None: sm.softmax(S), "softmax for hardmax"),
    "thm-softmax-jacobian": (sm, "softmax_jacobian", lambda p: np.diag(np.asarray(p, float)),
                             "the outer product forgotten"),
    # sparse
    "eq-edge-softmax": (spm, "segment_softmax", lambda s, indptr: np.exp(np.asarray(s, float)),
                        "not normalised per segment"),
    "eq-edge-attention": (spm, "edge_attention", after(spm.edge_attention, lambda Y: Y + 1e-6),
                          "output shifted"),
    "thm-edge-attention-is-masked-attention": (spm, "exact_masked_softmax", lambda S, mask: sm.RowSoftmax(
        S).doit(), "forbidden entries kept"),
    # worked example
    "eq-worked-scores": (we, "scaled_scores", lambda Q, K: np.asarray(Q) @ np.asarray(K).T, "no 1/√d"),
    "eq-worked-weights": (we, "attention_layer", after(we.attention_layer, _transposed_graph),
                          "W transposed"),
    "eq-worked-weight-ana-carla": (we, "attention_layer", after(we.attention_layer, _transposed_graph),
                                   "W transposed"),
    "eq-worked-asymmetry": (we, "row_normalisers", after(we.row_normalisers, lambda Z: Z[::-1]),
                            "normalisers in reverse order"),
    "thm-worked-rotation-invariance": (we, "rotation", lambda theta: np.array([[1.0, 0.5], [0.0, 1.0]]),
                                       "a shear, not a rotation"),
    "eq-worked-gram-plane": (we, "gram_in_plane", after(we.gram_in_plane, lambda G: G.subs(we.t, 2 * we.t)),
                             "the cross term doubled"),
    "eq-worked-recover-g": (we, "g_from_ana", after(we.g_from_ana, lambda e: e + 1), "g off by one"),
    "eq-worked-recover-t-bruno": (we, "t_from_bruno", after(we.t_from_bruno, lambda e: 2 * e),
                                  "t doubled"),
    "eq-worked-recover-t-diego": (we, "t_from_diego", after(we.t_from_diego, lambda e: 2 * e),
                                  "t doubled"),
    "thm-worked-gram-recovered": (we, "PUBLISHED", tuple(
        p if p[:3] != ("W", "Bruno", "Bruno") else ("W", "Bruno", "Bruno", 0.5) for p in we.PUBLISHED),
        "another printed self-weight for Bruno"),
    # multi-head attention
    "eq-multihead": (mh, "multi_head_attention", _mha_wrong_scale, "every head scaled by √d_model, not √d_h"),
    "thm-heads-add": (mh, "head_messages", after(mh.head_messages, lambda M: np.repeat(M[:1], len(M), axis=0)),
                      "every head sends head 1's message"),
    "thm-one-head": (mh, "multi_head_attention",
                     after(mh.multi_head_attention, lambda r: (np.nextafter(r[0], np.inf), r[1])),
                     "one unit in the last place off the single head"),
    "eq-bipartite": (mh, "bipartite_adjacency", lambda W: _mh_bipartite(W).T, "edges from the keys to the queries"),
    # the block
    "eq-layer-norm": (bl, "layer_norm", _ln_sample_variance, "variance divided by d − 1"),
    "eq-ffn": (bl, "feed_forward", lambda X, W_1, b_1, W_2, b_2: (np.asarray(X) @ W_1 + b_1) @ W_2 + b_2,
               "no ReLU"),
    "eq-pre-ln": (bl, "transformer_block", _other_placement, "pre-LN and post-LN swapped"),
    "eq-post-ln": (bl, "transformer_block", _other_placement, "pre-LN and post-LN swapped"),
    "thm-node-wise-update": (bl, "layer_norm", _layer_norm_across_tokens, "normalises each feature across the tokens"),
    # patterns
    "thm-causal-dag": (pa, "causal_edges", lambda n: pa.complete_edges(n), "the causal pattern is complete"),
    "eq-window-edges": (pa, "window_edges", lambda n, w: _pa_window(n, max(w - 1, 0)), "a window one narrower"),
    "eq-window-diameter": (pa, "max_path_length", after(pa.max_path_length, lambda D: D + 1), "one layer too many"),
    # rank collapse
    "eq-ergodicity-coefficient": (rc, "ergodicity_coefficient", after(rc.ergodicity_coefficient, lambda t: t / 2),
                                  "half the coefficient"),
    "thm-tau-contraction": (rc, "ergodicity_coefficient", after(rc.ergodicity_coefficient, lambda t: t * 0.9),
                            "a coefficient a tenth too small"),
    "thm-tau-submultiplicative": (rc, "exact_tau", after(rc.exact_tau, lambda t: 1 - t),
                                  "the overlap in place of the coefficient"),
    # bottlenecks
    "thm-causal-path-count": (bn, "path_count_formula", lambda s, L: sp.binomial(s + L, L - 1),
                              "one position too many in the binomial"),
    "thm-walk-sensitivity": (bn, "last_token_sensitivity", after(bn.last_token_sensitivity, lambda s: s[::-1]),
                             "the tokens in reverse order"),
    # sinks
    "thm-causal-first-token": (sk, "in_degrees", lambda edges, n: np.bincount(
        np.asarray(edges)[:, 0], minlength=n), "counts the keys each query sees (the out-degree)"),
    "thm-uniform-causal-sink": (sk, "uniform_causal_weights", lambda n: np.tril(np.ones((n, n))) / n,
                                "every entry 1/n: rows not normalised"),
    "thm-causal-walk-absorbed": (sk, "causal_symbols", lambda n: _sk_causal(n).T,
                                 "W transposed: the walk goes forward in time"),
    # induction
    "thm-induction-composition": (ind, "induction_graph", _induction_one_back,
                                  "the induction head reads the earlier occurrence itself"),
}

# Sequences as graphs: positions, linear attention, decoding
sq, la, de = _module("sequence_positions"), _module("linear_attention"), _module("decoding")
_sq_rotate, _sq_alibi, _la_linear, _la_read = sq.rotate_pairs, sq.alibi_kernel, la.linear_two_hop, la.read_feature_nodes
BROKEN.update({
    "eq-sinusoidal": (sq, "sinusoidal_kernel", lambda p, w: np.column_stack(
        [np.sin(np.outer(p, w)), np.cos(np.outer(p, w))]), "the sines first, then the cosines"),
    "thm-sinusoidal-offset": (sq, "sinusoidal_kernel", lambda p, w: np.column_stack(
        [np.sin(np.outer(p, w)), np.cos(np.outer(p, w))]) * (1 + np.asarray(p)[:, None] / 10),
                              "an amplitude that grows with the position"),
    "thm-rope-relative": (sq, "rotate_pairs", lambda X, theta: _sq_rotate(X, theta**2 / 7),
                          "angles quadratic in the position"),
    "eq-alibi": (sq, "alibi_kernel", lambda n, slope: _sq_alibi(n, slope).T, "the bias of the keys ahead, not behind"),
    "eq-linear-attention": (la, "read_feature_nodes", lambda PQ, KV, z: PQ @ KV, "no normaliser D"),
    "thm-linear-equals-quadratic": (la, "read_feature_nodes", after(_la_read, lambda Y: Y + 1e-9), "output shifted"),
    "thm-causal-running-sum": (la, "causal_running_sum", _la_linear, "every key seen, not only j <= i"),
    "thm-random-features-unbiased": (la, "standard_normal_density", lambda x: sp.exp(-x**2 / 2),
                                     "the density not normalised"),
    "thm-kv-new-node": (de, "causal_weights_exact", lambda S: sm.RowSoftmax(sp.Matrix(S)).doit(),
                        "no causal mask: earlier tokens see the new one"),
    "thm-decoding-equals-causal": (de, "step_weights", lambda q, K: np.exp(K @ q) / np.exp(K @ q).sum(),
                                   "no 1/√d in the decoding step"),
})


# A chapter's own rows live in its test file (tests/test_<stem>.py: BROKEN = {label: row}).
for _stem, _rows in bt.chapter_tables("BROKEN", "test_can_fail").items():
    assert not set(_rows) & set(BROKEN), f"{_stem}: a label with two broken variants: {set(_rows) & set(BROKEN)}"
    BROKEN.update(_rows)


def test_every_label_has_a_broken_variant():
    assert sorted(set(registry.labels()) - set(BROKEN)) == [], "add a row to BROKEN for each new label"
    assert sorted(set(BROKEN) - set(registry.labels())) == [], "a row for a label no longer registered"


def _caught(monkeypatch, label: str, row) -> None:
    """The check under ``label`` raises once the row's name in its module is replaced by the wrong one."""
    module, name, wrong, _what = row
    assert hasattr(module, name), f"{module.__name__}.{name} does not exist"
    monkeypatch.setattr(module, name, wrong)
    with pytest.raises(registry.DerivationError, match=label):
        registry.verify(label)


@pytest.mark.parametrize("label", sorted(BROKEN))
def test_the_check_fails_on_its_broken_variant(monkeypatch, label):
    _caught(monkeypatch, label, BROKEN[label])


# A check must not be built from the helper it checks. Each row breaks a helper that the page's
# display, the package and (formerly) the check's exact side shared; only an exact side written
# independently from the formula on the page catches it.
def _block_without_second_residual(X, mha, ln_1, ln_2, ffn, norm_first):
    """The block mis-wired: the feed-forward sublayer's residual is forgotten."""
    if norm_first:
        Z = X + mha(ln_1(X))
        return ffn(ln_2(Z))
    Z = ln_1(X + mha(X))
    return ln_2(ffn(Z))


def _softmax_rows_unnormalised(S, allowed=None):
    """exp of the scores, never divided by the row sum."""
    return S.applyfunc(sp.exp)


BROKEN_SHARED_HELPER = {
    "eq-pre-ln": (bl, "wire_block", _block_without_second_residual, "the shared wiring drops a residual"),
    "eq-post-ln": (bl, "wire_block", _block_without_second_residual, "the shared wiring drops a residual"),
    "thm-one-head": (mh, "softmax_rows_exact", _softmax_rows_unnormalised,
                     "the exact softmax helper forgets to normalise"),
    "thm-gat-is-masked-attention": (gr, "gat_scores", after(gr.gat_scores, lambda e: e.T),
                                    "the shared score helper swaps query and key"),
}


@pytest.mark.parametrize("label", sorted(BROKEN_SHARED_HELPER))
def test_the_check_is_independent_of_the_helper_it_checks(monkeypatch, label):
    _caught(monkeypatch, label, BROKEN_SHARED_HELPER[label])


# The class follows from the check: "proved" needs a statement in general symbols.
_n = sp.Symbol("n", integer=True, positive=True)
_x, _a = sp.IndexedBase("x"), sp.Symbol("a", real=True)
_FIXED = [sp.Eq(registry.symbol_matrix("x", 2, 3) * sp.eye(3), registry.symbol_matrix("x", 2, 3), evaluate=False),
          sp.Eq(sp.Symbol("x_01") + sp.Symbol("x_02"), sp.Symbol("x_02") + sp.Symbol("x_01"), evaluate=False),
          True, sp.Eq(sp.Integer(2), 2)]
_GENERAL = [sp.Eq(sp.Sum(2 * _x[_i], (_i, 1, _n)), 2 * sp.Sum(_x[_i], (_i, 1, _n)), evaluate=False),
            sp.Eq(sp.MatMul(sp.MatrixSymbol("X", _n, _n), sp.Identity(_n)), sp.MatrixSymbol("X", _n, _n),
                  evaluate=False),
            sp.Eq((_a + 1) ** 2, _a**2 + 2 * _a + 1, evaluate=False)]


@pytest.mark.parametrize("statement", _FIXED, ids=str)
def test_a_check_at_fixed_sizes_cannot_register_as_proved(statement):
    assert not registry.is_general(statement)
    assert registry.verify_statements([statement], "verified") == 1
    with pytest.raises(registry.DerivationError, match="proved"):
        registry.verify_statements([statement], "proved")


@pytest.mark.parametrize("statement", _GENERAL, ids=str)
def test_a_check_in_general_symbols_may_register_as_proved(statement):
    assert registry.is_general(statement)
    assert registry.verify_statements([statement], "proved") == 1


def test_every_proved_label_has_a_general_statement():
    # registry.verify applies the rule to each label's own strength (test_integrity runs them all);
    # here the proved ones, so that a reclassification shows up in this file's failures.
    for label in registry.labels():
        if registry.strength(label)[0] == "proved":
            assert registry.verify(label) > 0
