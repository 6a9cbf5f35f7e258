"""``python -m attention_graph.bench NAME [--quick] [--out PATH]``, NAME one of ``bench.NAMES``.

Writes the JSON record (the machine, the versions, the results) to ``--out``, or prints it. The
committed record of a benchmark is ``code/attention_graph/data/bench_NAME.json``: pass that path as
``--out`` after a full run on the machine the record will name.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from pathlib import Path

from . import NAMES
from .harness import machine


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_graph.bench", description=__doc__)
    parser.add_argument("name", choices=NAMES, help="which benchmark")
    parser.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    parser.add_argument("--out", type=Path, default=None,
                        help="where to write the JSON record (default: standard output)")
    args = parser.parse_args(argv)
    module = importlib.import_module(f"attention_graph.bench.{args.name}")
    # A benchmark that writes files beside its record (lm: the trained weights) takes ``out``.
    extra = {"out": args.out} if "out" in inspect.signature(module.benchmark).parameters else {}
    record = {"benchmark": args.name, "quick": args.quick, "machine": machine(),
              "results": module.benchmark(quick=args.quick, **extra)}
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"
    if args.out is None:
        sys.stdout.write(text)
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
