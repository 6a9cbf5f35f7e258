"""Training the book's language model: ``python -m attention_graph.bench lm --out PATH``.

Trains :data:`SEEDS` models in GPT-2's layout on the packaged corpus (the Python language reference's
topics, bytes as tokens; the last tenth held out) with the book's NumPy backward pass and Adam, one
seed after another on one core. Beside the JSON record at ``--out`` it writes each seed's weights,
``lm_seed<k>.safetensors`` (float32, the config in the file's metadata). The record holds the
settings, each seed's curves (train and held-out loss, the held-out loss at each position, the
heads' previous-token and prefix-matching scores on repeated random bytes), the held-out loss on the
whole held-out slice for the trained and the untrained model and the unigram and bigram baselines,
and the seconds. The committed record: ``--out code/attention_graph/data/bench_lm.json``.
"""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from .. import language_model as lm

SEEDS = (0, 1, 2)
CONFIG = {"n_layer": 2, "n_head": 4, "n_embd": 64, "vocab_size": 256, "n_positions": 128}
STEPS, BATCH, LR, WARMUP, EVERY = 800, 16, 3e-3, 40, 20


def _windows(held_out: np.ndarray, n: int) -> np.ndarray:
    """Every non-overlapping window of n + 1 bytes of the held-out slice: (W, n + 1)."""
    k = (len(held_out) - 1) // n
    starts = np.arange(k) * n  # (W,)
    return held_out[starts[:, None] + np.arange(n + 1)[None, :]]  # (W, n + 1)


def benchmark(quick: bool, out: Path | None = None) -> dict:
    """Train every seed; write the weights next to ``out``; return the record."""
    config = lm.gpt2_config(**CONFIG)
    steps = 20 if quick else STEPS
    train, held_out = lm.corpus_split(lm.lm_corpus())
    windows = _windows(held_out, config["n_positions"])  # (W, n + 1)
    record = {"config": config, "steps": steps, "batch": BATCH, "lr": LR, "warmup": WARMUP, "every": EVERY,
              "seeds": list(SEEDS[:1] if quick else SEEDS), "held_out_share": lm.HELD_OUT,
              "train_bytes": int(len(train)), "held_out_bytes": int(len(held_out)),
              "held_out_windows": int(len(windows)), "dtype": "float32",
              "unigram_loss": lm.ngram_loss(train, held_out, 1), "bigram_loss": lm.ngram_loss(train, held_out, 2),
              "runs": []}
    jobs = [(config, steps, seed, None if out is None else str(Path(out).parent)) for seed in record["seeds"]]
    with ProcessPoolExecutor(len(jobs)) as pool:
        record["runs"] = list(pool.map(_train_one, jobs))
    return record


def _train_one(job) -> dict:
    """One seed: train, read the held-out slice with the trained and the untrained model, save."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    config, steps, seed, folder = job
    train, held_out = lm.corpus_split(lm.lm_corpus())
    windows = _windows(held_out, config["n_positions"])  # (W, n + 1)
    t0, c0 = time.perf_counter(), time.process_time()
    run = lm.train_gpt2(config, train, held_out, steps=steps, batch=BATCH, seed=seed, lr=LR, warmup=WARMUP,
                        every=EVERY, log=lambda line: print(f"seed {seed}: {line}", file=sys.stderr, flush=True))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    untrained = lm.init_gpt2(config, np.random.default_rng(seed), np.float32)
    if folder is not None:
        Path(folder).mkdir(parents=True, exist_ok=True)
        lm.save_gpt2(run["model"], Path(folder) / f"lm_seed{seed}.safetensors")
    return {"seed": seed, "curve": run["curve"], "seconds": seconds, "cpu_seconds": cpu,
            "held_out_positions": lm.position_losses(run["model"], windows).tolist(),
            "untrained_positions": lm.position_losses(untrained, windows).tolist()}
