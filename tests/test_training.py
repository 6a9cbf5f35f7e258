"""Training: gradients against finite differences, reproducibility, and the chapter's two experiments
recomputed from re-run training by independent code."""

import networkx as nx
import numpy as np
import pytest

import booktools as bt
import oracles
from attention_graph import training
from attention_graph.graph_tools import spectral_bipartition

PAGE = "training"


# --- The optimiser and the gradients ------------------------------------------------------------

def test_adam_two_steps_by_hand():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    g1, g2 = np.array([2.0, -1.0]), np.array([0.5, 3.0])
    m1, v1 = (1 - b1) * g1, (1 - b2) * g1**2
    x1 = 1.0 - lr * (m1 / (1 - b1)) / (np.sqrt(v1 / (1 - b2)) + eps)
    m2, v2 = b1 * m1 + (1 - b1) * g2, b2 * v1 + (1 - b2) * g2**2
    x2 = x1 - lr * (m2 / (1 - b1**2)) / (np.sqrt(v2 / (1 - b2**2)) + eps)
    params, state = {"x": np.ones(2)}, {}
    training.adam(params, {"x": g1}, state, lr)
    np.testing.assert_allclose(params["x"], x1, rtol=0, atol=1e-15)
    training.adam(params, {"x": g2}, state, lr)
    np.testing.assert_allclose(params["x"], x2, rtol=0, atol=1e-15)


def test_cross_entropy_gradient():
    rng = np.random.default_rng(0)
    z, t = rng.standard_normal((4, 3)), np.array([0, 2, 1, 1])
    L, dz = training.cross_entropy(z, t)
    P = oracles.softmax(z)
    assert L == pytest.approx(-np.mean(np.log(P[np.arange(4), t])), abs=1e-14)
    np.testing.assert_allclose(dz, oracles.central_difference(
        lambda M: training.cross_entropy(M, t)[0], z), atol=1e-8)


def test_sequence_model_gradients_match_central_differences():
    rng = np.random.default_rng(1)
    params = training.init_sequence_model(4, 5, 3, rng)
    tokens, targets, _ = training.sequence_task("reverse", 5, 4, 3, rng)
    X = training.sequence_inputs(tokens, 4)
    oracles.assert_gradients(lambda p: training.sequence_model_grads(p, X, targets), params)


@pytest.mark.parametrize("kind", training.CLUB_MODELS)
def test_club_model_gradients_match_central_differences(kind):
    data = training.club_features()
    params = training.init_club_model(kind, data, np.random.default_rng(2), hidden=3, d_k=2)
    oracles.assert_gradients(lambda p: training.club_model_grads(kind, p, data), params, atol=1e-7)


def test_training_is_bit_reproducible():
    a = training.train_sequence_model("previous", steps=20)
    b = training.train_sequence_model("previous", steps=20)
    for name in a["params"]:
        assert np.array_equal(a["params"][name], b["params"][name])
    c = training.train_club_model("masked attention", 3, steps=20)
    d = training.train_club_model("masked attention", 3, steps=20)
    assert all(np.array_equal(c["params"][k], d["params"][k]) for k in c["params"])


# --- Experiment A, recomputed -------------------------------------------------------------------

def _expected_share(run):
    """The share on the expected edges, from the trained projections, by independent code."""
    tokens, vocab = run["tokens_test"], run["vocab"]
    batch, n = tokens.shape
    p = run["params"]
    shares = []
    for seq in tokens:
        X = np.hstack([np.eye(vocab)[seq], np.eye(n)])  # (n, vocab + n)
        W = oracles.attention(X @ p["W_Q"], X @ p["W_K"], X @ p["W_V"])[1]  # (n, n)
        want = [max(i - 1, 0) for i in range(n)] if run["task"] == "previous" else \
            [n - 1 - i for i in range(n)]
        shares.append(np.mean([W[i, want[i]] for i in range(n)]))
    return float(np.mean(shares))


@pytest.mark.build
@pytest.mark.parametrize("task", ["previous", "reverse"])
def test_experiment_a_share_is_recomputed(task):
    run = training.train_sequence_model(task)
    share = _expected_share(run)
    assert bt.glued_float(PAGE, f"{task}_share_after") == pytest.approx(share, abs=1e-12)
    assert share > 0.95  # the learned weights are the task's adjacency
    before = bt.glued_float(PAGE, f"{task}_share_before")
    assert abs(before - 1 / len(run["source"])) < 0.01  # untrained: about uniform
    assert bt.glued_float(PAGE, f"{task}_accuracy") == 1.0
    assert bt.glued_plain(PAGE, "accuracy_words").strip("'") == "both accuracies 1.000"  # equal, said once


@pytest.mark.build
def test_sequence_gradients_glued_are_small():
    assert 0 < bt.glued_float(PAGE, "seq_grad_gap") < 1e-7


# --- Experiment B, recomputed -------------------------------------------------------------------

def _club_truth():
    G = nx.karate_club_graph()
    return np.array([G.nodes[v]["club"] != "Mr. Hi" for v in sorted(G)], dtype=int)


def _logits(kind, p, data):
    """The two-layer model's forward pass, written independently of the package."""
    A = nx.to_numpy_array(nx.karate_club_graph(), nodelist=sorted(nx.karate_club_graph()))
    A = (A > 0).astype(float) + np.eye(34)  # friends and oneself
    mask = A > 0
    H = data["identity"] if kind in ("GCN", "GAT") else data["with_pe"]
    for layer in (1, 2):
        Z = H @ p[f"Theta{layer}"]
        if kind == "GCN":
            deg = A.sum(axis=1)
            W = A / np.sqrt(np.outer(deg, deg))
        elif kind == "uniform attention":
            W = A / A.sum(axis=1, keepdims=True)
        elif kind == "GAT":
            e = (Z @ p[f"a{layer}"][0])[:, None] + (Z @ p[f"a{layer}"][1])[None, :]
            W = oracles.softmax(np.where(e > 0, e, 0.2 * e), mask)
        else:
            W = oracles.softmax(oracles.scaled_scores(H @ p[f"W_Q{layer}"], H @ p[f"W_K{layer}"]),
                                mask)
        H = W @ Z
        if layer == 1:
            H = np.maximum(H, 0)
    return H


@pytest.fixture(scope="module")
def club_runs():
    data = training.club_features()
    return data, {(kind, s): training.train_club_model(kind, s, data=data)
                  for kind in training.CLUB_MODELS for s in range(20)}


@pytest.mark.build
@pytest.mark.parametrize("kind, key", [("GCN", "gcn"), ("GAT", "gat"),
                                       ("masked attention", "gt"), ("uniform attention", "uniform")])
def test_experiment_b_accuracy_table_is_recomputed(club_runs, kind, key):
    data, runs = club_runs
    truth = _club_truth()
    others = [i for i in range(34) if i not in (0, 33)]
    acc = []
    for s in range(20):
        predicted = _logits(kind, runs[(kind, s)]["params"], data).argmax(axis=1)
        acc.append(np.mean(predicted[others] == truth[others]))
    assert bt.glued_float(PAGE, f"acc_{key}_mean") == pytest.approx(np.mean(acc), abs=1e-12)
    assert bt.glued_float(PAGE, f"acc_{key}_std") == pytest.approx(np.std(acc), abs=1e-12)
    table = bt.glue_data(PAGE)["club_accuracy_table"]["data"]["text/markdown"]
    assert f"| {kind} | {np.mean(acc):.3f} | {np.std(acc):.3f} |" in table


@pytest.mark.build
def test_experiment_b_claims():
    """What the chapter (and the karate chapter) say about the accuracies and the readouts."""
    g = lambda key: bt.glued_float(PAGE, key)  # noqa: E731
    assert g("acc_gcn_std") == 0.0  # "from every seed"
    wrong = g("acc_gcn_wrong")
    assert wrong >= 1 and abs(wrong - round(wrong)) < 1e-9  # a whole number of members
    for learned in ("gat", "gt"):  # after the last step, the fixed weights score higher
        assert g("acc_gcn_mean") > g(f"acc_{learned}_mean")
        assert g("acc_uniform_mean") > g(f"acc_{learned}_mean")
        assert g(f"acc_{learned}_std") > g("acc_gcn_std") and g(f"acc_{learned}_std") > g("acc_uniform_std")
    # Untrained: the communities of both first layers are those of uniform attention.
    for model in ("gat", "gt"):
        assert g(f"{model}_l1_before_ari") == pytest.approx(g("uniform_ari"), abs=1e-12)
    # Masked attention: more mass on the own faction, in layer 1 and the rollout, above uniform.
    for view in ("l1", "ro"):
        assert g(f"gt_{view}_after_same_faction") > g(f"gt_{view}_before_same_faction")
    assert g("gt_l1_after_same_faction") > g("uniform_same_faction")
    assert g("gt_ro_after_ari") > g("gt_ro_before_ari")
    assert abs(g("gt_l1_after_ari") - g("gt_l1_before_ari")) < 0.01
    # GAT: PageRank of the labelled members up, communities further from the split.
    assert g("gat_l1_after_pagerank_0") > g("gat_l1_before_pagerank_0")
    assert g("gat_l1_after_pagerank_33") > g("gat_l1_before_pagerank_33")
    assert g("gat_l1_after_ari") < g("gat_l1_before_ari")


@pytest.mark.build
def test_experiment_b_readouts_are_recomputed(club_runs):
    """Masked attention's own-faction mass, from the trained weights, by independent code."""
    data, runs = club_runs
    truth = _club_truth()
    same = truth[:, None] == truth[None, :]
    for when in ("before", "after"):
        values = [float((runs[("masked attention", s)][f"W_{when}"][0] * same).sum(axis=1).mean())
                  for s in range(20)]
        assert bt.glued_float(PAGE, f"gt_l1_{when}_same_faction") == pytest.approx(np.mean(values),
                                                                                 abs=1e-12)


@pytest.mark.build
def test_untrained_communities_are_those_of_uniform_attention(club_runs):
    data, runs = club_runs
    A = nx.to_numpy_array(nx.karate_club_graph(), nodelist=sorted(nx.karate_club_graph()), weight=None)
    A_loops = A + np.eye(34)  # friends and oneself
    mean = A_loops / A_loops.sum(axis=1, keepdims=True)
    dev = max(np.abs(runs[(kind, s)]["W_before"][0] - mean).max()
              for kind in ("GAT", "masked attention") for s in range(20))
    assert bt.glued_float(PAGE, "untrained_dev") == pytest.approx(dev, abs=1e-12)
    uniform = spectral_bipartition(data["mean"])
    for kind in ("GAT", "masked attention"):
        for s in range(20):
            assert np.array_equal(spectral_bipartition(runs[(kind, s)]["W_before"][0]), uniform)


@pytest.mark.build
def test_exercises():
    assert bt.glued_float(PAGE, "ex_seeds_min") > 0.95
    assert abs(bt.glued_float(PAGE, "ex_blind_share") - 1 / 8) < 0.01
    for key in ("ex_adam_big", "ex_adam_small"):
        assert bt.glued_float(PAGE, key) == pytest.approx(0.1, abs=1e-5)
    assert bt.glued_plain(PAGE, "ex_adam_words").strip("'") == "0.1000 each"  # the learning rate, said once


# --- Experiment B along training: early stopping on held-out members, recomputed ----------------

def _held_out_and_test(truth):
    """Three unlabelled members of each faction, drawn with seed 0 as the chapter says; the rest test."""
    rng = np.random.default_rng(0)
    unlabelled = np.array([i for i in range(34) if i not in (0, 33)])
    held = sorted(int(i) for f in (0, 1)
                  for i in rng.choice(unlabelled[truth[unlabelled] == f], 3, replace=False))
    return held, [int(i) for i in unlabelled if i not in held]


def _cross_entropy(logits, truth):
    z = logits - logits.max(axis=1, keepdims=True)
    return float(np.mean(np.log(np.exp(z).sum(axis=1)) - z[np.arange(len(truth)), truth]))


@pytest.mark.build
@pytest.mark.parametrize("kind, key", [("GCN", "gcn"), ("GAT", "gat"),
                                       ("masked attention", "gt"), ("uniform attention", "uniform")])
def test_experiment_b_early_stopping_is_recomputed(club_runs, kind, key):
    data, runs = club_runs
    truth = _club_truth()
    held, test = _held_out_and_test(truth)
    assert bt.glued_float(PAGE, "es_held_out") == len(held) and bt.glued_float(PAGE, "es_test") == len(test)
    chosen_acc, last_acc, curves, n_last = [], [], [], 0
    for s in range(20):
        run = runs[(kind, s)]
        steps = run["record_steps"]
        assert steps[0] == 0 and steps[-1] == 100
        # The last recorded logits are those of the trained parameters, recomputed independently.
        np.testing.assert_allclose(run["logits_history"][-1], _logits(kind, run["params"], data), atol=1e-10)
        acc = [float(np.mean(L[test].argmax(axis=1) == truth[test])) for L in run["logits_history"]]
        loss = [_cross_entropy(L[held], truth[held]) for L in run["logits_history"]]
        best = int(np.argmin(loss))
        chosen_acc.append(acc[best])
        last_acc.append(acc[-1])
        n_last += steps[best] == 100
        curves.append(acc)
    curve = np.mean(curves, axis=0)
    assert bt.glued_float(PAGE, f"es_{key}_chosen_acc") == pytest.approx(np.mean(chosen_acc), abs=1e-12)
    assert bt.glued_float(PAGE, f"es_{key}_last_acc") == pytest.approx(np.mean(last_acc), abs=1e-12)
    assert bt.glued_float(PAGE, f"es_{key}_n_last") == n_last
    assert bt.glued_float(PAGE, f"es_{key}_at_early") == pytest.approx(curve[steps.index(20)], abs=1e-12)
    assert bt.glued_float(PAGE, f"es_{key}_best_step") == steps[int(np.argmax(curve))]


@pytest.mark.build
def test_experiment_b_along_training_claims(club_runs):
    """What the chapter says about the curves: the fixed weights end at their best, the learned ones
    never beat both fixed ones, and decline by about one member after their best step."""
    data, runs = club_runs
    truth = _club_truth()
    _, test = _held_out_and_test(truth)
    curve = {kind: np.mean([[np.mean(L[test].argmax(axis=1) == truth[test]) for L in runs[(kind, s)]["logits_history"]]
                            for s in range(20)], axis=0) for kind in training.CLUB_MODELS}
    for fixed in ("GCN", "uniform attention"):
        assert curve[fixed][-1] == pytest.approx(curve[fixed].max(), abs=1e-12)
    # The caption: the untrained models' accuracies at step 0, below the panel's floor of 0.85
    start = [curve[kind][0] for kind in training.CLUB_MODELS]
    assert bt.glued_float(PAGE, "es_start_min") == pytest.approx(min(start), abs=1e-12)
    assert bt.glued_float(PAGE, "es_start_max") == pytest.approx(max(start), abs=1e-12)
    assert max(start) < 0.85
    best_fixed = np.maximum(curve["GCN"], curve["uniform attention"])
    one = 1 / len(test)
    for learned in ("GAT", "masked attention"):
        assert (curve[learned] <= best_fixed + 1e-12).all()
        assert 0.5 * one < curve[learned].max() - curve[learned][-1] < 1.5 * one

