"""The language model: GPT-2's layout against Hugging Face, its files, its backward pass, its training.

The fixture ``tests/fixtures/hf_gpt2/`` was recorded by ``tools/hf_gpt2_fixture.py`` with torch and
transformers (in a throwaway environment, not the project's): a random float64 GPT-2 saved with
``save_pretrained`` twice (``lm_head/``: ``GPT2LMHeadModel``, names with ``transformer.``; ``model/``:
``GPT2Model``), and its logits, hidden states and attention weights on four token sequences.
"""

from __future__ import annotations

import importlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

import attention_graph as ag
import booktools as bt
from attention_graph import bench, registry
from attention_graph.backward import central_difference

lm = importlib.import_module("attention_graph.language_model")

FIXTURE = Path(__file__).parent / "fixtures" / "hf_gpt2"


def _recorded():
    data = np.load(FIXTURE / "outputs.npz")
    k = 0
    while f"tokens_{k}" in data:
        yield {name: data[f"{name}_{k}"] for name in ("tokens", "logits", "hidden_states", "attentions")}
        k += 1


# --------------------------------------------------------------------------------------------------
# Against Hugging Face
# --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("saved", ["lm_head", "model"])
def test_the_saved_directory_loads_as_it_is(saved):
    model = ag.load_gpt2(FIXTURE / saved)
    config = json.loads((FIXTURE / saved / "config.json").read_text())
    assert {k: model.config[k] for k in lm.CONFIG_FIELDS} == {k: config[k] for k in lm.CONFIG_FIELDS}
    assert model.params["h.1.mlp.c_fc.weight"].shape == (12, 48)  # Conv1D: (in, out)
    assert model.params["wte.weight"].dtype == np.float64


@pytest.mark.parametrize("saved", ["lm_head", "model"])
def test_forward_matches_hugging_face(saved):
    model = ag.load_gpt2(FIXTURE / saved)
    recorded = list(_recorded())
    assert len(recorded) == 4
    for rec in recorded:
        out = ag.gpt2_forward(model, rec["tokens"])
        for key in ("logits", "hidden_states", "attentions"):
            assert out[key].shape == rec[key].shape, key
            np.testing.assert_allclose(out[key], rec[key], rtol=0, atol=1e-10, err_msg=key)


def test_the_attention_weights_are_causal_stochastic_graphs():
    rec = next(_recorded())
    W = ag.gpt2_forward(ag.load_gpt2(FIXTURE / "model"), rec["tokens"])["attentions"]  # (L, H, n, n)
    np.testing.assert_allclose(W.sum(axis=-1), 1.0, atol=1e-12)
    assert (np.triu(W, k=1) == 0).all()


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------

def test_save_then_load_gives_the_same_model(tmp_path):
    model = ag.init_gpt2(ag.gpt2_config(2, 2, 8, vocab_size=11, n_positions=6), np.random.default_rng(0))
    ag.save_gpt2(model, tmp_path / "m.safetensors")
    back = ag.load_gpt2(tmp_path / "m.safetensors")
    assert back.config == model.config
    assert all(np.array_equal(back.params[k], v) for k, v in model.params.items())


def test_a_bare_file_needs_n_head(tmp_path):
    tensors = load_file(FIXTURE / "model" / "model.safetensors")
    save_file(tensors, str(tmp_path / "bare.safetensors"))
    with pytest.raises(ValueError, match="pass n_head"):
        ag.load_gpt2(tmp_path / "bare.safetensors")
    model = ag.load_gpt2(tmp_path / "bare.safetensors", n_head=3)
    rec = next(_recorded())
    np.testing.assert_allclose(ag.gpt2_forward(model, rec["tokens"])["logits"], rec["logits"], atol=1e-10)


def test_old_buffers_are_ignored_and_a_tied_head_is_accepted(tmp_path):
    tensors = load_file(FIXTURE / "lm_head" / "model.safetensors")
    tensors["transformer.h.0.attn.bias"] = np.tril(np.ones((16, 16)))[None, None]
    tensors["transformer.h.0.attn.masked_bias"] = np.array(-1e4)
    tensors["lm_head.weight"] = tensors["transformer.wte.weight"].copy()
    shutil.copy(FIXTURE / "lm_head" / "config.json", tmp_path / "config.json")
    save_file(tensors, str(tmp_path / "model.safetensors"))
    assert "h.0.attn.bias" not in ag.load_gpt2(tmp_path).params


def _bad_dir(tmp_path, change_tensors=None, change_config=None):
    tensors = load_file(FIXTURE / "model" / "model.safetensors")
    config = json.loads((FIXTURE / "model" / "config.json").read_text())
    if change_tensors:
        change_tensors(tensors)
    if change_config:
        change_config(config)
    save_file(tensors, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(config))
    return tmp_path


def _untied(t):
    t["lm_head.weight"] = t["wte.weight"] + 1.0


@pytest.mark.parametrize("tensors, config, message", [
    (lambda t: t.pop("h.1.ln_2.bias"), None, "missing tensor 'h.1.ln_2.bias'"),
    (lambda t: t.update({"h.2.ln_1.weight": np.ones(12)}), None, "extra tensor 'h.2.ln_1.weight'"),
    (lambda t: t.update({"h.0.attn.c_attn.weight": np.ones((36, 12))}), None,
     r"'h.0.attn.c_attn.weight' must have shape \(12, 36\)"),
    (None, lambda c: c.update(n_layer=3), "missing tensor 'h.2"),
    (None, lambda c: c.update(n_embd=15), "must have shape"),
    (None, lambda c: c.update(n_head=5), "n_head must divide n_embd"),
    (None, lambda c: c.update(activation_function="relu"), "activation_function"),
    (None, lambda c: c.pop("n_positions"), "field 'n_positions'"),
    (_untied, None, "lm_head.weight differs"),
    (lambda t: t.update({"wte.weight": np.full((50, 12), np.nan)}), None, "'wte.weight' has a non-finite"),
])
def test_a_checkpoint_that_disagrees_is_refused(tmp_path, tensors, config, message):
    with pytest.raises(ValueError, match=message):
        ag.load_gpt2(_bad_dir(tmp_path, tensors, config))


# --------------------------------------------------------------------------------------------------
# The pieces of the backward pass, against formulas written here
# --------------------------------------------------------------------------------------------------

def test_gelu_is_the_tanh_form():
    x = np.linspace(-4, 4, 17)
    want = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in x]
    np.testing.assert_allclose(lm.gelu(x), want, rtol=1e-14, atol=1e-15)


def test_gelu_backward_is_its_derivative():
    x = np.linspace(-4, 4, 33)
    h = 1e-6
    want = [(lm.gelu(np.array(v + h)) - lm.gelu(np.array(v - h))) / (2 * h) for v in x]
    np.testing.assert_allclose(lm.gelu_backward(x, np.ones_like(x)), want, atol=1e-8)


def test_layer_norm_backward_against_central_differences():
    rng = np.random.default_rng(3)
    X, gamma, G = rng.standard_normal((3, 5)), rng.standard_normal(5), rng.standard_normal((3, 5))

    def loss(X_, gamma_=gamma):
        mu = X_.mean(axis=1, keepdims=True)
        return float((G * (gamma_ * (X_ - mu) / np.sqrt(X_.var(axis=1, keepdims=True) + 1e-5))).sum())

    dX, dgamma, dbeta = lm.layer_norm_backward(X, gamma, G)
    np.testing.assert_allclose(dX, central_difference(loss, X), atol=1e-8)
    np.testing.assert_allclose(dgamma, central_difference(lambda g: loss(X, g[0]), gamma[None])[0], atol=1e-8)
    np.testing.assert_allclose(dbeta, G.sum(axis=0))


def test_thm_lm_backward():
    assert registry.verify("thm-lm-backward") > 0


def test_the_loss_is_the_mean_negative_log_likelihood():
    model = ag.init_gpt2(ag.gpt2_config(1, 1, 4, vocab_size=5, n_positions=4), np.random.default_rng(1))
    tokens = np.array([0, 3, 1, 4])
    z = ag.gpt2_forward(model, tokens[:-1])["logits"]
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    want = -np.mean([log_p[i, tokens[i + 1]] for i in range(3)])
    assert ag.gpt2_loss(model, tokens) == pytest.approx(want, abs=1e-12)


def test_a_short_training_lowers_the_held_out_loss():
    rng = np.random.default_rng(0)
    data = np.tile(rng.integers(0, 9, size=7), 60).astype(np.int64)  # a period-7 sequence
    run = ag.train_gpt2(ag.gpt2_config(1, 2, 8, vocab_size=9, n_positions=8), data, data, steps=40, batch=4,
                        seed=0, lr=1e-2, warmup=5, every=20, eval_windows=4, dtype=np.float64)
    loss = run["curve"]["held_out_loss"]
    assert loss[0] == pytest.approx(math.log(9), abs=0.05)
    assert loss[-1] < loss[0] - 0.5


# --------------------------------------------------------------------------------------------------
# Bad input and broken variants (collected by tests/test_validation.py and tests/test_can_fail.py)
# --------------------------------------------------------------------------------------------------

_cfg = ag.gpt2_config(1, 1, 4, vocab_size=5, n_positions=4)
_model = ag.init_gpt2(_cfg, np.random.default_rng(0))

BAD = [
    ("GPT2", lambda: ag.gpt2_loss(ag.GPT2({"n_layer": 1}, {}), [0, 1]), TypeError, "n_head"),
    ("gpt2_config", lambda: ag.gpt2_config(2, 3, 64), ValueError, "n_head must divide n_embd"),
    ("gpt2_config", lambda: ag.gpt2_config(0, 1, 4), ValueError, "n_layer must be a positive integer"),
    ("gpt2_config", lambda: ag.gpt2_config(1, 1, 4, layer_norm_epsilon=0), ValueError, "layer_norm_epsilon"),
    ("init_gpt2", lambda: ag.init_gpt2(_cfg, 0), TypeError, "rng must be a numpy.random.Generator"),
    ("gpt2_forward", lambda: ag.gpt2_forward(_model, [0, 5]), ValueError, r"tokens\[1\] = 5 is outside the vocabulary"),
    ("gpt2_forward", lambda: ag.gpt2_forward(_model, [0, 1, 2, 3, 4]), ValueError,
     "more than the context n_positions = 4"),
    ("gpt2_forward", lambda: ag.gpt2_forward(_model, [0.0, 1.0]), TypeError, "tokens must be an integer array"),
    ("gpt2_forward", lambda: ag.gpt2_forward(_model, []), ValueError, "non-empty 1-d array"),
    ("gpt2_forward", lambda: ag.gpt2_forward({"wte.weight": 1}, [0]), TypeError, "model must be a GPT2"),
    ("gpt2_forward", lambda: ag.gpt2_forward(ag.GPT2(_cfg, {**_model.params, "wte.weight": np.ones((5, 3))}), [0]),
     ValueError, r"'wte.weight' must have shape \(5, 4\)"),
    ("gpt2_loss", lambda: ag.gpt2_loss(_model, [1]), ValueError, "n \\+ 1 >= 2"),
    ("gpt2_grads", lambda: ag.gpt2_grads(_model, [[0, 9]]), ValueError, "outside the vocabulary"),
    ("load_gpt2", lambda: ag.load_gpt2("/nonexistent/model.safetensors"), ValueError, "no such safetensors file"),
    ("load_gpt2", lambda: ag.load_gpt2(FIXTURE), ValueError, "directory without config.json"),
    ("load_gpt2", lambda: ag.load_gpt2(FIXTURE / "model", n_head=4), ValueError, "disagrees with the file's config"),
    ("save_gpt2", lambda: ag.save_gpt2(ag.GPT2(_cfg, {}), "/tmp/x.safetensors"), ValueError, "missing tensor"),
    ("train_gpt2", lambda: ag.train_gpt2({"n_layer": 1}, np.zeros(9, int), np.zeros(9, int), steps=1, batch=1, seed=0),
     TypeError, "n_head"),
]


def _ln_backward_no_mean(X, gamma, dY, eps=lm.LN_EPSILON):
    """Forgets the mean's term: the gradient of (x − μ)/σ as if μ were a constant."""
    mu = X.mean(axis=-1, keepdims=True)
    inv = 1 / np.sqrt(((X - mu) ** 2).mean(axis=-1, keepdims=True) + eps)
    X_hat = (X - mu) * inv
    dX_hat = dY * gamma
    axes = tuple(range(X.ndim - 1))
    return inv * (dX_hat - X_hat * (dX_hat * X_hat).mean(axis=-1, keepdims=True)), (dY * X_hat).sum(axis=axes), \
        dY.sum(axis=axes)


BROKEN = {
    "thm-lm-backward": (lm, "layer_norm_backward", _ln_backward_no_mean,
                        "LayerNorm's backward forgets that the mean moves with x"),
}


# --------------------------------------------------------------------------------------------------
# The trained models and their record (package data), and what the page glued
# --------------------------------------------------------------------------------------------------

PAGE = "language_model"


def _record():
    return bench.record("lm")["results"]


def _held_out():
    data = np.frombuffer(lm.lm_corpus().tobytes(), dtype=np.uint8).astype(np.int64)
    cut = int(round(len(data) * 0.9))
    return data[:cut], data[cut:]


def test_the_corpus_is_the_packaged_pydoc_topics_with_its_source():
    import hashlib
    from importlib import resources
    data = resources.files("attention_graph") / "data"
    source = json.loads((data / "lm_corpus_source.json").read_text())
    raw = (data / "lm_corpus.txt").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == source["sha256"] and len(raw) == source["bytes"]
    assert "PYTHON SOFTWARE FOUNDATION LICENSE" in (data / "lm_corpus_LICENSE.txt").read_text()


def test_the_packaged_weights_are_the_recorded_runs():
    record = _record()
    n = record["config"]["n_positions"]
    _, held = _held_out()
    k = (len(held) - 1) // n
    windows = held[np.arange(k)[:, None] * n + np.arange(n + 1)[None, :]]  # (W, n + 1)
    assert k == record["held_out_windows"]
    for run in record["runs"]:
        model = lm.book_model(run["seed"])
        assert model.config == record["config"]
        assert (Path(lm.__file__).parent / "data" / f"lm_seed{run['seed']}.safetensors").stat().st_size <= 4e6
    # seed 0 on every held-out window, with a log-softmax written here: the record's per-position losses
    model, run = lm.book_model(0), record["runs"][0]
    total = np.zeros(n)
    for w in windows:
        z = ag.gpt2_forward(model, w[:-1])["logits"].astype(np.float64)  # (n, V)
        m = z.max(axis=1, keepdims=True)
        log_p = z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))
        total += -log_p[np.arange(n), w[1:]]
    np.testing.assert_allclose(total / k, run["held_out_positions"], atol=1e-6)


def test_training_is_reproducible_bit_for_bit():
    train, held = _held_out()
    config = ag.gpt2_config(1, 2, 8, vocab_size=256, n_positions=16)
    a = ag.train_gpt2(config, train, held, steps=3, batch=2, seed=4, every=3, eval_windows=2)
    b = ag.train_gpt2(config, train, held, steps=3, batch=2, seed=4, every=3, eval_windows=2)
    assert all(np.array_equal(a["model"].params[k], b["model"].params[k]) for k in a["model"].params)


@pytest.mark.build
def test_the_baselines_glued_are_the_counts_of_the_training_text():
    train, held = _held_out()
    counts = np.bincount(train, minlength=256) + 1.0
    unigram = -np.mean(np.log(counts[held[1:]] / counts.sum()))
    pairs = {}
    for a, b in zip(train[:-1].tolist(), train[1:].tolist()):
        pairs[a, b] = pairs.get((a, b), 0) + 1
    rows = np.bincount(train[:-1], minlength=256) + 256.0
    bigram = -np.mean([math.log((pairs.get((a, b), 0) + 1) / rows[a]) for a, b in zip(held[:-1].tolist(),
                                                                                     held[1:].tolist())])
    assert bt.glued_float(PAGE, "lm_unigram") == pytest.approx(unigram, abs=1e-9)
    assert bt.glued_float(PAGE, "lm_bigram") == pytest.approx(bigram, abs=1e-9)


@pytest.mark.build
def test_the_losses_and_icl_scores_glued_follow_the_record():
    record = _record()
    held = [np.mean(r["held_out_positions"]) for r in record["runs"]]
    icl = [np.mean(r["held_out_positions"][112:128]) - np.mean(r["held_out_positions"][8:16]) for r in record["runs"]]
    assert bt.glued_float(PAGE, "lm_held_min") == pytest.approx(min(held), abs=1e-12)
    assert bt.glued_float(PAGE, "lm_held_max") == pytest.approx(max(held), abs=1e-12)
    assert bt.glued_float(PAGE, "lm_icl_min") == pytest.approx(min(icl), abs=1e-12)
    assert bt.glued_float(PAGE, "lm_icl_max") == pytest.approx(max(icl), abs=1e-12)


def _prefix_scores(model, repeats):
    """Every head's mean W[i, i − T + 1] over the second copy, from the attentions (L, H)."""
    T = repeats.shape[1] // 2
    scores = 0.0
    for r in repeats:
        W = ag.gpt2_forward(model, r)["attentions"]  # (L, H, 2T, 2T)
        scores = scores + np.mean([W[:, :, i, i - T + 1] for i in range(T, 2 * T)], axis=0)
    return scores / len(repeats)


@pytest.mark.build
def test_the_induction_scores_glued_are_recomputed_from_the_models():
    record = _record()
    T = record["config"]["n_positions"] // 2
    rng = np.random.default_rng(2)
    r = rng.integers(32, 127, size=(8, T))
    repeats = np.concatenate([r, r], axis=1)
    best = [_prefix_scores(lm.book_model(s), repeats).max() for s in record["seeds"]]
    assert bt.glued_float(PAGE, "lm_prefix_min") == pytest.approx(min(best), abs=1e-6)
    assert bt.glued_float(PAGE, "lm_prefix_max") == pytest.approx(max(best), abs=1e-6)


@pytest.mark.build
def test_the_largest_prefix_matching_score_over_training_glued_follows_the_record():
    scores = [x for run in _record()["runs"] for rec in run["curve"]["prefix_matching"] for row in rec for x in row]
    assert bt.glued_float(PAGE, "lm_prefix_ever") == max(scores)


@pytest.mark.build
def test_the_uniform_baseline_exercise_is_the_mean_of_one_over_i():
    """ex-lm-uniform-baseline: W_{i,i-1} = 1/i under uniform causal attention, averaged over i = 2..n."""
    n = _record()["config"]["n_positions"]
    expected = sum(1 / i for i in range(2, n + 1)) / (n - 1)
    assert bt.glued_float(PAGE, "ex_uniform_prev") == pytest.approx(expected, abs=1e-12)
    assert f"{bt.glued_float(PAGE, 'lm_untrained_previous_max'):.3f}" == f"{expected:.3f}"
