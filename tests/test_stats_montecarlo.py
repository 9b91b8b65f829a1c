"""Resampled quantities against the Monte-Carlo reference values of the authors' code.

Tolerance (fixtures README): CI endpoints |mean_ours - mean_ref| <= 3 sqrt(sd_ours^2/n_ours + sd_ref^2/n_ref)
over n_ours seeds of B = 1000; permutation p-values within 3 binomial SE of the pooled value + 1/(P+1),
floor 3/P.
"""

import numpy as np
import pytest

import metaeval
from conftest import load_json

MC = load_json("stats", "montecarlo.json")
METHOD = {"bootstrap-both": "both", "bootstrap-system": "systems", "bootstrap-input": "inputs"}
BOOT_CASES = [(level, key) for level in ("system", "summary") for key in MC["boot_ci"][level]]
N_SEEDS = 8


@pytest.mark.parametrize("level,key", BOOT_CASES)
def test_bootstrap_ci_endpoints(level, key, metric, Z):
    spec = MC["boot_ci"][level][key]
    X = metric(spec["metric"])
    lows, highs = [], []
    for seed in range(N_SEEDS):
        res = metaeval.bootstrap_ci(
            X, Z, level=level, coefficient=spec["coefficient"], resample=METHOD[spec["method"]],
            n_resamples=spec["B"], rng=1000 + seed,
        )
        assert res.statistic == pytest.approx(spec["point"], abs=1e-10)
        lows.append(res.confidence_interval.low)
        highs.append(res.confidence_interval.high)
    n_ref = len(spec["seeds"])
    for ours, mean_ref, sd_ref in [(lows, spec["lower_mean"], spec["lower_sd"]),
                                   (highs, spec["upper_mean"], spec["upper_sd"])]:
        tol = 3 * np.sqrt(np.var(ours, ddof=1) / N_SEEDS + sd_ref**2 / n_ref)
        assert abs(np.mean(ours) - mean_ref) <= tol, (np.mean(ours), mean_ref, tol)


PERM_CASES = [(level, key) for level in ("system", "summary") for key in MC["perm_both"][level]]


@pytest.mark.parametrize("level,key", PERM_CASES)
def test_perm_both_pvalues(level, key, metric, Z):
    spec = MC["perm_both"][level][key]
    P = 10_000 if level == "system" else 2_000
    res = metaeval.permutation_test(metric(spec["X"]), metric(spec["Y"]), Z, level=level, n_resamples=P, rng=7)
    assert res.statistic == pytest.approx(spec["r_XZ"] - spec["r_YZ"], abs=1e-10)
    p_ref = spec["p_pooled"]
    pooled = (p_ref * spec["P_total"] + res.pvalue * P) / (P + spec["P_total"])
    tol = max(3 * np.sqrt(pooled * (1 - pooled) * (1 / P + 1 / spec["P_total"])) + 1 / (P + 1), 3 / P)
    assert abs(res.pvalue - p_ref) <= tol


def test_paper_rouge2_kendall_ci(metric, Z):
    """Deutsch et al. (2021): ROUGE-2 system-level Kendall Boot-Both CI on SummEval is [-.09, .84].

    One CI's lower end varies by sd ~0.025 between seeds (B = 1000), so compare the mean of 10 CIs, whose
    MC error is ~0.01, allowing the paper's two-digit rounding and its own single-run MC error (~0.025).
    """
    X = metric("ROUGE-2")
    cis = [metaeval.bootstrap_ci(X, Z, level="system", coefficient="kendall", n_resamples=1000,
                                 rng=s).confidence_interval for s in range(10)]
    low, high = np.mean(cis, axis=0)
    assert low == pytest.approx(-0.09, abs=0.06)
    assert high == pytest.approx(0.84, abs=0.035)
