"""Learned metric combinations: grouped, nested cross-validation without leakage, deterministic."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from metaeval.combination import cross_validate, grouped_folds

TINY_GRID = ({"depth": 1, "width": 16, "alpha": 1e-2, "max_iter": 80}, {"depth": 2, "width": 16, "alpha": 1e-1, "max_iter": 80})


def grouped_data(n_groups=60, per_group=8, p=6, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), per_group)
    X = rng.normal(size=(n_groups * per_group, p))
    return rng, groups, X


def test_groups_never_straddle_folds():
    rng, groups, X = grouped_data(n_groups=37, per_group=5)
    y = X[:, 0] + rng.normal(size=len(X))
    for model in ("ridge", "best-single"):
        res = cross_validate(X, y, groups, model=model, folds=10, rng=1)
        folds_per_group = pd.Series(res.fold).groupby(groups).nunique()
        assert (folds_per_group == 1).all()
        assert sorted(set(res.fold.tolist())) == list(range(10))
        assert res.predictions.shape == y.shape and len(res.params) == 10
    f = grouped_folds(np.repeat(list("abcdefgh"), 3), 4, np.random.default_rng(0))
    assert np.bincount(f).tolist() == [6, 6, 6, 6]


def test_group_memorisation_does_not_leak():
    """Targets and features share a group effect that carries no signal across groups: a model that
    saw a test group in training would predict it; out-of-fold predictions must not.

    Correlations are taken within each fold (one model), because pooled over folds the out-of-fold
    predictions carry each training fold's mean, which is anti-correlated with the held-out groups' mean
    (a known property of honest cross-validation, not a leak)."""
    rng = np.random.default_rng(5)
    n_groups, per = 80, 5
    groups = np.repeat(np.arange(n_groups), per)
    code = rng.normal(size=(n_groups, 120))[groups]  # a group fingerprint in the features
    X = code + 0.05 * rng.normal(size=code.shape)
    y = rng.normal(size=n_groups)[groups] + 0.1 * rng.normal(size=len(groups))
    res = cross_validate(X, y, groups, model="ridge", folds=8, rng=0)
    within = np.mean([np.corrcoef(res.predictions[res.fold == k], y[res.fold == k])[0, 1] for k in range(8)])
    assert abs(within) < 0.25
    # the same model with the groups ignored (each row its own group) does memorise: the check has teeth
    leaky = cross_validate(X, y, np.arange(len(y)), model="ridge", folds=8, rng=0)
    assert np.corrcoef(leaky.predictions, y)[0, 1] > 0.8


@pytest.mark.parametrize("model", ["ridge", "best-single", "mlp"])
def test_shuffled_targets_give_no_correlation(model):
    rng, groups, X = grouped_data(n_groups=60, per_group=8, p=6, seed=2)
    y = X @ rng.normal(size=6) + 0.5 * rng.normal(size=len(X))
    real = cross_validate(X, y, groups, model=model, folds=5, rng=0, grid=TINY_GRID if model == "mlp" else None)
    assert np.corrcoef(real.predictions, y)[0, 1] > 0.5
    shuffled = rng.permutation(y)
    null = cross_validate(X, shuffled, groups, model=model, folds=5, rng=0, grid=TINY_GRID if model == "mlp" else None)
    assert abs(np.corrcoef(null.predictions, shuffled)[0, 1]) < 0.15


def test_signal_is_recovered_and_hyperparameters_are_reported():
    rng, groups, X = grouped_data(n_groups=50, per_group=8, p=5, seed=3)
    frame = pd.DataFrame(X, columns=[f"m{k}" for k in range(5)])
    y = 2 * X[:, 3] + 0.3 * rng.normal(size=len(X))
    best = cross_validate(frame, y, groups, model="best-single", folds=5, rng=0)
    assert all(p["feature"] == "m3" for p in best.params)
    assert np.corrcoef(best.predictions, y)[0, 1] > 0.95
    # best-single maps the feature to the target's scale
    assert np.mean(np.abs(best.predictions - y)) < 0.5
    ridge = cross_validate(frame, y, groups, model="ridge", folds=5, rng=0)
    assert all(p["alpha"] in (0.1, 1.0, 10.0, 100.0, 1000.0) for p in ridge.params)
    # a non-linear target: the MLP finds it, a linear model cannot
    yq = X[:, 0] ** 2 + 0.1 * rng.normal(size=len(X))
    mlp = cross_validate(X, yq, groups, model="mlp", folds=4, rng=0, grid=TINY_GRID)
    lin = cross_validate(X, yq, groups, model="ridge", folds=4, rng=0)
    assert np.corrcoef(mlp.predictions, yq)[0, 1] > 0.6
    assert abs(np.corrcoef(lin.predictions, yq)[0, 1]) < 0.35
    assert all({"depth", "width", "alpha", "inner_mse"} <= set(p) for p in mlp.params)


def test_multi_output_targets():
    rng, groups, X = grouped_data(n_groups=40, per_group=6, p=4, seed=4)
    Y = pd.DataFrame({"a": X[:, 0] + 0.2 * rng.normal(size=len(X)), "b": -X[:, 1] + 0.2 * rng.normal(size=len(X))})
    one = ({"depth": 1, "width": 16, "alpha": 1e-2, "max_iter": 400},)  # a single configuration: no inner CV
    for model in ("ridge", "mlp", "best-single"):
        res = cross_validate(X, Y, groups, model=model, folds=4, rng=0, grid=one if model == "mlp" else None)
        assert res.predictions.shape == (len(X), 2) and res.target_names == ("a", "b")
        for k, col in enumerate("ab"):
            assert np.corrcoef(res.predictions[:, k], Y[col])[0, 1] > 0.8
    assert [p["feature"] for p in res.params[0]["per_target"]] == ["0", "1"]
    assert list(res.to_frame().columns) == ["a", "b", "fold"]


def test_deterministic_for_a_seed():
    rng, groups, X = grouped_data(n_groups=30, per_group=6, p=4, seed=6)
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=len(X))
    a = cross_validate(X, y, groups, model="mlp", folds=3, rng=11, grid=TINY_GRID)
    b = cross_validate(X, y, groups, model="mlp", folds=3, rng=np.random.default_rng(11), grid=TINY_GRID)
    np.testing.assert_array_equal(a.predictions, b.predictions)
    np.testing.assert_array_equal(a.fold, b.fold)
    assert a.params == b.params
    c = cross_validate(X, y, groups, model="mlp", folds=3, rng=12, grid=TINY_GRID)
    assert not np.array_equal(a.predictions, c.predictions)


def test_bad_input():
    _, groups, X = grouped_data(n_groups=10, per_group=3, p=3)
    y = X[:, 0]
    X_nan = pd.DataFrame(X, columns=["r1", "r2", "r3"])
    X_nan.iloc[4, 1] = np.nan
    with pytest.raises(ValueError, match="features has 1 NaN.*'r2'"):
        cross_validate(X_nan, y, groups, model="ridge")
    with pytest.raises(ValueError, match="needs at least that many groups"):
        cross_validate(X, y, groups, model="ridge", folds=11)
    with pytest.raises(ValueError, match="model must be one of"):
        cross_validate(X, y, groups, model="svm")
    with pytest.raises(ValueError, match="same rows"):
        cross_validate(X, y[:-1], groups, model="ridge")
    with pytest.raises(ValueError, match="lacks \\['depth'"):
        cross_validate(X, y, groups, model="mlp", folds=2, grid=[{"width": 4, "alpha": 1.0}])


def test_parallel_folds_give_the_same_result():
    rng, groups, X = grouped_data(n_groups=20, per_group=5, p=3, seed=7)
    y = X[:, 1] + 0.3 * rng.normal(size=len(X))
    serial = cross_validate(X, y, groups, model="ridge", folds=4, rng=3)
    parallel = cross_validate(X, y, groups, model="ridge", folds=4, rng=3, n_jobs=2)
    np.testing.assert_array_equal(serial.predictions, parallel.predictions)
    assert serial.params == parallel.params
