"""The figures of the chapter ``book/positional.md``, drawn from the package's own arrays."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from .style import finish


def waves(chi: int) -> str:
    """χ in words, as a panel's title says it before the chapter defines χ: "one wave", "two waves"."""
    words = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
    count = words[chi] if 0 <= chi < len(words) else str(chi)
    return f"{count} wave" + ("" if chi == 1 else "s")


def plot_cycle_encodings(P, frequencies, coefficients):
    """The columns of a cycle's Laplacian encoding P (n, k) as dots, each on its fitted sinusoid.

    ``frequencies[c]`` is the χ of column c and ``coefficients[c]`` the (ψ₁, ψ₂) with
    P[:, c] = ψ₁ cos(2π χ j / n) + ψ₂ sin(2π χ j / n) at code index j; the curve is drawn for continuous j,
    and the axis numbers the positions from 1. Each panel's title says its χ in words, the waves the
    column makes round the cycle (:func:`waves`), for a reader who meets the figure before χ.
    """
    n, k = P.shape
    cols = min(k, 2)  # at most two panels a row, a phone's column wide, so that the text keeps its size
    rows = -(-k // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.7, 1.9 * rows + 0.3), sharex=True, sharey=True,
                             squeeze=False)
    for ax in axes.flat[k:]:
        ax.axis("off")
    x = np.linspace(0, n, 400)  # (400,) code index j, from 0
    for c, ax in enumerate(axes.flat[:k]):
        chi, (psi_1, psi_2) = frequencies[c], coefficients[c]
        theta = 2 * np.pi * chi * x / n  # (400,)
        # The axis counts positions from 1, as the book's mathematics does: position j + 1 is code index j.
        ax.plot(x + 1, psi_1 * np.cos(theta) + psi_2 * np.sin(theta), "-", color="grey", lw=1)
        ax.plot(np.arange(1, n + 1), P[:, c], "o", ms=4, color="tab:blue")
        ax.axhline(0, color="black", lw=0.5)
        ax.set_title(f"column {c + 1}: {waves(chi)}", fontsize=9)
    step = max(1, n // 4)
    for ax in axes[-1, :]:
        ax.set_xticks([1] + list(range(step, n + 1, step)))  # the first position is 1
        ax.set_xlabel("position $j$")
    for ax in axes[:, 0]:
        ax.set_ylabel("encoding")
    fig.suptitle("the waves each column makes round the cycle", fontsize=9)
    return finish(fig)
