"""The command line of the benchmarks; see :mod:`attention_graph.bench`."""

import importlib
import json
import sys
from importlib.resources import files
from pathlib import Path

from .harness import DATA, machine
from .harness import main as legacy_main

# Benchmarks that live in this subpackage; their full records are package data (attention_graph/data).
OWN = {"backward", "training"}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in OWN:
        return legacy_main(argv)
    import argparse

    parser = argparse.ArgumentParser(prog="python -m attention_graph.bench")
    parser.add_argument("name", choices=sorted(OWN))
    parser.add_argument("--quick", action="store_true", help="small sizes, to check it runs")
    parser.add_argument("--out", type=Path, default=None, help="where to write the JSON record")
    args = parser.parse_args(argv)
    module = importlib.import_module(f"attention_graph.bench.{args.name}")
    record = {"benchmark": args.name, "quick": args.quick, "machine": machine(),
              "results": module.benchmark(quick=args.quick)}
    default = (DATA.parents[1] / "_build" / f"bench_{args.name}_quick.json" if args.quick
               else Path(str(files("attention_graph") / "data" / f"bench_{args.name}.json")))
    out = args.out or default
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
