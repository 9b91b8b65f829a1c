"""Lin (2004), "Looking for a few good metrics: ROUGE and its evaluation" / "how many samples are enough?",
as library calls for ``notebooks/30_lin2004.py``.

* :func:`measure_table`: Tables 1-3, system-level Pearson correlation of Lin's 17 measures under CASE / STEM /
  STOP with one and several references, bootstrap CIs, the best per column and the measures statistically
  indistinguishable from it;
* :func:`sample_size_curves`: Tables 3-6 and Figures 2-3, how the correlation and its 95% interval width (dCI)
  change with the number of documents and references, resampling documents as Lin did, or documents and
  systems (Boot-Both, Deutsch et al., 2021);
* :func:`critical_r` and :func:`critical_sample_size`: the smallest sample whose lower interval end
  (mean - dCI/2) exceeds the critical value of Pearson's r.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from metaeval.stats.correlation import system_corr
from metaeval.data.datasets import Dataset
from metaeval.stats.resampling import bootstrap_ci, draw_counts
from metaeval.data.scoring import rouge_matrices
from metaeval.stats.significance import pairwise_tests
from metaeval.metrics.variants import RougeVariant, lin_measures

__all__ = ["SETTINGS", "lin_variants", "rouge_matrices_lin", "measure_table", "sample_size_curves",
           "critical_r", "critical_sample_size"]

#: Lin's three preprocessing settings: (stemming, stopword removal).
SETTINGS = {"CASE": (False, False), "STEM": (True, False), "STOP": (True, True)}


def lin_variants(measures=None, *, stat: str = "R", settings: Sequence[str] = tuple(SETTINGS)) -> dict:
    """(setting, measure name) -> summary-level RougeVariant."""
    measures = measures or lin_measures()
    return {
        (s, m.name): RougeVariant(m, SETTINGS[s][0], SETTINGS[s][1], stat, "A")  # type: ignore[arg-type]
        for s in settings
        for m in measures
    }


def rouge_matrices_lin(ds: Dataset, variants: Mapping, n_refs: int, *, sentences="ptb", cache=True) -> dict:
    """Key -> N x M matrix of each variant, scored with the first ``n_refs`` references."""
    mats = rouge_matrices(ds, list(variants.values()), n_refs=n_refs, sentences=sentences, cache=cache)
    return {key: mats[v.signature] for key, v in variants.items()}


def measure_table(
    matrices: Mapping[tuple, np.ndarray],
    Z: np.ndarray,
    *,
    n_resamples: int = 1000,
    resample: str = "inputs",
    alpha: float = 0.05,
    rng=None,
) -> pd.DataFrame:
    """System-level Pearson r of each (setting, measure) with bootstrap CIs; per setting, the best measure and
    those not significantly worse than it (one-sided paired bootstrap test, same resampling)."""
    rng = np.random.default_rng(rng)
    rows = []
    settings = sorted({s for s, _ in matrices}, key=list(SETTINGS).index)
    for setting in settings:
        keys = [k for k in matrices if k[0] == setting]
        mats = {k[1]: matrices[k] for k in keys}
        child = rng.spawn(1)[0]
        cis = {name: bootstrap_ci(X, Z, level="system", resample=resample, n_resamples=n_resamples, rng=child)
               for name, X in mats.items()}
        tests = pairwise_tests(mats, Z, test=f"boot-{resample}", level="system", n_resamples=n_resamples, rng=child)
        best = int(np.nanargmax(tests.correlations))
        for k, name in enumerate(tests.names):
            rows.append({
                "setting": setting, "measure": name, "r": tests.correlations[k],
                "low": cis[name].confidence_interval.low, "high": cis[name].confidence_interval.high,
                "best": k == best,
                "indistinguishable": k == best or not tests.pvalues[best, k] < alpha,
                "p_best_beats": np.nan if k == best else tests.pvalues[best, k],
            })
    return pd.DataFrame(rows)


def critical_r(n_systems: int, alpha: float = 0.05) -> float:
    """Critical value of Pearson's r for a two-sided test at ``alpha`` with n_systems - 2 degrees of freedom
    (Lin: 0.576 for df = 10, 0.532 for df = 12).

    Examples
    --------
    >>> round(critical_r(12), 3), round(critical_r(14), 3)
    (0.576, 0.532)
    """
    df = n_systems - 2
    if df < 1:
        raise ValueError("need at least 3 systems")
    t = stats.t.ppf(1 - alpha / 2, df)
    return float(t / np.sqrt(df + t * t))


def sample_size_curves(
    metric: np.ndarray,
    human: np.ndarray,
    sizes: Sequence[int],
    *,
    n_resamples: int = 1000,
    resample: str = "inputs",
    system: int | None = None,
    rng=None,
) -> tuple[pd.DataFrame, dict]:
    """Correlation between system means of ``metric`` and ``human`` over s documents drawn with replacement.

    Parameters
    ----------
    metric, human : arrays (N, M)
    sizes : document counts s to try
    resample : {"inputs", "both"}
        Lin resampled documents only; ``"both"`` also resamples the systems (Boot-Both).
    system : int, optional
        Row index of a system whose mean metric and human scores are reported too (Lin's system R / T).

    Returns
    -------
    summary : DataFrame
        Per size and coefficient: mean correlation ``M``, ``dCI`` (width of the 2.5-97.5 percentile
        interval), ``low``, ``high``; with ``system``, that system's mean and dCI of both scores.
    draws : dict
        (size, coefficient) -> the resampled correlations (for boxplots).
    """
    if resample not in ("inputs", "both"):
        raise ValueError(f"resample must be 'inputs' or 'both', got {resample!r}")
    X, Z = np.asarray(metric, float), np.asarray(human, float)
    N, M = X.shape
    rng = np.random.default_rng(rng)
    rows, draws = [], {}
    for s, child in zip(sizes, rng.spawn(len(sizes))):
        if not 1 <= s:
            raise ValueError(f"sizes must be positive, got {s}")
        docs = child.integers(0, M, size=(n_resamples, s))
        counts = draw_counts(docs, M)
        xm = np.einsum("bm,nm->bn", counts, X) / s
        zm = np.einsum("bm,nm->bn", counts, Z) / s
        if resample == "both":
            rows_idx = child.integers(0, N, size=(n_resamples, N))
            xs, zs = np.take_along_axis(xm, rows_idx, 1), np.take_along_axis(zm, rows_idx, 1)
        else:
            xs, zs = xm, zm
        row = {"size": s}
        for coef in ("pearson", "spearman"):
            r = system_corr(xs, zs, coef)
            r = r[~np.isnan(r)]
            draws[(s, coef)] = r
            low, high = np.percentile(r, [2.5, 97.5])
            row.update({f"{coef}_M": r.mean(), f"{coef}_dCI": high - low, f"{coef}_low": low, f"{coef}_high": high})
        if system is not None:
            for label, values in (("metric", xm[:, system]), ("human", zm[:, system])):
                low, high = np.percentile(values, [2.5, 97.5])
                row.update({f"system_{label}_M": values.mean(), f"system_{label}_dCI": high - low})
        rows.append(row)
    return pd.DataFrame(rows), draws


def critical_sample_size(summary: pd.DataFrame, r_crit: float, coefficient: str = "pearson") -> float:
    """Lin's critical sample size: the smallest size whose mean correlation minus dCI/2 exceeds ``r_crit``
    (NaN if none does)."""
    ok = summary[summary[f"{coefficient}_M"] - summary[f"{coefficient}_dCI"] / 2 > r_crit]
    return float(ok["size"].min()) if len(ok) else float("nan")


# ----------------------------------------------------------------------------------------------------
# The paper's values and dataset-agnostic defaults

_T1_1REF = {  # DUC 2001, 100-word single-document task, 1 reference: CASE, STEM, STOP
    "R-1": (0.76, 0.76, 0.84), "R-2": (0.84, 0.84, 0.83), "R-3": (0.82, 0.83, 0.80), "R-4": (0.81, 0.81, 0.77),
    "R-5": (0.79, 0.79, 0.75), "R-6": (0.76, 0.77, 0.71), "R-7": (0.73, 0.74, 0.65), "R-8": (0.69, 0.71, 0.61),
    "R-9": (0.65, 0.67, 0.59), "R-L": (0.83, 0.83, 0.83), "R-S*": (0.74, 0.74, 0.80), "R-S4": (0.84, 0.85, 0.84),
    "R-S9": (0.84, 0.85, 0.84), "R-SU*": (0.74, 0.74, 0.81), "R-SU4": (0.84, 0.84, 0.85),
    "R-SU9": (0.84, 0.84, 0.85), "R-W1.2": (0.85, 0.85, 0.85),
}
_T1_3REFS = {  # the same task with 3 references
    "R-1": (0.80, 0.78, 0.84), "R-2": (0.87, 0.87, 0.86), "R-3": (0.86, 0.86, 0.85), "R-4": (0.84, 0.84, 0.83),
    "R-5": (0.83, 0.83, 0.81), "R-6": (0.81, 0.81, 0.79), "R-7": (0.79, 0.80, 0.76), "R-8": (0.78, 0.78, 0.72),
    "R-9": (0.76, 0.76, 0.69), "R-L": (0.86, 0.86, 0.86), "R-S*": (0.78, 0.77, 0.82), "R-S4": (0.87, 0.88, 0.87),
    "R-S9": (0.87, 0.88, 0.87), "R-SU*": (0.78, 0.77, 0.83), "R-SU4": (0.87, 0.87, 0.87),
    "R-SU9": (0.87, 0.87, 0.87), "R-W1.2": (0.87, 0.87, 0.87),
}

#: Lin's Table 1, DUC 2001 100-word single-document summaries (12 systems): Pearson r of each measure with
#: mean coverage, ``(references, setting, measure) -> r`` for 1 and 3 references.
PAPER_TABLE1_DUC2001 = {
    (refs, setting, measure): values[k]
    for refs, table in ((1, _T1_1REF), (3, _T1_3REFS))
    for measure, values in table.items()
    for k, setting in enumerate(SETTINGS)
}

#: Lin's critical sample sizes on the same task (Section 5): documents needed until mean r - dCI/2 exceeds
#: the critical r (0.576 for 12 systems; Lin tried 1 to 136 documents in steps of 5),
#: ``(measure, references) -> documents``.
PAPER_CRITICAL_SIZES = {("R-1", 1): 86, ("R-1", 3): 71, ("R-SU4", 1): 86, ("R-SU4", 3): 66}
PAPER_N_SYSTEMS = 12


def default_ref_counts(n_references: int, *, at_most: int = 3) -> list[int]:
    """Lin's 1, 2, 3 references, limited to what the dataset has.

    >>> default_ref_counts(11), default_ref_counts(1)
    ([1, 2, 3], [1])
    """
    if n_references < 1:
        raise ValueError(f"the dataset needs at least one reference per input, got {n_references}")
    return list(range(1, min(at_most, n_references) + 1))


def mark(row) -> str:
    """A visible mark for the wide measure table: ``0.843 ▲`` best in its column, ``0.838 =`` statistically
    indistinguishable from the best, ``0.612`` significantly worse.

    >>> mark({"r": 0.8431, "best": True, "indistinguishable": True})
    '0.843 ▲'
    >>> mark({"r": 0.81, "best": False, "indistinguishable": True}), mark({"r": 0.6, "best": False,
    ...                                                                   "indistinguishable": False})
    ('0.810 =', '0.600')
    """
    if row["best"]:
        return f"{row['r']:.3f} ▲"
    return f"{row['r']:.3f} =" if row["indistinguishable"] else f"{row['r']:.3f}"


#: The key to :func:`mark`, printed under the table.
MARK_KEY = ("▲ best measure of its column; = not significantly worse than the best (one-sided paired bootstrap "
            "test over documents); no mark: significantly worse than the best")
