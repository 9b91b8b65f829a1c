"""PPI and PPI++ (metaeval.stats.ppi): ppi_py's values, coverage by simulation, invariants, bad inputs.

Golden values: ``ppi_py`` 0.2.3 (PyPI ``ppi-python``; MIT) in a throwaway venv, since it pulls in numba,
statsmodels, scikit-learn and gdown, which metaeval does not need::

    python3 -m venv /tmp/ppi-golden-venv && /tmp/ppi-golden-venv/bin/pip install ppi-python==0.2.3
    .venv/bin/python -c "import tests.test_ppi as t; print(t.GOLDEN_INPUTS + t.GOLDEN_PRINT)" \
        | /tmp/ppi-golden-venv/bin/python -

(numpy 2.4.6, scipy 1.17.1, statsmodels 0.15.0, numba 0.68.1) printed ``GOLDEN`` below. The inputs use no random
generator, so they are the same on every numpy. ``ppi_py``'s ``ppi_mean_ci`` ignores ``alternative`` when it
tunes ``lam`` (its recursive call drops the argument): its one-sided intervals are compared at fixed ``lam`` only.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from metaeval.stats.ppi import (
    ppi_difference,
    ppi_mean,
    ppi_ranking,
    ppi_system_means,
)

GOLDEN_INPUTS = 'import numpy as np\ni = np.arange(400, dtype=float)\n# human ratings 1..5 and a judge that follows them with a deterministic error (no random generator involved)\nhuman = 1.0 + (np.floor(3 * i / 7) + np.floor(i / 3)) % 5\njudge = human + 0.8 * np.sin(1.7 * i) + 0.3\nweak = 0.1 * human + 0.05 * np.cos(0.9 * i)         # a compressed, noisy judge: the tuned lam exceeds 1 unclipped\ncontrary = 6.0 - human + np.sin(2.3 * i)      # a judge that disagrees: the tuned lam is negative unclipped\nn = 60\nCASES = {\n    "good": (human[:n], judge[:n], judge[n:]),\n    "weak": (human[:n], weak[:n], weak[n:]),\n    "contrary": (human[:n], contrary[:n], contrary[n:]),\n    "small": (human[:12], judge[:12], judge[12:40]),\n}\nother = 1.0 + (np.floor(5 * i / 11) + np.floor(i / 2)) % 5\nother_judge = other + 0.6 * np.cos(1.1 * i)\nY2 = np.stack([human, other])\nH2 = np.stack([judge, other_judge])\nDIFF = (Y2[0, :n] - Y2[1, :n], H2[0, :n] - H2[1, :n], H2[0, n:] - H2[1, n:])\nthird = 1.0 + (np.floor(2 * i / 5) + i) % 5\nY3 = np.stack([human, other, third])\nH3 = np.stack([judge, other_judge, third + 0.9 * np.sin(0.4 * i)])\n'

GOLDEN_PRINT = 'from ppi_py import ppi_mean_ci, ppi_mean_pointestimate, ppi_mean_pval\nfrom ppi_py.ppi import _calc_lam_glm\nout = {}\nfor name, (Y, Yh, Yu) in CASES.items():\n    for lam in (None, 1.0, 0.0, 0.5):\n        est = float(np.ravel(ppi_mean_pointestimate(Y, Yh, Yu, lam=lam))[0])\n        for alt in ("two-sided", "larger", "smaller"):\n            lo, hi = ppi_mean_ci(Y, Yh, Yu, alpha=0.05, lam=lam, alternative=alt)\n            out[(name, lam, alt)] = (est, float(np.ravel(lo)[0]), float(np.ravel(hi)[0]))\n    lam_t = _calc_lam_glm(Y - 0.0, Yh - 0.0, Yu - 0.0, np.eye(1), clip=True)\n    out[(name, "lam")] = (float(lam_t),)\n    out[(name, "pval", 1.0)] = (float(np.ravel(ppi_mean_pval(Y, Yh, Yu, null=3.0, lam=1.0))[0]),)\nlo, hi = ppi_mean_ci(*DIFF, alpha=0.1)\nout[("diff", None, "two-sided")] = (float(np.ravel(ppi_mean_pointestimate(*DIFF))[0]), float(np.ravel(lo)[0]), float(np.ravel(hi)[0]))\nlo, hi = ppi_mean_ci(Y3[:, :n].T, H3[:, :n].T, H3[:, n:].T, alpha=0.05, lam_optim_mode="element")\nest = ppi_mean_pointestimate(Y3[:, :n].T, H3[:, :n].T, H3[:, n:].T, lam_optim_mode="element")\nout[("systems", None, "two-sided")] = (np.ravel(est).tolist(), np.ravel(lo).tolist(), np.ravel(hi).tolist())\nfor k, v in out.items():\n    print(repr(k), ":", repr(v), ",")\n'

inf = np.inf
GOLDEN = {
    ('good', None, 'two-sided') : (2.988382895069754, 2.810493658506238, 3.16627213163327) ,
    ('good', None, 'larger') : (2.988382895069754, 2.810493658506238, 3.16627213163327) ,
    ('good', None, 'smaller') : (2.988382895069754, 2.810493658506238, 3.16627213163327) ,
    ('good', 1.0, 'two-sided') : (2.995441860381431, 2.7811510039007055, 3.2097327168621566) ,
    ('good', 1.0, 'larger') : (2.995441860381431, 2.8156033045277757, inf) ,
    ('good', 1.0, 'smaller') : (2.995441860381431, -inf, 3.1752804162350863) ,
    ('good', 0.0, 'two-sided') : (2.966666666666667, 2.611922610422045, 3.3214107229112884) ,
    ('good', 0.0, 'larger') : (2.966666666666667, 2.6689560698618107, inf) ,
    ('good', 0.0, 'smaller') : (2.966666666666667, -inf, 3.2643772634715225) ,
    ('good', 0.5, 'two-sided') : (2.9810542635240487, 2.78073289733561, 3.1813756297124876) ,
    ('good', 0.5, 'larger') : (2.9810542635240487, 2.8129392734885297, inf) ,
    ('good', 0.5, 'smaller') : (2.9810542635240487, -inf, 3.1491692535595677) ,
    ('good', 'lam') : (0.754685741418493,) ,
    ('good', 'pval', 1.0) : (0.9667458121773813,) ,
    ('weak', None, 'two-sided') : (2.9693224465981913, 2.6450149891395625, 3.29362990405682) ,
    ('weak', None, 'larger') : (2.9693224465981913, 2.6450149891395625, 3.29362990405682) ,
    ('weak', None, 'smaller') : (2.9693224465981913, 2.6450149891395625, 3.29362990405682) ,
    ('weak', 1.0, 'two-sided') : (2.9693224465981913, 2.6450149891395625, 3.29362990405682) ,
    ('weak', 1.0, 'larger') : (2.9693224465981913, 2.697155048699082, inf) ,
    ('weak', 1.0, 'smaller') : (2.9693224465981913, -inf, 3.2414898444973) ,
    ('weak', 0.0, 'two-sided') : (2.966666666666667, 2.611922610422045, 3.3214107229112884) ,
    ('weak', 0.0, 'larger') : (2.966666666666667, 2.6689560698618107, inf) ,
    ('weak', 0.0, 'smaller') : (2.966666666666667, -inf, 3.2643772634715225) ,
    ('weak', 0.5, 'two-sided') : (2.9679945566324286, 2.6285908143890953, 3.307398298875762) ,
    ('weak', 0.5, 'larger') : (2.9679945566324286, 2.683157957167638, inf) ,
    ('weak', 0.5, 'smaller') : (2.9679945566324286, -inf, 3.2528311560972187) ,
    ('weak', 'lam') : (1.0,) ,
    ('weak', 'pval', 1.0) : (0.852914589714768,) ,
    ('contrary', None, 'two-sided') : (2.966666666666667, 2.611922610422045, 3.3214107229112884) ,
    ('contrary', None, 'larger') : (2.966666666666667, 2.611922610422045, 3.3214107229112884) ,
    ('contrary', None, 'smaller') : (2.966666666666667, 2.611922610422045, 3.3214107229112884) ,
    ('contrary', 1.0, 'two-sided') : (2.937416374353141, 2.1905938174851562, 3.684238931221126) ,
    ('contrary', 1.0, 'larger') : (2.937416374353141, 2.310663127332763, inf) ,
    ('contrary', 1.0, 'smaller') : (2.937416374353141, -inf, 3.5641696213735194) ,
    ('contrary', 0.0, 'two-sided') : (2.966666666666667, 2.611922610422045, 3.3214107229112884) ,
    ('contrary', 0.0, 'larger') : (2.966666666666667, 2.6689560698618107, inf) ,
    ('contrary', 0.0, 'smaller') : (2.966666666666667, -inf, 3.2643772634715225) ,
    ('contrary', 0.5, 'two-sided') : (2.952041520509904, 2.40801731807887, 3.496065722940938) ,
    ('contrary', 0.5, 'larger') : (2.952041520509904, 2.495482017592272, inf) ,
    ('contrary', 0.5, 'smaller') : (2.952041520509904, -inf, 3.4086010234275355) ,
    ('contrary', 'lam') : (0.0,) ,
    ('contrary', 'pval', 1.0) : (0.8695385075892716,) ,
    ('small', None, 'two-sided') : (2.682953628842153, 2.151902452975153, 3.2140048047091527) ,
    ('small', None, 'larger') : (2.682953628842153, 2.151902452975153, 3.2140048047091527) ,
    ('small', None, 'smaller') : (2.682953628842153, 2.151902452975153, 3.2140048047091527) ,
    ('small', 1.0, 'two-sided') : (3.0979103694638255, 2.449701886196805, 3.746118852730846) ,
    ('small', 1.0, 'larger') : (3.0979103694638255, 2.5539166618586933, inf) ,
    ('small', 1.0, 'smaller') : (3.0979103694638255, -inf, 3.6419040770689572) ,
    ('small', 0.0, 'two-sided') : (2.3333333333333335, 1.5908237516470658, 3.075842915019601) ,
    ('small', 0.0, 'larger') : (2.3333333333333335, 1.7101996491858231, inf) ,
    ('small', 0.0, 'smaller') : (2.3333333333333335, -inf, 2.956467017480844) ,
    ('small', 0.5, 'two-sided') : (2.7156218513985797, 2.191339546629342, 3.2399041561678175) ,
    ('small', 0.5, 'larger') : (2.7156218513985797, 2.2756302712734326, inf) ,
    ('small', 0.5, 'smaller') : (2.7156218513985797, -inf, 3.1556134315237268) ,
    ('small', 'lam') : (0.45727281750213206,) ,
    ('small', 'pval', 1.0) : (0.7671934567932339,) ,
    ('diff', None, 'two-sided') : (0.02502973487104085, -0.1778933464269324, 0.2279528161690141) ,
    ('systems', None, 'two-sided') : ([2.988382895069754, 2.967310879686897, 2.982751824853924], [2.810493658506238, 2.7939124663533064, 2.7883958939197626], [3.16627213163327, 3.1407092930204876, 3.177107755788086]) ,
}

ALTERNATIVE = {"two-sided": "two-sided", "larger": "greater", "smaller": "less"}


def _inputs() -> dict:
    namespace: dict = {}
    exec(GOLDEN_INPUTS, namespace)
    return namespace


G = _inputs()
TOL = 1e-10  # measured: 4.2e-15 at most


@pytest.mark.parametrize("key", [k for k in GOLDEN if k[0] in G["CASES"] and k[1] not in ("lam", "pval")
                                 and not (k[1] is None and k[2] != "two-sided")])
def test_ppi_mean_equals_ppi_py(key):
    name, lam, alternative = key
    res = ppi_mean(*G["CASES"][name], lam=lam, alternative=ALTERNATIVE[alternative])
    estimate, low, high = GOLDEN[key]
    assert_allclose(res.statistic, estimate, rtol=0, atol=TOL)
    assert_allclose(res.confidence_interval, (low, high), rtol=0, atol=TOL)


@pytest.mark.parametrize("name", sorted(G["CASES"]))
def test_tuned_lam_and_pvalue_equal_ppi_py(name):
    assert_allclose(ppi_mean(*G["CASES"][name]).lam, GOLDEN[(name, "lam")][0], rtol=0, atol=TOL)
    res = ppi_mean(*G["CASES"][name], lam=1.0, null=3.0)
    assert_allclose(res.pvalue, GOLDEN[(name, "pval", 1.0)][0], rtol=0, atol=TOL)


def test_difference_equals_ppi_py_on_the_differences():
    estimate, low, high = GOLDEN[("diff", None, "two-sided")]
    n = G["n"]
    res = ppi_difference(G["Y2"][:, :n], G["H2"][:, :n], G["H2"][:, n:], confidence_level=0.9)
    assert_allclose((res.statistic, *res.confidence_interval), (estimate, low, high), rtol=0, atol=TOL)


def test_system_means_equal_ppi_py_element_mode():
    estimate, low, high = GOLDEN[("systems", None, "two-sided")]
    n = G["n"]
    res = ppi_system_means(G["Y3"][:, :n], G["H3"][:, :n], G["H3"][:, n:], rng=0)
    assert_allclose(res.statistic, estimate, rtol=0, atol=TOL)
    assert_allclose(res.confidence_interval.low, low, rtol=0, atol=TOL)
    assert_allclose(res.confidence_interval.high, high, rtol=0, atol=TOL)


# ----------------------------------------------------------------------------------------------------
# Invariants


def test_lam_zero_is_the_classical_mean_and_interval():
    Y, Yh, Yu = G["CASES"]["good"]
    res = ppi_mean(Y, Yh, Yu, lam=0.0)
    assert_allclose(res.statistic, Y.mean(), rtol=0, atol=1e-14)
    assert_allclose(res.standard_error, Y.std() / np.sqrt(Y.size), rtol=1e-13)
    assert_allclose(res.standard_error, res.classical_standard_error, rtol=1e-13)


def test_pvalue_agrees_with_the_interval():
    Y, Yh, Yu = G["CASES"]["good"]
    for null in np.linspace(2.5, 3.5, 41):
        for alternative in ("two-sided", "greater", "less"):
            res = ppi_mean(Y, Yh, Yu, null=null, alternative=alternative, confidence_level=0.9)
            low, high = res.confidence_interval
            assert (res.pvalue < 0.1) == (not low <= null <= high), (null, alternative)


def test_difference_is_the_mean_of_differences_and_ranking_uses_it():
    n = G["n"]
    Y, H = G["Y3"], G["H3"]
    d = ppi_difference(Y[[0, 2], :n], H[[0, 2], :n], H[[0, 2], n:])
    m = ppi_mean(Y[0, :n] - Y[2, :n], H[0, :n] - H[2, :n], H[0, n:] - H[2, n:])
    assert_allclose((d.statistic, d.standard_error, d.lam), (m.statistic, m.standard_error, m.lam), rtol=1e-13)
    r = ppi_ranking(Y[:, :n], H[:, :n], H[:, n:], rng=0)
    assert_allclose(r.difference[0, 2], d.statistic, rtol=1e-13)
    assert_allclose(r.difference, -r.difference.T, rtol=0, atol=0)
    half = (r.difference_interval.high[0, 2] - r.difference_interval.low[0, 2]) / 2
    assert_allclose(half, r.critical_value * d.standard_error, rtol=1e-12)


def test_system_covariance_diagonal_and_difference_variance():
    """Var(a - b) = Var(a) + Var(b) - 2 Cov(a, b) at a common fixed lam, from the systems' covariance matrix."""
    n = G["n"]
    Y, H = G["Y2"], G["H2"]
    s = ppi_system_means(Y[:, :n], H[:, :n], H[:, n:], lam=0.7, rng=0)
    d = ppi_difference(Y[:, :n], H[:, :n], H[:, n:], lam=0.7)
    C = s.covariance
    assert_allclose(d.standard_error**2, C[0, 0] + C[1, 1] - 2 * C[0, 1], rtol=1e-12)
    assert_allclose(d.statistic, s.statistic[0] - s.statistic[1], rtol=1e-12)
    assert C[0, 1] > 0  # the two systems share their inputs


def test_simultaneous_intervals_are_wider_and_bonferroni_widest():
    n = G["n"]
    Y, H = G["Y3"], G["H3"]
    mt = ppi_system_means(Y[:, :n], H[:, :n], H[:, n:], rng=0)
    bf = ppi_system_means(Y[:, :n], H[:, :n], H[:, n:], simultaneous="bonferroni")
    assert stats.norm.ppf(0.975) < mt.critical_value <= bf.critical_value + 0.01
    assert_allclose(bf.critical_value, stats.norm.ppf(1 - 0.05 / 6), rtol=1e-14)


def test_a_constant_judge_gets_lam_zero():
    Y, _, _ = G["CASES"]["good"]
    res = ppi_mean(Y, np.full(Y.size, 2.0), np.full(100, 2.0))
    assert res.lam == 0.0
    assert_allclose(res.statistic, Y.mean(), rtol=1e-14)


# ----------------------------------------------------------------------------------------------------
# Coverage by simulation (ppi_py's tests/test_mean.py, ported: seeded, fewer and smaller samples, binomial bounds)

LEVELS = np.array([0.5, 0.8, 0.9, 0.95, 0.99])


def _bound(level, trials):
    return 3 * np.sqrt(level * (1 - level) / trials)  # 3 binomial standard errors


@pytest.mark.parametrize("lam", [None, 1.0])
def test_mean_interval_coverage(lam):
    """ppi_py's test_ppi_mean_ci: Y ~ N(0, 1), a judge ~ N(-2, 1) unrelated to Y (the hardest case for PPI: the
    rectifier carries all the information), plus a judge correlated with Y."""
    rng = np.random.default_rng(20240611)
    trials, n, N = 1000, 200, 2000
    covered = np.zeros((2, LEVELS.size))
    for _ in range(trials):
        Y = rng.normal(0, 1, n)
        for j, (Yh, Yu) in enumerate([(rng.normal(-2, 1, n), rng.normal(-2, 1, N)),
                                      (Y + rng.normal(0.5, 0.5, n), rng.normal(0.5, np.sqrt(1.25), N))]):
            # one call per sample: the interval at 95 % as returned, the other levels from its estimate and SE
            # (the golden tests check the interval's construction at every alternative and level)
            res = ppi_mean(Y, Yh, Yu, lam=lam)
            z = stats.norm.ppf(0.5 + LEVELS / 2)
            assert_allclose(res.confidence_interval[1] - res.statistic, z[3] * res.standard_error, rtol=1e-12)
            covered[j] += np.abs(res.statistic) <= z * res.standard_error
    coverage = covered / trials
    assert np.all(np.abs(coverage - LEVELS) <= _bound(LEVELS, trials)), coverage


def test_mean_pvalue_calibration():
    """ppi_py's test_ppi_mean_pval: the rejection rate under the null is at most alpha (within 3 SE)."""
    rng = np.random.default_rng(7)
    trials, n, N = 2000, 200, 2000
    p = np.array([ppi_mean(Y := rng.normal(0, 1, n), Y + rng.normal(0, 1, n), rng.normal(0, np.sqrt(2), N)).pvalue
                  for _ in range(trials)])
    alphas = 1 - LEVELS
    rate = (p[:, None] < alphas).mean(axis=0)
    assert np.all(np.abs(rate - alphas) <= _bound(alphas, trials)), rate


@pytest.mark.parametrize("simultaneous", ["max-t", "bonferroni"])
def test_ranking_simultaneous_coverage(simultaneous):
    """All K(K-1)/2 pairwise intervals hold at once in >= 95 % of samples (max-t: about 95 %; Bonferroni: more),
    and so do the rank intervals."""
    rng = np.random.default_rng(11)
    trials, K, n, N = 400, 4, 150, 1500
    means = np.array([0.0, 0.1, 0.1, 0.5])
    true_diff = means[:, None] - means[None, :]
    all_hold = ranks_hold = 0
    for _ in range(trials):
        item = rng.normal(0, 1, n + N)
        human = means[:, None] + item + rng.normal(0, 1, (K, n + N))
        judge = human + rng.normal(0, 0.8, (K, n + N))
        r = ppi_ranking(human[:, :n], judge[:, :n], judge[:, n:], simultaneous=simultaneous, n_simulations=2000,
                        rng=rng)
        low, high = r.difference_interval
        off = ~np.eye(K, dtype=bool)
        all_hold += bool(np.all((low <= true_diff)[off] & (true_diff <= high)[off]))
        # true ranks 1 (system 3), 2-3 (systems 1, 2, tied), 4 (system 0): any order of the tie is a true ranking
        ranks_hold += bool(r.rank_interval[3, 0] == 1 and r.rank_interval[0, 1] == 4
                           and np.all(r.rank_interval[1:3, 0] <= 3) and np.all(r.rank_interval[1:3, 1] >= 2)
                           or np.all((r.rank_interval[:, 0] <= [4, 3, 3, 1]) & (r.rank_interval[:, 1] >= [4, 2, 2, 1])))
    coverage = all_hold / trials
    assert coverage >= 0.95 - _bound(0.95, trials), coverage
    if simultaneous == "max-t":
        assert coverage <= 0.95 + _bound(0.95, trials), coverage
    assert ranks_hold / trials >= 0.95 - _bound(0.95, trials)


# ----------------------------------------------------------------------------------------------------
# Bad inputs


@pytest.mark.parametrize("call, message", [
    (lambda Y: ppi_mean(Y, Y[:-1], Y), "same shape"),
    (lambda Y: ppi_mean(np.where(Y > 4, np.nan, Y), Y, Y), "NaN"),
    (lambda Y: ppi_mean(Y[:1], Y[:1], Y), "at least 2 labelled"),
    (lambda Y: ppi_mean(Y, Y, Y[:1]), "at least 2 unlabelled"),
    (lambda Y: ppi_mean(Y, Y, Y, alternative="larger"), "alternative"),
    (lambda Y: ppi_mean(Y, Y, Y, lam=np.nan), "lam"),
    (lambda Y: ppi_mean(Y, Y, Y, confidence_level=95), "confidence_level"),
    (lambda Y: ppi_mean(np.stack([Y, Y]), np.stack([Y, Y]), np.stack([Y, Y])), "a vector"),
    (lambda Y: ppi_difference(np.stack([Y, Y, Y]), np.stack([Y, Y, Y]), np.stack([Y, Y, Y])), "2 rows"),
    (lambda Y: ppi_system_means(np.stack([Y, Y]), np.stack([Y, Y]), Y[None]), "one row per system"),
    (lambda Y: ppi_system_means(np.stack([Y, Y]), np.stack([Y, Y]), np.stack([Y, Y]), simultaneous="tukey"),
     "simultaneous"),
    (lambda Y: ppi_ranking(Y[None], Y[None], Y[None]), "at least 2 rows"),
])
def test_bad_inputs(call, message):
    with pytest.raises(ValueError, match=message):
        call(G["human"][:50])
