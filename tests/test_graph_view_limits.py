"""The part's closing note: its few numbers, recomputed from the two benchmark records."""

import numpy as np
import pytest

import booktools as bt
from attention_graph import bench

PAGE = "graph_view_limits"


@pytest.mark.build
def test_sink_counts_are_the_records():
    runs = bench.record("sinks")["results"]["runs"]
    for variant, key in (("plain", "lim_sink_at_0"), ("sink token", "lim_token_at_0")):
        at_0 = sum(int(np.argmax(r["readouts"][-1]["out_strength"])) == 0 for r in runs[variant])
        assert bt.glued_float(PAGE, key) == at_0
    assert bt.glued_float(PAGE, "lim_sink_seeds") == len(runs["plain"])


@pytest.mark.build
def test_induction_numbers_are_the_records():
    curves = bench.record("induction")["results"]["curves"]
    assert bt.glued_float(PAGE, "lim_ind_seeds") == len(curves) >= 5
    assert bt.glued_float(PAGE, "lim_ind_acc_min") == min(c["accuracy"][-1] for c in curves)
    assert bt.glued_float(PAGE, "lim_ind_induction_min") == min(c["induction"][-1] for c in curves)
    # "nearly all of its weight on keys that match ... the theorem's own edge gets only ...": the weight
    # on every match is recomputed in test_induction (the same worst seed as that page's)
    assert 0.95 < bt.glued_float(PAGE, "lim_ind_every_min") <= 1
    assert bt.glued_float(PAGE, "lim_ind_induction_min") < bt.glued_float(PAGE, "lim_ind_every_min") - 0.2


@pytest.mark.build
def test_exercise_sink_excess_over_the_uniform_prediction():
    """The prediction is H_n, written out; the trained median is read from the record."""
    plain = bench.record("sinks")["results"]["runs"]["plain"]
    n = len(plain[0]["readouts"][-1]["out_strength"])
    H_n = sum(1 / i for i in range(1, n + 1))
    median = float(np.median([run["readouts"][-1]["out_strength"][0] for run in plain]))
    assert bt.glued_float(PAGE, "ex_lim_predicted") == pytest.approx(H_n, rel=1e-12)
    assert bt.glued_float(PAGE, "ex_lim_trained") == pytest.approx(median, rel=1e-12)
    assert bt.glued_float(PAGE, "ex_lim_ratio") == pytest.approx(median / H_n, rel=1e-12)
