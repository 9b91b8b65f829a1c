"""The label planner (metaeval.stats.label_budget) against ppi_py's power analysis, the PPI++ variance it
inverts, and the alt-test's power (metaeval.stats.alt_test.alt_test_power, fit_rating_model)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import stats

from metaeval.stats.alt_test import RatingModel, alt_test_power, fit_rating_model, simulate_ratings
from metaeval.stats.label_budget import (
    cost_optimal_labels,
    labels_for_width,
    ppi_correlation_coefficient,
)

# ppi_py at aangelopoulos/ppi_py@bd90caa (the fetch tool's snapshot), its power module run alone (its package
# __init__ imports statsmodels, which this environment lacks; ppi_mean_power needs neither it nor sklearn):
#   git --git-dir=<mirror> archive HEAD ppi_py | tar -x -C /tmp/ppi_src && mkdir -p /tmp/ppipa/p
#   cp -r /tmp/ppi_src/ppi_py/utils /tmp/ppipa/p/ && touch /tmp/ppipa/p/__init__.py
#   sed -e '/from .ppi import/d' -e '/from sklearn/d' /tmp/ppi_src/ppi_py/ppi_power_analysis.py \
#       > /tmp/ppipa/p/ppi_power_analysis.py
#   cd /tmp/ppipa && python -c "import numpy as np; from p.ppi_power_analysis import ppi_mean_power;
#     rng = np.random.default_rng(0); Y = rng.normal(0, 1, 200); Yhat = 0.8 * Y + rng.normal(0, 0.6, 200);
#     print(ppi_mean_power(Y, Yhat, cost_Y=10.0, cost_Yhat=0.1, effective_n=500));
#     print(ppi_mean_power(Y, Yhat, cost_Y=10.0, cost_Yhat=0.1, budget=3000.0));
#     print(ppi_mean_power(Y, Yhat, cost_Y=1.0, cost_Yhat=0.9, effective_n=500))"
PPI_PY = [
    ({"effective_n": 500, "cost_label": 10.0, "cost_judge": 0.1},
     {"n": 232, "N": 2524, "cost": 2595.6, "effective_n": 500}),
    ({"budget": 3000.0, "cost_label": 10.0, "cost_judge": 0.1},
     {"n": 268, "N": 2916, "cost": 2998.4, "effective_n": 577}),
    ({"effective_n": 500, "cost_label": 1.0, "cost_judge": 0.9}, {"n": 500, "N": 0, "cost": 500.0, "effective_n": 500}),
]
PPI_CORR = 0.7649280154425537  # ppi_py's ppi_corr on that Y, Yhat


def _pilot():
    rng = np.random.default_rng(0)
    Y = rng.normal(0, 1, 200)
    return Y, 0.8 * Y + rng.normal(0, 0.6, 200)


@pytest.mark.parametrize(("options", "expected"), PPI_PY)
def test_cost_optimal_pair_is_ppi_py(options, expected):
    rho = ppi_correlation_coefficient(*_pilot())
    assert_allclose(rho, PPI_CORR, rtol=1e-12)
    plan = cost_optimal_labels(rho, **options)
    assert (plan.n, plan.N, plan.effective_n) == (expected["n"], expected["N"], expected["effective_n"])
    assert_allclose(plan.cost, expected["cost"], rtol=1e-12)
    assert plan.uses_ppi == (expected["N"] > 0)


def test_width_inverts_the_ppi_variance():
    # the n it returns gives exactly the asked width under PPI++'s variance at the optimal lam
    z = stats.norm.ppf(0.975)
    for N in (None, 500, 5000):
        plan = labels_for_width(0.3, sd=1.2, rho=0.7, n_unlabelled=N)
        n = plan["ppi"]
        var = 1.2**2 / n * (1 - 0.49 * (1.0 if N is None else N / (n + N)))
        assert_allclose(2 * z * np.sqrt(var), 0.3, rtol=1e-12)
        assert_allclose(2 * z * 1.2 / np.sqrt(plan["humans_only"]), 0.3, rtol=1e-12)
        assert plan["ppi"] < plan["humans_only"]
    # a useless judge buys nothing
    zero = labels_for_width(0.3, sd=1.2, rho=0.0, n_unlabelled=1000)
    assert_allclose(zero["ppi"], zero["humans_only"], rtol=1e-12)


def test_fit_rating_model_recovers_the_simulation():
    f, h = simulate_ratings(1, 20000, 3, lost=0.0, levels=None, noise=0.7, judge_noise=0.4, rng=1)
    model = fit_rating_model(h[0], f[0])
    assert_allclose([model.spread, model.noise, model.judge_noise], [1.0, 0.7, 0.4], atol=0.02)


def test_alt_test_power_grows_with_items_and_is_small_for_a_bad_judge():
    good = RatingModel(mean=3.0, spread=1.0, noise=1.0, judge_noise=0.8, levels=(1, 2, 3, 4, 5))
    small = alt_test_power(good, 30, 3, epsilon=0.1, n_trials=300, rng=0)["power"]
    large = alt_test_power(good, 300, 3, epsilon=0.1, n_trials=300, rng=0)["power"]
    assert small < large and large > 0.9
    bad = RatingModel(mean=3.0, spread=1.0, noise=1.0, judge_noise=3.0, levels=(1, 2, 3, 4, 5))
    assert alt_test_power(bad, 300, 3, epsilon=0.1, n_trials=300, rng=0)["power"] < 0.05


def test_notebook_80_tables_are_the_direct_calls():
    import metaeval
    from metaeval.stats.ppi import ppi_system_means
    from metaeval.studies import few_labels

    ds = metaeval.datasets.load("hanna")
    human, judge = "human.relevance", few_labels.default_judge(ds, "human.relevance")
    assert judge == "ChatGPT RE 1"
    lab = few_labels.labelled_mask(ds.shape[1], 0.25, 0)
    assert lab.sum() == 24
    Z, J = ds.matrix(human), ds.matrix(judge)
    table = few_labels.ppi_interval_table(ds, human, judge, lab, rng=0)
    direct = ppi_system_means(Z[:, lab], J[:, lab], J[:, ~lab], rng=0)
    assert_allclose(table.ppi, direct.statistic, rtol=1e-13)
    assert_allclose(table.truth, Z.mean(axis=1), rtol=1e-13)
    budget = few_labels.label_budget_table(ds, human, judge, lab, [0.2], n_unlabelled=5000)
    # the hardest system mean: the largest humans-only n over the systems, by labels_for_width
    expected = max(labels_for_width(0.2, sd=float(np.std(Z[k, lab], ddof=1)),
                                    rho=float(np.corrcoef(Z[k, lab], J[k, lab])[0, 1]), n_unlabelled=5000)["humans_only"]
                   for k in range(ds.shape[0]))
    assert budget[budget.target == "system mean"].humans_only.iloc[0] == int(np.ceil(expected))
