"""Notebook 24's delta buckets and tau against the authors' own computation of Figure 6.

The reference below re-states, as plain loops, the logic of ``get_all_pairs``, ``get_percentile_deltas`` and
``calculate_tau`` (``syslevel/delta_correlations/plot_heatmaps.py``) as ``load_data`` in
``syslevel/delta_correlations/plot_combined.py`` calls them: CogComp/re-examining-correlations, commit
753c6dd7683d99f2a07f047b66ba29d679a38c12 (the repository states no licence; this is an independent
re-implementation of the published procedure for comparison, not a copy). The committed comparison: on every
paper metric of SummEval and REALSumm, equal pair counts and thresholds, and a largest |difference in tau| of 0
(printed by ``python -m pytest tests/test_deutsch2022_authors.py -s``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import metaeval
from metaeval.studies.deutsch import paper_metrics


def _authors_pairs(x, z):
    return [(i, j, x[i] - x[j], z[i] - z[j]) for i in range(len(x)) for j in range(i + 1, len(x))]


def _authors_tau(pairs):
    P = Q = T = U = 0
    for _, _, da, dh in pairs:
        if (da > 0 and dh > 0) or (da < 0 and dh < 0):
            P += 1
        elif (da > 0 and dh < 0) or (da < 0 and dh > 0):
            Q += 1
        elif da == 0 and dh != 0:
            T += 1
        elif da != 0 and dh == 0:
            U += 1
    if P + Q + T == 0:
        return 0  # the authors' convention; ours is NaN with a warning (not reached on these data)
    return (P - Q) / np.sqrt((P + Q + T) * (P + Q + U))


def _authors_max_deltas(pairs):
    size = int(math.ceil(len(pairs) * 0.1))
    n_buckets = int(math.ceil(len(pairs) / size))
    ordered = sorted(pairs, key=lambda t: abs(t[2]))
    return [abs(ordered[min((i + 1) * size - 1, len(pairs) - 1)][2]) for i in range(n_buckets)]


def _authors_curve(X, Z):
    x, z = np.nanmean(X, axis=1), np.nanmean(Z, axis=1)
    pairs = _authors_pairs(x, z)
    maxes = _authors_max_deltas(pairs)
    buckets = [[p for p in pairs if abs(p[2]) <= u] for u in maxes]
    return maxes, [len(b) for b in buckets], [_authors_tau(b) for b in buckets]


@pytest.mark.parametrize("name", ["summeval", "realsumm"])
def test_default_buckets_and_tau_equal_the_authors_code(name):
    ds = metaeval.datasets.load(name)
    Z = ds.matrix(ds.default_human)
    worst = 0.0
    for label, score in paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented).items():
        X = ds.matrix(score)
        if np.isnan(X).any():
            keep = ~np.isnan(X).any(axis=0)
            X, Zk = X[:, keep], Z[:, keep]
        else:
            Zk = Z
        maxes, counts, taus = _authors_curve(X, Zk)
        ours = metaeval.delta_correlations(X, Zk, n_resamples=0)
        assert ours.percent.tolist() == [10 * (k + 1) for k in range(len(taus))], label
        assert ours.n_pairs.tolist() == counts, label
        np.testing.assert_allclose(ours.high, maxes, rtol=1e-9, err_msg=label)
        diff = np.abs(ours.statistic - np.array(taus, dtype=float))
        worst = max(worst, float(diff.max()))
    print(f"{name}: largest |tau ours - tau authors| = {worst:.3g}")
    assert worst < 1e-12


def test_the_authors_printed_figure_6_shape():
    # the authors' printed values (reproducibility/expected.txt) hold 10 buckets for 16 and 25 systems
    for systems in (16, 25):
        pairs = _authors_pairs(np.arange(systems, dtype=float), np.arange(systems, dtype=float))
        assert len(_authors_max_deltas(pairs)) == 10


def test_ties_follow_the_authors_tau_and_undefined_is_nan():
    # metric ties on pair (0, 1) count in T; human ties on (2, 3) in U
    X = np.repeat([[1.0], [1.0], [2.0], [3.0]], 3, axis=1)
    Z = np.repeat([[0.0], [1.0], [2.0], [2.0]], 3, axis=1)
    res = metaeval.delta_correlations(X, Z, deltas=[(0, 10)], n_resamples=0)
    pairs = _authors_pairs(X.mean(1), Z.mean(1))
    assert res.statistic[0] == pytest.approx(_authors_tau(pairs), abs=1e-15)
    assert res.statistic[0] == pytest.approx(4 / np.sqrt(5 * 5))
    # constant human scores: the authors' 0 (and the old tau-a's 0.0 with a zero-width interval) is NaN here
    with pytest.warns(metaeval.DegenerateResultWarning, match="tied by the human scores"):
        flat = metaeval.delta_correlations(X, np.ones_like(X), n_resamples=50, rng=0)
    assert np.isnan(flat.statistic).all()
    assert np.isnan(flat.confidence_interval.low).all() and np.isnan(flat.confidence_interval.high).all()
    # the one pair of band [0, 0.5) by the human difference is tied by the humans: undefined too
    with pytest.warns(metaeval.DegenerateResultWarning, match=r"\[0, 0.5\) every pair is tied"):
        tied = metaeval.delta_correlations(X, Z, deltas=[(0, 0.5), (0.5, 10)], by="human", n_resamples=50, rng=0)
    assert tied.n_pairs.tolist() == [1, 5] and np.isnan(tied.statistic[0])
    assert tied.statistic[1] == pytest.approx(4 / np.sqrt(5 * 4))  # P = 4, T = 1 (pair 0, 1), U = 0
    # an empty band: no statistic and no interval, even where resamples put pairs in it
    with pytest.warns(metaeval.DegenerateResultWarning, match=r"\[0.1, 0.5\) hold no system pair"):
        gap = metaeval.delta_correlations(X, Z, deltas=[(0.1, 0.5)], by="human", n_resamples=50, rng=0)
    assert gap.n_pairs[0] == 0 and np.isnan(gap.statistic[0])
    assert np.isnan(gap.confidence_interval.low[0]) and gap.n_resamples_used[0] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ties, no warning
        clean = metaeval.delta_correlations(X + np.array([[0.0], [0.5], [0.0], [0.0]]), Z + np.arange(4.0)[:, None],
                                            n_resamples=20, rng=0)
    assert not np.isnan(clean.statistic).any()
