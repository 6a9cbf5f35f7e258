"""Shared and latent keys against independent implementations: PyTorch's recorded
scaled_dot_product_attention(enable_gqa=True), reference versions written from the papers' formulas
(Ainslie et al. 2023; DeepSeek-AI 2024), and the defining properties."""

import importlib
import json
import math
from pathlib import Path

import numpy as np
import pytest

import attention_graph as ag
import booktools as bt
import oracles
from attention_graph import KVCache, bench, multi_head_attention

PAGE = "kv_sharing"
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "sdpa_gqa.json"
CASES = json.loads(FIXTURE.read_text())["cases"]


def _repeat_kv(W, H, H_kv):
    """W_K or W_V with each key/value head's d_h columns repeated for the H/H_kv query heads of its group."""
    d_h = W.shape[1] // H_kv
    blocks = [W[:, r * d_h:(r + 1) * d_h] for r in range(H_kv)]
    return np.hstack([blocks[h * H_kv // H] for h in range(H)])  # (d_model, H d_h)


# --- PyTorch's grouped-query attention, recorded --------------------------------------------------

@pytest.mark.parametrize("case", CASES, ids=[f"H{c['H']}-Hkv{c['H_kv']}-{'causal' if c['causal'] else 'full'}"
                                            for c in CASES])
def test_layer_matches_pytorch_enable_gqa(case):
    X, W_Q, W_K, W_V = (np.array(case[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    n, H = case["n"], case["H"]
    mask = np.tril(np.ones((n, n), dtype=bool)) if case["causal"] else None
    Y, W = multi_head_attention(X, X, W_Q, W_K, W_V, np.eye(X.shape[1]), H, mask=mask, n_kv_heads=case["H_kv"])
    assert W.shape == (H, n, n)
    np.testing.assert_allclose(Y, np.array(case["Y"]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", [c for c in CASES if c["causal"]], ids=lambda c: f"H{c['H']}-Hkv{c['H_kv']}")
def test_cache_of_kv_heads_decodes_as_pytorch(case):
    """A KVCache of H_kv heads, fed token by token, gives PyTorch's causal rows."""
    X, W_Q, W_K, W_V = (np.array(case[k]) for k in ("X", "W_Q", "W_K", "W_V"))
    H, H_kv, d_h = case["H"], case["H_kv"], case["d_h"]
    Q, K, V = (X @ W_Q).reshape(-1, H, d_h), (X @ W_K).reshape(-1, H_kv, d_h), (X @ W_V).reshape(-1, H_kv, d_h)
    cache, Y_ref = KVCache(n_kv_heads=H_kv), np.array(case["Y"]).reshape(-1, H, d_h)
    for i in range(case["n"]):
        cache.append(K[i], V[i])
        np.testing.assert_allclose(cache.attend(Q[i]), Y_ref[i], rtol=0, atol=1e-12)
        # The vectorised decoding step of the benchmark gives the same row.
        np.testing.assert_allclose(ag.grouped_step(Q[i], K[: i + 1], V[: i + 1]), Y_ref[i], rtol=0, atol=1e-12)
    assert cache.nbytes == case["n"] * 2 * H_kv * d_h * 8
    assert cache.keys.shape == (case["n"], H_kv, d_h)


# --- The reference written from the definition, and the defining properties ----------------------

@pytest.mark.parametrize("n, H, H_kv, d_h, seed", [(5, 4, 2, 2, 0), (3, 6, 3, 1, 1), (6, 8, 2, 3, 2), (4, 2, 1, 4, 3)])
def test_eq_gqa(n, H, H_kv, d_h, seed):
    """Ainslie et al.: each group of H/H_kv query heads shares one key and value head; written here
    as multi-head attention (the oracle) on key/value projections repeated over each group."""
    assert bt.verified("eq-gqa") >= 1
    rng = np.random.default_rng(seed)
    d = H * d_h
    X, W_Q, W_O = rng.standard_normal((n, d)), rng.standard_normal((d, d)), rng.standard_normal((d, d))
    W_K, W_V = rng.standard_normal((d, H_kv * d_h)), rng.standard_normal((d, H_kv * d_h))
    mask = rng.random((n, n)) < 0.6
    mask[:, 0] = True
    for m in (None, mask):
        Y, W = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, H, mask=m, n_kv_heads=H_kv)
        Y_ref, W_ref = oracles.multi_head(X, X, W_Q, _repeat_kv(W_K, H, H_kv), _repeat_kv(W_V, H, H_kv), W_O, H, m)
        np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-12)
        np.testing.assert_allclose(Y, Y_ref, rtol=0, atol=1e-12)
        # The heads of one group read the same key nodes: their graphs differ only through the queries.
        G = H // H_kv
        for r in range(H_kv):
            heads = range(r * G, (r + 1) * G)
            assert all(np.array_equal(W[h] > 0, W[r * G] > 0) for h in heads)


def test_thm_gqa_extremes():
    assert bt.verified("thm-gqa-extremes") >= 1
    rng = np.random.default_rng(8)
    X, W_Q, W_K, W_V, W_O = rng.standard_normal((6, 8)), *rng.standard_normal((4, 8, 8))
    # H_kv = H: the multi-head layer, bit for bit, as the oracle computes it.
    Y, W = multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 4, n_kv_heads=4)
    Y_ref, W_ref = oracles.multi_head(X, X, W_Q, W_K, W_V, W_O, 4)
    np.testing.assert_allclose(Y, Y_ref, rtol=0, atol=1e-12)
    assert np.array_equal(Y, multi_head_attention(X, X, W_Q, W_K, W_V, W_O, 4)[0])
    # H_kv = 1 (Shazeer's multi-query attention): every head scores the same keys K = X W_K, d_h wide.
    Y1, W1 = multi_head_attention(X, X, W_Q, W_K[:, :2], W_V[:, :2], W_O, 4, n_kv_heads=1)
    K, V = X @ W_K[:, :2], X @ W_V[:, :2]
    heads = [oracles.attention((X @ W_Q)[:, 2 * h:2 * h + 2], K, V) for h in range(4)]
    np.testing.assert_allclose(W1, np.stack([w for _, w in heads]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y1, np.hstack([y for y, _ in heads]) @ W_O, rtol=0, atol=1e-12)


def _rope(M, positions, base=10000.0):
    """RoPE written from Su et al.: pair l of row i turned by the angle p_i base^(−2l/d)."""
    d = M.shape[1]
    out = np.empty_like(M)
    for i, p in enumerate(positions):
        for l in range(d // 2):
            t = p * base ** (-2 * l / d)
            x, y = M[i, 2 * l], M[i, 2 * l + 1]
            out[i, 2 * l], out[i, 2 * l + 1] = x * math.cos(t) - y * math.sin(t), x * math.sin(t) + y * math.cos(t)
    return out


def _mla_reference(X, W_Q, W_DKV, W_UK, W_UV, W_O, H, mask=None, W_QR=None, W_KR=None):
    """DeepSeek-V2's equations token by token: c_t = W_DKV h_t; k^C = W_UK c_t; v^C = W_UV c_t;
    q = [q^C; q^R], k = [k^C; k^R], k^R shared by the heads; o = Σ_j softmax_j(q·k/√(d_h + d_R)) v^C_j."""
    n, d = X.shape
    d_h = d // H
    d_R = 0 if W_KR is None else W_KR.shape[1]
    c = [X[t] @ W_DKV for t in range(n)]
    kR = None if W_KR is None else _rope(X @ W_KR, range(n))
    qR = None if W_QR is None else [_rope((X @ W_QR)[:, h * d_R:(h + 1) * d_R], range(n)) for h in range(H)]
    out = np.zeros((n, d))
    for h in range(H):
        cols = slice(h * d_h, (h + 1) * d_h)
        for i in range(n):
            q = (X[i] @ W_Q)[cols]
            scores = []
            for j in range(n):
                s = q @ (c[j] @ W_UK)[cols]
                if kR is not None:
                    s += qR[h][i] @ kR[j]
                scores.append(s / math.sqrt(d_h + d_R) if (mask is None or mask[i, j]) else -np.inf)
            w = np.exp(np.array(scores) - max(scores))
            w /= w.sum()
            out[i, cols] = sum(w[j] * (c[j] @ W_UV)[cols] for j in range(n))
    return out @ W_O


@pytest.mark.parametrize("rope", [False, True])
@pytest.mark.parametrize("causal", [False, True])
def test_thm_absorbed_scores(rope, causal):
    assert bt.verified("thm-absorbed-scores") >= 1
    rng = np.random.default_rng(24 + rope + 2 * causal)
    n, d, d_c, H, d_R = 7, 6, 4, 3, 2
    args = (rng.standard_normal((n, d)), rng.standard_normal((d, d)), rng.standard_normal((d, d_c)),
            rng.standard_normal((d_c, d)), rng.standard_normal((d_c, d)), rng.standard_normal((d, d)), H)
    kw = {"W_QR": rng.standard_normal((d, H * d_R)), "W_KR": rng.standard_normal((d, d_R))} if rope else {}
    if causal:
        kw["mask"] = np.tril(np.ones((n, n), dtype=bool))
    Y_ref = _mla_reference(*args, **kw)
    Y_a, W_a = ag.latent_attention(*args, **kw)
    Y_b, W_b = ag.absorbed_latent_attention(*args, **kw)
    np.testing.assert_allclose(Y_a, Y_ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(Y_b, Y_ref, rtol=0, atol=1e-11)
    np.testing.assert_allclose(W_a, W_b, rtol=0, atol=1e-12)


def test_latent_step_is_the_last_row_of_absorbed_attention():
    rng = np.random.default_rng(5)
    n, d, d_c, H = 6, 4, 3, 2
    X, W_Q, W_DKV, W_UK, W_UV = (rng.standard_normal(s) for s in ((n, d), (d, d), (d, d_c), (d_c, d), (d_c, d)))
    Y, _ = ag.latent_attention(X, W_Q, W_DKV, W_UK, W_UV, np.eye(d), H)
    C, q = X @ W_DKV, (X[-1] @ W_Q).reshape(H, 2)
    UK, UV = W_UK.reshape(d_c, H, 2).transpose(1, 0, 2), W_UV.reshape(d_c, H, 2).transpose(1, 0, 2)
    q_tilde = np.einsum("hd,hcd->hc", q, UK)  # (H, d_c)
    np.testing.assert_allclose(ag.latent_step(q_tilde, C, UV, 2).ravel(), Y[-1], rtol=0, atol=1e-12)


def test_multi_query_cache_shrinks_by_the_number_of_heads():
    rng = np.random.default_rng(6)
    full, shared = KVCache(n_kv_heads=8), KVCache(n_kv_heads=1)
    for _ in range(5):
        full.append(rng.standard_normal((8, 4)), rng.standard_normal((8, 4)))
        shared.append(rng.standard_normal((1, 4)), rng.standard_normal((1, 4)))
    assert full.nbytes == 8 * shared.nbytes == 5 * 2 * 8 * 4 * 8


# Published configurations: (layers, query heads, key/value heads, d_h), from the papers' model cards.
PUBLISHED = {"Llama 2 70B": (80, 64, 8, 128), "Mistral 7B": (32, 32, 8, 128)}


def test_cache_arithmetic_of_published_configurations():
    for L, H, H_kv, d_h in PUBLISHED.values():
        assert ag.kv_cache_numbers(L, H_kv, d_h) == 2 * L * H_kv * d_h
        assert ag.kv_cache_numbers(L, H, d_h) // ag.kv_cache_numbers(L, H_kv, d_h) == H // H_kv
    # DeepSeek-V2: 60 layers, d_c = 4 d_h = 512, d_R = d_h/2 = 64: as much as GQA with 2.25 groups.
    assert ag.latent_cache_numbers(60, 512, 64) == 60 * 576
    assert ag.latent_cache_numbers(60, 512, 64) / ag.kv_cache_numbers(60, 1, 128) == 2.25


# --- What the page shows ---------------------------------------------------------------------------

@pytest.mark.build
def test_page_published_table():
    assert bt.glued_float(PAGE, "pub_llama_kib") == 2 * 80 * 8 * 128 * 2 / 1024
    assert bt.glued_float(PAGE, "pub_llama_mha_kib") == 2 * 80 * 64 * 128 * 2 / 1024
    assert bt.glued_float(PAGE, "pub_mistral_kib") == 2 * 32 * 8 * 128 * 2 / 1024
    assert bt.glued_float(PAGE, "pub_deepseek_kib") == 60 * (512 + 64) * 2 / 1024
    assert bt.glued_float(PAGE, "pub_deepseek_mha_kib") == 2 * 60 * 128 * 128 * 2 / 1024
    assert bt.glued_float(PAGE, "pub_deepseek_groups") == 2.25


@pytest.mark.build
def test_page_bench_numbers():
    rec = bench.record("kv")["results"]
    per_token = {r["kind"]: r["bytes_per_token"] for r in rec["kinds"]}
    H, d_h, H_kv, d_c, d_R = (rec["config"][k] for k in ("H", "d_h", "H_kv", "d_c", "d_R"))
    assert per_token == {"multi-head": 2 * H * d_h * 8, "grouped": 2 * H_kv * d_h * 8,
                         "multi-query": 2 * d_h * 8, "latent": (d_c + d_R) * 8}
    assert bt.glued_float(PAGE, "bench_mha_bytes") == per_token["multi-head"]
    assert bt.glued_float(PAGE, "bench_latent_bytes") == per_token["latent"]


@pytest.mark.build
def test_page_exercises():
    # The groups exercise: H = 8 query heads, H_kv = 2; the cache is 4 times smaller than multi-head.
    assert bt.glued_float(PAGE, "ex_groups_ratio") == 4
    assert bt.glued_float(PAGE, "ex_mqa_gap") < 1e-12
    assert bt.glued_float(PAGE, "ex_absorb_gap") < 1e-12


# --- Broken variants and bad inputs (collected by tests/test_can_fail.py and tests/test_validation.py)

mh, ks = importlib.import_module("attention_graph.multihead"), importlib.import_module("attention_graph.kv_sharing")

BROKEN = {
    "eq-gqa": (mh, "kv_index", lambda H, H_kv: np.arange(H) % H_kv,
               "query heads assigned to key/value heads round-robin, not in consecutive groups"),
    "thm-gqa-extremes": (mh, "kv_index", lambda H, H_kv: np.zeros(H, dtype=int),
                         "every query head reads the first key/value head"),
    "thm-absorbed-scores": (ks, "absorbed_head",
                            lambda Q_h, UK_h, UV_h, C, Q_Rh, K_R, allowed: ks.latent_head(
                                Q_h, C @ UK_h, C @ UV_h, None, None, allowed),
                            "the absorbed form drops the decoupled rotary scores"),
}

ok = np.ones((3, 4))
I4 = np.eye(4)
BAD = [
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I4, I4, I4, I4, 4, n_kv_heads=3), ValueError,
     "n_kv_heads = 3 must divide n_heads = 4"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I4, I4, I4, I4, 4, n_kv_heads=2), ValueError,
     r"W_K must have shape \(d_model, n_kv_heads·d_h\) = \(4, 2\)"),
    ("multi_head_attention", lambda: ag.multi_head_attention(ok, ok, I4, I4, I4, I4, 4, n_kv_heads=0), ValueError,
     "n_kv_heads must be a positive integer"),
    ("KVCache", lambda: ag.KVCache(n_kv_heads=0), ValueError, "n_kv_heads must be a positive integer"),
    ("KVCache", lambda: _headed().append(np.ones((3, 2)), np.ones((2, 2))), ValueError,
     r"k must have shape \(2, 2\), as the cached ones"),
    ("KVCache", lambda: _headed().attend(np.ones((3, 2))), ValueError, "with H a multiple of n_kv_heads = 2"),
    ("KVCache", lambda: _headed().attend(np.ones(2)), ValueError, "q must be one row per head"),
    ("KVCache", lambda: ag.KVCache(n_kv_heads=2).append(np.ones((1, 2)), np.ones((1, 2))), ValueError,
     "k must have n_kv_heads = 2 rows"),
    ("KVCache", lambda: ag.KVCache().overwrite(0, [1.0], [1.0]), ValueError, "the cache is empty"),
    ("KVCache", lambda: _headed().overwrite(1, np.ones((2, 2)), np.ones((2, 2))), ValueError,
     "j must be an integer from 0 to 0"),
    ("kv_cache_numbers", lambda: ag.kv_cache_numbers(0, 8, 128), ValueError, "n_layers must be a positive integer"),
    ("kv_cache_numbers", lambda: ag.kv_cache_numbers(80, 8.0, 128), TypeError, "n_kv_heads must be a positive integer"),
    ("latent_cache_numbers", lambda: ag.latent_cache_numbers(60, 512, -1), ValueError, "d_R must be an integer >= 0"),
    ("latent_cache_numbers", lambda: ag.latent_cache_numbers(60, 0), ValueError, "d_c must be a positive integer"),
    ("grouped_step", lambda: ag.grouped_step(np.ones((3, 2)), np.ones((4, 2, 2)), np.ones((4, 2, 2))), ValueError,
     "not a multiple of the cache's n_kv_heads = 2"),
    ("grouped_step", lambda: ag.grouped_step(np.ones((2, 2)), np.ones((4, 2)), np.ones((4, 2))), ValueError,
     r"K must be a cache of shape \(n, n_kv_heads, d\)"),
    ("grouped_step", lambda: ag.grouped_step(np.ones((2, 3)), np.ones((4, 2, 2)), np.ones((4, 2, 2))), ValueError,
     "q and K must share d_h"),
    ("grouped_step", lambda: ag.grouped_step(np.ones((2, 2)), np.full((4, 2, 2), np.nan), np.ones((4, 2, 2))),
     ValueError, "K must be finite"),
    ("latent_attention", lambda: ag.latent_attention(ok, I4, np.ones((4, 2)), np.ones((3, 4)), np.ones((2, 4)), I4, 2),
     ValueError, r"W_UK must have shape \(2, 4\)"),
    ("latent_attention", lambda: ag.latent_attention(ok, I4, np.ones((4, 2)), np.ones((2, 4)), np.ones((2, 4)), I4, 3),
     ValueError, "d_model = 4 is not divisible into n_heads = 3"),
    ("latent_attention", lambda: ag.latent_attention(ok, I4, np.ones((4, 2)), np.ones((2, 4)), np.ones((2, 4)), I4, 2,
                                                     W_QR=np.ones((4, 4))), ValueError, "W_QR and W_KR come together"),
    ("latent_attention", lambda: ag.latent_attention(ok, I4, np.ones((4, 2)), np.ones((2, 4)), np.ones((2, 4)), I4, 2,
                                                     W_QR=np.ones((4, 3)), W_KR=np.ones((4, 3))), ValueError,
     "with d_R even"),
    ("absorbed_latent_attention", lambda: ag.absorbed_latent_attention(
        ok, I4, np.ones((4, 2)), np.ones((2, 4)), np.ones((2, 4)), I4, 2, mask=np.ones((3, 3))), TypeError,
     "mask must be a boolean array"),
    ("absorbed_latent_attention", lambda: ag.absorbed_latent_attention(
        np.full((3, 4), np.inf), I4, np.ones((4, 2)), np.ones((2, 4)), np.ones((2, 4)), I4, 2), ValueError,
     "X must be finite"),
    ("latent_step", lambda: ag.latent_step(np.ones((2, 2)), np.ones((4, 2)), np.ones((2, 2, 2)), 1), ValueError,
     r"UV must have shape \(H, d_c, d_h\) = \(2, 2, 1\)"),
    ("latent_step", lambda: ag.latent_step(np.ones((2, 3)), np.ones((4, 2)), np.ones((2, 3, 1)), 1), ValueError,
     "q_tilde and C must share d_c"),
]


def _headed():
    """A KV cache of two key/value heads holding one token, d_h = d_v = 2."""
    cache = ag.KVCache(n_kv_heads=2)
    cache.append(np.ones((2, 2)), np.ones((2, 2)))
    return cache


@pytest.mark.parametrize("name, call, error, message", BAD, ids=[f"{b[0]}-{k}" for k, b in enumerate(BAD)])
def test_bad_input_raises_a_clear_error(name, call, error, message):
    with pytest.raises(error, match=message):
        call()
