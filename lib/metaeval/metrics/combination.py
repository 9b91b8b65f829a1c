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
* Several target columns: ``"mlp"`` and ``"ridge"`` fit multi-output models (M-ROUGE, multi-task);
  ``"best-single"`` chooses a feature per target. With ``select="all"`` one configuration is chosen on the
  mean squared error over all targets; with ``select="each"`` one configuration per target, on that target's
  error alone: the paper's M-ROUGE, "for each measure ... a network which predicts the scores for all four
  measures", whose configuration depends on its measure (each target's column comes from its own network;
  networks of equal configuration are the same fit, so this costs one multi-output search). One column:
  S-ROUGE; the mean of the human scores: MEAN-ROUGE.
* Named searches (``grid=``): ``"one"`` (:data:`MLP_GRID_ONE`, 3 x 64, no search: the notebooks' default),
  ``"small"`` (2 configurations), ``"default"``
  (:data:`MLP_GRID`, 4) and the paper's architectures (:data:`PAPER_GRIDS`): ``"paper-duc"`` (S-ROUGE on
  DUC-2004, 5 x 512, Figure 3), ``"paper-bioasq"`` (S-ROUGE on BioASQ, 5 x 256, Figure 4) and
  ``"paper-multitask"`` (M-ROUGE on BioASQ, "up to 4 layers of 128 or 256": 4 x 256, Figure 5), each with an
  L2 search over :data:`PAPER_L2`. The paper regularised with dropout and L2 and trained with early
  stopping; scikit-learn's MLP has no dropout, so early stopping (and L2) is the regulariser here.
  :func:`ridge_grid` gives ridge the same number of inner-CV configurations (the same tuning budget).
* Deterministic for a seed: every random choice (fold assignment, network initialisation, early-stopping
  split) derives from ``rng``, and BLAS and OpenMP run single-threaded inside every fit
  (:func:`threadpoolctl.threadpool_limits`): a multi-threaded BLAS splits sums by thread count and so rounds
  differently from run to run. Two runs give bit-identical predictions and chosen configurations (tested in
  fresh processes with other BLAS thread settings and other memory alignment of the inputs). The reported
  inner-CV errors (``inner_mse``) and best-single's Spearman are rounded to 12 significant digits: they are
  written to tables, and a feature computed on another machine or with another BLAS kernel can differ in its
  last bit, which would show in their 16th digit (the predictions are not rounded).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from metaeval._warnings import warn_degenerate

__all__ = [
    "MLP_GRID",
    "MLP_GRID_ONE",
    "MLP_GRID_SMALL",
    "PAPER_GRIDS",
    "PAPER_L2",
    "RIDGE_GRID",
    "CrossValidationResult",
    "cross_validate",
    "grouped_folds",
    "mlp_grid",
    "ridge_grid",
]

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
#: One configuration, no search (``grid="one"``, the notebooks' default): the 3 x 64 network of ``"small"``,
#: which that search chose in 53 of 100 grouped outer folds of the committed SummEval and REALSumm runs for
#: S-/MEAN-/M-ROUGE (the 1 x 64 one in the other 47) and for the centroid networks in 68 of 70; without an
#: inner search an outer fold costs one fit instead of five. Early stopping after 5 epochs without improvement
#: of the validation score (``patience``; scikit-learn's default, used by every other search, is 10): the best
#: epoch's weights are kept either way, and on SummEval the best epoch came 12-38 epochs in, so the last 5 of
#: 10 waiting epochs were a fifth of a fit's time.
MLP_GRID_ONE: tuple[dict[str, Any], ...] = ({**MLP_GRID_SMALL[1], "patience": 5},)
RIDGE_GRID: tuple[dict[str, Any], ...] = tuple({"alpha": a} for a in (0.1, 1.0, 10.0, 100.0, 1000.0))
#: Ridge penalties in the order :func:`ridge_grid` takes them: outward from 10, one decade at a time.
_RIDGE_ORDER = (10.0, 100.0, 1.0, 1000.0, 0.1, 1e4, 0.01, 1e5, 1e-3)
#: The L2 penalties searched with the paper's architectures (the paper drew them at random; a decade grid
#: of the same size is reproducible).
PAPER_L2 = (1e-3, 1e-2, 1e-1)
#: The paper's networks (Miloulis et al., Figures 3-5): name -> (depth, width).
PAPER_ARCHITECTURES = {"paper-duc": (5, 512), "paper-bioasq": (5, 256), "paper-multitask": (4, 256)}
PAPER_GRIDS: dict[str, tuple[dict[str, Any], ...]] = {
    name: tuple({"depth": d, "width": w, "alpha": a, "early_stopping": True} for a in PAPER_L2)
    for name, (d, w) in PAPER_ARCHITECTURES.items()
}
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


def mlp_grid(name: str) -> tuple[dict[str, Any], ...]:
    """A named MLP search: ``"one"``, ``"small"``, ``"default"`` or one of :data:`PAPER_GRIDS`.

    Examples
    --------
    >>> [(p["depth"], p["width"], p["alpha"]) for p in mlp_grid("paper-bioasq")]
    [(5, 256, 0.001), (5, 256, 0.01), (5, 256, 0.1)]
    """
    grids = {"one": MLP_GRID_ONE, "small": MLP_GRID_SMALL, "default": MLP_GRID, **PAPER_GRIDS}
    if name not in grids:
        raise ValueError(f"grid: unknown MLP search {name!r}; known: {', '.join(grids)} (or a list of configurations)")
    return tuple(dict(p) for p in grids[name])


def ridge_grid(n: int) -> tuple[dict[str, Any], ...]:
    """``n`` ridge penalties, outward from 10 one decade at a time: the same tuning budget as an n-configuration
    MLP search (``ridge_grid(5)`` is :data:`RIDGE_GRID`).

    Examples
    --------
    >>> [p["alpha"] for p in ridge_grid(2)], ridge_grid(5) == RIDGE_GRID
    ([10.0, 100.0], True)
    """
    if not (isinstance(n, (int, np.integer)) and 1 <= n <= len(_RIDGE_ORDER)):
        raise ValueError(f"ridge_grid: n must be an integer in 1..{len(_RIDGE_ORDER)}, got {n!r}")
    return tuple({"alpha": a} for a in sorted(_RIDGE_ORDER[:n]))


def _as_matrix(values: Any) -> tuple[np.ndarray, tuple[str, ...]]:
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
        n_iter_no_change=int(params.get("patience", 10)),
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
    # undefined (a constant column or target) is NaN, never 0.0: a 0.0 would read as "no association"
    return np.where(den > 0, r, np.nan)


def _reported(x: float) -> float:
    """A reported error or correlation, to 12 significant digits (see the module notes on determinism)."""
    return float(f"{x:.12g}")


def _best_single(Xtr, Ytr, Xte, names, target_names) -> tuple[np.ndarray, dict[str, Any]]:
    preds, chosen = [], []
    for t in range(Ytr.shape[1]):
        rho = _spearman_columns(Xtr, Ytr[:, t])
        if np.isnan(rho).all():
            why = "the target is constant" if np.ptp(Ytr[:, t]) == 0 else "every feature is constant"
            warn_degenerate(f"best-single, target {target_names[t]!r}: {why} on the training rows, so every "
                            "Spearman correlation is undefined (NaN); no feature is chosen and the prediction "
                            "is the training mean", stacklevel=2)
            preds.append(np.full(Xte.shape[0], Ytr[:, t].mean()))
            chosen.append({"feature": None, "spearman": np.nan})
            continue
        j = int(np.nanargmax(np.abs(rho)))  # a defined rho needs a non-constant column
        slope, intercept = np.polyfit(Xtr[:, j], Ytr[:, t], 1)
        preds.append(intercept + slope * Xte[:, j])
        chosen.append({"feature": names[j], "spearman": _reported(rho[j])})
    params = chosen[0] if len(chosen) == 1 else {"per_target": tuple(chosen)}
    return np.column_stack(preds), params


def _one_fold(model, grid, inner_folds, seed, X, Y, groups, train, test, names, target_names, select):
    import sklearn
    from threadpoolctl import threadpool_limits

    Xtr, Ytr, Xte = X[train], Y[train], X[test]
    if model == "best-single":
        return _best_single(Xtr, Ytr, Xte, names, target_names)
    rng = np.random.default_rng(seed)
    fit_seed = int(rng.integers(2**31 - 1))
    n_t = Ytr.shape[1]
    # scikit-learn validates parameters and checks for NaN on every call, also on each of the ~40 epochs'
    # validation scores of an early-stopped MLP; cross_validate has checked the inputs once (finite, shapes), so
    # the per-call checks only cost time (about a tenth of a small network's fit); results are unchanged
    with threadpool_limits(limits=1), sklearn.config_context(assume_finite=True, skip_parameter_validation=True):
        if len(grid) == 1:
            errors = np.full((1, n_t), np.nan)
        else:
            inner = grouped_folds(groups[train], inner_folds, rng)
            Ys = (Ytr - Ytr.mean(axis=0)) / np.where(Ytr.std(axis=0) > 0, Ytr.std(axis=0), 1.0)
            errors = np.empty((len(grid), n_t))  # inner-CV mean squared error per configuration and target
            for c, params in enumerate(grid):
                per_fold = []
                for k in range(inner_folds):
                    tr, te = inner != k, inner == k
                    pred = _fit_predict(model, params, fit_seed, Xtr[tr], Ys[tr], Xtr[te])
                    per_fold.append(np.mean((pred - Ys[te]) ** 2, axis=0))
                errors[c] = np.mean(per_fold, axis=0)
        if select == "each" and n_t > 1:
            # one network per target, each chosen on its target's error; equal configurations are one fit
            best = [int(np.argmin(errors[:, t])) if len(grid) > 1 else 0 for t in range(n_t)]
            fitted = {c: _fit_predict(model, grid[c], fit_seed, Xtr, Ytr, Xte) for c in sorted(set(best))}
            pred = np.column_stack([fitted[c][:, t] for t, c in enumerate(best)])
            chosen = tuple({**grid[c], "target": target_names[t], "inner_mse": _reported(errors[c, t])}
                           for t, c in enumerate(best))
            return pred, {"per_target": chosen}
        total = errors.mean(axis=1)
        b = int(np.argmin(total)) if len(grid) > 1 else 0
        pred = _fit_predict(model, grid[b], fit_seed, Xtr, Ytr, Xte)
    return pred, {**grid[b], "inner_mse": _reported(total[b])}


def cross_validate(
    features: Any,
    targets: Any,
    groups: Sequence,
    *,
    model: Literal["mlp", "ridge", "best-single"] = "mlp",
    folds: int = 10,
    rng: np.random.Generator | int | None = None,
    grid: Sequence[Mapping[str, Any]] | str | None = None,
    inner_folds: int = 3,
    select: Literal["all", "each"] = "all",
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
        :data:`RIDGE_GRID`), or a named MLP search (:func:`mlp_grid`: ``"small"``, ``"default"``,
        ``"paper-duc"``, ``"paper-bioasq"``, ``"paper-multitask"``); MLP keys ``depth``, ``width``, ``alpha``,
        ``early_stopping`` (``max_iter``, ``patience``: epochs without improvement before early stopping, 10).
    inner_folds : int
        Folds of the inner grouped CV (default 3).
    select : {"all", "each"}
        Several targets: choose one configuration on the error over all of them (``"all"``, one multi-output
        model), or one per target on its own error (``"each"``: the paper's M-ROUGE, one multi-output
        network per measure; ``params`` then holds ``per_target`` configurations).
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
    X, feature_names = _as_matrix(features)
    if X.ndim != 2:
        raise ValueError(f"features must be 2-D (n, p), got shape {X.shape}")
    Y, target_names = _as_matrix(targets)
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
    for name, k in (("folds", folds), ("inner_folds", inner_folds)):
        if not (isinstance(k, (int, np.integer)) and k >= 2):
            raise ValueError(f"{name} must be an integer >= 2, got {k!r}")
    if grid is None:
        grid = MLP_GRID if model == "mlp" else RIDGE_GRID
    elif isinstance(grid, str):
        if model != "mlp":
            raise ValueError(f"grid: named searches are MLP searches (model='mlp'), got {grid!r} for {model!r}")
        grid = mlp_grid(grid)
    grid = tuple(dict(p) for p in grid)
    if not grid:
        raise ValueError("grid must hold at least one configuration")
    required = {"mlp": {"depth", "width", "alpha"}, "ridge": {"alpha"}, "best-single": set()}[model]
    for p in grid:
        missing = required - set(p)
        if missing:
            raise ValueError(f"grid: configuration {p} lacks {sorted(missing)} for model {model!r}")
    if select not in ("all", "each"):
        raise ValueError(f"select must be 'all' or 'each', got {select!r}")
    gen = np.random.default_rng(rng)
    fold = grouped_folds(g, int(folds), gen)
    seeds = gen.integers(2**31 - 1, size=int(folds))
    for k in range(int(folds)):
        if np.unique(g[fold != k]).size < inner_folds and model != "best-single" and len(grid) > 1:
            raise ValueError(f"inner_folds={inner_folds} needs more groups in each training fold")
    jobs = [
        (model, grid, int(inner_folds), int(seeds[k]), X, Y, g, np.flatnonzero(fold != k), np.flatnonzero(fold == k),
         feature_names, target_names, select)
        for k in range(int(folds))
    ]
    if n_jobs == 1:
        from tqdm import tqdm

        outputs = [_one_fold(*job) for job in tqdm(jobs, desc=f"{model} folds", disable=not progress)]
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
