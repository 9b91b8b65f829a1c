"""Deutsch, Dror & Roth (2021), Table 1: how often does a confidence interval computed on half of the systems
and inputs contain the correlation measured on the other half? (``notebooks/20_deutsch2021_ci_simulation.py``)

* :func:`split_halves` and :func:`ci_coverage_simulation` (the simulation), :func:`coverage_table` (coverage
  with exact intervals, the degenerate and best marks), :func:`compare_coverage` (next to the paper's
  :data:`PAPER_TABLE1`, by Fisher's exact test).

Every name here is also reachable as ``metaeval.studies.deutsch.<name>``. Every trial draws from its own child
generator (``rng.spawn``), so results do not depend on how trials are scheduled.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from metaeval._warnings import warn_degenerate
from metaeval.stats.correlation import effective_n, fisher_interval, level_corr
from metaeval.stats.resampling import percentile_intervals

__all__ = [
    "split_halves",
    "ci_coverage_simulation",
    "coverage_table",
    "compare_coverage",
    "CI_METHODS",
    "PAPER_TABLE1_FABBRI",
    "PAPER_TABLE1_BHANDARI",
    "PAPER_TABLE1",
    "PAPER_TRIALS",
]

CI_METHODS = ("fisher", "boot-systems", "boot-inputs", "boot-both")
#: Deutsch et al. (2021) Table 1, SummEval (Fabbri) column, QAEval-F1, Pearson.
PAPER_TABLE1_FABBRI = {
    "system": {"fisher": 0.87, "boot-systems": 0.81, "boot-inputs": 0.70, "boot-both": 0.98},
    "summary": {"fisher": 1.00, "boot-systems": 0.73, "boot-inputs": 0.73, "boot-both": 0.93},
}
#: The same, REALSumm (Bhandari et al., 2020) column: QAEval-F1 against LitePyramid recall.
PAPER_TABLE1_BHANDARI = {
    "system": {"fisher": 0.85, "boot-systems": 0.80, "boot-inputs": 0.68, "boot-both": 0.94},
    "summary": {"fisher": 1.00, "boot-systems": 0.72, "boot-inputs": 0.62, "boot-both": 0.88},
}
#: Table 1 per paper column (see :func:`metaeval.studies.deutsch.paper_column`); 1000 trials each.
PAPER_TABLE1 = {"summeval": PAPER_TABLE1_FABBRI, "realsumm": PAPER_TABLE1_BHANDARI}
PAPER_TRIALS = 1000


def split_halves(n_systems: int, n_inputs: int, rng: np.random.Generator):
    """Random halves of systems and of inputs: ``(systems_A, systems_B, inputs_A, inputs_B)``, sorted.

    With an odd count the extra one goes to B. A and B are disjoint and together cover everything.

    Examples
    --------
    >>> a, b, c, d = split_halves(16, 100, np.random.default_rng(0))
    >>> len(a), len(b), len(c), len(d), len(set(a) | set(b))
    (8, 8, 50, 50, 16)
    """
    if n_systems < 2 or n_inputs < 2:
        raise ValueError("need at least 2 systems and 2 inputs to split")
    sys_perm = rng.permutation(n_systems)
    inp_perm = rng.permutation(n_inputs)
    hs, hi = n_systems // 2, n_inputs // 2
    return (np.sort(sys_perm[:hs]), np.sort(sys_perm[hs:]), np.sort(inp_perm[:hi]), np.sort(inp_perm[hi:]))


def ci_coverage_simulation(
    X,
    Z,
    *,
    n_trials: int = 1000,
    n_resamples: int = 1000,
    coefficient: str = "pearson",
    levels: Sequence[str] = ("system", "summary"),
    methods: Sequence[str] = CI_METHODS,
    confidence_level: float = 0.95,
    rng=None,
    progress: bool = False,
) -> pd.DataFrame:
    """Deutsch et al.'s CI simulation: does a CI computed on one half of the systems and inputs contain the
    correlation measured on the other half?

    Each trial splits systems and inputs into halves A and B (:func:`split_halves`), computes a CI on the
    A-systems x A-inputs submatrix with each method, and records whether the correlation on the
    B-systems x B-inputs submatrix lies inside, above or below it.

    Returns
    -------
    DataFrame
        One row per trial x level x method: ``trial, level, method, low, high, target, defined, contains,
        too_high, too_low`` (``too_high``: the CI lies above the target; ``defined``: the interval and the
        target are numbers, e.g. not Fisher's interval of a half with n <= 3 systems).
    """
    X, Z = np.asarray(X, float), np.asarray(Z, float)
    if X.ndim != 2 or X.shape[0] < 6 or X.shape[1] < 6:
        raise ValueError(f"X and Z must have at least 6 systems and 6 inputs (each half needs 3 of each for a "
                         f"correlation and its interval), got shape {X.shape}")
    unknown = set(methods) - set(CI_METHODS)
    if unknown:
        raise ValueError(f"methods must be among {CI_METHODS}, got {sorted(unknown)}")
    rng = np.random.default_rng(rng)
    rows = []
    children = rng.spawn(n_trials)
    if progress:
        from tqdm import tqdm

        children = tqdm(children, desc="trials")
    for trial, child in enumerate(children):
        sa, sb, ia, ib = split_halves(X.shape[0], X.shape[1], child)
        XA, ZA = X[np.ix_(sa, ia)], Z[np.ix_(sa, ia)]
        XB, ZB = X[np.ix_(sb, ib)], Z[np.ix_(sb, ib)]
        for level in levels:
            target = float(level_corr(XB, ZB, level, coefficient))
            r = float(level_corr(XA, ZA, level, coefficient))  # Fisher's, and the bootstrap's statistic
            # The bootstrap intervals of the A half, all at once: the intervals, warnings and draws of one bootstrap_ci
            # call per method in the order of ``methods``, each from the trial's generator, the half validated once.
            # (Its warnings name the line of the call, which executed notebooks record.)
            boot = [method for method in methods if method != "fisher"]
            intervals = iter(percentile_intervals(XA, ZA, level=level, coefficient=coefficient, statistic=r,
                                                  resamples=[method.split("-")[1] for method in boot],
                                                  n_resamples=n_resamples, confidence_level=confidence_level, rng=child)
                             if boot else [])
            for method in methods:
                if method == "fisher":
                    low, high = fisher_interval(r, effective_n(XA, level=level), coefficient, confidence_level)
                else:
                    low, high = next(intervals)
                rows.append((trial, level, method, low, high, target))
    frame = pd.DataFrame(rows, columns=["trial", "level", "method", "low", "high", "target"])
    # e.g. Fisher's interval needs n > 3 systems in a half, and a constant half has no correlation
    frame["defined"] = np.isfinite(frame[["low", "high", "target"]].to_numpy()).all(axis=1)
    frame["contains"] = (frame["low"] <= frame["target"]) & (frame["target"] <= frame["high"])
    frame["too_high"] = frame["low"] > frame["target"]
    frame["too_low"] = frame["high"] < frame["target"]
    return frame


def _exact_two_proportions(k1, n1, k2, n2, alternative: str = "two-sided") -> float:
    """Fisher's exact test of two binomial proportions k1/n1 and k2/n2 (exact at any number of trials)."""
    if min(n1, n2) <= 0:
        return np.nan
    return float(stats.fisher_exact([[k1, n1 - k1], [k2, n2 - k2]], alternative=alternative).pvalue)


def coverage_table(trials: pd.DataFrame, *, nominal: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Coverage per level and method, its exact (Clopper-Pearson) 95 % interval, mean width, and the mark of Table 1.

    ``over_pvalue`` is the exact binomial test of "coverage > nominal" (one-sided), ``under_pvalue`` of
    "coverage < nominal". A method is ``degenerate`` when its intervals are uninformative: it covers every
    trial and enough trials to show that this is more than the nominal level (``over_pvalue < alpha``; as
    Fisher's at the summary level, which covers all of the paper's 1000 trials: the paper's "less than 1.0"),
    or its mean width is at least 95 % of the whole range [-1, 1]. A sample in which every trial covered is
    not degenerate by itself: 30 of 30 trials at a true coverage of 0.95 happen with probability 0.21.

    ``best`` marks, per level, the method whose coverage is closest to ``nominal`` among the non-degenerate
    methods, when its coverage differs significantly from every other method's (one-sided Fisher's exact
    test at ``alpha``, in the direction observed; the paper's bold: "closest to 0.95 (and less than 1.0) and
    significantly different", which used a z-test of two proportions: the exact test agrees with it at the
    paper's 1000 trials and stays valid at 30). ``best_pvalue`` is the largest of those p-values.
    """
    defined = trials["defined"] if "defined" in trials else pd.Series(True, index=trials.index)
    counted = trials[["contains", "too_high", "too_low"]].astype(float).where(defined)  # undefined: not counted
    g = counted.assign(level=trials["level"], method=trials["method"], width=(trials["high"] - trials["low"]),
                       defined=defined).groupby(["level", "method"], sort=False)
    table = g.agg(coverage=("contains", "mean"), too_high=("too_high", "mean"), too_low=("too_low", "mean"),
                  mean_width=("width", "mean"), trials=("defined", "sum"), undefined=("defined", "size"),
                  covered=("contains", "sum")).reset_index()
    table["undefined"] -= table["trials"]
    table["covered"] = table["covered"].round().astype(int)
    for row in table[table["undefined"] > 0].itertuples():
        warn_degenerate(f"{row.method} at {row.level} level: the interval or its target is undefined in "
                        f"{row.undefined} of {row.undefined + row.trials} trials (e.g. Fisher's interval needs "
                        f"more than 3 systems per half); the coverage counts the {row.trials} others"
                        + (" and is NaN" if row.trials == 0 else ""))
    table["se"] = np.sqrt(table["coverage"] * (1 - table["coverage"]) / table["trials"])

    def exact(k: int, n: int) -> tuple[float, float, float, float]:
        if n == 0:
            return (np.nan,) * 4
        ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        return (ci.low, ci.high, stats.binomtest(k, n, nominal, alternative="greater").pvalue,
                stats.binomtest(k, n, nominal, alternative="less").pvalue)

    columns = ["ci_low", "ci_high", "over_pvalue", "under_pvalue"]
    table[columns] = pd.DataFrame([exact(int(k), int(n)) for k, n in zip(table["covered"], table["trials"])],
                                  index=table.index, columns=columns, dtype=float)
    table["degenerate"] = (((table["coverage"] >= 1.0) & (table["over_pvalue"] < alpha))
                           | (table["mean_width"] >= 0.95 * 2))
    table["best"] = False
    table["best_pvalue"] = np.nan
    for level, block in table.groupby("level", sort=False):
        block = block[block["trials"] > 0]
        candidates = block[~block["degenerate"]]
        if candidates.empty:
            continue
        best_idx = (candidates["coverage"] - nominal).abs().idxmin()
        best = table.loc[best_idx]
        worst_p = 0.0
        for idx, other in block.iterrows():
            if idx == best_idx:
                continue
            direction = "greater" if best["coverage"] >= other["coverage"] else "less"
            p = _exact_two_proportions(int(best["covered"]), int(best["trials"]), int(other["covered"]),
                                       int(other["trials"]), direction)
            worst_p = max(worst_p, p)
        table.loc[best_idx, "best_pvalue"] = worst_p if len(block) > 1 else np.nan
        table.loc[best_idx, "best"] = bool(len(block) > 1 and worst_p < alpha)
    return table


def compare_coverage(table: pd.DataFrame, paper: Mapping[str, Mapping[str, float]], *,
                     paper_trials: int = PAPER_TRIALS) -> pd.DataFrame:
    """Table 1 next to the paper: ``paper``, ``difference`` (ours - paper) and ``pvalue``, Fisher's exact test
    of the two coverages as proportions over independent trials (ours: ``trials``; the paper's:
    ``paper_trials``, its coverage times that many covered trials), valid at any number of trials (a z-test
    with a floored variance is not: 30 of 30 against the paper's 0.98 gave z = +4.2, while the exact test
    gives p = 1.0).

    Examples
    --------
    >>> t = pd.DataFrame({"level": ["system"], "method": ["boot-both"], "coverage": [1.0], "trials": [30]})
    >>> compare_coverage(t, PAPER_TABLE1_FABBRI)[["paper", "difference", "pvalue"]].round(2).values.tolist()
    [[0.98, 0.02, 1.0]]
    """
    out = table.copy()
    out["paper"] = [paper.get(lv, {}).get(m, np.nan) for lv, m in zip(out["level"], out["method"])]
    out["difference"] = out["coverage"] - out["paper"]
    pvalues = []
    for cov, n, ref in zip(out["coverage"], out["trials"], out["paper"]):
        if np.isnan(ref) or np.isnan(cov) or n == 0:
            pvalues.append(np.nan)
            continue
        pvalues.append(_exact_two_proportions(int(round(cov * n)), int(n), int(round(ref * paper_trials)),
                                              paper_trials))
    out["pvalue"] = pvalues
    return out

