"""No legend hides data: ``plots.style.finish``, which every figure of the book leaves through, draws a
figure that has a legend and refuses it when a point of the data drawn in an axes (its lines,
followed point to point, its markers, its bars and its texts) falls inside that axes' legend
(``plots.style.hidden_by_legends``). So the strict build fails on such a figure, as it is drawn; here
the check is shown to catch what it must and to pass what it must.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest

from attention_graph import plots
from attention_graph.plots import style


@pytest.fixture
def axes():
    plots.use_book_style()
    fig, ax = plt.subplots(figsize=(3.7, 2.5))
    yield fig, ax
    plt.close(fig)


def test_the_check_sees_a_legend_on_a_line(axes):
    """A legend put over a line is caught; the same legend under the axes is not."""
    fig, ax = axes
    ax.plot([0, 1], [0.5, 0.5], label="flat")
    ax.legend(loc="center")
    assert style.hidden_by_legends(fig) == ["line 'flat'"]
    style.legend_under(ax)
    assert style.hidden_by_legends(fig) == []


def test_the_check_sees_markers_bars_and_text_and_spares_guides(axes):
    fig, ax = axes
    ax.set_xlim(0, 1), ax.set_ylim(0, 1)
    ax.scatter([0.5], [0.5], label="dot")
    ax.bar([0.5], [0.55], width=0.3, bottom=0.2, label="bar", alpha=0.3)
    ax.text(0.5, 0.5, "note")
    ax.axhline(0.5, color="0.8")  # a guide spanning the axes, unlabeled: not data
    ax.legend(loc="center")
    found = style.hidden_by_legends(fig)
    assert {what.split()[0] for what in found} == {"bar", "markers", "text"}  # the guide is no line of data
    assert "markers 'dot'" in found and "text 'note'" in found


def test_finish_refuses_a_figure_whose_legend_hides_data(axes):
    fig, ax = axes
    ax.plot([0, 1], [0.5, 0.5], label="flat")
    ax.legend(loc="center")
    with pytest.raises(ValueError, match="fig: a legend hides data .*line 'flat'"):
        style.finish(fig)
    fig2, ax2 = plt.subplots(figsize=(3.7, 2.5))
    ax2.plot([0, 1], [0.5, 0.5], label="flat")
    style.legend_under(ax2)
    assert style.finish(fig2) is fig2
