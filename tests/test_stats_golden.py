"""Deterministic statistics against the golden values of the authors' code and nlpstats (tolerance 1e-10)."""

import numpy as np
import pytest
from scipy import stats

import metaeval
from conftest import load_json

DET = load_json("stats", "deterministic.json")
LEVELS = ["system", "summary", "global"]
COEFS = ["pearson", "spearman", "kendall"]


@pytest.mark.parametrize("name", list(DET["metrics"]))
def test_correlations_match_reference(name, metric, Z):
    X = metric(name)
    golden = DET["metrics"][name]["correlation"]
    for level in LEVELS:
        for coef in COEFS:
            ours = metaeval.correlate(X, Z, level=level, coefficient=coef)
            assert ours == pytest.approx(golden[level][coef], abs=1e-10), (level, coef)


@pytest.mark.parametrize("name", list(DET["metrics"]))
def test_fisher_ci_match_reference(name, metric, Z):
    X = metric(name)
    golden = DET["metrics"][name]["fisher95"]
    for level in ["system", "summary"]:
        for coef in COEFS:
            res = metaeval.fisher_ci(X, Z, level=level, coefficient=coef)
            assert res.n == golden[level]["n"]
            assert res.confidence_interval == pytest.approx(golden[level][coef], abs=1e-10), (level, coef)


@pytest.mark.parametrize("pair", list(DET["williams"]))
def test_williams_match_reference(pair, metric, Z):
    spec = DET["williams"][pair]
    X, Y = metric(spec["X"]), metric(spec["Y"])
    for level in ["system", "summary"]:
        for coef in COEFS:
            g = spec[level][coef]
            greater = metaeval.williams_test(X, Y, Z, level=level, coefficient=coef, alternative="greater")
            two = metaeval.williams_test(X, Y, Z, level=level, coefficient=coef, alternative="two-sided")
            assert greater.r_xz == pytest.approx(g["r_XZ"], abs=1e-10)
            assert greater.r_xy == pytest.approx(g["r_XY"], abs=1e-10)
            assert greater.pvalue == pytest.approx(g["p_greater"], abs=1e-10)
            assert two.pvalue == pytest.approx(g["p_two_sided"], abs=1e-10)


def test_correlation_independent_of_scipy_loop(metric, Z):
    """The vectorized summary level equals a plain loop over inputs with scipy."""
    X = metric("QAEval")
    for coef, fn in [("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)]:
        loop = np.mean([fn(X[:, j], Z[:, j])[0] for j in range(X.shape[1])])
        assert metaeval.correlate(X, Z, level="summary", coefficient=coef) == pytest.approx(loop, abs=1e-12)


def test_williams_by_hand():
    """Williams' formula worked by hand for r12=.8, r13=.6, r23=.5, n=20."""
    from metaeval.significance import williams_pvalue

    r12, r13, r23, n = 0.8, 0.6, 0.5, 20
    det = 1 - 0.64 - 0.36 - 0.25 + 2 * 0.8 * 0.6 * 0.5  # 0.23
    t = 0.2 * np.sqrt(19 * 1.5 / (2 * 19 / 17 * det + 0.49 * 0.125))
    t_ours, p_ours = williams_pvalue(r12, r13, r23, n, "greater")
    assert float(t_ours) == pytest.approx(t, rel=1e-12)
    assert float(p_ours) == pytest.approx(stats.t.sf(t, 17), rel=1e-12)
    assert float(t_ours) == pytest.approx(1.40760, abs=1e-5)  # 0.2 * sqrt(28.5 / 0.575368)
