"""Study planning: how many documents, systems and annotations a human evaluation needs.

Monte-Carlo power analysis for the two questions a new human study asks:

* :func:`system_comparison_power` / :func:`system_pairs_power`: the power to separate two systems by
  their per-document scores (by default the sign-flip permutation test, exact for small sizes and valid at
  every size; or the paired bootstrap or paired t-test, reported with their type-I error measured at each
  size) when ``size`` documents are judged, for one pair or every pair of a systems x documents matrix;
  :func:`binned_power` summarizes pairs by quintile of their score difference.
* :func:`metric_comparison_power`: the power to find that metric X correlates with the human scores more
  strongly than metric Y (Perm-Both, Boot-Both, Williams, ... at system/summary/global level) at other
  numbers of systems and inputs, by resampling the systems and inputs of pilot data;
  :func:`planned_comparison_power`: the same on synthetic data with a planned effect size (no pilot).
* :func:`required_size`: the smallest size of a power table reaching a target power, with a Monte-Carlo
  confidence interval.

Every trial draws a new study from the pilot (or from the synthetic model) and runs the test on it; the
rejection rate over ``n_trials`` trials estimates the power, with binomial standard error
``se = sqrt(p (1 - p) / n_trials)``. Trials are vectorized: a chunk of trials is one array operation (the
bootstrap counts of all trials and resamples, one batched product for all systems at once) or one compiled
pass (the default permutation tests), never a Python loop per resample.

Sampling from a pilot (each function's ``replace``): near the pilot's own size, draws without replacement barely
vary, so the estimate there mostly restates the pilot's own result; and the pilot's observed effect is taken as
the truth (plug-in), which is optimistic when the pilot is small. A planned effect (:class:`PlannedEffect`) has
neither problem.

The batched tests that the simulations run, and their sampling helpers, are in the private
:mod:`metaeval.stats._planning_kernels`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import special, stats

from metaeval.stats._planning_kernels import (
    _batch_trials,
    check_alpha,
    check_choice,
    _check_replace,
    _check_sizes_1d,
    _check_sizes_2d,
    check_trials,
    _chunks,
    _draw,
    _merge_draws,
    _metric_draws,
    _metric_pvalues,
    _options,
    _pair_pvalues,
    _power_columns,
    _progress,
    _rejects,
    _sampling,
    _type1_upper,
    _with_replacement,
    _within_document_null,
)
from metaeval.stats.correlation import check_coefficient, check_level, check_matrices, check_rng
from metaeval.stats.resampling import check_n_resamples
from metaeval.stats.significance import PERMUTATION_METHODS

__all__ = [
    "EXACT_METRIC_TESTS",
    "METRIC_TESTS",
    "MetricTestOptions",
    "SystemTestOptions",
    "SYSTEM_TESTS",
    "PlannedEffect",
    "binned_power",
    "metric_comparison_power",
    "planned_comparison_power",
    "planned_metric_data",
    "required_size",
    "system_comparison_power",
    "system_pairs_power",
    "wilson_interval",
]

SYSTEM_TESTS = ("permutation", "paired-bootstrap", "t-test")
METRIC_TESTS = ("perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs", "williams")
ALTERNATIVES = ("two-sided", "greater", "less")
Replace = Literal["auto"] | bool


# ----------------------------------------------------------------------------------------------------
# Monte-Carlo error of a rejection rate


def wilson_interval(successes, trials, *, confidence_level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (vectorized).

    Examples
    --------
    >>> low, high = wilson_interval(50, 1000)
    >>> round(float(low), 4), round(float(high), 4)
    (0.0381, 0.0653)
    """
    k = np.asarray(successes, dtype=float)
    n = np.asarray(trials, dtype=float)
    q = special.ndtri(1 - (1 - confidence_level) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + q * q / (2 * n)) / (1 + q * q / n)
        half = q / (1 + q * q / n) * np.sqrt(p * (1 - p) / n + q * q / (4 * n * n))
    return np.clip(centre - half, 0, 1), np.clip(centre + half, 0, 1)


# ----------------------------------------------------------------------------------------------------
# Options: one frozen record per kind of simulation (as mt-metrics-eval's PermutationSigDiffParams), built and
# checked once by the public functions and passed whole to the simulation loops


@dataclass(frozen=True)
class SystemTestOptions:
    """Options of :func:`system_comparison_power` and :func:`system_pairs_power` (their keywords of the same
    names; see there). Checked on construction.

    Examples
    --------
    >>> SystemTestOptions(test="t-test", n_trials=200).alternative
    'two-sided'
    """

    test: str = "permutation"
    alpha: float = 0.05
    n_trials: int = 1000
    n_resamples: int = 1000
    alternative: str = "two-sided"
    replace: Replace = True

    def __post_init__(self):
        check_choice("test", self.test, SYSTEM_TESTS)
        check_choice("alternative", self.alternative, ALTERNATIVES)
        check_alpha(self.alpha)
        check_trials(self.n_trials)
        check_n_resamples(self.n_resamples)
        _check_replace(self.replace)


@dataclass(frozen=True)
class MetricTestOptions:
    """Options of :func:`metric_comparison_power` and :func:`planned_comparison_power` (their keywords of the
    same names; see there). Checked on construction.

    Examples
    --------
    >>> MetricTestOptions(test="williams", level="summary").n_resamples
    1000
    """

    test: str = "perm-both"
    level: str = "system"
    coefficient: str = "pearson"
    alpha: float = 0.05
    n_trials: int = 1000
    n_resamples: int = 1000
    alternative: str = "greater"

    def __post_init__(self):
        check_choice("test", self.test, METRIC_TESTS + tuple(f"perm-{m}" for m in PERMUTATION_METHODS[3:]))
        check_level(self.level)
        check_coefficient(self.coefficient)
        check_alpha(self.alpha)
        check_trials(self.n_trials)
        check_n_resamples(self.n_resamples)
        check_choice("alternative", self.alternative, ALTERNATIVES)


# ----------------------------------------------------------------------------------------------------
# Separating two systems by their per-document scores


#: Tests whose p-values are valid (size <= alpha) by construction at every size: the sign-flip permutation test
#: (exact when all 2^n flips are enumerated, Monte-Carlo with p = (c + 1) / (B + 1) otherwise). The others'
#: size is measured by simulation next to their power.
EXACT_SYSTEM_TESTS = ("permutation",)

# float64 copies of the largest per-trial array that one chunk of a system comparison holds at once
_COPIES = 4


def _rejection_rates(S, ia, ib, size, with_rep, options: SystemTestOptions, tol, rng) -> tuple[np.ndarray, np.ndarray]:
    """Rejections and defined p-values (P,) of each pair's test over ``n_trials`` studies of ``size`` documents."""
    M = S.shape[1]
    test, n_resamples = options.test, options.n_resamples
    rejections = np.zeros(len(ia))
    defined = np.zeros(len(ia))
    per_trial = (len(ia) * size if test == "t-test" else n_resamples * max(size, M, len(ia)))
    for start, stop in _chunks(options.n_trials, per_trial):
        docs = _draw(rng, stop - start, M, size, with_rep)  # (T, n)
        p = _pair_pvalues(S, docs, ia, ib, test, n_resamples, options.alternative, tol, rng)
        rejections += np.count_nonzero(_rejects(p, options.alpha), axis=0)
        defined += np.count_nonzero(~np.isnan(p), axis=0)
    return rejections, defined


def _check_system_memory(sizes: list[int], S: np.ndarray, n_pairs: int, options: SystemTestOptions) -> None:
    """Refuse, before allocating, a size whose single simulated study would not fit in memory."""
    from metaeval.stats.resampling import memory_limit

    limit = memory_limit()
    M = S.shape[1]
    for size in sizes:
        per_trial = (n_pairs * size if options.test == "t-test"
                     else options.n_resamples * max(size, M, n_pairs) + size)
        need = 8.0 * _COPIES * per_trial
        if need > limit:
            raise ValueError(
                f"sizes: {size} documents need about {need / 2**30:.1f} GiB for one simulated study "
                f"({options.test}, {options.n_resamples} resamples), more than the limit of {limit / 2**30:.1f} GiB "
                "(half this machine's memory, or $METAEVAL_MAX_MEMORY): use smaller sizes (power at such sizes is "
                "1 for any real difference) or fewer n_resamples")


def _pairs_power(S: np.ndarray, ia: np.ndarray, ib: np.ndarray, *, sizes, options: SystemTestOptions, rng,
                 progress: bool) -> pd.DataFrame:
    sizes = _check_sizes_1d(sizes)
    _check_system_memory(sizes, S, len(ia), options)
    test, alpha, n_trials = options.test, options.alpha, options.n_trials
    M = S.shape[1]
    rng = check_rng(rng)
    # ties are judged relative to the data's scale (see _planning_kernels._tail)
    tol = 1e-9 * max(float(np.abs(S).max()), 1e-300)
    frames = []
    children = rng.spawn(len(sizes))
    measure = test not in EXACT_SYSTEM_TESTS
    if measure:
        # the test's size at each size, on the pilot made null (drawn after the power's generators, which
        # therefore give the same power as without the measurement)
        null_children = rng.spawn(len(sizes))
        S_null = _within_document_null(S, np.random.default_rng(null_children[0].integers(2**63)))
    for i, (size, child) in enumerate(_progress(list(zip(sizes, children)), progress, desc="sizes")):
        with_rep = _with_replacement(size, M, options.replace, "documents")
        rejections, defined = _rejection_rates(S, ia, ib, size, with_rep, options, tol, child)
        if (defined < n_trials).any():
            warnings.warn(
                f"size {size}: the {test} was undefined in {int(n_trials * len(ia) - defined.sum())} trials "
                "(all drawn differences equal); they count as not rejecting", RuntimeWarning, stacklevel=3)
        power, se = _power_columns(rejections, n_trials)
        if measure:
            null_rej, _ = _rejection_rates(S_null, ia, ib, size, True, options, tol, null_children[i])
            type1 = null_rej / n_trials
            calibrated = null_rej <= _type1_upper(n_trials, alpha)
        else:
            type1, calibrated = np.full(len(ia), np.nan), np.ones(len(ia), bool)
        frames.append(pd.DataFrame({"pair": np.arange(len(ia)), "size": size, "power": power, "se": se,
                                    "type1": type1, "calibrated": calibrated, "sampling": _sampling(with_rep)}))
    return pd.concat(frames, ignore_index=True)


def system_comparison_power(
    a,
    b,
    *,
    sizes: Sequence[int],
    test: str = "permutation",
    alpha: float = 0.05,
    n_trials: int = 1000,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 1000,
    alternative: str = "two-sided",
    replace: Replace = True,
    progress: bool = False,
    options: SystemTestOptions | None = None,
) -> pd.DataFrame:
    """Power to separate two systems by their per-document scores when ``size`` documents are judged.

    Each trial draws ``size`` documents from the pilot documents (the columns of ``a`` and ``b``; with
    replacement by default, see ``replace``), runs the paired test on the two systems' scores of those
    documents, and rejects when p < ``alpha``. The pilot's mean difference is the effect (plug-in).

    Parameters
    ----------
    a, b : array_like (M,)
        Per-document scores (e.g. human ratings) of the two systems on the same M pilot documents.
    sizes : sequence of int
        Numbers of documents of the planned study (each >= 2).
    test : {"permutation", "paired-bootstrap", "t-test"}
        ``"permutation"`` (default): the sign-flip permutation test of the mean paired difference, exact
        when all 2^n flips fit in ``n_resamples`` (p = c / 2^n), Monte-Carlo otherwise (p = (c + 1) / (B + 1));
        its size is at most alpha at every size (with 5 documents a two-sided test at 0.05 cannot reject:
        the smallest p-value is 2 / 32). ``"paired-bootstrap"`` (p = share of centred resampled differences
        at least as extreme as the observed one, as :func:`metaeval.bootstrap_test`) is anti-conservative
        with few documents (measured type-I error 0.16 at 5 documents, 0.10 at 10 at alpha 0.05);
        ``"t-test"`` is :func:`scipy.stats.ttest_rel`. For these two the table reports the type-I error
        measured at each size (``type1``, on the pilot made null: each document's scores in random order).
    alpha : float
        Significance level.
    n_trials : int
        Simulated studies per size.
    rng : Generator, int or None
        Seed; each size draws from its own child generator.
    n_resamples : int
        Bootstrap resamples / sign flips per test.
    alternative : {"two-sided", "greater", "less"}
        "greater": H1 is mean(a) > mean(b).
    replace : {True, "auto", False}
        True (default): documents are drawn with replacement, as a new study draws new documents from the
        population the pilot's documents represent. "auto": without replacement below the pilot's number of
        documents (a sub-study of the pilot), with from it on. Draws without replacement make the tests
        conservative by the finite-population factor (1 - size / M) of the variance: at d = 0, size 40 of
        400 documents, a 5 % t-test rejects about 4 % of the time.
    progress : bool
        Show a progress bar over sizes.
    options : SystemTestOptions, optional
        ``test`` ... ``replace`` as one frozen record (then leave those keywords at their defaults).

    Returns
    -------
    DataFrame
        Columns ``size``, ``power`` (rejection rate), ``se`` (its binomial standard error), ``type1`` (the
        measured type-I error at that size; NaN for the permutation test, whose size is at most alpha by
        construction), ``calibrated`` (the type-I error is within the 99.9 % binomial interval of alpha or
        below it: a power that can be trusted; :func:`required_size` uses only such sizes) and ``sampling``
        (how documents were drawn).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> a = rng.normal(0.3, 1, 200); b = rng.normal(0, 1, 200)
    >>> res = system_comparison_power(a, b, sizes=[10, 200], test="t-test", n_trials=200, rng=1)
    >>> list(res.columns), bool(res.power.iloc[0] < res.power.iloc[1])
    (['size', 'power', 'se', 'type1', 'calibrated', 'sampling'], True)
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D arrays of equal length, got shapes {a.shape} and {b.shape}")
    if a.size < 2:
        raise ValueError("a and b need at least 2 documents")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must be finite (drop the documents missing a score first)")
    opts = _options(SystemTestOptions, options, dict(test=test, alpha=alpha, n_trials=n_trials,
                                                     n_resamples=n_resamples, alternative=alternative, replace=replace))
    table = _pairs_power(np.vstack([a, b]), np.array([0]), np.array([1]), sizes=sizes, options=opts, rng=rng,
                         progress=progress)
    return table.drop(columns="pair")


def system_pairs_power(
    S,
    *,
    sizes: Sequence[int],
    test: str = "permutation",
    alpha: float = 0.05,
    n_trials: int = 1000,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 1000,
    alternative: str = "two-sided",
    replace: Replace = True,
    systems: Sequence[str] | None = None,
    bins: int = 5,
    progress: bool = False,
    options: SystemTestOptions | None = None,
) -> pd.DataFrame:
    """:func:`system_comparison_power` for every pair of systems of a systems x documents matrix.

    All pairs of one trial share its documents and its resampling weights (each pair's test is still a
    valid paired test; the pairs' estimates are correlated with each other, not biased). Each pair is
    oriented so that ``difference`` = mean(system_a) - mean(system_b) >= 0 on the pilot.

    Parameters
    ----------
    S : array_like (K, M)
        Per-document scores of K systems on M documents (rows = systems).
    systems : sequence of str, optional
        Names of the K systems (default "0", "1", ...).
    bins : int
        Pairs are binned by quantiles of ``difference`` (5: quintiles) into ``difference_bin``.
    sizes, test, alpha, n_trials, rng, n_resamples, alternative, replace, progress :
        As in :func:`system_comparison_power`.

    Returns
    -------
    DataFrame
        One row per pair and size: ``system_a``, ``system_b``, ``difference``, ``difference_bin`` (1 = the
        smallest differences), ``size``, ``power``, ``se``, ``type1``, ``calibrated``, ``sampling``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> S = rng.normal(size=(4, 60)) + np.arange(4)[:, None] * 0.3
    >>> res = system_pairs_power(S, sizes=[20, 60], n_trials=100, n_resamples=200, rng=0)
    >>> len(res), res.groupby("size").power.mean().is_monotonic_increasing
    (12, True)
    """
    S = np.asarray(S, dtype=float)
    if S.ndim != 2 or S.shape[0] < 2 or S.shape[1] < 2:
        raise ValueError(f"S must be a systems x documents matrix with at least 2 of each, got shape {S.shape}")
    if not np.isfinite(S).all():
        raise ValueError("S must be finite (drop the documents missing a score first)")
    K = S.shape[0]
    names = [str(k) for k in range(K)] if systems is None else [str(s) for s in systems]
    if len(names) != K:
        raise ValueError(f"systems has {len(names)} names for {K} rows of S")
    if not isinstance(bins, int) or bins < 1:
        raise ValueError(f"bins must be a positive integer, got {bins!r}")
    means = S.mean(axis=1)
    pairs = [(i, j) if means[i] >= means[j] else (j, i) for i in range(K) for j in range(i + 1, K)]
    ia, ib = np.array(pairs).T
    opts = _options(SystemTestOptions, options, dict(test=test, alpha=alpha, n_trials=n_trials,
                                                     n_resamples=n_resamples, alternative=alternative, replace=replace))
    table = _pairs_power(S, ia, ib, sizes=sizes, options=opts, rng=rng, progress=progress)
    diff = means[ia] - means[ib]
    ranks = stats.rankdata(diff, method="ordinal")
    # equal-count bins by rank (quantile cut points can coincide when differences tie)
    bin_of = np.ceil(ranks * min(bins, len(diff)) / len(diff)).astype(int)
    info = pd.DataFrame({"pair": np.arange(len(pairs)), "system_a": [names[i] for i in ia],
                         "system_b": [names[j] for j in ib], "difference": diff, "difference_bin": bin_of})
    table = info.merge(table, on="pair").drop(columns="pair")
    return table[["system_a", "system_b", "difference", "difference_bin", "size", "power", "se", "type1", "calibrated",
                  "sampling"]]


def binned_power(table: pd.DataFrame) -> pd.DataFrame:
    """Mean power per difference bin and size of a :func:`system_pairs_power` table.

    Returns columns ``difference_bin``, ``size``, ``pairs``, ``difference_low``, ``difference_high``,
    ``power`` (mean over the bin's pairs) and ``se`` (Monte-Carlo standard error of that mean, treating the
    pairs' estimates as independent; they share documents, so it is a lower bound), and from tables that
    have them ``type1`` (the largest measured type-I error of the bin's pairs) and ``calibrated`` (all are).
    """
    needed = {"difference_bin", "size", "difference", "power", "se"}
    missing = needed - set(table.columns)
    if missing:
        raise ValueError(f"table lacks columns {sorted(missing)}; pass a system_pairs_power result")
    g = table.groupby(["difference_bin", "size"])
    out = g.agg(pairs=("power", "size"), difference_low=("difference", "min"),
                difference_high=("difference", "max"), power=("power", "mean")).reset_index()
    out["se"] = g["se"].apply(lambda s: float(np.sqrt((s**2).sum()) / len(s))).to_numpy()
    if "type1" in table.columns:
        # the bin's worst pair: a mean would hide one miscalibrated pair among calibrated ones
        out["type1"] = g["type1"].max().to_numpy()
        out["calibrated"] = g["calibrated"].all().to_numpy()
    return out


# ----------------------------------------------------------------------------------------------------
# Comparing two metrics' correlations with the human scores


def _metric_options(options, **keywords) -> MetricTestOptions:
    opts = _options(MetricTestOptions, options, keywords)
    if opts.test == "williams" and opts.coefficient != "pearson":
        warnings.warn("Williams' test assumes Pearson correlations; with rank coefficients it is approximate",
                      RuntimeWarning, stacklevel=4)
    return opts


#: Tests exact under the planner's nulls: the pilot made null by swapping X and Y in random cells, and the planned
#: effect with equal correlations (cell-wise exchangeable metrics), are invariant under every swap pattern, so the
#: permutation tests' size is at most alpha by construction. The others have their size measured.
EXACT_METRIC_TESTS = ("perm-both", "perm-systems", "perm-inputs")


def _swap_cells(rng: np.random.Generator, X: np.ndarray, Y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The null of "r(X, Z) = r(Y, Z)" made from any data: X and Y exchanged in a random half of the cells, so
    both metrics have the same joint distribution with Z (the null Perm-Both tests)."""
    swap = rng.random(X.shape) < 0.5
    return np.where(swap, Y, X), np.where(swap, X, Y)


def _tested(drawn: list, options: MetricTestOptions) -> np.ndarray:
    """p-values of the test on drawn chunks [(X, Y, Z, draws), ...], all their trials at once."""
    X, Y, Z = (np.concatenate([d[k] for d in drawn]) if len(drawn) > 1 else drawn[0][k] for k in range(3))
    return _metric_pvalues(X, Y, Z, options.test, options.level, options.coefficient, options.n_resamples,
                           options.alternative, draws=_merge_draws([d[3] for d in drawn]))


def _simulate(
    draw: Callable[[np.random.Generator, int, int, int], tuple[np.ndarray, np.ndarray, np.ndarray]],
    sizes: list[tuple[int, int]],
    *,
    options: MetricTestOptions,
    rng,
    progress: bool,
) -> pd.DataFrame:
    test, level, coefficient, alpha = options.test, options.level, options.coefficient, options.alpha
    n_trials, n_resamples = options.n_trials, options.n_resamples
    measure = test not in EXACT_METRIC_TESTS
    rng = check_rng(rng)
    rows = []
    for (N, M), child in _progress(list(zip(sizes, rng.spawn(len(sizes)))), progress, desc="sizes"):
        # spawned before any draw (spawning does not consume the child's stream): the power column is the same
        # whether or not the size is measured
        null_rng = child.spawn(1)[0]
        per_trial = N * M * (1 if test == "williams" else 3 * n_resamples)
        chunks = list(_chunks(n_trials, per_trial))
        # the draws are made chunk by chunk (the random stream does not depend on the batching), and tested
        # together where the test's path holds less than the chunks were sized for
        batch = _batch_trials(test, level, coefficient, N, M, n_resamples, chunks[0][1] - chunks[0][0])
        rejections = undefined = null_rejections = 0
        drawn: list = []
        null_drawn: list = []
        for i, (start, stop) in enumerate(chunks):
            T = stop - start
            X, Y, Z = draw(child, T, N, M)
            drawn.append((X, Y, Z, _metric_draws(child, test, level, coefficient, T, N, M, n_resamples)))
            if measure:
                X, Y, Z = draw(null_rng, T, N, M)
                X0, Y0 = _swap_cells(null_rng, X, Y)
                null_drawn.append((X0, Y0, Z, _metric_draws(null_rng, test, level, coefficient, T, N, M,
                                                            n_resamples)))
            pending = sum(len(d[0]) for d in drawn)
            if i + 1 < len(chunks) and pending + chunks[i + 1][1] - chunks[i + 1][0] <= batch:
                continue
            p = _tested(drawn, options)
            rejections += int(np.count_nonzero(_rejects(p, alpha)))
            undefined += int(np.count_nonzero(np.isnan(p)))
            if measure:
                null_rejections += int(np.count_nonzero(_rejects(_tested(null_drawn, options), alpha)))
            drawn, null_drawn = [], []
        if undefined:
            warnings.warn(f"{N} systems x {M} inputs: the test was undefined in {undefined} of {n_trials} trials "
                          "(a constant matrix or undefined correlations); they count as not rejecting",
                          RuntimeWarning, stacklevel=3)
        power, se = _power_columns(np.array(rejections, dtype=float), n_trials)
        rows.append({"n_systems": N, "n_inputs": M, "power": float(power), "se": float(se),
                     "type1": null_rejections / n_trials if measure else np.nan,
                     "calibrated": (null_rejections <= _type1_upper(n_trials, alpha)) if measure else True})
    return pd.DataFrame(rows)


def metric_comparison_power(
    X,
    Y,
    Z,
    *,
    sizes: Sequence[tuple[int, int]],
    test: str = "perm-both",
    level: str = "system",
    coefficient: str = "pearson",
    alpha: float = 0.05,
    n_trials: int = 1000,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 1000,
    alternative: str = "greater",
    replace: Replace = "auto",
    progress: bool = False,
    options: MetricTestOptions | None = None,
) -> pd.DataFrame:
    """Power to find that metric X correlates with the human scores Z more strongly than metric Y, at other
    numbers of systems and inputs, by resampling the systems and inputs of pilot data.

    Each trial draws ``n_systems`` systems and ``n_inputs`` inputs of the pilot (each dimension without
    replacement when smaller than the pilot's, with replacement from the pilot's size on: see ``replace``),
    takes the three submatrices and runs ``test``; power is the rejection rate at ``alpha``. The pilot's
    own difference in correlation is the effect whose detection is simulated.

    Parameters
    ----------
    X, Y, Z : array_like (N, M)
        Pilot scores of the two metrics and the human scores, systems x inputs.
    sizes : sequence of (n_systems, n_inputs)
        Planned study sizes.
    test : {"perm-both", "perm-systems", "perm-inputs", "boot-both", "boot-systems", "boot-inputs", "williams"}
        As :func:`metaeval.permutation_test`, :func:`metaeval.bootstrap_test`, :func:`metaeval.williams_test`.
    level, coefficient :
        As :func:`metaeval.correlate`.
    alpha, n_trials, rng, n_resamples :
        Significance level, simulated studies per size, seed (each size has its own child generator),
        permutations/resamples per test.
    alternative : {"greater", "less", "two-sided"}
        "greater": H1 is r(X, Z) > r(Y, Z).
    replace : {"auto", True, False}
    progress : bool
    options : MetricTestOptions, optional
        ``test`` ... ``alternative`` as one frozen record (then leave those keywords at their defaults).

    Returns
    -------
    DataFrame
        Columns ``n_systems``, ``n_inputs``, ``power``, ``se``, ``type1`` (the test's type-I error measured at
        that size on the pilot made null, X and Y exchanged in a random half of the cells; NaN for the
        permutation tests, :data:`EXACT_METRIC_TESTS`, whose size is at most alpha by construction),
        ``calibrated`` (``type1`` within the 99.9 % binomial interval of alpha or below: :func:`required_size`
        recommends only such sizes), ``systems_sampling``, ``inputs_sampling``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(30, 20)); X = Z + rng.normal(size=(30, 20)); Y = Z + 3 * rng.normal(size=(30, 20))
    >>> res = metric_comparison_power(X, Y, Z, sizes=[(5, 20), (30, 20)], test="williams", level="summary",
    ...                               n_trials=200, rng=0)
    >>> res[["n_systems", "n_inputs", "power", "systems_sampling"]]
       n_systems  n_inputs  power     systems_sampling
    0          5        20  0.000  without replacement
    1         30        20  0.995     with replacement
    """
    opts = _metric_options(options, test=test, level=level, coefficient=coefficient, alpha=alpha, n_trials=n_trials,
                           n_resamples=n_resamples, alternative=alternative)
    _check_replace(replace)
    X, Y, Z = check_matrices("raise", X=X, Y=Y, Z=Z)
    sizes = _check_sizes_2d(sizes)
    N0, M0 = Z.shape
    plan = [(_with_replacement(n, N0, replace, "systems"), _with_replacement(m, M0, replace, "inputs"))
            for n, m in sizes]
    by_size = dict(zip(sizes, plan))

    def draw(child, T, N, M):
        rep_s, rep_i = by_size[(N, M)]
        r = _draw(child, T, N0, N, rep_s)[:, :, None]
        c = _draw(child, T, M0, M, rep_i)[:, None, :]
        return X[r, c], Y[r, c], Z[r, c]

    table = _simulate(draw, sizes, options=opts, rng=rng, progress=progress)
    table["systems_sampling"] = [_sampling(p[0]) for p in plan]
    table["inputs_sampling"] = [_sampling(p[1]) for p in plan]
    return table


@dataclass(frozen=True)
class PlannedEffect:
    """A planned effect for :func:`planned_comparison_power`: two metrics' population correlations.

    The model is :func:`metaeval.datasets.synthetic`'s, with one metric per correlation pair: human
    ``a_i + e_ij``; metric k ``b_ki + f_kij`` with system effects ``b_k = rho_sk a + sqrt(1 - rho_sk^2) u``
    (one ``u`` shared by both metrics) and cell noise ``f_k = rho_ek e + sqrt(1 - rho_ek^2) g_k``
    (independent ``g_k``), ``rho_ek`` solved from the summary correlation. With equal correlations both
    metrics are exchangeable cell by cell, exactly ``synthetic(..., n_metrics=2)``: the null of Perm-Both.

    Attributes
    ----------
    system_correlation : (float, float)
        Population correlation of X's and Y's true system quality with the human one.
    summary_correlation : (float, float)
        Population within-input correlation of X and of Y with the human scores.
    system_sd, noise_sd : float
        Standard deviations of system quality and of cell noise (shared by all scores).
    """

    system_correlation: tuple[float, float]
    summary_correlation: tuple[float, float]
    system_sd: float = 1.0
    noise_sd: float = 1.0

    def __post_init__(self):
        for arg in ("system_correlation", "summary_correlation"):
            value = getattr(self, arg)
            if len(value) != 2 or not all(-1 <= float(v) <= 1 for v in value):
                raise ValueError(f"{arg} must be a pair of correlations in [-1, 1], got {value!r}")
        if self.system_sd <= 0 or self.noise_sd <= 0:
            raise ValueError("system_sd and noise_sd must be positive")
        _ = self.cell_noise_correlation  # raises if a summary correlation is unreachable

    @property
    def cell_noise_correlation(self) -> tuple[float, float]:
        s2, t2 = self.system_sd**2, self.noise_sd**2
        out = []
        for rs, rq in zip(self.system_correlation, self.summary_correlation):
            rho_e = (rq * (s2 + t2) - rs * s2) / t2
            if not -1 <= rho_e <= 1:
                raise ValueError(
                    f"summary_correlation={rq} cannot be reached with system_correlation={rs}, "
                    f"system_sd={self.system_sd}, noise_sd={self.noise_sd} (needs a cell-noise correlation of "
                    f"{rho_e:.3f}); change noise_sd or the correlations")
            out.append(rho_e)
        return out[0], out[1]

    def system_correlation_finite(self, n_inputs: int) -> tuple[float, float]:
        """Population correlation of system *means* over ``n_inputs`` inputs (what the system level sees)."""
        s2, t2 = self.system_sd**2, self.noise_sd**2
        return tuple(  # type: ignore[return-value]
            (rs * s2 + re * t2 / n_inputs) / (s2 + t2 / n_inputs)
            for rs, re in zip(self.system_correlation, self.cell_noise_correlation))


def planned_metric_data(effect: PlannedEffect, n_trials: int, n_systems: int, n_inputs: int,
                        rng: np.random.Generator | int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw ``n_trials`` synthetic studies of the planned effect: X, Y, Z each (n_trials, n_systems, n_inputs).

    Examples
    --------
    >>> e = PlannedEffect(system_correlation=(0.9, 0.6), summary_correlation=(0.5, 0.3))
    >>> X, Y, Z = planned_metric_data(e, 2, 16, 100, rng=0)
    >>> X.shape
    (2, 16, 100)
    """
    rng = check_rng(rng)
    T, N, M = n_trials, n_systems, n_inputs
    s, t = effect.system_sd, effect.noise_sd
    (rx, ry), (ex, ey) = effect.system_correlation, effect.cell_noise_correlation
    a = rng.standard_normal((T, N)) * s
    u = rng.standard_normal((T, N)) * s
    e = rng.standard_normal((T, N, M)) * t
    g = rng.standard_normal((2, T, N, M)) * t
    X = (rx * a + math.sqrt(1 - rx**2) * u)[:, :, None] + ex * e + math.sqrt(1 - ex**2) * g[0]
    Y = (ry * a + math.sqrt(1 - ry**2) * u)[:, :, None] + ey * e + math.sqrt(1 - ey**2) * g[1]
    return X, Y, a[:, :, None] + e


def planned_comparison_power(
    effect: PlannedEffect,
    *,
    sizes: Sequence[tuple[int, int]],
    test: str = "perm-both",
    level: str = "system",
    coefficient: str = "pearson",
    alpha: float = 0.05,
    n_trials: int = 1000,
    rng: np.random.Generator | int | None = None,
    n_resamples: int = 1000,
    alternative: str = "greater",
    progress: bool = False,
    options: MetricTestOptions | None = None,
) -> pd.DataFrame:
    """:func:`metric_comparison_power` without pilot data: each trial is a fresh synthetic study of the
    planned effect (:class:`PlannedEffect`, the model of :func:`metaeval.datasets.synthetic`).

    Returns
    -------
    DataFrame
        Columns ``n_systems``, ``n_inputs``, ``power``, ``se``, ``type1`` and ``calibrated`` (as
        :func:`metric_comparison_power`, measured on studies of the same model with the two metrics exchanged in
        a random half of the cells), and the planned correlations at the tested
        level (``r_x``, ``r_y``: population values; at system level for the finite number of inputs).

    Examples
    --------
    >>> e = PlannedEffect(system_correlation=(0.9, 0.6), summary_correlation=(0.4, 0.4))
    >>> res = planned_comparison_power(e, sizes=[(5, 20), (30, 20)], test="williams", n_trials=200, rng=0)
    >>> bool(res.power.iloc[0] < res.power.iloc[1])
    True
    """
    if not isinstance(effect, PlannedEffect):
        raise TypeError(f"effect must be a PlannedEffect, got {type(effect).__name__}")
    opts = _metric_options(options, test=test, level=level, coefficient=coefficient, alpha=alpha, n_trials=n_trials,
                           n_resamples=n_resamples, alternative=alternative)
    sizes = _check_sizes_2d(sizes)

    def draw(child, T, N, M):
        return planned_metric_data(effect, T, N, M, child)

    table = _simulate(draw, sizes, options=opts, rng=rng, progress=progress)
    if opts.level == "system":
        finite = [effect.system_correlation_finite(m) for _, m in sizes]
        table["r_x"], table["r_y"] = [f[0] for f in finite], [f[1] for f in finite]
    else:
        table["r_x"], table["r_y"] = effect.summary_correlation
    return table


# ----------------------------------------------------------------------------------------------------
# Required size


def required_size(
    table: pd.DataFrame,
    *,
    target: float = 0.8,
    size: str = "size",
    by: str | Iterable[str] | None = None,
    n_trials: int | None = None,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """The smallest size of a power table whose power reaches ``target``, with a Monte-Carlo CI.

    The estimate is the first size (in increasing order) whose estimated power is >= ``target``. Its
    interval runs from the first size whose power *could* reach the target (upper Wilson bound >= target)
    to the first size from which it surely does (lower Wilson bound >= target), so it reflects the
    Monte-Carlo error of the power estimates. Sizes are those of the grid: refine the grid around the
    answer for a finer one. Sizes where the table says the test is not ``calibrated`` (its measured
    type-I error above alpha's 99.9 % binomial interval) are never recommended.

    Parameters
    ----------
    table : DataFrame
        A power table (any function of this module): a size column, ``power`` and ``se``.
    target : float
        Target power.
    size : str
        The size column: ``"size"``, ``"n_inputs"`` or ``"n_systems"``.
    by : str or list of str, optional
        Columns identifying separate curves (e.g. ``["system_a", "system_b"]``, or ``"n_systems"`` when
        the size is ``"n_inputs"``).
    n_trials : int, optional
        Trials per estimate; by default recovered from ``power`` and ``se``.
    confidence_level : float

    Returns
    -------
    DataFrame
        One row per curve: the ``by`` columns, ``required`` (NaN if the target is not reached on the grid),
        ``low``, ``high`` (NaN: not reached / not surely reached on the grid), ``power`` at ``required``,
        ``reached`` and ``max_size`` (the grid's largest size).

    Examples
    --------
    >>> t = pd.DataFrame({"size": [10, 20, 40, 80], "power": [0.2, 0.6, 0.82, 0.99]})
    >>> t["se"] = np.sqrt(t.power * (1 - t.power) / 1000)
    >>> required_size(t, target=0.8).loc[0, ["required", "low", "high"]].tolist()
    [40.0, 40.0, 80.0]
    """
    if not 0 < target < 1:
        raise ValueError(f"target must be in (0, 1), got {target!r}")
    if not isinstance(table, pd.DataFrame) or table.empty:
        raise ValueError(
            f"table: {'empty' if isinstance(table, pd.DataFrame) else type(table).__name__}; pass a power table with "
            f"rows (a {size!r} column, 'power' and 'se'), as system_comparison_power or metric_comparison_power "
            "returns")
    for col in (size, "power"):
        if col not in table.columns:
            raise ValueError(f"table has no column {col!r}; columns: {list(table.columns)}; pass a power table "
                             f"from this module, or name its size column with size=...")
    keys = [] if by is None else ([by] if isinstance(by, str) else list(by))
    for col in keys:
        if col not in table.columns:
            raise ValueError(f"by: table has no column {col!r}")
    groups = table.groupby(keys, sort=False) if keys else [((), table)]
    rows = []
    for key, block in groups:
        block = block.sort_values(size)
        power = block["power"].to_numpy(float)
        if n_trials is not None:
            trials = np.full(power.shape, float(n_trials))
        else:
            if "se" not in block.columns:
                raise ValueError("table has no 'se' column; pass n_trials")
            se = block["se"].to_numpy(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                trials = np.round(power * (1 - power) / se**2)
            # power 0 or 1 has se 0: take the trials of the other rows
            known = trials[np.isfinite(trials) & (trials > 0)]
            fallback = float(np.median(known)) if known.size else np.nan
            if np.isnan(fallback):
                raise ValueError("cannot recover the number of trials from power and se; pass n_trials")
            trials = np.where(np.isfinite(trials) & (trials > 0), trials, fallback)
        low_b, high_b = wilson_interval(power * trials, trials, confidence_level=confidence_level)
        sizes = block[size].to_numpy(float)

        def first(mask, sizes=sizes):
            hit = np.flatnonzero(mask)
            return float(sizes[hit[0]]) if hit.size else np.nan

        # a power measured where the test rejects too often under the null is not evidence of power
        trusted = block["calibrated"].to_numpy(bool) if "calibrated" in block.columns else np.ones(len(block), bool)
        required = first((power >= target) & trusted)
        row = dict(zip(keys, key if isinstance(key, tuple) else (key,)))
        row.update(required=required, low=first((high_b >= target) & trusted), high=first((low_b >= target) & trusted),
                   power=float(power[sizes == required][0]) if not np.isnan(required) else np.nan,
                   reached=not np.isnan(required), max_size=float(sizes.max()))
        rows.append(row)
    return pd.DataFrame(rows)
