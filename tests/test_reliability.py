"""Annotator reliability (metaeval.stats.reliability): Krippendorff's alpha against the published worked example,
the `krippendorff` package and an independent pairwise computation; split-half reliability and the noise ceiling
against hand-checked cases and classical-test-theory invariants."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from metaeval import DegenerateResultWarning
from metaeval.stats.reliability import (
    disattenuate,
    krippendorff_alpha,
    noise_ceiling,
    spearman_brown,
    split_half_reliability,
)

nan = np.nan
# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", sec. C: 4 observers x 12 units
K2011 = np.array([[1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
                  [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
                  [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
                  [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan]]).T


@pytest.mark.parametrize("level, published", [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_krippendorff_2011_worked_example(level, published):
    # the paper prints alpha to 3 decimals: nominal .743, ordinal .815, interval .849 (ratio is not printed)
    assert krippendorff_alpha(K2011, level=level).alpha == pytest.approx(published, abs=5e-4)


def test_alpha_worked_example_counts():
    res = krippendorff_alpha(K2011, level="nominal")
    # unit 12 has one value and drops out; 40 pairable values remain (the paper's n.. = 40)
    assert (res.n_units, res.n_values) == (11, 40)
    # by hand: value counts n_1..n_5 = 9, 13, 10, 5, 3 (sum of squares 384); the off-diagonal coincidences sum
    # to 8 (ordered mismatched pairs / (m_u - 1): unit 6 = 12/3 = 4, unit 2 = 6/3 = 2, unit 8 = 6/3 = 2); alpha = 1 - (n - 1) * 8 / (n^2 - sum n_c^2) = 1 - 39 * 8 / (1600 - 384) = 113/152
    assert res.alpha == pytest.approx(113 / 152, abs=1e-12)


def _alpha_pairs_interval(units: np.ndarray) -> float:
    """Independent interval alpha from pairs of values (no coincidence matrix): D_o averages (x_i - x_j)^2 over
    ordered pairs within a unit weighted 1/(m_u - 1); D_e over ordered pairs of all pairable values."""
    within, pool = 0.0, []
    for row in units:
        vals = row[~np.isnan(row)]
        if vals.size < 2:
            continue
        m = vals.size
        within += (2 * m * (vals ** 2).sum() - 2 * vals.sum() ** 2) / (m - 1)
        pool.append(vals)
    allv = np.concatenate(pool)
    n = allv.size
    between = 2 * n * (allv ** 2).sum() - 2 * allv.sum() ** 2
    return 1 - (n - 1) * within / between


def _alpha_pairs_nominal(units: np.ndarray) -> float:
    within, pool = 0.0, []
    for row in units:
        vals = row[~np.isnan(row)]
        if vals.size < 2:
            continue
        m = vals.size
        within += sum(a != b for a, b in itertools.permutations(vals, 2)) / (m - 1)
        pool.append(vals)
    allv = np.concatenate(pool)
    n = allv.size
    _, counts = np.unique(allv, return_counts=True)
    return 1 - (n - 1) * within / (n * n - (counts ** 2).sum())


def test_alpha_pairs_formula_on_worked_example():
    assert krippendorff_alpha(K2011, level="interval").alpha == pytest.approx(_alpha_pairs_interval(K2011), abs=1e-12)
    assert krippendorff_alpha(K2011, level="nominal").alpha == pytest.approx(_alpha_pairs_nominal(K2011), abs=1e-12)


@pytest.fixture(scope="module")
def summeval():
    from metaeval import datasets

    return datasets.load("summeval")


EXPERT = ["expert.relevance", "expert.coherence", "expert.consistency", "expert.fluency"]


@pytest.mark.parametrize("score", EXPERT)
@pytest.mark.parametrize("level", ["interval", "ordinal", "nominal", "ratio"])
def test_alpha_summeval_experts_equals_krippendorff_package(summeval, score, level):
    krippendorff = pytest.importorskip("krippendorff")
    ratings = summeval.ratings(score)
    units = ratings.reshape(-1, ratings.shape[2])
    ref = krippendorff.alpha(reliability_data=units.T, level_of_measurement=level)
    assert krippendorff_alpha(ratings, level=level).alpha == pytest.approx(ref, abs=1e-9)


# printed by: PYTHONPATH=lib python -c "from metaeval import datasets; from metaeval.stats.reliability import
# krippendorff_alpha as k; d = datasets.load('summeval'); [print(s, k(d.ratings(s)).alpha) for s in ...]"
SUMMEVAL_INTERVAL = {"expert.coherence": 0.559128, "expert.consistency": 0.899339, "expert.fluency": 0.726206,
                     "expert.relevance": 0.452634}


@pytest.mark.parametrize("score", EXPERT)
def test_alpha_summeval_experts_equals_pairwise_computation(summeval, score):
    ratings = summeval.ratings(score)
    units = ratings.reshape(-1, ratings.shape[2])
    ours = krippendorff_alpha(ratings, level="interval").alpha
    assert ours == pytest.approx(_alpha_pairs_interval(units), abs=1e-9)
    assert ours == pytest.approx(SUMMEVAL_INTERVAL[score], abs=1e-6)
    assert krippendorff_alpha(ratings, level="nominal").alpha == pytest.approx(_alpha_pairs_nominal(units), abs=1e-9)


def test_alpha_perfect_and_degenerate():
    units = np.array([[1, 1, 1], [2, 2, nan], [3, 3, 3]], dtype=float)
    assert krippendorff_alpha(units).alpha == 1.0
    with pytest.warns(DegenerateResultWarning, match="expected disagreement is 0"):
        assert np.isnan(krippendorff_alpha(np.ones((4, 3))).alpha)
    with pytest.warns(DegenerateResultWarning, match="no unit has two ratings"):
        assert np.isnan(krippendorff_alpha(np.array([[1.0, nan], [nan, 2.0]])).alpha)
    with pytest.raises(ValueError, match="level must be one of"):
        krippendorff_alpha(units, level="likert")
    with pytest.raises(ValueError, match="ratio"):
        krippendorff_alpha(-units, level="ratio")


# ----------------------------------------------------------------------------------------------------
# Split halves and the ceiling


def test_spearman_brown_hand_values():
    assert spearman_brown(0.5, 2) == pytest.approx(2 / 3)
    assert spearman_brown(0.6, 3) == pytest.approx(1.8 / 2.2)
    assert spearman_brown(0.25, 1) == 0.25


def test_split_half_two_annotators_by_hand():
    # two annotators, global level over 5 x 5 cells: r_half is their Pearson r over the 25 cells, taken to the
    # population scale by inverting E[r] at n = 25 (root-found here with scipy, not the library's grid), then
    # r_kk = 2 rho / (1 + rho)
    from scipy.optimize import brentq

    from metaeval.stats.reliability import expected_correlation

    g = np.random.default_rng(4)
    a = g.normal(size=(5, 5))
    b = a + 0.8 * g.normal(size=(5, 5))
    r = np.corrcoef(a.ravel(), b.ravel())[0, 1]
    rho = brentq(lambda x: expected_correlation(x, 25) - r, -0.999, 0.999, xtol=1e-12)
    assert rho > r  # E[r] < rho: the sample r of 25 pairs is shrunk towards 0
    res = split_half_reliability(np.stack([a, b], axis=2), level="global", n_resamples=0)
    assert res.half_correlation == pytest.approx(r, abs=1e-12)
    assert res.reliability == pytest.approx(2 * rho / (1 + rho), abs=1e-3)  # the library's grid step is 5e-4
    assert res.n_splits == 1 and res.n == 25


def test_split_half_three_annotators_parallel_model_by_hand():
    # halves of 1 and 2 annotators; under the parallel model corr = sqrt(rho * 2rho / (1 + rho)).
    # Choose rho = 0.5: corr = sqrt(0.5 * 1 / 1.5) = sqrt(1/3); build halves with exactly that correlation
    # (annotator slots 0, 1, 2 with slots 1 and 2 averaged must give it) is awkward, so check the algebra:
    from metaeval.stats.reliability import _single_from_halves

    assert float(_single_from_halves(np.sqrt(1 / 3), 1, 2)) == pytest.approx(0.5, abs=1e-12)
    assert float(_single_from_halves(0.6, 2, 2)) == pytest.approx(0.6 / (2 - 0.6), abs=1e-12)  # rho_2 = 0.6
    assert float(_single_from_halves(0.3, 1, 1)) == pytest.approx(0.3, abs=1e-12)


def test_noise_ceiling_recovers_simulated_true_correlation():
    # true score T, 4 annotators = T + noise with var 1 -> rho = 1/2, r_44 = 0.8, ceiling sqrt(0.8) = 0.894;
    # the perfect metric T correlates with the mean rating at sqrt(0.8) in the population
    g = np.random.default_rng(5)
    T = g.normal(size=(40, 200))
    ratings = T[:, :, None] + g.normal(size=(40, 200, 4))
    res = noise_ceiling(ratings, level="global", n_resamples=200, rng=1)
    observed = np.corrcoef(T.ravel(), ratings.mean(axis=2).ravel())[0, 1]
    assert res.ceiling == pytest.approx(np.sqrt(0.8), abs=0.01)
    assert res.ceiling == pytest.approx(observed, abs=0.01)
    low, high = res.confidence_interval
    assert low < res.ceiling < high
    assert res.reliability.n_splits == 3  # {0,1}|{2,3}, {0,2}|{1,3}, {0,3}|{1,2}


def test_system_level_ceiling_is_higher_than_summary_level():
    # system means average 100 inputs of noise away: their reliability is higher than a single cell's
    g = np.random.default_rng(2)
    ratings = g.normal(size=(12, 1, 1)) + 0.5 * g.normal(size=(12, 100, 1)) + g.normal(size=(12, 100, 3))
    sys_ = split_half_reliability(ratings, level="system", n_resamples=0)
    summ = split_half_reliability(ratings, level="summary", n_resamples=0)
    assert sys_.reliability > 0.95 > summ.reliability


def test_split_half_is_reproducible_and_rejects_bad_input():
    g = np.random.default_rng(0)
    ratings = g.normal(size=(6, 20, 1)) + g.normal(size=(6, 20, 8))
    a = split_half_reliability(ratings, n_splits=5, n_resamples=100, rng=3)
    b = split_half_reliability(ratings, n_splits=5, n_resamples=100, rng=3)
    assert a == b and a.n_splits == 5
    with pytest.raises(ValueError, match="at least 2 annotators"):
        split_half_reliability(ratings[:, :, :1])
    with pytest.raises(ValueError, match="systems, inputs, annotators"):
        split_half_reliability(ratings[:, :, 0])
    with pytest.raises(ValueError, match="level must be one of"):
        split_half_reliability(ratings, level="per-system")


def test_noise_ceiling_nan_when_halves_disagree():
    g = np.random.default_rng(0)
    ratings = g.normal(size=(8, 30, 2))
    ratings[:, :, 1] = -ratings[:, :, 0]  # halves perfectly anti-correlated: no reliability
    with pytest.warns(DegenerateResultWarning, match="ceiling is NaN"):
        assert np.isnan(noise_ceiling(ratings, level="global", n_resamples=0).ceiling)


def test_disattenuate():
    assert disattenuate(0.6, 0.81) == pytest.approx(0.6 / 0.9)
    with pytest.warns(DegenerateResultWarning):
        assert np.isnan(disattenuate(0.6, 0.0))


# printed by: noise_ceiling(d.ratings('expert.relevance'), level=lv, coefficient=c, n_resamples=0, rng=0) on this
# code: (r_kk, ceiling). The former pooled summary-level estimator gave r_kk 0.733, ceiling 0.856 on every row.
SUMMEVAL_CEILINGS = {("system", "pearson"): (0.9620, 0.9794), ("system", "spearman"): (0.9708, 0.9674),
                     ("system", "kendall"): (0.9694, 0.8880), ("summary", "pearson"): (0.6991, 0.8270),
                     ("summary", "spearman"): (0.7007, 0.7906), ("summary", "kendall"): (0.7699, 0.6815)}


@pytest.mark.parametrize("level, coefficient", list(SUMMEVAL_CEILINGS))
def test_summeval_expert_ceiling_golden(summeval, level, coefficient):
    res = noise_ceiling(summeval.ratings("expert.relevance"), level=level, coefficient=coefficient, n_resamples=0,
                        rng=0)
    rel, ceiling = SUMMEVAL_CEILINGS[(level, coefficient)]
    assert res.reliability.reliability == pytest.approx(rel, abs=5e-4)
    assert res.ceiling == pytest.approx(ceiling, abs=5e-4)
    assert res.coefficient == coefficient and "Spearman-Brown" in res.estimator


def test_reliability_stays_in_range_when_halves_disagree():
    # 3 annotators whose halves anti-correlate: Spearman-Brown would divide by 1 + 2 rho <= 0 and leave [-1, 1]
    g = np.random.default_rng(3)
    a = g.normal(size=(6, 30))
    ratings = np.stack([a, -a + 0.1 * g.normal(size=a.shape), -a + 0.1 * g.normal(size=a.shape)], axis=2)
    res = split_half_reliability(ratings, level="global", n_resamples=50, rng=0)
    assert -1 <= res.reliability <= 0
    assert -1 <= res.confidence_interval.low <= res.confidence_interval.high <= 1
