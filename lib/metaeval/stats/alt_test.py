"""The alternative annotator test: may an automatic judge replace a human annotator?

Calderon, Reichart & Dror (2025), "The Alternative Annotator Test for LLM-as-a-Judge: How to Statistically
Justify Replacing Human Annotators with LLMs", ACL, https://arxiv.org/abs/2501.10970. The authors' repository
has no licence; this is written from the paper's description of the procedure (leave one annotator out,
per-item alignment with the remaining humans, a one-sided paired t-test against a margin epsilon,
Benjamini-Yekutieli over the annotators, the winning rate and the average advantage probability), not from
their code.

For each annotator j, on the items I_j that j, the judge f and at least one other annotator rated:

* the alignment of the judge and of annotator j with the *other* annotators of item i, S(f, i, j) and
  S(h_j, i, j) (``alignment``: minus the distance to the others' mean, minus the root mean squared
  difference from them, or the share of them with the same label);
* the indicators W^f_ij = [S(f, i, j) >= S(h_j, i, j)] (the judge represents the others at least as well)
  and W^h_ij = [S(h_j, i, j) >= S(f, i, j)] (a tie counts for both);
* the advantage probabilities rho^f_j = mean_i W^f_ij and rho^h_j = mean_i W^h_ij;
* H0_j: rho^f_j <= rho^h_j - epsilon (the judge is worse than annotator j by more than the margin epsilon,
  the price a human costs more than the judge) against H1_j: rho^f_j > rho^h_j - epsilon, by the one-sided
  paired t-test on d_ij = W^h_ij - W^f_ij: t_j = (mean d - epsilon) / (sd d / sqrt(n_j)), p_j = F_{n_j-1}(t_j).

The p-values of the m annotators are adjusted by Benjamini-Yekutieli (valid under any dependence: every test
uses the same judge and items) and H0_j is rejected where the adjusted p-value is <= q. The **winning rate**
omega is the share of annotators whose H0_j is rejected; the judge **passes** (may replace an annotator) when
omega >= 0.5. The **average advantage probability** rho = mean_j rho^f_j compares judges whatever epsilon.

Minimum sizes: the t-test's level rests on its normal approximation to the mean of the d's, which take only
the values -1, 0, 1; :func:`alt_test_calibration` measures the level by simulation at the boundary of H0.
Below ``min_annotators`` annotators with ``min_items`` items each the result says "cannot be tested" with its
reason (defaults 3 and 100: with fewer than 3 annotators, leaving one out leaves one human as "the group"; on
1-5 ratings, 3 annotators, q = 0.05 and 2000 simulated studies the measured level was 0.141 (SE 0.007) at 10
items per annotator and epsilon = 0.1, 0.066 at 30, 0.058-0.064 (SE 0.004) in two runs at 50 and epsilon = 0.2,
0.055 at 75, 0.048-0.052 at 100 and within Monte-Carlo error of 0.05 at every embedded dataset's size, where
continuous ratings have the binomial steps' exact size, e.g. 0.044 at 300; ``tests/test_alt_test.py``).

A judge on another scale than the humans (a metric in [0, 1] against ratings 1-5) has no meaningful
distance to them: :func:`equate` maps its scores onto the humans' scale first (equipercentile equating: the
judge's k-th quantile to the pooled human ratings' k-th quantile; it uses the two marginal distributions,
never which item got which rating).
"""

from __future__ import annotations

from dataclasses import dataclass

import math

import numpy as np
from scipy import stats

from metaeval._warnings import warn_degenerate
from metaeval.stats.correlation import check_rng
from metaeval.stats.multiplicity import fdr

__all__ = [
    "ALIGNMENTS",
    "AltTestResult",
    "AltTestCalibration",
    "alt_test",
    "alt_test_calibration",
    "equate",
    "simulate_ratings",
    "RatingModel",
    "fit_rating_model",
    "alt_test_power",
]

ALIGNMENTS = ("mean-distance", "rmse", "accuracy")
# two alignment scores this close (relative) are one tie: equal distances computed from different values
# (|5/3 - 4/3| and |1 - 4/3|) differ in the last bits of their floats
_TIE_RTOL = 1e-9


@dataclass(frozen=True)
class AltTestResult:
    """Result of :func:`alt_test`.

    Attributes
    ----------
    winning_rate : float
        omega, the share of the tested annotators whose H0_j (the judge is worse than them by more than
        epsilon) is rejected after Benjamini-Yekutieli at ``q``; NaN when it cannot be tested.
    advantage_probability : float
        rho, the mean over annotators of rho^f_j (NaN when it cannot be tested).
    passed : bool
        omega >= 0.5: the judge may replace an annotator at this epsilon (False when it cannot be tested).
    epsilon, q : float
    alignment : str
    annotators : tuple of int
        The tested annotator slots (columns of ``ratings``).
    n_items : numpy.ndarray
        n_j, the items of each tested annotator.
    judge_advantage, human_advantage : numpy.ndarray
        rho^f_j and rho^h_j.
    statistic, pvalue, adjusted_pvalue : numpy.ndarray
        t_j, the one-sided p_j and its Benjamini-Yekutieli adjustment.
    rejected : numpy.ndarray of bool
    reason : str or None
        "cannot be tested: ..." when the sizes are below the minimum, else None.
    """

    winning_rate: float
    advantage_probability: float
    passed: bool
    epsilon: float
    q: float
    alignment: str
    annotators: tuple[int, ...]
    n_items: np.ndarray
    judge_advantage: np.ndarray
    human_advantage: np.ndarray
    statistic: np.ndarray
    pvalue: np.ndarray
    adjusted_pvalue: np.ndarray
    rejected: np.ndarray
    reason: str | None

    def to_frame(self):
        """One row per tested annotator."""
        import pandas as pd

        return pd.DataFrame({
            "annotator": list(self.annotators), "n_items": self.n_items, "rho_judge": self.judge_advantage,
            "rho_human": self.human_advantage, "t": self.statistic, "p": self.pvalue,
            "p_by": self.adjusted_pvalue, "rejected": self.rejected,
        })


def _check_epsilon(epsilon) -> float:
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, np.floating)) or not 0 <= epsilon < 1:
        raise ValueError(f"epsilon must be a number in [0, 1) (the paper suggests 0.1-0.2), got {epsilon!r}")
    return float(epsilon)


def _check_q(q) -> float:
    if isinstance(q, bool) or not isinstance(q, (int, float, np.floating)) or not 0 < q < 1:
        raise ValueError(f"q must be in (0, 1) (the false-discovery rate of Benjamini-Yekutieli), got {q!r}")
    return float(q)


def _check_inputs(judge, ratings) -> tuple[np.ndarray, np.ndarray]:
    """judge (...,) and ratings (..., m) -> flat (n,) and (n, m), NaN = not rated."""
    try:
        h = np.asarray(ratings, dtype=float)
        f = np.asarray(judge, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("judge and ratings must be numeric arrays (NaN = not rated)") from None
    if h.ndim < 2:
        raise ValueError(f"ratings must have the annotators on its last axis, (items, annotators) or (systems, "
                         f"inputs, annotators) as Dataset.ratings returns; got shape {h.shape}")
    if f.shape != h.shape[:-1]:
        raise ValueError(f"judge has shape {f.shape} but ratings {h.shape}: the judge needs one score per item, "
                         f"shape {h.shape[:-1]}")
    if np.isinf(h).any() or np.isinf(f).any():
        raise ValueError("judge and ratings must be finite; use NaN for a missing rating")
    return f.reshape(-1), h.reshape(-1, h.shape[-1])


def _alignment(values: np.ndarray, others: np.ndarray, mask: np.ndarray, kind: str) -> np.ndarray:
    """S(values, i, j) against the annotators ``mask`` marks in ``others``.

    values (..., n, m): the judge's (broadcast) or annotator j's score of item i; others (..., n, m); mask
    (..., n, m, m): mask[..., i, j, k] = annotator k != j rated item i. Returns (..., n, m).
    """
    o = np.where(mask, others[..., None, :], 0.0)
    count = mask.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        if kind == "mean-distance":
            return -np.abs(values - o.sum(axis=-1) / count)
        if kind == "rmse":
            sq = np.where(mask, (values[..., None] - others[..., None, :]) ** 2, 0.0)
            return -np.sqrt(sq.sum(axis=-1) / count)
        same = mask & (values[..., None] == others[..., None, :])
        return same.sum(axis=-1) / count


def _indicators(f: np.ndarray, h: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W^f, W^h (float 0/1) and the validity of each (item, annotator) cell; f (..., n), h (..., n, m)."""
    m = h.shape[-1]
    rated = ~np.isnan(h)
    others = rated[..., None, :] & ~np.eye(m, dtype=bool)  # (..., n, m_j, m_k)
    valid = rated & others.any(axis=-1) & ~np.isnan(f)[..., None]
    hz = np.where(rated, h, 0.0)
    fz = np.where(np.isnan(f), 0.0, f)
    s_f = _alignment(np.broadcast_to(fz[..., None], h.shape), hz, others, kind)
    s_h = _alignment(hz, hz, others, kind)
    tie = np.abs(s_f - s_h) <= _TIE_RTOL * np.maximum(1.0, np.maximum(np.abs(s_f), np.abs(s_h)))
    w_f = np.where(valid, (s_f >= s_h) | tie, False)
    w_h = np.where(valid, (s_h >= s_f) | tie, False)
    return w_f.astype(float), w_h.astype(float), valid


def _t_test(w_f: np.ndarray, w_h: np.ndarray, valid: np.ndarray, epsilon: float):
    """The one-sided paired t-test of each annotator (axis -1) over the items (axis -2).

    Returns n_j, rho^f_j, rho^h_j, t_j, p_j. Constant differences give t = -inf (p = 0) or +inf (p = 1),
    scipy's convention, and NaN where mean d equals epsilon exactly.
    """
    n = valid.sum(axis=-2)
    d = np.where(valid, w_h - w_f, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho_f = w_f.sum(axis=-2) / n
        rho_h = w_h.sum(axis=-2) / n
        mean = d.sum(axis=-2) / n
        dev = np.where(valid, d - mean[..., None, :], 0.0)
        sd = np.sqrt((dev**2).sum(axis=-2) / (n - 1))
        t = (mean - epsilon) / (sd / np.sqrt(n))
        p = stats.t.cdf(t, np.maximum(n - 1, 1))
    p = np.where(n >= 2, p, np.nan)
    return n, rho_f, rho_h, t, p


def alt_test(judge, ratings, *, epsilon: float = 0.2, alignment: str = "mean-distance", q: float = 0.05,
             min_items: int = 100, min_annotators: int = 3) -> AltTestResult:
    """The alternative annotator test (Calderon, Reichart & Dror, 2025) of a judge against human annotators.

    Parameters
    ----------
    judge : array_like
        The judge's score of every item, shape ``ratings.shape[:-1]`` (NaN = not judged).
    ratings : array_like
        Human ratings with the annotators on the last axis: (items, annotators), or (systems, inputs,
        annotators) as :meth:`metaeval.datasets.Dataset.ratings` returns; NaN = not rated. The judge must be
        on the humans' scale (:func:`equate` maps another scale onto it).
    epsilon : float
        The margin: how much lower the judge's advantage probability may be than a human's (the paper's
        cost-benefit parameter; it suggests 0.2 for expert annotators, 0.1 for crowd workers).
    alignment : {"mean-distance", "rmse", "accuracy"}
        S: minus the absolute distance to the other annotators' mean rating, minus the root mean squared
        difference from their ratings (both for numeric ratings), or the share of them giving the same label
        (for categories). On 0/1 labels the three order the judge and the human alike.
    q : float
        The false-discovery rate of the Benjamini-Yekutieli adjustment.
    min_items, min_annotators : int
        Annotators with fewer than ``min_items`` items are not tested; with fewer than ``min_annotators``
        tested annotators the result "cannot be tested".

    Examples
    --------
    Three annotators who rate alike except for noise, and a judge that is the item's true score (better than
    any one annotator at representing the others):

    >>> rng = np.random.default_rng(0)
    >>> truth = rng.normal(3, 1, 200)
    >>> ratings = np.clip(np.round(truth[:, None] + rng.normal(0, 0.8, (200, 3))), 1, 5)
    >>> res = alt_test(truth, ratings, epsilon=0.2)
    >>> res.winning_rate, res.passed
    (1.0, True)
    >>> round(res.advantage_probability, 3)
    0.682
    """
    epsilon, q = _check_epsilon(epsilon), _check_q(q)
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {alignment!r}")
    for name, value, low in (("min_items", min_items, 2), ("min_annotators", min_annotators, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    f, h = _check_inputs(judge, ratings)
    w_f, w_h, valid = _indicators(f, h, alignment)
    n, rho_f, rho_h, t, p = _t_test(w_f, w_h, valid, epsilon)
    tested = np.flatnonzero(n >= min_items)
    reason = None
    if tested.size < min_annotators:
        reason = (f"cannot be tested: {tested.size} annotator(s) have at least {min_items} items rated with the "
                  f"judge and another annotator (n_j = {n.tolist()}); the test needs {min_annotators}")
    elif np.isnan(p[tested]).any() or np.isinf(t[tested]).any():
        warn_degenerate("alt_test: every item gave annotator(s) "
                        f"{[int(j) for j in tested if not np.isfinite(t[j])]} the same difference W^h - W^f, so the "
                        "t statistic is infinite (p = 0 or 1) or undefined (NaN, not rejected)")
    pt = p[tested]
    adj = fdr(pt, method="by") if reason is None else np.full(pt.shape, np.nan)
    rejected = ~np.isnan(adj) & (adj <= q)
    omega = float(rejected.mean()) if reason is None else float("nan")
    rho = float(rho_f[tested].mean()) if reason is None else float("nan")
    return AltTestResult(
        winning_rate=omega, advantage_probability=rho, passed=bool(reason is None and omega >= 0.5),
        epsilon=epsilon, q=q, alignment=alignment, annotators=tuple(int(j) for j in tested),
        n_items=n[tested].astype(int), judge_advantage=rho_f[tested], human_advantage=rho_h[tested],
        statistic=t[tested], pvalue=pt, adjusted_pvalue=adj, rejected=rejected, reason=reason,
    )


def equate(scores, ratings) -> np.ndarray:
    """Map a judge's scores onto the humans' rating scale by equipercentile equating.

    Each score goes to the quantile of the pooled human ratings at the score's mid-rank percentile among the
    judge's scores (ties share one percentile), so the equated scores have the humans' distribution and the
    judge's order. NaN stays NaN.

    Examples
    --------
    >>> equate([0.1, 0.5, 0.3, 0.9], [[1, 2], [3, 4], [5, 5], [2, 4]]).tolist()
    [1.875, 4.0, 2.625, 5.0]
    """
    x = np.asarray(scores, dtype=float)
    pool = np.asarray(ratings, dtype=float).ravel()
    pool = pool[~np.isnan(pool)]
    if pool.size == 0:
        raise ValueError("ratings hold no rating to equate to")
    out = np.full(x.shape, np.nan)
    ok = ~np.isnan(x)
    if ok.any():
        ranks = stats.rankdata(x[ok])  # mid-ranks: ties share a percentile
        out[ok] = np.quantile(pool, (ranks - 0.5) / ok.sum())
    return out


# ----------------------------------------------------------------------------------------------------
# Calibration: the level at the boundary of H0


def simulate_ratings(n_trials: int, n_items: int, n_annotators: int, *, lost: float, levels=None,
                     noise: float = 1.0, judge_noise: float | None = None, rng=None) -> tuple[np.ndarray, np.ndarray]:
    """Human ratings and a judge for simulating the alt-test: (n_trials, n_items) judge, (.., n_annotators).

    Item i has a true score mu_i ~ N(0, 1); annotator k rates mu_i + noise * e_ik, rounded to the nearest of
    ``levels`` (None: left continuous). The judge rates like one more annotator (``judge_noise`` = ``noise``),
    except on a random share ``lost`` of the items, where it gives a value far outside the scale that
    loses to every annotator. With ``judge_noise`` None the judge is exchangeable with the annotators on the
    other items, so E[W^h - W^f] = lost exactly for every annotator, ties included (by symmetry on the
    exchangeable items, d = 1 on the others): with lost = epsilon, the boundary of H0, where the t-test should
    reject at its level.
    A ``judge_noise`` below ``noise`` gives a better judge (for power).
    """
    gen = check_rng(rng)
    mu = gen.standard_normal((n_trials, n_items))
    human = mu[..., None] + noise * gen.standard_normal((n_trials, n_items, n_annotators))
    judge = mu + (noise if judge_noise is None else judge_noise) * gen.standard_normal((n_trials, n_items))
    if levels is not None:
        grid = np.asarray(levels, dtype=float)
        edges = (grid[1:] + grid[:-1]) / 2
        human, judge = grid[np.searchsorted(edges, human)], grid[np.searchsorted(edges, judge)]
    span = float(np.ptp(human)) + 1.0
    gone = gen.random((n_trials, n_items)) < lost
    judge = np.where(gone, np.max(human) + 10 * span, judge)
    return judge, human


@dataclass(frozen=True)
class AltTestCalibration:
    """Result of :func:`alt_test_calibration`: rejection rates at the boundary of H0.

    Attributes
    ----------
    rejection_rate : float
        The share of (trial, annotator) t-tests with unadjusted p <= q: the t-test's type-I error at the
        boundary, to compare with q.
    rejection_se : float
        Its Monte-Carlo standard error, from the spread over trials of each trial's share of rejected
        annotators (the annotators of a trial share the judge and the items, so they are not independent).
    pass_rate : float
        The share of trials in which the judge passed (omega >= 0.5 after Benjamini-Yekutieli): the
        procedure's error of letting a judge replace annotators it is worse than by epsilon.
    pass_se : float
    n_trials, n_items, n_annotators : int
    epsilon, q : float
    """

    rejection_rate: float
    rejection_se: float
    pass_rate: float
    pass_se: float
    n_trials: int
    n_items: int
    n_annotators: int
    epsilon: float
    q: float


def alt_test_calibration(n_items: int, n_annotators: int, *, epsilon: float = 0.2, q: float = 0.05,
                         levels=(1, 2, 3, 4, 5), noise: float = 1.0, alignment: str = "mean-distance",
                         n_trials: int = 2000, batch: int = 200, rng=None) -> AltTestCalibration:
    """Type-I error of the alt-test at the boundary of H0, by simulation (:func:`simulate_ratings`).

    Examples
    --------
    >>> cal = alt_test_calibration(100, 3, epsilon=0.2, n_trials=400, rng=0)
    >>> abs(cal.rejection_rate - 0.05) < 3 * cal.rejection_se + 0.01
    True
    """
    epsilon, q = _check_epsilon(epsilon), _check_q(q)
    if alignment not in ALIGNMENTS:
        raise ValueError(f"alignment must be one of {ALIGNMENTS}, got {alignment!r}")
    gen = check_rng(rng)
    rejected_share, passes = [], 0
    for start in range(0, n_trials, batch):
        size = min(batch, n_trials - start)
        f, h = simulate_ratings(size, n_items, n_annotators, lost=epsilon, levels=levels, noise=noise, rng=gen)
        w_f, w_h, valid = _indicators(f, h, alignment)
        _, _, _, _, p = _t_test(w_f, w_h, valid, epsilon)
        p = np.where(np.isnan(p), 1.0, p)
        rejected_share.append((p <= q).mean(axis=1))
        adj = np.stack([fdr(row, method="by") for row in p])
        passes += int(((adj <= q).mean(axis=1) >= 0.5).sum())
    share = np.concatenate(rejected_share)
    r, s = float(share.mean()), passes / n_trials
    return AltTestCalibration(
        rejection_rate=r, rejection_se=float(share.std(ddof=1) / np.sqrt(n_trials)), pass_rate=s,
        pass_se=float(np.sqrt(max(s * (1 - s), 1e-12) / n_trials)), n_trials=n_trials, n_items=n_items,
        n_annotators=n_annotators, epsilon=epsilon, q=q,
    )


# ----------------------------------------------------------------------------------------------------
# Power: how many items and annotators


@dataclass(frozen=True)
class RatingModel:
    """A model of ratings for planning the alt-test: true item scores of mean ``mean`` and standard deviation
    ``spread``, annotators adding noise of sd ``noise``, a judge adding noise of sd ``judge_noise``, ratings
    rounded to ``levels`` (None: continuous)."""

    mean: float
    spread: float
    noise: float
    judge_noise: float
    levels: tuple[float, ...] | None


def fit_rating_model(ratings, judge) -> RatingModel:
    """Fit :class:`RatingModel` to a pilot by the method of moments: the annotators' within-item variance,
    the variance of the item means beyond it, and the judge's distance from the item means (minus the part
    the mean of m annotators carries). Items with fewer than 2 ratings are not used."""
    h = np.asarray(ratings, dtype=float).reshape(-1, np.shape(ratings)[-1])
    f = np.asarray(judge, dtype=float).reshape(-1)
    counts = (~np.isnan(h)).sum(axis=1)
    ok = (counts >= 2) & ~np.isnan(f)
    h, f, counts = h[ok], f[ok], counts[ok]
    if h.shape[0] < 3:
        raise ValueError("the pilot needs at least 3 items with 2 ratings and a judge score")
    means = np.nanmean(h, axis=1)
    within = float(np.nansum((h - means[:, None]) ** 2) / np.sum(counts - 1))
    m = float(np.mean(counts))
    spread2 = max(float(np.var(means, ddof=1)) - within / m, 1e-12)
    judge2 = max(float(np.mean((f - means) ** 2)) - within / m, 0.0)
    values = np.unique(h[~np.isnan(h)])
    levels = tuple(float(v) for v in values) if values.size <= 10 else None
    return RatingModel(mean=float(np.mean(means)), spread=math.sqrt(spread2), noise=math.sqrt(within),
                       judge_noise=math.sqrt(judge2), levels=levels)


def alt_test_power(model: RatingModel, n_items: int, n_annotators: int, *, epsilon: float = 0.2, q: float = 0.05,
                   alignment: str = "mean-distance", n_trials: int = 500, rng=None) -> dict[str, float]:
    """The probability that the alt-test passes the judge of ``model`` with ``n_items`` items rated by
    ``n_annotators`` annotators (each rates every item), by simulation, with its Monte-Carlo SE.

    Examples
    --------
    >>> good = RatingModel(mean=3.0, spread=1.0, noise=1.0, judge_noise=0.5, levels=(1, 2, 3, 4, 5))
    >>> alt_test_power(good, 100, 3, n_trials=200, rng=0)["power"] > 0.9
    True
    """
    gen = check_rng(rng)
    scale = model.spread if model.spread > 0 else 1.0
    levels = None if model.levels is None else np.asarray(model.levels)
    # simulate on the true-score scale of N(0, 1): rescale the noises and move the levels to it
    grid = None if levels is None else tuple((levels - model.mean) / scale)
    passed: list[bool] = []
    for start in range(0, n_trials, 100):
        size = min(100, n_trials - start)
        f, h = simulate_ratings(size, n_items, n_annotators, lost=0.0, levels=grid, noise=model.noise / scale,
                                judge_noise=model.judge_noise / scale, rng=gen)
        w_f, w_h, valid = _indicators(f, h, alignment)
        _, _, _, _, p = _t_test(w_f, w_h, valid, epsilon)
        p = np.where(np.isnan(p), 1.0, p)
        passed.extend(bool((fdr(row, method="by") <= q).mean() >= 0.5) for row in p)
    rate = float(np.mean(passed))
    return {"power": rate, "se": math.sqrt(max(rate * (1 - rate), 1e-12) / n_trials), "n_items": n_items,
            "n_annotators": n_annotators}
