"""Benchmarks: ``python -m attention_graph.bench NAME [--quick] [--out PATH]``, one module a benchmark.

Speed and memory targets are met here, never in timed tests. A benchmark module (``sparse``,
``blockwise``) defines ``benchmark(quick) -> dict``; :mod:`.harness` holds the timers and the fresh
processes they share, :mod:`.memory` the one way to measure peak memory. The committed records are
package data (``attention_graph/data/bench_NAME.json``), read by :func:`record`.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

NAMES = ("sparse", "blockwise", "backward", "training", "linear", "induction", "sinks", "kv", "gated", "ssd", "lm")


def record(name: str, path: str | Path | None = None) -> dict:
    """The benchmark record of ``name``: the committed one (package data), or the file at ``path``."""
    if name not in NAMES:
        raise ValueError(f"name must be one of {NAMES}; got {name!r}")
    if path is not None:
        return json.loads(Path(path).read_text())
    source = resources.files("attention_graph") / "data" / f"bench_{name}.json"
    if not source.is_file():
        raise FileNotFoundError(f"no committed record for {name!r}: run `python -m "
                                f"attention_graph.bench {name} --out "
                                f"code/attention_graph/data/bench_{name}.json`")
    return json.loads(source.read_text())
