"""Lin (2004): critical values from the paper, sample-size curves, critical sample size."""

import numpy as np
import pandas as pd
import pytest

from metaeval import lin
from metaeval.datasets import synthetic


def test_critical_values_from_the_paper():
    # "The critical values for Pearson's correlation at 95% confidence with 10 ... and 12 degrees of freedom
    #  are 0.576 and 0.532"
    assert lin.critical_r(12) == pytest.approx(0.576, abs=5e-4)
    assert lin.critical_r(14) == pytest.approx(0.532, abs=5e-4)


def test_sample_size_curves_behave():
    d = synthetic(12, 80, system_correlation=0.8, summary_correlation=0.3, rng=3)
    summary, draws = lin.sample_size_curves(d.metrics[0], d.human, [1, 10, 80], n_resamples=400, rng=1, system=0)
    widths = summary["pearson_dCI"].to_numpy()
    assert widths[0] > widths[1] > widths[2]  # more documents, narrower intervals
    full = np.corrcoef(d.metrics[0].mean(1), d.human.mean(1))[0, 1]
    assert summary.loc[2, "pearson_M"] == pytest.approx(full, abs=0.05)
    assert len(draws[(10, "spearman")]) == 400
    both, _ = lin.sample_size_curves(d.metrics[0], d.human, [80], n_resamples=400, rng=1, resample="both")
    assert both.loc[0, "pearson_dCI"] > summary.loc[2, "pearson_dCI"]  # Boot-Both adds the systems' variance
    again, _ = lin.sample_size_curves(d.metrics[0], d.human, [1, 10, 80], n_resamples=400, rng=1, system=0)
    pd.testing.assert_frame_equal(summary, again)


def test_critical_sample_size_rule():
    summary = pd.DataFrame({"size": [1, 5, 10], "pearson_M": [0.5, 0.7, 0.8], "pearson_dCI": [0.8, 0.4, 0.2]})
    # lower ends: 0.1, 0.5, 0.7
    assert lin.critical_sample_size(summary, 0.45) == 5
    assert np.isnan(lin.critical_sample_size(summary, 0.75))
