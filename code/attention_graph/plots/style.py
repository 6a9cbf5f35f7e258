"""The book's figure style, shared by every chapter's figures: the rcParams, the SVG output, the one finish."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

# The book's look, and what makes an SVG the same bytes on every build. Figures are drawn on a
# transparent ground: on the light page they sit on the page itself; in dark mode book.css puts
# them on a soft light card (black ink on a dark page could not be read, and a white card glares).
STYLE = {
    "svg.hashsalt": "attention-graph",
    "figure.facecolor": "none",
    "axes.facecolor": "none",
    "savefig.facecolor": "none",
    "savefig.transparent": True,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 10,
    "legend.fontsize": 9,
}


# The text column on a 390 px phone is 358 CSS px, 3.7 in at 96 px an inch. A figure drawn at most
# this wide is shown at its own size there (book.css never scales an image up), so its text keeps
# its size: 8 pt reads as 10.7 px. Panels that would sit side by side are stacked instead.
COLUMN = 3.7  # inches
SMALLEST = 8  # pt: the smallest text a figure draws

_styled = False


def use_book_style() -> None:
    """Draw every figure that follows in the book's style (call once per page, before any figure).

    Selects the Agg backend and :data:`STYLE`, and lets IPython, so MyST-NB's glue, render a
    Figure as SVG without a creation date (with Agg, IPython registers no image formatter, and a
    glued figure would reach the page as its text repr "<Figure size ...>").
    """
    global _styled
    matplotlib.use("Agg")
    matplotlib.rcParams.update(STYLE)
    try:
        from IPython import get_ipython  # the book's kernel has IPython; the package needs it not
        from IPython.core.pylabtools import select_figure_formats
    except ImportError:  # pragma: no cover
        shell = None
    else:
        shell = get_ipython()
    if shell is not None:
        select_figure_formats(shell, {"svg"}, metadata={"Date": None})
    _styled = True


def finish(fig, own: bool = True):
    """Every figure leaves through here: laid out and closed when its plot function made it (``own``).

    A panel drawn into a caller's axes (``own`` False) is left to the caller's own ``finish``.
    """
    if not _styled:
        raise RuntimeError("call attention_graph.plots.use_book_style() before drawing a figure")
    if own:
        fig.tight_layout()
        covered = hidden_by_legends(fig) if any(ax.get_legend() for ax in fig.axes) else []
        plt.close(fig)
        if covered:
            raise ValueError(f"fig: a legend hides data ({', '.join(covered)}): put it under the axes "
                             "(legend_under) or where nothing is drawn")
    return fig


def _followed(xy: np.ndarray, step: float = 1.0) -> np.ndarray:
    """The points of a polyline in display px, one every ``step`` px along each segment."""
    out = [xy[:1]]
    for a, b in zip(xy[:-1], xy[1:]):
        if np.isfinite(a).all() and np.isfinite(b).all():
            k = max(1, int(np.hypot(*(b - a)) / step))
            out.append(a + (b - a) * np.linspace(0, 1, k + 1)[1:, None])
    return np.concatenate(out)


def hidden_by_legends(fig) -> list[str]:
    """What the legends of ``fig`` cover, once it is drawn: one entry per data artist of an axes (its
    lines, followed point to point, its markers, bars and texts) with a point inside that axes'
    legend. Guides that only span the axes (an unlabeled ``axhline``/``axvline``) are not data.

    ``finish`` refuses a figure whose legend hides data, so every figure the book draws is checked as
    it is drawn (tests/test_figure_legends.py shows the check catching a legend on a line).
    """
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found = []
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box, clip = legend.get_window_extent(renderer), ax.bbox

        def inside(p, box=box, clip=clip) -> int:
            p = p[np.isfinite(p).all(axis=1)]
            p = p[(p[:, 0] >= clip.x0) & (p[:, 0] <= clip.x1) & (p[:, 1] >= clip.y0) & (p[:, 1] <= clip.y1)]
            return int(((p[:, 0] > box.x0) & (p[:, 0] < box.x1) & (p[:, 1] > box.y0) & (p[:, 1] < box.y1)).sum())

        for line in ax.lines:
            spans = not all(line.get_transform().contains_branch_seperately(ax.transData))  # axhline, axvline
            guide = line.get_label().startswith("_") and spans
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


# One colour per object across these pictures: queries, keys, values, outputs.
QKV_COLORS = {"x": "0.35", "q": "tab:blue", "k": "tab:orange", "v": "tab:green", "y": "tab:purple"}


FLOOR = 1e-17  # log axes: a value that rounding made 0 is drawn at this floor


def legend_under(ax, *, ncol: int = 1, fontsize: float = 9, **kwargs):
    """Put ``ax``'s legend under it, below its tick labels and x label, where it hides no data.

    Call it once the axes has its ticks and labels: the gap is measured from what lies under the
    axes then (nothing on a panel whose shared x axis shows its labels on the panel below).
    """
    from matplotlib.transforms import ScaledTranslation

    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    below = ax.xaxis.get_tightbbox(renderer)  # the x axis's ticks and labels, None when hidden
    under = 0.0 if below is None else max(0.0, ax.bbox.y0 - below.y0)  # px taken under the axes
    drop = ScaledTranslation(0, -(under / fig.dpi + 2 / 72), fig.dpi_scale_trans)
    return ax.legend(frameon=False, fontsize=fontsize, ncol=ncol, loc="upper center",
                     bbox_to_anchor=(0.5, 0), bbox_transform=ax.transAxes + drop, **kwargs)
