"""Evaluation with few human labels: does the prediction-powered interval of a system-level correlation
(:func:`metaeval.stats.ppi.ppi_correlation`) cover the truth when humans rated only a share of the inputs?

:func:`coverage_table` hides the human scores of a random share of an embedded dataset's inputs (all systems'
outputs on an input together), takes the coefficient on the full data as the truth, and counts how often the
interval contains it, for the prediction-powered bootstrap with a given judge and for the humans-only interval
(the coefficient on the labelled inputs alone, Boot-Inputs percentile interval, :func:`bootstrap_ci`) on the
same labelled inputs. Both intervals resample inputs for the dataset's fixed systems (the truth is these
systems' coefficient). Since the truth is the full data's coefficient, not the population's, both intervals
are conservative when the labelled share is large (the labelled inputs are part of the truth).

:data:`DESIGNS` names, per dataset, the human score, the metric whose correlation is estimated and judges of
several qualities; ``results/few_labels/coverage.csv`` is ``coverage_table`` on SummEval and HANNA with the
defaults (:func:`default_table`, 300 replicates, 1000 resamples, seed 0: 20 minutes on a loaded 2-core
machine); its summary, and the method's derivation, are in :func:`metaeval.stats.ppi.ppi_correlation`'s
docstring. Regenerate with::

    python -c "from metaeval.studies.few_labels_coverage import default_table; from metaeval._io import \
    write_table; write_table(default_table(), 'results/few_labels/coverage.csv', index=False, float_format='%.4f')"

Every replicate draws from its own child generator (``rng.spawn``), so results do not depend on scheduling;
a replicate's labelled inputs are the same for every judge and for the humans-only interval.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval.stats.correlation import check_confidence_level, check_rng, level_corr
from metaeval.stats.ppi import (
    BOOTSTRAP_METHODS,
    INTERVAL_METHOD,
    MIN_LABELLED_CORRELATION,
    bootstrap_interval,
    ppi_correlation_samples,
)
from metaeval.stats.resampling import bootstrap_ci, check_n_resamples

__all__ = ["HUMANS_ONLY", "NO_JUDGE", "Design", "DESIGNS", "SHARES", "COEFFICIENTS", "coverage_table", "default_table",
           "below_nominal"]

HUMANS_ONLY = "humans only"
#: PPI with ``lam = 0``: the humans' own means on the labelled inputs, the metric's system scores on all inputs;
#: what a judge adds is the difference between a judge's row and this one.
NO_JUDGE = "no judge (lam = 0)"
SHARES = (0.05, 0.10, 0.25, 0.50)
COEFFICIENTS = ("pearson", "kendall", "pairwise-accuracy")


@dataclass(frozen=True)
class Design:
    """The scores one dataset's simulation uses: the human score, the metric evaluated, and the judges (label ->
    score) that impute the human score on unlabelled inputs."""

    human: str
    metric: str
    judges: Mapping[str, str] = field(default_factory=dict)


#: SummEval has no LLM judge embedded: its crowd ratings (turker.relevance, a weak judge of the experts'
#: relevance) stand in for a cheap annotator. HANNA's LLM judges: ChatGPT's and Llama-13B's relevance ratings
#: (first of four runs). "good"/"weak": by their summary-level Pearson with the human score (SummEval
#: bertscore.recall 0.37, rouge-1.precision 0.13, turker 0.03; HANNA ChatGPT 0.57, Llama-13B 0.26, BERTScore F1
#: 0.57).
DESIGNS: dict[str, Design] = {
    "summeval": Design("expert.relevance", "rouge-2.recall", {
        "the metric itself": "rouge-2.recall",
        "good metric (bertscore.recall)": "bertscore.recall",
        "weak metric (rouge-1.precision)": "rouge-1.precision",
        "crowd (turker.relevance)": "turker.relevance",
    }),
    "hanna": Design("human.relevance", "BERTScore F1", {
        "the metric itself": "BERTScore F1",
        "LLM (ChatGPT RE 1)": "ChatGPT RE 1",
        "weak LLM (Llama-13B RE 1)": "Llama-13B RE 1",
    }),
}


def below_nominal(coverage: np.ndarray, n_replicates: np.ndarray, confidence_level: float) -> np.ndarray:
    """True where a simulated coverage falls short of ``confidence_level`` by more than Monte-Carlo error: by
    more than two binomial standard errors ``sqrt(level (1 - level) / n_replicates)``.

    Examples
    --------
    >>> below_nominal(np.array([0.93, 0.91]), np.array([400, 400]), 0.95).tolist()
    [False, True]
    """
    se = np.sqrt(confidence_level * (1 - confidence_level) / np.asarray(n_replicates, dtype=float))
    return np.asarray(coverage) < confidence_level - 2 * se


def _covers(low: float, high: float, truth: float) -> bool:
    return bool(low <= truth <= high)  # an undefined (NaN) interval covers nothing


def coverage_table(
    dataset: str = "summeval",
    *,
    design: Design | None = None,
    shares: Sequence[float] = SHARES,
    coefficients: Sequence[str] = COEFFICIENTS,
    n_replicates: int = 200,
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    rng: np.random.Generator | int | None = 0,
    methods: Sequence[str] = BOOTSTRAP_METHODS,
    data=None,
) -> pd.DataFrame:
    """Simulated coverage and width of the prediction-powered and the humans-only intervals of a system-level
    coefficient, per labelled share, judge and coefficient.

    Parameters
    ----------
    dataset : str
        An embedded dataset with a design in :data:`DESIGNS` (or any, with ``design``).
    design : Design, optional
        Human score, metric and judges (default: ``DESIGNS[dataset]``).
    shares : sequence of float in (0, 1)
        Labelled shares of the inputs; the labelled count is ``round(share * M)``, at least 2.
    coefficients : sequence of str
        System-level coefficients (:data:`metaeval.stats.correlation.COEFFICIENTS`).
    n_replicates : int
        Random labelled subsets per share (Monte-Carlo standard error of a 95 % coverage: 0.0154 at 200).
    n_resamples : int
        Bootstrap resamples per interval.
    confidence_level : float
    rng : Generator, int or None
    methods : sequence of {"basic", "percentile"}
        Bootstrap intervals to evaluate (:func:`metaeval.stats.ppi.bootstrap_interval`), for both methods.
    data : Dataset, optional
        An already loaded dataset (else :func:`metaeval.data.datasets.load`).

    Returns
    -------
    DataFrame
        One row per (share, coefficient, interval method, judge), the humans-only rows with ``judge = "humans
        only"``: ``dataset, metric, human, judge, judge_score, share, n_labelled, coefficient, interval, truth,
        coverage, mc_se, mean_width, n_undefined, n_replicates, below_nominal, human_only_width`` (the humans-only
        mean width on the same subsets), ``width_ratio`` and ``offered`` (the interval
        :func:`~metaeval.stats.ppi.ppi_correlation` gives for the coefficient, at a size it accepts). The row
        ``judge = "no judge (lam = 0)"`` is PPI without a judge (humans' means on the labelled inputs, the
        metric on all inputs), so a judge's own contribution is its difference from that row.

    Examples
    --------
    >>> t = coverage_table("hanna", shares=[0.25], coefficients=["pearson"], n_replicates=10, n_resamples=100)
    >>> sorted(set(t["judge"]))[-1], t["n_labelled"].iloc[0], bool(t["coverage"].between(0, 1).all())
    ('weak LLM (Llama-13B RE 1)', np.int64(24), True)
    """
    check_confidence_level(confidence_level)
    check_n_resamples(n_resamples)
    check_n_resamples(n_replicates)
    if design is None:
        if dataset not in DESIGNS:
            raise ValueError(f"dataset {dataset!r} has no design in DESIGNS ({sorted(DESIGNS)}); "
                             "pass design=Design(...)")
        design = DESIGNS[dataset]
    if data is None:
        from metaeval.data import datasets

        data = datasets.load(dataset)
    Z = data.matrix(design.human)
    X = data.matrix(design.metric)
    judges = {label: data.matrix(score) for label, score in design.judges.items()}
    judges[NO_JUDGE] = X
    K, M = Z.shape
    truths = {c: float(level_corr(X, Z, "system", c)) for c in coefficients}
    root = check_rng(rng)
    rows = []
    for share in shares:
        if not 0 < share < 1:
            raise ValueError(f"shares must lie in (0, 1), got {share!r}")
        n = max(2, int(round(share * M)))
        children = root.spawn(n_replicates)
        # per (judge, coefficient, interval method): covered flags and widths over replicates
        hits: dict[tuple[str, str, str], list[bool]] = {}
        widths: dict[tuple[str, str, str], list[float]] = {}

        def record(label: str, c: str, statistic: float, samples: np.ndarray) -> None:
            for method in methods:
                low, high = bootstrap_interval(statistic, samples, confidence_level, method)
                hits.setdefault((label, c, method), []).append(bool(_covers(low, high, truths[c])))
                widths.setdefault((label, c, method), []).append(high - low)

        for child in children:
            lab = np.sort(child.choice(M, size=n, replace=False))
            hidden = Z.copy()
            hidden[:, np.setdiff1d(np.arange(M), lab)] = np.nan
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # undefined resamples at tiny sizes are counted, not shown
                for c in coefficients:
                    res = bootstrap_ci(X[:, lab], Z[:, lab], level="system", coefficient=c, resample="inputs",
                                       n_resamples=n_resamples, confidence_level=confidence_level, rng=child)
                    record(HUMANS_ONLY, c, res.statistic, res.bootstrap_distribution)
                for label, J in judges.items():
                    stat, samples, _, _ = ppi_correlation_samples(X, hidden, J, coefficients=coefficients,
                                                                  lam=0.0 if label == NO_JUDGE else None,
                                                                  n_resamples=n_resamples, rng=child)
                    for c, st, s in zip(coefficients, stat, samples):
                        record(label, c, float(st), s[~np.isnan(s)])
        for (label, c, method), flags in hits.items():
            w = np.asarray(widths[(label, c, method)], dtype=float)
            rows.append({
                "dataset": dataset, "metric": design.metric, "human": design.human, "judge": label,
                "judge_score": design.judges.get(label, ""), "share": share, "n_labelled": n, "coefficient": c,
                "interval": method, "truth": truths[c], "coverage": float(np.mean(flags)),
                "mc_se": float(np.sqrt(confidence_level * (1 - confidence_level) / len(flags))),
                "mean_width": float(np.nanmean(w)) if np.isfinite(w).any() else np.nan,
                "n_undefined": int(np.isnan(w).sum()), "n_replicates": len(flags),
            })
    table = pd.DataFrame(rows)
    table["below_nominal"] = below_nominal(table["coverage"].to_numpy(), table["n_replicates"].to_numpy(),
                                           confidence_level)
    human_only = table[table["judge"] == HUMANS_ONLY].set_index(["share", "coefficient", "interval"])["mean_width"]
    key = pd.MultiIndex.from_arrays([table["share"], table["coefficient"], table["interval"]])
    table["human_only_width"] = human_only.reindex(key).to_numpy()
    table["width_ratio"] = table["mean_width"] / table["human_only_width"]
    # what ppi_correlation offers: its interval for the coefficient, from its minimum size on
    table["offered"] = ((table["interval"] == table["coefficient"].map(INTERVAL_METHOD))
                        & (table["n_labelled"] >= MIN_LABELLED_CORRELATION) & (table["judge"] != HUMANS_ONLY))
    return table.sort_values(["share", "coefficient", "interval", "judge"], kind="stable").reset_index(drop=True)


def default_table(*, n_replicates: int = 300, n_resamples: int = 1000, rng: int = 0) -> pd.DataFrame:
    """:func:`coverage_table` on every dataset of :data:`DESIGNS` with the defaults (``results/few_labels/
    coverage.csv``)."""
    return pd.concat([coverage_table(name, n_replicates=n_replicates, n_resamples=n_resamples, rng=rng)
                      for name in DESIGNS], ignore_index=True)
