"""Attention sinks: the causal graph's counts, the model's gradients, and the chapter's numbers
recomputed from the benchmark record and from re-run training by independent code."""

import importlib
from fractions import Fraction

import numpy as np
import pytest
import sympy as sp

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import bench, sinks
from attention_graph.patterns import causal_edges
from bad_inputs import strs

PAGE = "sinks"
RECORD = bench.record("sinks")
STUDY = RECORD["results"]


def harmonic(m: int) -> Fraction:
    return sum((Fraction(1, k) for k in range(1, m + 1)), Fraction(0))


def walk_pagerank(W, alpha=0.85, steps=2000):
    """PageRank by power iteration (the package solves a linear system instead)."""
    n = len(W)
    r = np.full(n, 1 / n)
    for _ in range(steps):
        r = (1 - alpha) / n + alpha * r @ W
    return r


def causal_softmax(S):
    n = len(S)
    return oracles.softmax(S, np.tril(np.ones((n, n), dtype=bool)))


# --- The causal graph -------------------------------------------------------------------------

@pytest.mark.build
def test_thm_causal_first_token():
    assert bt.verified("thm-causal-first-token") >= 1
    for n in range(1, 15):
        seen_by = np.tril(np.ones((n, n), dtype=bool)).sum(axis=0)  # queries per key
        assert sinks.out_degrees(causal_edges(n), n).tolist() == seen_by.tolist()
        assert seen_by[0] == n and (n == 1 or seen_by[1:].max() < n)
    n = int(bt.glued_float(PAGE, "reach_n"))
    assert bt.glued_float(PAGE, "reach_deg_first") == n
    assert bt.glued_float(PAGE, "reach_deg_second") == n - 1


@pytest.mark.build
def test_thm_uniform_causal_sink():
    assert bt.verified("thm-uniform-causal-sink") >= 1
    n = int(bt.glued_float(PAGE, "reach_n"))
    W = np.array([[1 / (i + 1) if j <= i else 0.0 for j in range(n)] for i in range(n)])
    np.testing.assert_array_equal(sinks.uniform_causal_weights(n), W)
    assert bt.glued_float(PAGE, "reach_s_first") == pytest.approx(float(harmonic(n)), abs=1e-13)
    assert bt.glued_float(PAGE, "reach_s_last") == pytest.approx(1 / n, abs=1e-15)
    assert bt.glued_float(PAGE, "reach_s_ratio") == pytest.approx(n * float(harmonic(n)), abs=1e-11)
    r = walk_pagerank(W)
    assert bt.glued_float(PAGE, "reach_r_first") == pytest.approx(r[0], abs=1e-12)
    assert bt.glued_float(PAGE, "reach_r_last") == pytest.approx(r[-1], abs=1e-12)
    assert r[0] == r.max()  # "the first token still ranks highest"


@pytest.mark.build
def test_thm_causal_walk_absorbed():
    assert bt.verified("thm-causal-walk-absorbed") >= 1
    n = int(bt.glued_float(PAGE, "reach_n"))
    W = causal_softmax(np.random.default_rng(0).standard_normal((n, n)))  # as on the page
    p = np.full(n, 1 / n)
    for _ in range(5000):  # the walk from a uniform start ends at the first token
        p = p @ W
    assert p[0] == pytest.approx(1.0, abs=1e-9)
    assert bt.glued_float(PAGE, "reach_pi_first") == pytest.approx(1.0, abs=1e-9)
    r = walk_pagerank(W)
    assert bt.glued_float(PAGE, "reach_r_random_first") == pytest.approx(r[0], abs=1e-12)
    assert r[0] == r.max()


# --- The task and the model --------------------------------------------------------------------

def test_trigger_task_targets():
    tokens, targets = sinks.trigger_task(30, 7, 50, np.random.default_rng(1), p=0.3)
    for s, t in zip(tokens, targets):
        assert s[0] != sinks.TRIGGER
        for i in range(len(s)):
            if s[i] == sinks.TRIGGER:
                assert s[i - 1] != sinks.TRIGGER and t[i] == s[i - 1]
            else:
                assert 2 <= s[i] < 7 and t[i] == sinks.BLANK
    tok2, tgt2 = sinks.trigger_task(5, 7, 3, np.random.default_rng(1), sink_token=True)
    assert (tok2[:, 0] == 7).all() and (tgt2[:, 0] == -1).all() and tok2.shape == (3, 6)


def _forward(p, s):
    """The one-layer causal model, written independently of the package."""
    n = len(s)
    X = p["W_E"][s] + p["W_P"][:n]
    Y, W = oracles.attention(X @ p["W_Q"], X @ p["W_K"], X @ p["W_V"],
                             np.tril(np.ones((n, n), dtype=bool)))
    return (X + Y) @ p["W_U"], W


def test_sink_forward_matches_an_independent_forward():
    rng = np.random.default_rng(2)
    params = sinks.init_sink_model(6, 8, 5, rng)
    tokens, _ = sinks.trigger_task(7, 6, 3, rng, sink_token=True)
    for s in tokens:
        logits, c = sinks.sink_forward(params, s)
        want_logits, want_W = _forward(params, s)
        np.testing.assert_allclose(logits, want_logits, atol=1e-12)
        np.testing.assert_allclose(c["W"], want_W, atol=1e-12)


@pytest.mark.build
def test_sink_model_gradients_match_central_differences():
    rng = np.random.default_rng(3)  # the page's small batch
    params = sinks.init_sink_model(5, 6, 4, rng)
    tokens, targets = sinks.trigger_task(6, 5, 2, rng, p=0.4)
    oracles.assert_gradients(lambda p: sinks.sink_grads(p, tokens, targets), params)
    assert 0 < bt.glued_float(PAGE, "sink_grad_gap") < 1e-7


def test_training_is_bit_reproducible():
    a = sinks.train_sink_model(5, steps=6, every=3, held_out=4)
    b = sinks.train_sink_model(5, steps=6, every=3, held_out=4)
    assert all(np.array_equal(a["params"][k], b["params"][k]) for k in a["params"])


@pytest.mark.slow
def test_the_record_is_what_the_code_gives():
    run = sinks.train_sink_model(1, steps=STUDY["steps"])
    want = STUDY["runs"]["plain"][1]
    assert run["steps"] == want["steps"]
    np.testing.assert_array_equal(run["readouts"][-1]["W"], np.array(want["W_final"]))
    np.testing.assert_array_equal(run["readouts"][-1]["out_strength"],
                                  np.array(want["readouts"][-1]["out_strength"]))


# --- The record, read independently -----------------------------------------------------------

def test_record_readouts_are_consistent_with_their_attention():
    for runs in STUDY["runs"].values():
        for run in runs:
            W = np.array(run["W_final"])  # (n, n): the held-out mean
            final = run["readouts"][-1]
            np.testing.assert_allclose(final["out_strength"], W.sum(axis=0), atol=1e-12)
            np.testing.assert_allclose(final["pagerank"], walk_pagerank(W), atol=1e-10)
            np.testing.assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
            assert np.allclose(np.triu(W, 1), 0.0)  # causal


def _summary(runs):
    last = [r["readouts"][-1] for r in runs]
    s = np.array([r["out_strength"] for r in last])
    blank = np.array([r["blank_attention"][0] for r in last])
    return {"sink_at_0": int(sum(int(np.argmax(x)) == 0 for x in s)),
            "s0_before": float(np.median([r["readouts"][0]["out_strength"][0] for r in runs])),
            "s0_after": float(np.median(s[:, 0])), "s1_after": float(np.median(s[:, 1])),
            "blank_on_0": float(np.median(blank)), "blank_on_0_min": float(blank.min()),
            "blank_on_0_max": float(blank.max()),
            "pagerank_0": float(np.median([r["pagerank"][0] for r in last])),
            "accuracy": float(np.median([r["accuracy"] for r in last])),
            "accuracy_min": float(min(r["accuracy"] for r in last))}


@pytest.mark.build
@pytest.mark.parametrize("variant, key", [("plain", "plain"), ("sink token", "token")])
def test_glued_summary_is_recomputed_from_the_record(variant, key):
    want = _summary(STUDY["runs"][variant])
    for field, value in want.items():
        assert bt.glued_float(PAGE, f"sink_{key}_{field}") == pytest.approx(value, abs=1e-12), field
    assert bt.glued_float(PAGE, f"sink_{key}_missed") == len(STUDY["seeds"]) - want["sink_at_0"]


@pytest.mark.build
def test_prose_claims_about_the_sink():
    plain, token = _summary(STUDY["runs"]["plain"]), _summary(STUDY["runs"]["sink token"])
    n = STUDY["n"]
    assert bt.glued_float(PAGE, "sink_harmonic") == pytest.approx(float(harmonic(n)), abs=1e-13)
    assert plain["s0_after"] > 2 * plain["s0_before"]  # "training piles attention onto it"
    assert plain["sink_at_0"] >= len(STUDY["seeds"]) // 2  # "in most seeds"
    assert token["s1_after"] < plain["s1_after"]  # the sink token frees the first content token
    assert bt.glued_float(PAGE, "sink_plain_missed") == 1  # "in one seed" (singular in the prose)
    taken = sum(1 for run in STUDY["runs"]["sink token"]
                if any(r["out_strength"][1] > r["out_strength"][0] for r in run["readouts"])
                and int(np.argmax(run["readouts"][-1]["out_strength"])) == 0)
    assert bt.glued_float(PAGE, "sink_taken_over") == taken >= 1
    shown = int(bt.glued_float(PAGE, "sink_shown_seed"))
    for variant in STUDY["runs"]:
        assert int(np.argmax(STUDY["runs"][variant][shown]["readouts"][-1]["out_strength"])) == 0
    assert bt.glued_float(PAGE, "sink_seconds") == STUDY["cpu_seconds"]
    assert bt.glued_float(PAGE, "sink_every") == STUDY["runs"]["plain"][0]["steps"][1]


# --- Exercises ----------------------------------------------------------------------------------

@pytest.mark.build
def test_exercises():
    gamma = 0.5772156649015329
    for n, key in ((10, "ex_harmonic_gap_10"), (1000, "ex_harmonic_gap_1000")):
        gap = float(harmonic(n)) - (np.log(n) + gamma)
        assert bt.glued_float(PAGE, key) == pytest.approx(gap, abs=1e-12)
        assert gap == pytest.approx(1 / (2 * n), rel=0.1)  # "shrinks like 1/(2n)"
    assert bt.glued_float(PAGE, "ex_window_first") == 4  # keys 0..3 of a window reaching back 3
    assert bt.glued_float(PAGE, "ex_window_kept_first") == 10
    finals = [np.array(run["W_final"]) for runs in STUDY["runs"].values() for run in runs]
    first = min(W[:, 0].sum() for W in finals)
    last = max(W[:, -1].sum() for W in finals)
    assert bt.glued_float(PAGE, "ex_bounds_first_min") == pytest.approx(first, abs=1e-12) and first >= 1
    assert bt.glued_float(PAGE, "ex_bounds_last_max") == pytest.approx(last, abs=1e-12) and last <= 1


@pytest.mark.slow
def test_benchmark_cli_runs_quick(tmp_path):
    record = bt.quick_benchmark("sinks", tmp_path)
    assert record["machine"]["cpus"] >= 1
    assert RECORD["quick"] is False  # the committed record is a full run


# --- Broken variants ------------------------------------------------------------------------------

sk = importlib.import_module("attention_graph.sinks")


_sk_causal = sk.causal_symbols


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # sinks
    "thm-causal-first-token": (sk, "out_degrees", lambda edges, n: np.bincount(
        np.asarray(edges)[:, 0], minlength=n), "counts the keys each query sees: the in-degree of the query"),
    "thm-uniform-causal-sink": (sk, "uniform_causal_weights", lambda n: np.tril(np.ones((n, n))) / n,
                                "every entry 1/n: rows not normalised"),
    "thm-causal-walk-absorbed": (sk, "causal_symbols", lambda n: _sk_causal(n).subs(sp.Symbol("m_2", positive=True), 0),
                                 "the hypothesis dropped: row 2 gives no weight to an earlier token"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    # Attention sinks, induction heads
    ("out_degrees", lambda: ag.out_degrees(np.ones((2, 2)), 3), TypeError, "edges must be an integer array"),
    ("out_degrees", lambda: ag.out_degrees([[0, 5]], 3), ValueError, r"edges\[0\] has key index j = 5, outside 0..2"),
    ("out_degrees", lambda: ag.out_degrees([[0, 0]], 0), ValueError, "n must be a positive integer"),
    ("uniform_causal_weights", lambda: ag.uniform_causal_weights(0), ValueError, "n must be a positive integer"),
    ("uniform_causal_weights", lambda: ag.uniform_causal_weights(2.5), TypeError, "n must be a positive integer"),
    ("position_out_strength", lambda: ag.position_out_strength(np.ones((2, 3))),
     ValueError, r"W must be one \(n, n\) attention matrix or a batch"),
    ("position_out_strength", lambda: ag.position_out_strength(np.full((2, 2), np.nan)),
     ValueError, "W must be finite"),
    ("position_out_strength", lambda: ag.position_out_strength(strs[:2, :2]), TypeError, "W must hold real numbers"),
]
