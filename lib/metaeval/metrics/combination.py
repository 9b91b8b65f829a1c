"""Learned combinations of metric scores, honestly cross-validated (Miloulis et al.).

:func:`cross_validate` turns per-summary features (e.g. the 96 ROUGE variants, BLEU, centroid and word
mover's metrics) into *out-of-fold* predictions of human scores, which can then be treated as one more
metric: correlated with the human scores and tested against other metrics.

Protocol
--------
* Outer K-fold cross-validation grouped by input (``groups``: all summaries of a document in one fold, so
  no reference text is seen in training and in testing); the assignment of groups to folds is
  scikit-learn's :class:`~sklearn.model_selection.GroupKFold` on group labels shuffled by ``rng``.
* Inside each training fold only: features are standardised (:class:`~sklearn.preprocessing.StandardScaler`
  fitted on the training rows), targets likewise, and the hyper-parameters are chosen by an inner grouped
  cross-validation (lowest mean squared error on the standardised targets; ties go to the first
  configuration of the grid). The chosen configuration is then refitted on the whole training fold.
* Models: ``"mlp"`` (:class:`~sklearn.neural_network.MLPRegressor`: Adam, learning rate 0.001 as the
  paper, ReLU, depth 1-5, width, L2 penalty ``alpha``, early stopping on a 10 % validation split of the
  training rows, which sklearn draws without regard to groups; dropout, which the paper also tuned, does
  not exist in scikit-learn), ``"ridge"`` (:class:`~sklearn.linear_model.Ridge` over a grid of ``alpha``)
  and ``"best-single"`` (the feature with the largest absolute Spearman correlation with the target on the
  training rows, mapped to the target's scale by a least-squares line fitted on them).
* Several target columns: ``"mlp"`` and ``"ridge"`` fit one multi-output model (M-ROUGE, multi-task);
  ``"best-single"`` chooses a feature per target. One column: S-ROUGE; the mean of the human scores:
  MEAN-ROUGE.
* Deterministic for a seed: every random choice (fold assignment, network initialisation, early-stopping
  split) derives from ``rng``; BLAS runs single-threaded inside the fits (faster on a loaded machine and
  free of thread-count-dependent rounding).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

__all__ = ["MLP_GRID", "MLP_GRID_SMALL", "RIDGE_GRID", "CrossValidationResult", "cross_validate", "grouped_folds"]

#: Default MLP search: depth 1-5, widths, L2 penalties; early stopping on (the paper trained with it).
MLP_GRID: tuple[dict[str, Any], ...] = (
    {"depth": 1, "width": 64, "alpha": 1e-3, "early_stopping": True},
    {"depth": 2, "width": 128, "alpha": 1e-2, "early_stopping": True},
    {"depth": 3, "width": 64, "alpha": 1e-1, "early_stopping": True},
    {"depth": 5, "width": 64, "alpha": 1e-2, "early_stopping": True},
)
#: A two-configuration search for quick runs (``grid="small"``).
MLP_GRID_SMALL: tuple[dict[str, Any], ...] = (
    {"depth": 1, "width": 64, "alpha": 1e-2, "early_stopping": True},
    {"depth": 3, "width": 64, "alpha": 1e-2, "early_stopping": True},
)
RIDGE_GRID: tuple[dict[str, Any], ...] = tuple({"alpha": a} for a in (0.1, 1.0, 10.0, 100.0, 1000.0))
MODELS = ("mlp", "ridge", "best-single")
#: Epoch limit of the MLPs (early stopping usually ends training well before).
MAX_ITER = 200


@dataclass(frozen=True)
class CrossValidationResult:
    """Result of :func:`cross_validate`.

    Attributes
    ----------
    predictions : numpy.ndarray
        Out-of-fold predictions, same rows as ``features`` and same shape as ``targets``.
    fold : numpy.ndarray (n,)
        The outer fold of each row (its prediction comes from a model that never saw its group).
    params : tuple of dict
        The hyper-parameters chosen for each outer fold (best-single: the chosen feature per target).
    model : str
    n_folds : int
    feature_names, target_names : tuple of str
    """

    predictions: np.ndarray
    fold: np.ndarray
    params: tuple[dict[str, Any], ...]
    model: str
    n_folds: int
    feature_names: tuple[str, ...]
    target_names: tuple[str, ...]

    def to_frame(self) -> pd.DataFrame:
        """Out-of-fold predictions, one column per target, plus the fold."""
        P = self.predictions.reshape(len(self.fold), -1)
        frame = pd.DataFrame(P, columns=list(self.target_names))
        frame["fold"] = self.fold
        return frame


def _as_matrix(values: Any, what: str) -> tuple[np.ndarray, tuple[str, ...]]:
    if isinstance(values, pd.DataFrame):
        names = tuple(str(c) for c in values.columns)
        arr = values.to_numpy(dtype=float)
    elif isinstance(values, pd.Series):
        names = (str(values.name),)
        arr = values.to_numpy(dtype=float)
    else:
        arr = np.asarray(values, dtype=float)
        names = tuple(str(k) for k in range(arr.shape[1])) if arr.ndim == 2 else ("0",)
    return arr, names


def _check_finite(arr: np.ndarray, names: Sequence[str], what: str) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        cols = np.flatnonzero(bad.reshape(arr.shape[0], -1).any(axis=0))
        listed = ", ".join(repr(names[c]) for c in cols[:5])
        raise ValueError(f"{what} has {int(bad.sum())} NaN or infinite values (columns {listed}); "
                         "impute or drop them first")


def grouped_folds(groups: Sequence | np.ndarray, folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold index per row: GroupKFold on group labels shuffled by ``rng`` (whole groups per fold).

    Examples
    --------
    >>> f = grouped_folds(["a", "a", "b", "b", "c", "c"], 3, np.random.default_rng(0))
    >>> f.tolist()[::2] == f.tolist()[1::2], sorted(f.tolist())
    (True, [0, 0, 1, 1, 2, 2])
    """
    from sklearn.model_selection import GroupKFold

    labels, inverse = np.unique(np.asarray(groups), return_inverse=True)
    if labels.size < folds:
        raise ValueError(f"folds={folds} needs at least that many groups, got {labels.size}")
    shuffled = rng.permutation(labels.size)[inverse]
    fold = np.empty(inverse.size, np.int64)
    for k, (_, test) in enumerate(GroupKFold(n_splits=folds).split(np.zeros(inverse.size), groups=shuffled)):
        fold[test] = k
    return fold


def _mlp(params: Mapping[str, Any], seed: int):
    from sklearn.neural_network import MLPRegressor

    return MLPRegressor(
        hidden_layer_sizes=(int(params["width"]),) * int(params["depth"]),
        alpha=float(params["alpha"]),
        early_stopping=bool(params.get("early_stopping", True)),
        learning_rate_init=1e-3,
        max_iter=int(params.get("max_iter", MAX_ITER)),
        random_state=seed,
    )


def _fit_predict(model: str, params: Mapping[str, Any], seed: int, Xtr, Ytr, Xte) -> np.ndarray:
    """Fit on standardised training rows (scalers fitted there only), predict on the original scale."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import Ridge
    from sklearn.preprocessing import StandardScaler

    sx = StandardScaler().fit(Xtr)
    mu, sd = Ytr.mean(axis=0), Ytr.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    Ys = (Ytr - mu) / sd
    y_fit = Ys[:, 0] if Ys.shape[1] == 1 else Ys
    est = Ridge(alpha=float(params["alpha"])) if model == "ridge" else _mlp(params, seed)
    with warnings.catch_warnings():
        # Reaching max_iter is part of the search (the inner CV judges the result), not a failure.
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.fit(sx.transform(Xtr), y_fit)
    pred = np.asarray(est.predict(sx.transform(Xte)), dtype=float).reshape(len(Xte), -1)
    return pred * sd + mu


def _spearman_columns(X: np.ndarray, y: np.ndarray) -> np.ndarray:
    from scipy.stats import rankdata

    rx = rankdata(X, axis=0)
    ry = rankdata(y)
    rx = rx - rx.mean(axis=0)
    ry = ry - ry.mean()
    den = np.sqrt((rx**2).sum(axis=0) * (ry**2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = (rx * ry[:, None]).sum(axis=0) / den
    return np.where(den > 0, r, 0.0)


def _best_single(Xtr, Ytr, Xte, names) -> tuple[np.ndarray, dict[str, Any]]:
    preds, chosen = [], []
    for t in range(Ytr.shape[1]):
        rho = _spearman_columns(Xtr, Ytr[:, t])
        j = int(np.argmax(np.abs(rho)))
        slope, intercept = np.polyfit(Xtr[:, j], Ytr[:, t], 1) if np.ptp(Xtr[:, j]) > 0 else (0.0, Ytr[:, t].mean())
        preds.append(intercept + slope * Xte[:, j])
        chosen.append({"feature": names[j], "spearman": float(rho[j])})
    params = chosen[0] if len(chosen) == 1 else {"per_target": tuple(chosen)}
    return np.column_stack(preds), params


def _one_fold(model, grid, inner_folds, seed, X, Y, groups, train, test, names):
    from threadpoolctl import threadpool_limits

    Xtr, Ytr, Xte = X[train], Y[train], X[test]
    if model == "best-single":
        return _best_single(Xtr, Ytr, Xte, names)
    rng = np.random.default_rng(seed)
    fit_seed = int(rng.integers(2**31 - 1))
    with threadpool_limits(limits=1):
        if len(grid) == 1:
            best, scores = 0, [np.nan]
        else:
            inner = grouped_folds(groups[train], inner_folds, rng)
            Ys = (Ytr - Ytr.mean(axis=0)) / np.where(Ytr.std(axis=0) > 0, Ytr.std(axis=0), 1.0)
            scores = []
            for params in grid:
                errors = []
                for k in range(inner_folds):
                    tr, te = inner != k, inner == k
                    pred = _fit_predict(model, params, fit_seed, Xtr[tr], Ys[tr], Xtr[te])
                    errors.append(np.mean((pred - Ys[te]) ** 2))
                scores.append(float(np.mean(errors)))
            best = int(np.argmin(scores))
        pred = _fit_predict(model, grid[best], fit_seed, Xtr, Ytr, Xte)
    chosen = dict(grid[best])
    chosen["inner_mse"] = scores[best]
    return pred, chosen


def cross_validate(
    features: Any,
    targets: Any,
    groups: Sequence,
    *,
    model: Literal["mlp", "ridge", "best-single"] = "mlp",
    folds: int = 10,
    rng: np.random.Generator | int | None = None,
    grid: Sequence[Mapping[str, Any]] | Literal["small"] | None = None,
    inner_folds: int = 3,
    n_jobs: int = 1,
    progress: bool = False,
) -> CrossValidationResult:
    """Out-of-fold predictions of human scores from per-summary features, grouped by input.

    Parameters
    ----------
    features : array (n, p) or DataFrame
        One row per summary (e.g. 105 metric values, or a centroid-difference vector for S-/M-CENT).
    targets : array (n,) or (n, t), Series or DataFrame
        One human score (S-), several (M-, one multi-output model), or their mean (MEAN-).
    groups : sequence (n,)
        The input (document) of each row; a group never straddles two folds.
    model : {"mlp", "ridge", "best-single"}
    folds : int
        Outer folds K (default 10).
    rng : int or Generator
        Seed of every random choice; the same seed gives the same result.
    grid : sequence of dict, optional
        Hyper-parameter configurations searched by the inner CV (default :data:`MLP_GRID` /
        :data:`RIDGE_GRID`; ``"small"``: :data:`MLP_GRID_SMALL`); MLP keys ``depth``, ``width``, ``alpha``,
        ``early_stopping`` (``max_iter``).
    inner_folds : int
        Folds of the inner grouped CV (default 3).
    n_jobs : int
        Outer folds run in parallel (joblib); the result does not depend on it.
    progress : bool
        A progress bar over the outer folds.

    Returns
    -------
    CrossValidationResult

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3)); y = X[:, 0] + 0.1 * rng.normal(size=200)
    >>> res = cross_validate(X, y, np.repeat(np.arange(20), 10), model="ridge", folds=5, rng=0)
    >>> round(float(np.corrcoef(res.predictions, y)[0, 1]), 3), res.params[0]["alpha"]
    (0.995, 0.1)
    """
    if model not in MODELS:
        raise ValueError(f"model must be one of {MODELS}, got {model!r}")
    X, feature_names = _as_matrix(features, "features")
    if X.ndim != 2:
        raise ValueError(f"features must be 2-D (n, p), got shape {X.shape}")
    Y, target_names = _as_matrix(targets, "targets")
    one_d = Y.ndim == 1
    if Y.ndim not in (1, 2):
        raise ValueError(f"targets must be 1-D or 2-D, got shape {Y.shape}")
    Y = Y.reshape(Y.shape[0], -1)
    g = np.asarray(groups)
    if not (X.shape[0] == Y.shape[0] == g.shape[0]):
        raise ValueError(
            f"features, targets and groups need the same rows, got {X.shape[0]}, {Y.shape[0]}, {g.shape[0]}"
        )
    _check_finite(X, feature_names, "features")
    _check_finite(Y, target_names, "targets")
    if not (isinstance(folds, (int, np.integer)) and folds >= 2):
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    if not (isinstance(inner_folds, (int, np.integer)) and inner_folds >= 2):
        raise ValueError(f"inner_folds must be an integer >= 2, got {inner_folds!r}")
    if grid is None:
        grid = MLP_GRID if model == "mlp" else RIDGE_GRID
    elif isinstance(grid, str):
        if grid != "small" or model != "mlp":
            raise ValueError(f"grid: the only named grid is 'small' (for model='mlp'), got {grid!r}")
        grid = MLP_GRID_SMALL
    grid = tuple(dict(p) for p in grid)
    if not grid:
        raise ValueError("grid must hold at least one configuration")
    required = {"mlp": {"depth", "width", "alpha"}, "ridge": {"alpha"}, "best-single": set()}[model]
    for p in grid:
        missing = required - set(p)
        if missing:
            raise ValueError(f"grid: configuration {p} lacks {sorted(missing)} for model {model!r}")
    gen = np.random.default_rng(rng)
    fold = grouped_folds(g, int(folds), gen)
    seeds = gen.integers(2**31 - 1, size=int(folds))
    for k in range(int(folds)):
        if np.unique(g[fold != k]).size < inner_folds and model != "best-single" and len(grid) > 1:
            raise ValueError(f"inner_folds={inner_folds} needs more groups in each training fold")
    jobs = [
        (model, grid, int(inner_folds), int(seeds[k]), X, Y, g, np.flatnonzero(fold != k), np.flatnonzero(fold == k),
         feature_names)
        for k in range(int(folds))
    ]
    if n_jobs == 1:
        iterator: Any = jobs
        if progress:
            from tqdm import tqdm

            iterator = tqdm(jobs, desc=f"{model} folds")
        outputs = [_one_fold(*job) for job in iterator]
    else:
        from joblib import Parallel, delayed

        outputs = Parallel(n_jobs=n_jobs)(delayed(_one_fold)(*job) for job in jobs)
    predictions = np.empty_like(Y)
    for k, (pred, _) in enumerate(outputs):
        predictions[fold == k] = pred
    if not np.isfinite(predictions).all():
        raise ValueError("the model produced NaN or infinite predictions (diverged training?)")
    return CrossValidationResult(
        predictions[:, 0] if one_d else predictions,
        fold,
        tuple(p for _, p in outputs),
        model,
        int(folds),
        feature_names,
        target_names,
    )
