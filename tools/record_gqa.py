"""Record PyTorch's grouped-query attention as a test fixture: ``tests/fixtures/sdpa_gqa.json``.

torch stays out of the project's lock, so this script runs in a throwaway environment outside the
repository, and the tests read what it wrote::

    python3 -m venv /tmp/gqaenv && /tmp/gqaenv/bin/pip install torch==2.13.0 numpy
    /tmp/gqaenv/bin/python tools/record_gqa.py

For each case it draws seeded inputs X (n, d_model) and projections W_Q (d_model, H d_h), W_K and
W_V (d_model, H_kv d_h), splits Q = X W_Q, K = X W_K and V = X W_V into heads of d_h contiguous
columns, and records ``torch.nn.functional.scaled_dot_product_attention(q, k, v,
is_causal=..., enable_gqa=True)`` in float64, its H heads concatenated (n, H d_h). The test
compares it with ``multi_head_attention(X, X, W_Q, W_K, W_V, I, H, n_kv_heads=H_kv)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

OUT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sdpa_gqa.json"
# (n, H, H_kv, d_h, causal): multi-head, grouped and multi-query, with and without the causal mask.
CASES = [(5, 4, 4, 2, False), (6, 4, 2, 3, False), (6, 4, 2, 3, True), (7, 6, 3, 2, True),
         (5, 6, 1, 2, False), (8, 8, 1, 2, True)]


def heads(M: np.ndarray, H: int) -> torch.Tensor:
    """(n, H d_h) -> (1, H, n, d_h): head h is the h-th block of d_h columns."""
    n = M.shape[0]
    return torch.from_numpy(M).reshape(n, H, -1).permute(1, 0, 2).unsqueeze(0)


def record(seed: int, n: int, H: int, H_kv: int, d_h: int, causal: bool) -> dict:
    rng = np.random.default_rng(seed)
    d_model = H * d_h
    X = rng.standard_normal((n, d_model))  # (n, d_model)
    W_Q = rng.standard_normal((d_model, H * d_h))  # (d_model, H d_h)
    W_K = rng.standard_normal((d_model, H_kv * d_h))  # (d_model, H_kv d_h)
    W_V = rng.standard_normal((d_model, H_kv * d_h))  # (d_model, H_kv d_h)
    q, k, v = heads(X @ W_Q, H), heads(X @ W_K, H_kv), heads(X @ W_V, H_kv)
    with torch.no_grad():
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)  # (1, H, n, d_h)
    Y = y[0].permute(1, 0, 2).reshape(n, H * d_h).numpy()  # (n, H d_h): the heads side by side
    return {"seed": seed, "n": n, "H": H, "H_kv": H_kv, "d_h": d_h, "causal": causal,
            "X": X.tolist(), "W_Q": W_Q.tolist(), "W_K": W_K.tolist(), "W_V": W_V.tolist(), "Y": Y.tolist()}


def main() -> None:
    torch.manual_seed(0)
    cases = [record(seed, *case) for seed, case in enumerate(CASES)]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"torch": torch.__version__, "function": "scaled_dot_product_attention",
                               "enable_gqa": True, "dtype": "float64", "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases, torch {torch.__version__})")


if __name__ == "__main__":
    main()
