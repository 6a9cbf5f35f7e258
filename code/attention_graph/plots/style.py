"""The book's figure style, shared by every chapter's figures: the rcParams, the SVG output, the one finish."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt

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
        plt.close(fig)
    return fig


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
