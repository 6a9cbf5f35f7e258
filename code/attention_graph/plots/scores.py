"""The figures of the chapter ``book/scores.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt

from .style import finish


def plot_dot_product_variance(moments: dict[str, list[float]]):
    """Sample variance of q·k and of q·k/√d against d (log-log), from :func:`dot_product_moments`."""
    fig, ax = plt.subplots(figsize=(3.7, 4.1))
    ax.loglog(moments["d"], moments["var"], "o-", label=r"$\mathrm{Var}[q\cdot k]$ (unscaled)")
    ax.loglog(moments["d"], moments["var_scaled"], "s-", label=r"$\mathrm{Var}[q\cdot k/\sqrt{d}]$")
    ax.loglog(moments["d"], moments["d"], "-", color="0.82", lw=7, zorder=0,
              label="the line $y = d$ (the unscaled curve lies on it)")
    ax.set_xlabel("dimension $d$")
    ax.set_ylabel("sample variance")
    ax.legend(frameon=False, fontsize=9, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1)  # under the axes
    return finish(fig)
