"""The noise ceiling (metaeval.stats.reliability.noise_ceiling) against what a perfect metric reaches, by simulation
with a known true score (benchmarks/bench_ceiling.py: the design, the former estimator and the docstring's table),
and the minimum sizes below which no reliability or ceiling is reported."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from metaeval.stats.reliability import (
    MIN_SIZES,
    _population_correlation,
    expected_correlation,
    noise_ceiling,
    split_half_reliability,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_ceiling  # noqa: E402  (the simulation and the former estimator, one implementation)

#: the largest |bias| of the ceiling accepted at the tested designs; the docstring table (200 simulations per
#: design) has every |bias| below it
BOUND = 0.035


# ----------------------------------------------------------------------------------------------------
# The bivariate-normal expectations the ceiling maps through


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("n, rho", [(5, 0.9), (5, 0.5), (16, 0.8)])
def test_expected_correlation_equals_monte_carlo(coefficient, n, rho):
    from metaeval.stats.correlation import batch_corr

    g = np.random.default_rng(11)
    x = g.normal(size=(40000, n))
    z = rho * x + np.sqrt(1 - rho**2) * g.normal(size=x.shape)
    sample = batch_corr(x, z, coefficient)
    se = sample.std() / np.sqrt(sample.size)
    # 4 standard errors of the Monte Carlo mean (~0.001-0.002)
    assert expected_correlation(rho, n, coefficient) == pytest.approx(sample.mean(), abs=4 * se)


def test_expected_correlation_hand_values_and_inverse():
    assert expected_correlation(0.5, 7, "kendall") == pytest.approx(1 / 3, abs=1e-12)  # (2/pi) asin(1/2)
    # Spearman's large-n limit (6/pi) asin(rho/2): 0.4826 at rho = 0.5
    assert expected_correlation(0.5, 10**6, "spearman") == pytest.approx(6 / np.pi * np.arcsin(0.25), abs=1e-5)
    assert expected_correlation(0.9, 10**6) == pytest.approx(0.9, abs=1e-6)
    assert expected_correlation(1.0, 500) == 1.0 and expected_correlation(-1.0, 5) == -1.0
    for coefficient in ("pearson", "spearman", "kendall"):
        rho = np.array([-0.7, 0.1, 0.6, 0.95])
        back = _population_correlation(expected_correlation(rho, 8, coefficient), 8, coefficient)
        np.testing.assert_allclose(back, rho, atol=5e-4)


# ----------------------------------------------------------------------------------------------------
# Bias by simulation


@pytest.fixture(scope="module")
def heterogeneous():
    # inputs differ in spread (h = 1), 5 systems, 3 annotators: the design where the pooled ceiling overstates
    return bench_ceiling.run_design((5, 20, 3, 1.0), 60, np.random.default_rng(3), levels=["summary"])


@pytest.mark.parametrize("coefficient", ["pearson", "spearman", "kendall"])
def test_summary_ceiling_matches_a_perfect_metric_where_the_pooled_one_fails(heterogeneous, coefficient):
    true, new, old = heterogeneous[("summary", coefficient)]
    assert abs(new - true) < BOUND
    # the former estimator (pooled over inputs, the Pearson value on every row) overstates by more than
    # 3 bounds here: this is why it was replaced
    assert old - true > 3 * BOUND


@pytest.mark.parametrize("design", [(10, 20, 3, 0.0), (16, 100, 5, 1.0)])
def test_every_level_and_coefficient_within_the_bound(design):
    res = bench_ceiling.run_design(design, 25, np.random.default_rng(7))
    for (level, coefficient), (true, new, _) in res.items():
        assert abs(new - true) < BOUND, (level, coefficient, true, new)


def test_rank_ceilings_are_their_own():
    # the Kendall ceiling is the expected tau of a perfect metric, about (2/pi) asin of the Pearson one, never
    # the Pearson value itself
    g = np.random.default_rng(0)
    ratings = g.normal(size=(12, 60, 1)) + 0.7 * g.normal(size=(12, 60, 4))
    for level in ("system", "summary"):
        p = noise_ceiling(ratings, level=level, n_resamples=0, rng=0)
        k = noise_ceiling(ratings, level=level, coefficient="kendall", n_resamples=0, rng=0)
        assert k.ceiling < p.ceiling - 0.1
        assert k.ceiling == pytest.approx(2 / np.pi * np.arcsin(np.sqrt(k.reliability.reliability)), abs=1e-9)


@pytest.mark.slow
def test_docstring_table_is_the_scripts_and_within_0_030():
    # the table of benchmarks/notes/bench_ceiling.md (noise_ceiling's docstring points to it) is what `python
    # benchmarks/bench_ceiling.py --simulations 200 --docstring` prints (seed 0; 3.3 CPU minutes, 16 min wall on
    # the shared 2 cores), and every |bias| in it is at most 0.030
    lines = bench_ceiling.table(200, 0)
    doc = (Path(__file__).parents[1] / "benchmarks" / "notes" / "bench_ceiling.md").read_text(encoding="utf-8")
    assert all(line in doc for line in lines)
    biases = [float(v) for line in lines[3:-1] for i, v in enumerate(line.split()[5:]) if i % 4 == 2]
    assert len(biases) == 3 * 3 * len(bench_ceiling.DESIGNS) and max(map(abs, biases)) <= 0.030


# ----------------------------------------------------------------------------------------------------
# Minimum sizes


def test_three_systems_cannot_be_tested():
    g = np.random.default_rng(0)
    ratings = g.normal(size=(3, 100, 1)) + g.normal(size=(3, 100, 3))
    with pytest.raises(ValueError, match=r"cannot be tested: 3 systems \(at least 5 needed\)"):
        noise_ceiling(ratings, level="system", n_resamples=0)
    with pytest.raises(ValueError, match=r"cannot be tested: 8 systems.*4 inputs|cannot be tested: 4 inputs"):
        split_half_reliability(g.normal(size=(8, 4, 3)), level="summary", n_resamples=0)
    assert MIN_SIZES.shortfall(3, 2) == "3 systems (at least 5 needed) and 2 inputs (at least 5 needed)"
    assert MIN_SIZES.shortfall(5, 5) is None


def test_systems_and_inputs_both_required():
    # the former check accepted 3 systems *or* 3 inputs; now a design needs 5 of each
    g = np.random.default_rng(1)
    with pytest.raises(ValueError, match="2 systems"):
        split_half_reliability(g.normal(size=(2, 200, 3)), level="global", n_resamples=0)
    with pytest.raises(ValueError, match="3 inputs"):
        split_half_reliability(g.normal(size=(40, 3, 3)), level="global", n_resamples=0)
