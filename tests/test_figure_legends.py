"""No legend hides data: every figure a page glues with a legend is drawn as the page draws it (its
code cells run, in order, with ``glue`` catching the figures), and no point of the data drawn in an
axes (its lines, followed point to point, its markers, its bars and its texts) falls inside the box
of a legend in that axes, as laid out once the figure is drawn. Guides that only span the axes
(an unlabeled ``axhline``/``axvline``) are not data.

Marked slow: it runs the code of every page that draws a legend (about two minutes).
"""

from __future__ import annotations

import ast
from pathlib import Path

import matplotlib
import numpy as np
import pytest

import mystsource

matplotlib.use("Agg")
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PLOTS = ROOT / "code" / "attention_graph" / "plots"


def pages_with_legends() -> list[str]:
    """The pages whose figure module draws a legend (``plots/X.py`` draws ``book/X.md``'s)."""
    return sorted(p.stem for p in PLOTS.glob("*.py")
                  if "legend" in p.read_text() and (ROOT / "book" / f"{p.stem}.md").exists())


def glued_figures(stem: str, monkeypatch) -> list[tuple[str, Figure]]:
    """Every figure the page ``book/<stem>.md`` glues, drawn by running its code cells in order."""
    import myst_nb

    found = []
    monkeypatch.setattr(myst_nb, "glue", lambda name, obj, display=True:
                        found.append((name, obj)) if isinstance(obj, Figure) else None)
    namespace = {"__name__": "__main__"}
    for d in mystsource.directives((ROOT / "book" / f"{stem}.md").read_text()):
        if d.name != "code-cell":
            continue
        source = "\n".join(d.body[d.option_lines:])
        try:
            exec(compile(ast.parse(source), f"{stem}.md:{d.start}", "exec"), namespace)
        except Exception:
            if "raises-exception" not in str(d.options.get("tags", "")):
                raise
    return found


def _followed(xy: np.ndarray, step: float = 1.0) -> np.ndarray:
    """The points of a polyline in display px, one every ``step`` px along each segment."""
    out = [xy[:1]]
    for a, b in zip(xy[:-1], xy[1:]):
        if np.isfinite(a).all() and np.isfinite(b).all():
            k = max(1, int(np.hypot(*(b - a)) / step))
            out.append(a + (b - a) * np.linspace(0, 1, k + 1)[1:, None])
    return np.concatenate(out)


def hidden(fig: Figure) -> list[str]:
    """What the legends of ``fig`` cover: one entry per data artist with a point inside a legend's box."""
    FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        for legend in [ax.get_legend()] if ax.get_legend() else []:
            box, clip = legend.get_window_extent(renderer), ax.bbox

            def inside(p, box=box, clip=clip):
                p = p[np.isfinite(p).all(axis=1)]
                p = p[(p[:, 0] >= clip.x0) & (p[:, 0] <= clip.x1) & (p[:, 1] >= clip.y0) & (p[:, 1] <= clip.y1)]
                return int(((p[:, 0] > box.x0) & (p[:, 0] < box.x1) & (p[:, 1] > box.y0) & (p[:, 1] < box.y1)).sum())

            for line in ax.lines:
                guide = line.get_label().startswith("_") and line.get_transform() != ax.transData
                drawn = _followed(line.get_transform().transform(line.get_xydata()))
                if line.get_visible() and not guide and inside(drawn):
                    found.append(f"line {line.get_label()!r}")
            for c in ax.collections:
                offsets = c.get_offsets()
                if c.get_visible() and len(offsets) and inside(c.get_offset_transform().transform(offsets)):
                    found.append(f"markers {c.get_label()!r}")
            found += [f"bar {p.get_label()!r}" for p in ax.patches
                      if p.get_visible() and p.get_window_extent(renderer).overlaps(box)]
            found += [f"text {t.get_text()!r}" for t in ax.texts
                      if t.get_visible() and t.get_text().strip() and t.get_window_extent(renderer).overlaps(box)]
    return found


def test_the_check_sees_a_legend_on_a_line():
    """A legend put over a line is caught; the same legend under the axes is not."""
    from attention_graph import plots

    plots.use_book_style()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3.7, 2.5))
    ax.plot([0, 1], [0.5, 0.5], label="flat")
    ax.legend(loc="center")
    assert hidden(fig) == ["line 'flat'"]
    plots.style.legend_under(ax)
    assert hidden(fig) == []
    plt.close(fig)


@pytest.mark.slow
@pytest.mark.parametrize("stem", pages_with_legends())
def test_no_legend_hides_data(stem, monkeypatch):
    figures = glued_figures(stem, monkeypatch)
    assert figures, f"book/{stem}.md glues no figure"
    covered = {name: what for name, fig in figures if (what := hidden(fig))}
    assert not covered, f"book/{stem}.md: a legend covers data in {covered}"
