"""Every figure of the book, drawn from the package's own arrays (no plot code lives in a cell).

Figures are deterministic: a fixed SVG hash salt and no creation dates, so two builds give the same
files.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams.update({
    "svg.hashsalt": "attention-graph",
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 10,
})

__all__ = ["plot_dot_product_variance"]


def plot_dot_product_variance(moments: dict[str, list[float]]):
    """Sample variance of q·k and of q·k/√d against d (log-log), from :func:`dot_product_moments`."""
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
    ax.loglog(moments["d"], moments["var"], "o-", label=r"$\mathrm{Var}[q\cdot k]$ (unscaled)")
    ax.loglog(moments["d"], moments["var_scaled"], "s-", label=r"$\mathrm{Var}[q\cdot k/\sqrt{d}]$")
    ax.loglog(moments["d"], moments["d"], ":", color="grey", label="the line $y = d$")
    ax.set_xlabel("dimension $d$")
    ax.set_ylabel("sample variance")
    ax.legend(frameon=False)
    fig.tight_layout()
    plt.close(fig)
    return fig
