"""Differential attention and gated attention: against references written from the papers' formulas,
by their defining properties, and the gate study's record against re-run training."""

import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import booktools as bt
import oracles
from attention_graph import bench, differential_attention, gated_attention, signed_laplacian, sinks
from attention_graph import differential as df

PAGE = "differential"
ok = np.ones((3, 2))  # (n, d), a valid Q, K or V

# Independent implementations from the papers' formulas, used by this file only.


def diff_attn_reference(Q1, K1, Q2, K2, V, lam, mask=None):
    """Ye et al. (2024), eq. 1: DiffAttn(X) = (softmax(Q1 K1ᵀ/√d) − λ softmax(Q2 K2ᵀ/√d)) V."""
    A1 = oracles.softmax(oracles.scaled_scores(Q1, K1), mask)
    A2 = oracles.softmax(oracles.scaled_scores(Q2, K2), mask)
    return (A1 - lam * A2) @ np.asarray(V, float), A1 - lam * A2


def gated_reference(Q, K, V, G, mask=None):
    """Qiu et al. (2025), the gate after SDPA: Y' = Y ⊙ σ(X W_θ), with σ the logistic function."""
    Y, W = oracles.attention(Q, K, V, mask)
    return Y / (1.0 + np.exp(-np.asarray(G, float))), W


def signed_laplacian_reference(A):
    """Kunegis et al. (2010): L̄ = D̄ − A, D̄_ii = Σ_j |A_ij|."""
    A = np.asarray(A, float)
    return np.diag(np.abs(A).sum(axis=1)) - A


@settings(derandomize=True, max_examples=40)
@given(n_q=st.integers(1, 6), n_k=st.integers(1, 6), d=st.integers(1, 4), d_v=st.integers(1, 3),
       lam=st.floats(-1, 1.5), seed=st.integers(0, 2**32 - 1))
def test_differential_attention_is_the_papers_formula(n_q, n_k, d, d_v, lam, seed):
    rng = np.random.default_rng(seed)
    Q1, Q2 = rng.standard_normal((n_q, d)), rng.standard_normal((n_q, d))
    K1, K2, V = rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d_v))
    Y, W = differential_attention(Q1, K1, Q2, K2, V, lam)
    Y_ref, W_ref = diff_attn_reference(Q1, K1, Q2, K2, V, lam)
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-13)
    np.testing.assert_allclose(Y, Y_ref, rtol=0, atol=1e-12)
    np.testing.assert_allclose(W.sum(axis=1), 1 - lam, rtol=0, atol=1e-12)  # thm-differential-rows


def test_differential_attention_with_a_causal_mask():
    rng = np.random.default_rng(1)
    Q1, K1, Q2, K2, V = (rng.standard_normal((5, 3)) for _ in range(5))
    M = np.tril(np.ones((5, 5), dtype=bool))
    Y, W = differential_attention(Q1, K1, Q2, K2, V, 0.8, M)
    Y_ref, W_ref = diff_attn_reference(Q1, K1, Q2, K2, V, 0.8, M)
    np.testing.assert_allclose(W, W_ref, atol=1e-13)
    assert (W[~M] == 0).all()


def test_eq_differential():
    assert bt.verified("eq-differential") >= 1


def test_thm_differential_rows():
    assert bt.verified("thm-differential-rows") >= 1
    # ϑ = 0 is one softmax map: rows sum to 1, every edge non-negative.
    rng = np.random.default_rng(2)
    Q1, K1, Q2, K2, V = (rng.standard_normal((4, 2)) for _ in range(5))
    _, W = differential_attention(Q1, K1, Q2, K2, V, 0.0)
    np.testing.assert_allclose(W, oracles.attention(Q1, K1, V)[1], atol=1e-15)


def test_thm_differential_common_mode():
    assert bt.verified("thm-differential-common-mode") >= 1
    # Any row, any r: S⁺ = S⁻ + β e_r, ϑ = Z⁻/Z⁺ from the scores themselves: W± = (1 − ϑ) e_r.
    rng = np.random.default_rng(3)
    for _ in range(20):
        n_k, r, beta = int(rng.integers(2, 9)), 0, float(rng.uniform(0.1, 3))
        r = int(rng.integers(0, n_k))
        s = rng.standard_normal(n_k)
        s_plus = s.copy()
        s_plus[r] += beta
        lam = np.exp(s).sum() / np.exp(s_plus).sum()
        _, W = differential_attention([[1.0]], s_plus[:, None], [[1.0]], s[:, None], np.eye(n_k), lam)
        np.testing.assert_allclose(W[0], (1 - lam) * np.eye(n_k)[r], atol=1e-13)


@settings(derandomize=True, max_examples=40)
@given(n=st.integers(1, 8), seed=st.integers(0, 2**32 - 1))
def test_thm_signed_laplacian(n, seed):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n))
    A = (A + A.T) / 2  # a symmetric signed graph
    L = signed_laplacian(A)
    np.testing.assert_allclose(L, signed_laplacian_reference(A), atol=1e-15)
    assert np.linalg.eigvalsh(L).min() >= -1e-10
    x = rng.standard_normal(n)
    squares = 0.5 * sum(abs(A[i, j]) * (x[i] - np.sign(A[i, j]) * x[j]) ** 2 for i in range(n) for j in range(n))
    assert x @ L @ x == pytest.approx(squares, rel=1e-9, abs=1e-12)


def test_thm_signed_laplacian_registered():
    assert bt.verified("thm-signed-laplacian") >= 1


def test_random_walk_tools_refuse_a_signed_graph():
    from attention_graph import pagerank, stationary_distribution
    rng = np.random.default_rng(4)
    Q1, K1, Q2, K2, V = (rng.standard_normal((5, 3)) for _ in range(5))
    _, W = differential_attention(Q1, K1, Q2, K2, V, 0.8)
    for tool in (pagerank, stationary_distribution):
        with pytest.raises(ValueError, match="non-negative"):
            tool(W)


def test_common_mode_scores_and_noise_share():
    rng = np.random.default_rng(5)
    S_plus, S_minus, r = df.common_mode_scores(50, 8, rng)
    assert S_plus.shape == S_minus.shape == (50, 8) and ((r >= 1) & (r < 8)).all()
    W = oracles.softmax(S_plus)
    want = np.array([1 - abs(W[i, r[i]]) / np.abs(W[i]).sum() for i in range(50)])
    np.testing.assert_allclose(df.noise_share(W, r), want, atol=1e-15)


def test_eq_gated_attention():
    assert bt.verified("eq-gated-attention") >= 1


@settings(derandomize=True, max_examples=30)
@given(n_q=st.integers(1, 5), n_k=st.integers(1, 5), d=st.integers(1, 4), d_v=st.integers(1, 3),
       seed=st.integers(0, 2**32 - 1))
def test_gated_attention_is_the_papers_formula(n_q, n_k, d, d_v, seed):
    rng = np.random.default_rng(seed)
    Q, K, V = rng.standard_normal((n_q, d)), rng.standard_normal((n_k, d)), rng.standard_normal((n_k, d_v))
    G = 5 * rng.standard_normal((n_q, d_v))
    Y, W = gated_attention(Q, K, V, G)
    Y_ref, W_ref = gated_reference(Q, K, V, G)
    np.testing.assert_allclose(Y, Y_ref, atol=1e-13)
    np.testing.assert_allclose(W, W_ref, atol=1e-15)
    np.testing.assert_allclose(W.sum(axis=1), 1, atol=1e-12)  # the gate leaves the graph's rows alone


def test_a_closed_gate_sends_nothing_without_overflow():
    Y, _ = gated_attention(ok, ok, ok, np.full((3, 2), -800.0))
    assert np.isfinite(Y).all() and (np.abs(Y) < 1e-300).all()


def _gated_forward(p, s):
    """The gated one-layer causal model, written independently of the package."""
    n = len(s)
    X = p["W_E"][s] + p["W_P"][:n]
    Y, W = oracles.attention(X @ p["W_Q"], X @ p["W_K"], X @ p["W_V"], np.tril(np.ones((n, n), dtype=bool)))
    return (X + Y / (1 + np.exp(-(X @ p["W_gate"])))) @ p["W_U"], W


def test_gated_forward_matches_an_independent_forward():
    rng = np.random.default_rng(6)
    params = sinks.init_sink_model(6, 8, 5, rng) | {"W_gate": df.init_gate(5, 0)}
    tokens, _ = sinks.trigger_task(7, 6, 3, rng)
    for s in tokens:
        logits, c = df.gated_forward(params, s)
        want_logits, want_W = _gated_forward(params, s)
        np.testing.assert_allclose(logits, want_logits, atol=1e-12)
        np.testing.assert_allclose(c["W"], want_W, atol=1e-12)


def test_gated_gradients_match_central_differences():
    rng = np.random.default_rng(3)
    params = sinks.init_sink_model(5, 6, 4, rng) | {"W_gate": df.init_gate(4, 3)}
    tokens, targets = sinks.trigger_task(6, 5, 2, rng, p=0.4)
    grads = lambda p: sinks.sink_grads(p, tokens, targets, df.gated_forward, df.gated_backward)  # noqa: E731
    oracles.assert_gradients(grads, params)


# --- The record -------------------------------------------------------------------------------

RECORD = bench.record("gated")
STUDY = RECORD["results"]


def test_the_plain_runs_are_the_sinks_chapters_runs():
    sinks_runs = bench.record("sinks")["results"]["runs"]["plain"]
    for ours, theirs in zip(STUDY["runs"]["plain"], sinks_runs):
        assert ours["steps"] == theirs["steps"]
        for a, b in zip(ours["readouts"], theirs["readouts"]):
            assert a["out_strength"] == b["out_strength"] and a["accuracy"] == b["accuracy"]


@pytest.mark.slow
def test_the_record_is_what_the_code_gives():
    run = df.train_gated_model(1, gate=True, steps=STUDY["steps"])
    assert run["readouts"] == STUDY["runs"]["gated"][1]["readouts"]


def test_the_summary_is_recomputed_from_the_record():
    summary = df.gate_summary(STUDY)
    for variant, runs in STUDY["runs"].items():
        s0 = [run["readouts"][-1]["out_strength"][0] for run in runs]
        assert summary[variant]["s0_after"] == pytest.approx(float(np.median(s0)), abs=0)
        assert summary[variant]["s0_by_seed"] == s0
    assert all(r["readouts"][-1]["gate_blank"] == 1.0 for r in STUDY["runs"]["plain"])


@pytest.mark.slow
def test_benchmark_cli_runs_quick(tmp_path):
    record = bt.quick_benchmark("gated", tmp_path)
    assert record["results"]["steps"] == 20
    assert RECORD["quick"] is False


# --- Broken variants and bad inputs (gathered by tests/test_can_fail.py and test_validation.py) --

_df = importlib.import_module("attention_graph.differential")


def _plain_degree_laplacian(A):
    """The Laplacian with signed degrees, D − A: not positive semidefinite once an edge is negative."""
    return np.diag(A.sum(axis=1)) - A


BROKEN = {
    "eq-differential": (_df, "signed_difference", lambda Wp, Wm, lam: Wp + lam * Wm, "the second map added"),
    "thm-differential-rows": (_df, "signed_difference", lambda Wp, Wm, lam: Wp - lam * Wm.T,
                              "the second map transposed"),
    "thm-differential-common-mode": (_df, "signed_difference", lambda Wp, Wm, lam: lam * Wp - Wm,
                                     "ϑ weighs the first map, not the second"),
    "thm-signed-laplacian": (_df, "signed_degree_laplacian", _plain_degree_laplacian,
                             "degrees summed with their signs"),
    "eq-gated-attention": (_df, "gate_messages", lambda G, Y: Y / (1 + np.exp(G)), "the gate's sign flipped"),
}

BAD = [
    ("differential_attention", lambda: differential_attention(ok, ok, ok, ok, ok, "0.5"), TypeError,
     "lam must be a real"),
    ("differential_attention", lambda: differential_attention(ok, ok, ok, ok, ok, np.nan), ValueError,
     "lam must be finite"),
    ("differential_attention", lambda: differential_attention(ok, ok, ok, ok, ok, True), TypeError,
     "lam must be a real"),
    ("differential_attention", lambda: differential_attention(np.ones((2, 2)), ok, ok, ok, ok, 0.5), ValueError,
     "Q1 and Q2 must have the same number of rows"),
    ("differential_attention", lambda: differential_attention(ok, ok, ok, np.ones((4, 2)), ok, 0.5), ValueError,
     "K1 and K2 must have the same number of rows"),
    ("differential_attention", lambda: differential_attention(ok, np.ones((3, 3)), ok, ok, ok, 0.5), ValueError,
     "Q1 and K1 must have the same number of columns"),
    ("differential_attention", lambda: differential_attention(ok, ok, ok, ok, np.ones((2, 2)), 0.5), ValueError,
     "K and V must have the same number of rows"),
    ("differential_attention", lambda: differential_attention([[np.nan, 0]] * 3, ok, ok, ok, ok, 0.5), ValueError,
     "Q1 must be finite"),
    ("gated_attention", lambda: gated_attention(ok, ok, ok, np.ones((3, 3))), ValueError,
     "G must have one gate logit per query"),
    ("gated_attention", lambda: gated_attention(ok, ok, ok, [[np.inf, 0]] * 3), ValueError, "G must be finite"),
    ("gated_attention", lambda: gated_attention(ok, ok, ok, np.ones(3)), ValueError, "G must be a 2-d array"),
    ("signed_laplacian", lambda: signed_laplacian([[0.0, 1.0], [-1.0, 0.0]]), ValueError, "A must be symmetric"),
    ("signed_laplacian", lambda: signed_laplacian(np.ones((2, 3))), ValueError, "A must be square"),
    ("signed_laplacian", lambda: signed_laplacian([[np.nan]]), ValueError, "A must be finite"),
]



# --- What the page glued, recomputed ----------------------------------------------------------

@pytest.mark.build
def test_glued_common_mode_table_is_recomputed():
    # The page's draw: seed 0, 2000 queries, 16 keys, private noise 0.2; the shares written out here.
    rng = np.random.default_rng(0)
    n_q, n_k = 2000, 16
    r = rng.integers(1, n_k, size=n_q)
    N = rng.standard_normal((n_q, n_k))
    N[:, 0] += 2.0
    S_plus = N + 0.2 * rng.standard_normal((n_q, n_k))
    S_plus[np.arange(n_q), r] += 2.0
    S_minus = N + 0.2 * rng.standard_normal((n_q, n_k))
    A1, A2 = oracles.softmax(S_plus), oracles.softmax(S_minus)
    for key, lam in (("0", 0.0), ("half", 0.5), ("08", 0.8)):
        W = A1 - lam * A2
        mag = np.abs(W).sum(axis=1)
        assert bt.glued_float(PAGE, f"cm_noise_{key}") == pytest.approx(
            float(np.mean(1 - np.abs(W[np.arange(n_q), r]) / mag)), abs=1e-12)
        sink = float(np.mean(np.abs(W[:, 0]) / mag))
        assert bt.glued_float(PAGE, f"cm_sink_{key}") == pytest.approx(sink, abs=1e-12)
    # What the prose claims: the difference lowers both shares.
    noise = [bt.glued_float(PAGE, f"cm_noise_{k}") for k in ("08", "half", "0")]
    assert noise == sorted(noise)
    assert bt.glued_float(PAGE, "cm_sink_08") < bt.glued_float(PAGE, "cm_sink_0")
    assert bt.glued_float(PAGE, "cm_noise_exact_08") < bt.glued_float(PAGE, "cm_noise_08") < bt.glued_float(
        PAGE, "cm_noise_big_08")


@pytest.mark.build
def test_glued_signed_graph_numbers():
    rng = np.random.default_rng(7)
    Q1, K1, Q2, K2, V = (rng.standard_normal((6, 4)) * 1.5 for _ in range(5))
    _, W = diff_attn_reference(Q1, K1, Q2, K2, V, 0.8)
    assert bt.glued_float(PAGE, "sg_negative") == int((W < 0).sum()) > 0
    assert bt.glued_float(PAGE, "sg_row_sum") == pytest.approx(0.2, abs=1e-12)
    A = (W + W.T) / 2
    signed_min = float(np.linalg.eigvalsh(signed_laplacian_reference(A)).min())
    plain_min = float(np.linalg.eigvalsh(np.diag(A.sum(axis=1)) - A).min())
    assert bt.glued_float(PAGE, "sg_signed_min") == pytest.approx(signed_min, abs=1e-12) and signed_min >= 0
    assert bt.glued_float(PAGE, "sg_plain_min") == pytest.approx(plain_min, abs=1e-12) and plain_min < 0
    assert bt.glued_float(PAGE, "sg_out_total") == pytest.approx(6 * 0.2, abs=1e-12)


@pytest.mark.build
def test_glued_gate_study_is_recomputed_from_the_record():
    for key, variant in (("plain", "plain"), ("gated", "gated")):
        last = [run["readouts"][-1] for run in STUDY["runs"][variant]]
        assert bt.glued_float(PAGE, f"gate_{key}_s0_after") == pytest.approx(
            float(np.median([r["out_strength"][0] for r in last])), abs=1e-12)
        assert bt.glued_float(PAGE, f"gate_{key}_gate_blank") == pytest.approx(
            float(np.median([r["gate_blank"] for r in last])), abs=1e-12)
        assert bt.glued_float(PAGE, f"gate_{key}_accuracy") == pytest.approx(
            float(np.median([r["accuracy"] for r in last])), abs=1e-12)
    higher = sum(g["readouts"][-1]["out_strength"][0] > p["readouts"][-1]["out_strength"][0]
                 for p, g in zip(STUDY["runs"]["plain"], STUDY["runs"]["gated"]))
    assert bt.glued_float(PAGE, "gate_higher") == higher
    # The prose says the sink stays: the gated median is not below the plain one's harmonic start.
    assert bt.glued_float(PAGE, "gate_gated_s0_after") > bt.glued_float(PAGE, "gate_s0_before")


@pytest.mark.build
def test_exercises():
    assert bt.glued_float(PAGE, "ex_theta_one_edge") == 0 and bt.glued_float(PAGE, "ex_theta_one_out") == 0
    s = np.random.default_rng(2).standard_normal(8)
    s_plus = s.copy()
    s_plus[2] += 2.0
    lam = np.exp(s).sum() / np.exp(s_plus).sum()
    assert bt.glued_float(PAGE, "ex_cancel_on") == pytest.approx(1 - lam, abs=1e-12)
    assert bt.glued_float(PAGE, "ex_cancel_off") < 1e-12
    assert bt.glued_float(PAGE, "ex_lap_plain") == -2 and bt.glued_float(PAGE, "ex_lap_signed") == 2
