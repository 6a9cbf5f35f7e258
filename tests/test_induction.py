"""Induction heads: the composition of the ideal heads, the model's gradients, and the chapter's
numbers recomputed from the benchmark record and from re-run training by independent code."""

import importlib

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import bench, induction
from bad_inputs import I2, I3, inf

PAGE = "induction"
RECORD = bench.record("induction")
STUDY = RECORD["results"]


def ideal(n, varpi):
    """The ideal heads as index maps: layer 1 j ↦ j − 1 (0 ↦ 0), layer 2 i ↦ i − ϖ + 1 (i ≥ ϖ)."""
    f1 = [max(j - 1, 0) for j in range(n)]
    f2 = [i - varpi + 1 if i >= varpi else i for i in range(n)]
    W1, W2 = np.zeros((n, n)), np.zeros((n, n))
    W1[range(n), f1] = 1
    W2[range(n), f2] = 1
    return W1, W2, f1, f2


@pytest.mark.build
def test_thm_induction_composition():
    assert bt.verified("thm-induction-composition") >= 1
    for n in range(3, 20):
        for varpi in range(1, n - 1):
            W1, W2, f1, f2 = ideal(n, varpi)
            np.testing.assert_array_equal(induction.previous_token_graph(n), W1)
            np.testing.assert_array_equal(induction.induction_graph(n, varpi), W2)
            C = induction.composed_graph(W1, W2)
            for i in range(varpi, n):  # two hops: the composition of the index maps
                assert f1[f2[i]] == i - varpi and C[i, i - varpi] == 1 and C[i].sum() == 1
    assert bt.glued_float(PAGE, "ideal_scores_min") == 1.0


def test_repeat_task_repeats_distinct_tokens():
    tokens, periods = induction.repeat_task(8, 16, 200, np.random.default_rng(0))
    assert tokens.shape == (200, 16) and set(periods) <= set(range(4, 9))
    assert len(set(periods)) > 1  # the period varies
    for s, varpi in zip(tokens, periods):
        assert len(set(s[:varpi])) == varpi  # distinct within a period
        assert all(s[i] == s[i - varpi] for i in range(varpi, 16))


def _forward(p, s):
    """The two-layer attention-only model, written independently of the package."""
    n = len(s)
    mask = np.tril(np.ones((n, n), dtype=bool))
    H = p["W_E"][s] + p["W_P"][:n]
    Ws = []
    for layer in (1, 2):
        Y, W = oracles.attention(H @ p[f"W_Q{layer}"], H @ p[f"W_K{layer}"], H @ p[f"W_V{layer}"], mask)
        H = H + Y
        Ws.append(W)
    return H @ p["W_U"], Ws


def test_forward_matches_an_independent_forward():
    rng = np.random.default_rng(2)
    params = induction.init_induction_model(7, 10, 5, rng)
    tokens, _ = induction.repeat_task(5, 7, 3, rng)
    for s in tokens:
        logits, caches = induction.induction_forward(params, s)
        want, Ws = _forward(params, s)
        np.testing.assert_allclose(logits, want, atol=1e-12)
        for c, W in zip(caches, Ws):
            np.testing.assert_allclose(c["W"], W, atol=1e-12)


@pytest.mark.build
def test_gradients_match_central_differences():
    rng = np.random.default_rng(4)  # the page's small batch
    params = induction.init_induction_model(6, 8, 4, rng)
    tokens, periods = induction.repeat_task(4, 6, 2, rng)
    oracles.assert_gradients(lambda p: induction.induction_grads(p, tokens, periods), params)
    assert 0 < bt.glued_float(PAGE, "ind_grad_gap") < 1e-7


def test_training_is_bit_reproducible():
    a = induction.train_induction_model(3, steps=4, every=2, held_out=4)
    b = induction.train_induction_model(3, steps=4, every=2, held_out=4)
    assert all(np.array_equal(a["params"][k], b["params"][k]) for k in a["params"])
    assert a["accuracy"] == b["accuracy"]


@pytest.mark.slow
def test_the_record_is_what_the_code_gives():
    run = induction.train_induction_model(0, steps=STUDY["steps"])
    want = STUDY["curves"][0]
    assert run["steps"] == want["steps"] and run["accuracy"] == want["accuracy"]
    assert run["induction"] == want["induction"]
    assert all(run["params"][k].tolist() == STUDY["params"][0][k] for k in run["params"])  # the model


# --- The record, read independently -----------------------------------------------------------

def _scores(W1, W2, varpi):
    n = len(W1)
    rows = range(varpi, n - 1)
    C = W2 @ W1
    return {"previous": np.mean([W1[i - varpi + 1, i - varpi] for i in rows]),
            "induction": np.mean([W2[i, i - varpi + 1] for i in rows]),
            "composed": np.mean([C[i, i - varpi] for i in rows])}


def _first(steps, acc, level):
    return next((s for s, a in zip(steps, acc) if a >= level), -1)


@pytest.mark.build
def test_glued_summary_is_recomputed_from_the_record():
    curves = STUDY["curves"]
    assert len(curves) >= 5  # "at least five seeds"
    for key in ("accuracy", "previous", "induction", "composed"):
        final = [c[key][-1] for c in curves]
        for stat, f in (("median", np.median), ("min", np.min), ("max", np.max)):
            assert bt.glued_float(PAGE, f"ind_{key}_{stat}") == pytest.approx(float(f(final)), abs=1e-12)
    lo, hi = bt.glued_float(PAGE, "ind_rise_from_level"), bt.glued_float(PAGE, "ind_rise_to_level")
    start = [_first(c["steps"], c["accuracy"], lo) for c in curves]
    end = [_first(c["steps"], c["accuracy"], hi) for c in curves]
    assert -1 not in start + end  # every seed rises past both levels
    assert bt.glued_float(PAGE, "ind_rise_from_median") == float(np.median(start))
    assert bt.glued_float(PAGE, "ind_rise_from_min") == min(start)
    assert bt.glued_float(PAGE, "ind_rise_from_max") == max(start)
    width = [b - a for a, b in zip(start, end)]
    assert bt.glued_float(PAGE, "ind_rise_width_median") == float(np.median(width))
    assert bt.glued_float(PAGE, "ind_rise_width_min") == min(width)
    assert bt.glued_float(PAGE, "ind_rise_width_max") == max(width)
    # "stays flat through the first gains ... then rises with it": on the median curves, the masses
    # move by less than 0.1 up to the median step where the accuracy passes the lower level, while
    # the accuracy has gained more than 0.15 by then; they gain more than 0.3 by the end.
    at = list(curves[0]["steps"]).index(np.median(start))
    med = {key: np.median([c[key] for c in curves], axis=0) for key in ("accuracy", "previous", "induction",
                                                                        "composed")}
    assert med["accuracy"][at] - med["accuracy"][0] > 0.15
    for key in ("previous", "induction", "composed"):
        assert abs(med[key][at] - med[key][0]) < 0.1 and med[key][-1] - med[key][0] > 0.3, key
    # "a rise steep next to the whole run": the median width is under a third of the run
    assert np.median(width) < STUDY["steps"] / 3
    assert bt.glued_float(PAGE, "ind_acc_start") == pytest.approx(
        float(np.median([c["accuracy"][0] for c in curves])), abs=1e-12)
    assert bt.glued_float(PAGE, "ind_accuracy_min") > 0.9  # "every seed learns the task"
    assert bt.glued_float(PAGE, "ind_chance") == 1 / STUDY["vocab"]
    assert bt.glued_float(PAGE, "ind_seconds") == STUDY["cpu_seconds"]
    assert bt.glued_plain(PAGE, "ind_every") == str(int(curves[0]["steps"][1]))  # an int in the prose


@pytest.mark.build
def test_the_example_graphs_are_read_independently():
    ex = STUDY["example"]
    W1, W2, varpi = np.array(ex["W1"]), np.array(ex["W2"]), ex["period"]
    s = ex["tokens"]
    assert all(s[i] == s[i - varpi] for i in range(varpi, len(s)))
    for key, value in _scores(W1, W2, varpi).items():
        assert bt.glued_float(PAGE, f"ex_{key}") == pytest.approx(value, abs=1e-12)
    assert bt.glued_float(PAGE, "ex_period") == varpi == STUDY["T"]


def _reads(p, tokens, periods):
    """Per predictable query: (ϖ, matches, weight on every match, on the earliest, on the latest),
    from the independent forward; the matches found by content, checked against j = i − kϖ + 1."""
    rows = []
    for s, varpi in zip(tokens, periods):
        W2 = _forward(p, s)[1][1]
        for i in range(varpi, len(s) - 1):
            M = [j for j in range(1, i + 1) if s[j - 1] == s[i]]
            assert M == list(range(i - varpi + 1, 0, -varpi))[::-1]
            assert M[0] <= STUDY["T"] - 1  # "every earliest match lies in the first half"
            rows.append((varpi, len(M), W2[i, M].sum(), W2[i, M[0]], W2[i, M[-1]]))
    return np.array(rows)


@pytest.mark.build
def test_what_layer_2_reads_is_measured_independently():
    n_new = int(bt.glued_float(PAGE, "read_sequences"))
    tokens, periods = induction.repeat_task(STUDY["T"], STUDY["vocab"], n_new, np.random.default_rng(35))
    models = [{k: np.array(v) for k, v in p.items()} for p in STUDY["params"]]
    assert len(models) == len(STUDY["curves"])  # every seed the chapter trains
    reads = [_reads(p, tokens, periods) for p in models]
    table = bt.glued_table(PAGE, "tab-induction-reads")
    assert list(table) == [str(v) for v in sorted(set(periods))]
    assert len(table) == STUDY["T"] - STUDY["T"] // 2 + 1
    for varpi in sorted(set(periods)):
        cells = [float(c) for c in table[str(varpi)]]
        for col, key, cell in zip((1, 2, 3, 4), ("count", "every", "earliest", "latest"), cells):
            want = float(np.median([r[r[:, 0] == varpi, col].mean() for r in reads]))
            assert bt.glued_float(PAGE, f"read_{varpi}_{key}") == pytest.approx(want, abs=1e-12)
            assert cell == pytest.approx(want, abs=5e-4)
        assert cells[1] > 0.95  # "together they get nearly all of its weight in every period"
    worst = min(r[:, 2].mean() for r in reads)
    assert bt.glued_float(PAGE, "read_every_worst") == pytest.approx(worst, abs=1e-12) and worst > 0.95
    several = [r[r[:, 1] > 1] for r in reads]
    early = float(np.median([r[:, 3].mean() for r in several]))
    late = float(np.median([r[:, 4].mean() for r in several]))
    assert bt.glued_float(PAGE, "read_several_earliest") == pytest.approx(early, abs=1e-12)
    assert bt.glued_float(PAGE, "read_several_latest") == pytest.approx(late, abs=1e-12)
    assert early > 3 * late  # "it prefers the earliest", in every seed too
    assert all(r[:, 3].mean() > r[:, 4].mean() for r in several)
    # the latest match is the only match at period T alone, the showcase's period
    single = [v for v in sorted(set(periods)) if all(r[r[:, 0] == v, 1].max() == 1 for r in reads)]
    assert single == [STUDY["T"]] == [STUDY["example"]["period"]]
    assert bt.glued_plain(PAGE, "read_single_periods").strip("'") == str(STUDY["T"])
    assert bt.glued_float(PAGE, "ind_T_minus_1") == STUDY["T"] - 1
    # the theorem's edge alone gets less than every match, in every seed
    assert bt.glued_float(PAGE, "ind_induction_max") < worst
    # graph_view_limits quotes the same worst seed
    assert bt.glued_float("graph_view_limits", "lim_ind_every_min") == pytest.approx(worst, abs=1e-12)


def test_the_theorem_carries_over_to_any_match():
    """'if row i of W2 is e_j with j a match, row i of W2 W1 is e_{j−1}', for the ideal layer 1."""
    for n in range(4, 17):
        W1 = induction.previous_token_graph(n)
        for varpi in range(1, n - 1):
            for i in range(varpi, n):
                for j in range(i - varpi + 1, 0, -varpi):
                    W2 = np.eye(n)
                    W2[i] = 0
                    W2[i, j] = 1
                    row = induction.composed_graph(W1, W2)[i]
                    assert row.argmax() == j - 1 and (j - 1) % varpi == i % varpi and row.sum() == 1


def test_match_keys_and_layer2_reads_refuse_bad_input():
    with pytest.raises(ValueError, match="i must be a position in 0..3"):
        induction.match_keys([0, 1, 0, 1], 4)
    params = induction.init_induction_model(4, 4, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="tokens must repeat with their period"):
        induction.layer2_reads(params, [[0, 1, 2, 3]], [2])
    with pytest.raises(TypeError, match="sequences must be a positive integer"):
        induction.recorded_reads(STUDY, 2.5)


@pytest.mark.build
def test_circuits_have_dominant_diagonals():
    ex = STUDY["example"]
    for key in ("qk", "ov"):
        M = np.array(ex[key])
        share = np.mean([int(np.argmax(row)) == a for a, row in enumerate(M)])
        assert STUDY["diagonal_share"][0][key] == share
        assert bt.glued_float(PAGE, f"{key}_diag_min") == min(d[key] for d in STUDY["diagonal_share"])
        assert bt.glued_float(PAGE, f"{key}_diag_min") == 1.0  # "in every seed ... each row"


# --- Exercises ----------------------------------------------------------------------------------

@pytest.mark.build
def test_exercises():
    assert bt.glued_float(PAGE, "ex_early_count") == 4  # rows 0..ϖ − 1 for ϖ = 4
    T = STUDY["T"]
    tokens, periods = induction.repeat_task(T, STUDY["vocab"], 2000, np.random.default_rng(9))
    hits = [s[i - T + 1] == s[i + 1] for s, varpi in zip(tokens, periods) for i in range(varpi, 2 * T - 1)
            if i - T + 1 >= 0]
    total = sum(2 * T - 1 - int(varpi) for varpi in periods)  # every predictable position counts
    share = sum(hits) / total
    assert bt.glued_float(PAGE, "ex_offset_share") == pytest.approx(share, abs=1e-12)
    assert share < STUDY["curves"][0]["accuracy"][-1]  # the offset rule is worse than the model
    # "never by luck": a hit is exactly a period that divides T (the tokens of a period are distinct)
    rule = sum(T % int(varpi) == 0 for varpi in periods for i in range(int(varpi), 2 * T - 1) if i - T + 1 >= 0)
    assert sum(hits) == rule and any(T % int(varpi) == 0 and varpi < T for varpi in periods)
    ex = STUDY["example"]
    W1, W2, varpi = np.array(ex["W1"]), np.array(ex["W2"]), ex["period"]
    n = len(W1)
    R = (np.eye(n) + W1 + W2 + W2 @ W1) / 4
    rows = range(varpi, n - 1)
    assert bt.glued_float(PAGE, "ex_rollout_after") == pytest.approx(
        np.mean([R[i, i - varpi + 1] for i in rows]), abs=1e-12)
    assert bt.glued_float(PAGE, "ex_rollout_match") == pytest.approx(
        np.mean([R[i, i - varpi] for i in rows]), abs=1e-12)


@pytest.mark.slow
def test_benchmark_cli_runs_quick(tmp_path):
    record = bt.quick_benchmark("induction", tmp_path)
    assert record["machine"]["cpus"] >= 1
    assert RECORD["quick"] is False  # the committed record is a full run


# --- Broken variants ------------------------------------------------------------------------------

ind = importlib.import_module("attention_graph.induction")


def _induction_one_back(n, varpi):
    """An induction head that attends to the earlier occurrence, i − ϖ, not the token after it."""
    W = np.zeros((n, n))
    i = np.arange(n)
    W[i, np.where(i >= varpi, i - varpi, i)] = 1.0
    return W


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # induction
    "thm-induction-composition": (ind, "induction_graph", _induction_one_back,
                                  "the induction head reads the earlier occurrence itself"),
}


# --- Bad inputs --------------------------------------------------------------------------------

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("previous_token_graph", lambda: ag.previous_token_graph(0), ValueError, "n must be a positive integer"),
    ("induction_graph", lambda: ag.induction_graph(5, 5),
     ValueError, r"n_per must be an integer in 1..4 \(a period shorter than n\)"),
    ("induction_graph", lambda: ag.induction_graph(5, 1.0), TypeError, "n_per must be an integer"),
    ("composed_graph", lambda: ag.composed_graph(I2, I3), ValueError, "W1 and W2 must be square matrices of one shape"),
    ("composed_graph", lambda: ag.composed_graph(inf[:2], I2), ValueError, "W1 must be finite"),
    ("head_scores", lambda: ag.head_scores(I3, I3, 2), ValueError, r"n_per must be an integer in 1..1"),
    ("head_scores", lambda: ag.head_scores(np.eye(4), np.eye(4), True), TypeError, "n_per must be an integer"),
]
