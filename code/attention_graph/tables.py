"""Markdown tables the pages glue (presentation only: the numbers come from the concept modules)."""

from __future__ import annotations

__all__ = ["pattern_table"]


def pattern_table(comparison: dict[str, dict[int, dict]]) -> str:
    """One row per pattern: edges and maximum path length at each n, from
    :func:`attention_graph.patterns.compare_patterns`."""
    names = list(comparison)
    ns = list(comparison[names[0]])
    head = "| pattern | " + " | ".join(f"edges, n = {n}" for n in ns) + " | " + " | ".join(
        f"max. path, n = {n}" for n in ns) + " |"
    rule = "| --- |" + " ---: |" * (2 * len(ns))
    rows = [f"| {name} | " + " | ".join(f"{comparison[name][n]['edges']:,}" for n in ns) + " | "
            + " | ".join(str(comparison[name][n]["max_path"]) for n in ns) + " |" for name in names]
    return "\n".join([head, rule, *rows])
