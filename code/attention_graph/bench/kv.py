"""Shared and latent keys: KV-cache bytes per token and one decoding step's time over the context.

``python -m attention_graph.bench kv [--quick] [--out PATH]``. One configuration, H = 16 query heads
of d_h = 64 (d_model = 1,024), float64: multi-head (H_kv = 16), grouped (H_kv = 4), multi-query
(H_kv = 1) and latent attention with DeepSeek-V2's proportions, d_c = 4 d_h and a rotary key of
d_R = d_h/2. A step is one new token's H heads against a cache of n tokens:
:func:`attention_graph.kv_sharing.grouped_step_kernel` for the first three, and
:func:`attention_graph.kv_sharing.latent_step_kernel` for the latent one, its cache [C | K^R] of
d_c + d_R columns (the absorbed query scores both parts; the value up-projection has zero rows for
the rotary part). One BLAS thread, the four interleaved at each n, so they see the same load. The
chapter ``book/kv_sharing.md`` plots the committed record.
"""

from __future__ import annotations

import numpy as np
from threadpoolctl import threadpool_limits

from ..kv_sharing import grouped_step_kernel, latent_step_kernel
from .harness import fit_loglog_slope, interleaved_medians

CONFIG = {"H": 16, "d_h": 64, "H_kv": 4, "d_c": 256, "d_R": 32, "bytes_per_number": 8}
NS, QUICK_NS = (256, 512, 1024, 2048, 4096, 8192), (128, 256)


def kinds(config: dict) -> dict[str, int]:
    """The key/value heads of each kind (None for the latent cache)."""
    return {"multi-head": config["H"], "grouped": config["H_kv"], "multi-query": 1, "latent": None}


def bytes_per_token(config: dict) -> dict[str, int]:
    """2 H_kv d_h numbers per token for shared keys, d_c + d_R for the latent cache, times the bytes a number."""
    b = config["bytes_per_number"]
    out = {k: 2 * H_kv * config["d_h"] * b for k, H_kv in kinds(config).items() if H_kv is not None}
    out["latent"] = (config["d_c"] + config["d_R"]) * b
    return out


def step_functions(n: int, config: dict, seed: int) -> dict:
    """One decoding step of each kind against a seeded cache of n tokens."""
    rng = np.random.default_rng(seed)
    H, d_h, d_c, d_R = config["H"], config["d_h"], config["d_c"], config["d_R"]
    fns = {}
    for kind, H_kv in kinds(config).items():
        if H_kv is None:
            C = rng.standard_normal((n, d_c + d_R))  # (n, d_c + d_R): latents and rotary keys
            q = rng.standard_normal((H, d_c + d_R))  # (H, d_c + d_R): absorbed and rotary queries
            UV = rng.standard_normal((H, d_c + d_R, d_h))  # (H, d_c + d_R, d_h)
            UV[:, d_c:] = 0.0  # the rotary columns carry no value
            fns[kind] = lambda q=q, C=C, UV=UV: latent_step_kernel(q, C, UV, d_h + d_R)
        else:
            # Stored head-major, as PyTorch's (batch, heads, n, d) caches; passed as (n, H_kv, d_h) views.
            K = rng.standard_normal((H_kv, n, d_h)).transpose(1, 0, 2)  # (n, H_kv, d_h)
            V = rng.standard_normal((H_kv, n, d_h)).transpose(1, 0, 2)  # (n, H_kv, d_h)
            q = rng.standard_normal((H, d_h))  # (H, d_h)
            fns[kind] = lambda q=q, K=K, V=V: grouped_step_kernel(q, K, V)
    return fns


def benchmark(quick: bool) -> dict:
    """Bytes per token of each cache, and the median time of one step at each context length n."""
    ns = QUICK_NS if quick else NS
    rows = []
    with threadpool_limits(limits=1):
        for n in ns:
            times = interleaved_medians(step_functions(n, CONFIG, seed=n), repeat=3 if quick else 7)
            rows.append({"n": n, **{k: times[k] for k in kinds(CONFIG)},
                         **{f"{k}_cpu": times[f"{k}_cpu"] for k in kinds(CONFIG)}})
    per_token = bytes_per_token(CONFIG)
    big = [r for r in rows if r["n"] >= 1024] or rows
    slopes = {k: fit_loglog_slope([r["n"] for r in big], [r[k] for r in big]) for k in kinds(CONFIG)}
    return {"config": CONFIG, "ns": list(ns), "steps": rows, "slopes_from_1024": slopes,
            "kinds": [{"kind": k, "n_kv_heads": H_kv, "bytes_per_token": per_token[k]}
                      for k, H_kv in kinds(CONFIG).items()]}
