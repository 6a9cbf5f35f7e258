"""The Transformer block against plain NumPy oracles (its definition, and PyTorch's encoder layer in
PyTorch's own layout), its theorem on random cases, and what the block chapter shows, recomputed."""

import importlib
from dataclasses import replace

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import (
    BlockParams,
    block_weights,
    feed_forward,
    init_block_params,
    layer_norm,
    params_from_torch,
    params_to_torch,
    transformer_block,
)
from bad_inputs import I2, inf, ok

PAGE = "block"
PEOPLE = ("Carla", "Ana", "Bruno", "Diego")
X_WORKED = oracles.X_WORKED


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("d, d_ff, H", [(4, 8, 2), (6, 5, 3), (3, 7, 1)])
def test_transformer_block_matches_the_oracle(norm_first, d, d_ff, H):
    rng = np.random.default_rng(d * 10 + H)
    p = init_block_params(d, d_ff, H, rng)
    X = rng.standard_normal((5, d))
    mask = np.tril(np.ones((5, 5), dtype=bool))
    for m in (None, mask):
        np.testing.assert_allclose(transformer_block(X, p, norm_first=norm_first, mask=m),
                                   oracles.block(X, p, norm_first, m), rtol=0, atol=1e-12)


def test_layer_norm_and_feed_forward_match_the_oracle():
    rng = np.random.default_rng(7)
    X, g, b = rng.standard_normal((4, 5)), rng.standard_normal(5), rng.standard_normal(5)
    np.testing.assert_allclose(layer_norm(X, g, b), oracles.layer_norm(X, g, b), rtol=0, atol=1e-12)
    W_1, W_2 = rng.standard_normal((5, 3)), rng.standard_normal((3, 5))
    b_1, b_2 = rng.standard_normal(3), rng.standard_normal(5)
    np.testing.assert_allclose(feed_forward(X, W_1, b_1, W_2, b_2),
                               np.maximum(X @ W_1 + b_1, 0) @ W_2 + b_2, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transformer_block_keeps_the_float_dtype(dtype):
    p = init_block_params(4, 6, 2, np.random.default_rng(0))
    p32 = BlockParams(**{k: (np.asarray(v, dtype=dtype) if k != "n_heads" else v)
                         for k, v in p.__dict__.items()})
    X = np.random.default_rng(1).standard_normal((3, 4)).astype(dtype)
    assert transformer_block(X, p32).dtype == dtype
    assert transformer_block(X, p32, norm_first=False).dtype == dtype
    assert block_weights(X, p32).dtype == dtype


def _torch_state(rng, d, d_ff, with_biases=True):
    """Random weights in PyTorch's layout; attention biases zero, the others random when present."""
    state = {"self_attn.in_proj_weight": rng.standard_normal((3 * d, d)) / np.sqrt(d),
             "self_attn.out_proj.weight": rng.standard_normal((d, d)) / np.sqrt(d),
             "linear1.weight": rng.standard_normal((d_ff, d)) / np.sqrt(d),
             "linear2.weight": rng.standard_normal((d, d_ff)) / np.sqrt(d_ff),
             "norm1.weight": 1 + 0.1 * rng.standard_normal(d), "norm2.weight": 1 + 0.1 * rng.standard_normal(d)}
    if with_biases:
        state.update({"self_attn.in_proj_bias": np.zeros(3 * d), "self_attn.out_proj.bias": np.zeros(d),
                      "linear1.bias": rng.standard_normal(d_ff), "linear2.bias": rng.standard_normal(d),
                      "norm1.bias": rng.standard_normal(d), "norm2.bias": rng.standard_normal(d)})
    return state


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("with_biases", [True, False])
def test_params_from_torch_runs_like_pytorchs_layer(norm_first, with_biases):
    rng = np.random.default_rng(11)
    state = _torch_state(rng, 6, 10, with_biases)
    X = rng.standard_normal((7, 6))
    got = transformer_block(X, params_from_torch(state, n_heads=3), norm_first=norm_first)
    np.testing.assert_allclose(got, oracles.torch_encoder_layer(state, X, 3, norm_first), rtol=0, atol=1e-12)


def test_params_to_torch_is_the_inverse_of_params_from_torch():
    p = init_block_params(4, 8, 2, np.random.default_rng(3))
    back = params_from_torch(params_to_torch(p), n_heads=2)
    for k, v in p.__dict__.items():
        np.testing.assert_array_equal(getattr(back, k), v)


def test_thm_node_wise_update():
    assert bt.verified("thm-node-wise-update") >= 1
    rng = np.random.default_rng(5)
    p = init_block_params(4, 6, 2, rng)
    X = rng.standard_normal((5, 4))
    X_moved = X.copy()
    X_moved[2] += rng.standard_normal(4)
    update = lambda Z: feed_forward(layer_norm(Z, p.gamma_2, p.beta_2), p.W_1, p.b_1, p.W_2, p.b_2)  # noqa: E731
    keep = [0, 1, 3, 4]
    assert np.array_equal(update(X)[keep], update(X_moved)[keep])
    # The attention sublayer is not node-wise: every row moves.
    att = lambda Z: block_weights(Z, p)  # noqa: E731
    assert (np.abs(att(X) - att(X_moved)).max(axis=(0, 2)) > 0).all()


# --- What the chapter shows ------------------------------------------------------------------------

def _page_params():
    I, one, zero = np.eye(2), np.ones(2), np.zeros(2)
    return BlockParams(W_Q=I, W_K=I, W_V=I, W_O=I, W_1=I, b_1=zero, W_2=I, b_2=zero,
                       gamma_1=one, beta_1=zero, gamma_2=one, beta_2=zero, n_heads=1)


@pytest.mark.build
def test_page_pre_ln_changes_the_weights():
    W_post = oracles.softmax(X_WORKED @ X_WORKED.T / np.sqrt(2))
    Z = oracles.layer_norm(X_WORKED, 1.0, 0.0)
    W_pre = oracles.softmax(Z @ Z.T / np.sqrt(2))
    p = _page_params()
    np.testing.assert_allclose(block_weights(X_WORKED, p, norm_first=False)[0], W_post, atol=1e-12)
    ana, bruno, diego = 1, 2, 3
    assert bt.glued_float(PAGE, "ln_max_change") == pytest.approx(np.abs(W_pre - W_post).max(), abs=1e-12)
    assert bt.glued_float(PAGE, "ln_bruno_uniform") == pytest.approx(0.25, abs=1e-15)
    assert np.allclose(W_pre[bruno], 0.25, atol=1e-15)  # Bruno's row is uniform
    assert bt.glued_float(PAGE, "ln_ana_diego_diff") < 1e-4  # Ana's and Diego's rows nearly equal
    assert bt.glued_float(PAGE, "post_ana_self") == pytest.approx(W_post[ana, ana], abs=1e-12)
    assert bt.glued_float(PAGE, "pre_ana_self") == pytest.approx(W_pre[ana, ana], abs=1e-12)
    assert abs(W_pre[ana, diego] - W_pre[diego, diego]) < 1e-4


@pytest.mark.build
def test_page_layer_norm_of_four_entries():
    """The page's d_model = 4 example, step by step, against the formula written here in NumPy."""
    x = np.array([1.0, 5.0, 2.0, 8.0])  # the page's token
    mu = sum(x) / 4
    var = sum((v - mu) ** 2 for v in x) / 4  # dividing by d_model, as eq-layer-norm
    out = [(v - mu) / np.sqrt(var + 1e-5) * 1.0 + 0.0 for v in x]  # γ = 1, β = 0, ε = 1e-5
    assert bt.glued_float(PAGE, "ln4_mu") == pytest.approx(4.0, abs=1e-15)
    assert bt.glued_float(PAGE, "ln4_var") == pytest.approx(7.5, abs=1e-15)
    assert bt.glued_float(PAGE, "ln4_sd") == pytest.approx(np.sqrt(7.5 + 1e-5), abs=1e-15)
    for l in range(4):
        assert bt.glued_float(PAGE, f"ln4_x_{l + 1}") == x[l]
        assert bt.glued_float(PAGE, f"ln4_centred_{l + 1}") == pytest.approx(x[l] - mu, abs=1e-15)
        assert bt.glued_float(PAGE, f"ln4_out_{l + 1}") == pytest.approx(out[l], abs=1e-12)
    assert bt.glued_float(PAGE, "ln4_out_var") == pytest.approx(var / (var + 1e-5), abs=1e-12)
    assert bt.glued_float(PAGE, "ln4_out_var") < 1  # ε keeps it just under one


@pytest.mark.build
def test_page_pre_ln_changes_the_weights_at_four_entries():
    q = init_block_params(d=4, d_ff=8, n_heads=2, rng=np.random.default_rng(0))
    X4 = np.random.default_rng(1).standard_normal((5, 4))  # the page's seeded tokens
    Z = oracles.layer_norm(X4, q.gamma_1, q.beta_1)  # pre-LN: the weights read LN_1(X)
    change = 0.0
    for h in range(2):  # heads are contiguous blocks of d_model / H = 2 columns
        cols = slice(2 * h, 2 * h + 2)
        W = [oracles.softmax((A @ q.W_Q[:, cols]) @ (A @ q.W_K[:, cols]).T / np.sqrt(2)) for A in (X4, Z)]
        change = max(change, np.abs(W[1] - W[0]).max())
    assert bt.glued_float(PAGE, "ln4_block_change") == pytest.approx(change, abs=1e-12)
    assert change > 0.01  # visible at four entries


@pytest.mark.build
def test_page_table_of_the_weight_that_moves_most_in_each_head():
    """The table of the d_model = 4 demonstration: per head, the edge whose weight moves most."""
    q = init_block_params(d=4, d_ff=8, n_heads=2, rng=np.random.default_rng(0))
    X4 = np.random.default_rng(1).standard_normal((5, 4))
    Z = oracles.layer_norm(X4, q.gamma_1, q.beta_1)
    for h in range(2):
        cols = slice(2 * h, 2 * h + 2)
        W_post, W_pre = (oracles.softmax((A @ q.W_Q[:, cols]) @ (A @ q.W_K[:, cols]).T / np.sqrt(2))
                         for A in (X4, Z))
        change = np.abs(W_pre - W_post)
        i = int(bt.glued_float(PAGE, f"ln4_h{h + 1}_i")) - 1  # the page counts from 1
        j = int(bt.glued_float(PAGE, f"ln4_h{h + 1}_j")) - 1
        assert change[i, j] == pytest.approx(change.max(), abs=1e-15)  # the largest change of the head
        assert bt.glued_float(PAGE, f"ln4_h{h + 1}_post") == pytest.approx(W_post[i, j], abs=1e-12)
        assert bt.glued_float(PAGE, f"ln4_h{h + 1}_pre") == pytest.approx(W_pre[i, j], abs=1e-12)


@pytest.mark.build
def test_page_loader_roundtrip():
    assert bt.glued_float(PAGE, "torch_roundtrip_diff") == 0.0


@pytest.mark.build
def test_page_exercises():
    p = _page_params()
    pre = lambda Z: oracles.softmax(oracles.layer_norm(Z, 1.0, 0.0) @ oracles.layer_norm(Z, 1.0, 0.0).T / np.sqrt(2))  # noqa: E731
    post = lambda Z: oracles.softmax(Z @ Z.T / np.sqrt(2))  # noqa: E731
    change_pre = np.abs(pre(10 * X_WORKED) - pre(X_WORKED)).max()
    change_post = np.abs(post(10 * X_WORKED) - post(X_WORKED)).max()
    assert bt.glued_float(PAGE, "ex_scale_pre") == pytest.approx(change_pre, abs=1e-12)
    assert bt.glued_float(PAGE, "ex_scale_pre") < 1e-3
    assert bt.glued_float(PAGE, "ex_scale_post") == pytest.approx(change_post, abs=1e-12)
    assert bt.glued_float(PAGE, "ex_scale_post") > 0.1
    # W_O = 0: Ana's output ignores Carla; W_O = I: it does not.
    X_moved = X_WORKED.copy()
    X_moved[0] += [1.0, 0.0]
    silent = replace(p, W_O=np.zeros((2, 2)))
    assert bt.glued_float(PAGE, "ex_silent_diff") == 0.0
    assert np.array_equal(oracles.block(X_moved, silent)[1], oracles.block(X_WORKED, silent)[1])
    assert bt.glued_float(PAGE, "ex_talking_diff") == pytest.approx(
        np.abs(oracles.block(X_moved, p)[1] - oracles.block(X_WORKED, p)[1]).max(), abs=1e-12)
    assert bt.glued_float(PAGE, "ex_talking_diff") > 0
    # The solution's remark: a shift of both coordinates is invisible to the pre-LN block.
    X_shift = X_WORKED.copy()
    X_shift[0] += 1.0
    np.testing.assert_allclose(oracles.block(X_shift, p)[1], oracles.block(X_WORKED, p)[1], rtol=0, atol=1e-15)
    # The post-LN rows, from the oracle block with the solution's seeds: mean 0, variance σ²/(σ² + ε).
    q = init_block_params(d=4, d_ff=8, n_heads=2, rng=np.random.default_rng(0))
    q_plain = replace(q, gamma_2=np.ones(4), beta_2=np.zeros(4))
    Y = oracles.block(np.random.default_rng(1).standard_normal((5, 4)), q_plain, norm_first=False)
    assert bt.glued_float(PAGE, "ex_post_mean") == pytest.approx(np.abs(Y.mean(axis=1)).max(), abs=1e-12)
    assert bt.glued_float(PAGE, "ex_post_mean") < 1e-12
    assert bt.glued_float(PAGE, "ex_post_var_dev") == pytest.approx(np.abs(Y.var(axis=1) - 1).max(), abs=1e-12)
    assert 0 < bt.glued_float(PAGE, "ex_post_var_dev") < 1e-3


# --- Broken variants ------------------------------------------------------------------------------

bl = importlib.import_module("attention_graph.block")


_block_orig = bl.transformer_block


def _ln_sample_variance(X, gamma, beta, eps=1e-5):
    X = np.asarray(X, float)
    return gamma * (X - X.mean(axis=1, keepdims=True)) / np.sqrt(X.var(axis=1, ddof=1, keepdims=True) + eps) + beta


def _other_placement(X, params, *, norm_first=True, mask=None):
    return _block_orig(X, params, norm_first=not norm_first, mask=mask)


def _layer_norm_across_tokens(X, gamma, beta, eps=1e-5):
    """LayerNorm's formula applied down each column (over the tokens): mixes the rows."""
    X = np.asarray(X, float)
    return gamma * (X - X.mean(axis=0)) / np.sqrt(X.var(axis=0) + eps) + beta


# label: (module, name, wrong value, what is broken); gathered by tests/test_can_fail.py
BROKEN = {
    # the block
    "eq-layer-norm": (bl, "layer_norm", _ln_sample_variance, "variance divided by d − 1"),
    "eq-ffn": (bl, "feed_forward", lambda X, W_1, b_1, W_2, b_2: (np.asarray(X) @ W_1 + b_1) @ W_2 + b_2,
               "no ReLU"),
    "eq-pre-ln": (bl, "transformer_block", _other_placement, "pre-LN and post-LN swapped"),
    "eq-post-ln": (bl, "transformer_block", _other_placement, "pre-LN and post-LN swapped"),
    "thm-node-wise-update": (bl, "layer_norm", _layer_norm_across_tokens, "normalises each feature across the tokens"),
}


# --- Bad inputs --------------------------------------------------------------------------------

def _params(**change):
    """Valid BlockParams for d = 2 (two heads of width 1, d_ff = 4), with some fields changed."""
    p = dict(W_Q=I2, W_K=I2, W_V=I2, W_O=I2, W_1=np.ones((2, 4)), b_1=np.zeros(4), W_2=np.ones((4, 2)),
             b_2=np.zeros(2), gamma_1=np.ones(2), beta_1=np.zeros(2), gamma_2=np.ones(2),
             beta_2=np.zeros(2), n_heads=2)
    if "b_1" in change:  # a wrong b_1: make d_ff = 4 and d = 4 so that only b_1 is off
        p.update(W_Q=np.eye(4), W_K=np.eye(4), W_V=np.eye(4), W_O=np.eye(4), W_1=np.ones((4, 4)),
                 W_2=np.ones((4, 4)), b_2=np.zeros(4), gamma_1=np.ones(4), beta_1=np.zeros(4),
                 gamma_2=np.ones(4), beta_2=np.zeros(4))
    p.update(change)
    return ag.BlockParams(**p)


def _torch_state_bad(in_bias: float = 0.0):
    """A state dict in PyTorch's layout for d = 2, d_ff = 3."""
    return {"self_attn.in_proj_weight": np.ones((6, 2)), "self_attn.in_proj_bias": np.full(6, in_bias),
            "self_attn.out_proj.weight": np.eye(2), "linear1.weight": np.ones((3, 2)),
            "linear2.weight": np.ones((2, 3)), "norm1.weight": np.ones(2), "norm2.weight": np.ones(2)}

# (function name, call, error type, message fragment); gathered by tests/test_validation.py
BAD = [
    ("BlockParams", lambda: ag.BlockParams(W_Q=I2), TypeError, "missing"),
    ("transformer_block", lambda: ag.transformer_block(ok, {"W_Q": I2}), TypeError, "params must be a BlockParams"),
    ("transformer_block", lambda: ag.transformer_block(np.ones((3, 3)), _params()),
     ValueError, "X must have d = 2 columns"),
    ("transformer_block", lambda: ag.transformer_block(ok, _params(), norm_first=1),
     TypeError, "norm_first must be True"),
    ("transformer_block", lambda: ag.transformer_block(ok, _params(b_1=np.ones(3))),
     ValueError, r"params.b_1 must have shape \(4,\)"),
    ("transformer_block", lambda: ag.transformer_block(ok, _params(n_heads=3)),
     ValueError, "not divisible into n_heads = 3"),
    ("transformer_block", lambda: ag.transformer_block(inf, _params()), ValueError, "X must be finite"),
    ("block_weights", lambda: ag.block_weights(ok, _params(), norm_first="pre"), TypeError, "norm_first must be True"),
    ("block_weights", lambda: ag.block_weights(ok, _params(), mask=np.ones((3, 3))),
     TypeError, "mask must be a boolean array"),
    ("params_to_torch", lambda: ag.params_to_torch({"W_Q": I2}), TypeError, "params must be a BlockParams"),
    ("layer_norm", lambda: ag.layer_norm(ok, np.ones(3), np.zeros(2)),
     ValueError, r"gamma must be a vector of shape \(2,\)"),
    ("layer_norm", lambda: ag.layer_norm(ok, np.ones(2), np.zeros(2), eps=-1.0),
     ValueError, "eps must be a real number >= 0"),
    ("layer_norm", lambda: ag.layer_norm(ok, np.ones(2), np.zeros(2), eps=0.0), ValueError, "constant and eps = 0"),
    ("feed_forward", lambda: ag.feed_forward(ok, np.ones((3, 4)), np.zeros(4), np.ones((4, 2)), np.zeros(2)),
     ValueError, "W_1 must have one row per column of X"),
    ("feed_forward", lambda: ag.feed_forward(ok, np.ones((2, 4)), np.zeros(4), np.ones((4, 3)), np.zeros(2)),
     ValueError, r"W_2 must have shape \(d_ff, d\)"),
    ("params_from_torch", lambda: ag.params_from_torch({}, 1), ValueError, "state lacks"),
    ("params_from_torch", lambda: ag.params_from_torch([], 1), TypeError, "state must be a dict"),
    ("params_from_torch", lambda: ag.params_from_torch(_torch_state_bad(in_bias=1.0), 1),
     ValueError, "in_proj_bias.*is not zero"),
    ("params_from_torch", lambda: ag.params_from_torch(_torch_state_bad(), 3),
     ValueError, "not divisible into n_heads = 3"),
    ("init_block_params", lambda: ag.init_block_params(4, 8, 3, np.random.default_rng(0)),
     ValueError, "not divisible into n_heads = 3"),
    ("init_block_params", lambda: ag.init_block_params(4, 8, 2, 0), TypeError, "rng must be a numpy.random.Generator"),
]
