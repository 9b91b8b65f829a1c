"""Deutsch, Dror & Roth (2021), "Statistical Analysis of Summarization Evaluation Metrics using Resampling
Methods", as library calls used by the ``notebooks/2*_deutsch2021_*.py`` notebooks.

* :func:`split_halves` and :func:`ci_coverage_simulation` (Table 1; in :mod:`metaeval.studies.deutsch_coverage`);
* :class:`RougeOneSubsampler` (R_k: ROUGE-1 on a random k% of a summary's tokens) and
  :func:`power_simulation` (Figure 3; in :mod:`metaeval.studies.deutsch_power`);
* :func:`metric_cis`, :func:`pairwise_pvalues`, :func:`corrected` (Figures 4-6);
* :func:`normality` (Appendix Table 2);
* the paper's values (:data:`PAPER_TABLE1`, :data:`PAPER_TABLE2`), the metric set it used on each dataset
  (:func:`paper_metrics`) and helpers to put our numbers next to them (:func:`compare_coverage`,
  :func:`min_pvalue`).

Deutsch, D., Dror, R., & Roth, D. (2021). A Statistical Analysis of Summarization Evaluation Metrics Using
Resampling Methods. *Transactions of the ACL*, 9, 1132-1146. https://doi.org/10.1162/tacl_a_00417

Every trial draws from its own child generator (``rng.spawn``), so results do not depend on how trials
are scheduled.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from metaeval.data.defaults import recognize
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import bonferroni, pairwise_tests
from metaeval.studies.deutsch_coverage import (
    CI_METHODS,
    PAPER_TABLE1,
    PAPER_TABLE1_BHANDARI,
    PAPER_TABLE1_FABBRI,
    PAPER_TRIALS,
    ci_coverage_simulation,
    compare_coverage,
    coverage_table,
    split_halves,
)
from metaeval.studies.deutsch_power import RougeOneSubsampler, power_simulation, power_table

__all__ = [
    "split_halves",
    "ci_coverage_simulation",
    "coverage_table",
    "RougeOneSubsampler",
    "power_simulation",
    "power_table",
    "metric_cis",
    "pairwise_pvalues",
    "corrected",
    "normality",
    "CI_METHODS",
    "METHOD_NAMES",
    "PAPER_TABLE1_FABBRI",
    "PAPER_TABLE1_BHANDARI",
    "PAPER_TABLE1",
    "PAPER_TRIALS",
    "PAPER_TABLE2",
    "PAPER_METRICS",
    "DOI",
    "paper_column",
    "default_metrics",
    "paper_metrics",
    "compare_coverage",
    "compare_normality",
    "min_pvalue",
]

DOI = "https://doi.org/10.1162/tacl_a_00417"

#: Display names of the CI methods and tests, as in the paper.
METHOD_NAMES = {"fisher": "Fisher", "boot-systems": "Boot-Systems", "boot-inputs": "Boot-Inputs",
                "boot-both": "Boot-Both", "perm-both": "Perm-Both", "perm-systems": "Perm-Systems",
                "perm-inputs": "Perm-Inputs", "williams": "Williams"}

#: The paper's metric names (its Figures 4-6 and Appendix Table 2).
PAPER_METRICS = ("AutoSummENG", "MeMoG", "NPowER", "BERTScore", "BEwTE", "METEOR", "MoverScore", "QAEval-F1",
                 "ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-SU4", "S3")

#: Appendix Table 2: (percentage of inputs whose per-input scores fail Shapiro-Wilk at 0.05, system-level
#: Shapiro-Wilk p-value), per paper column; "human" is the ground truth (relevance / LitePyramid).
PAPER_TABLE2 = {
    "summeval": {
        "human": (32.0, 0.52), "AutoSummENG": (33.0, 0.01), "MeMoG": (33.0, 0.01), "NPowER": (33.0, 0.01),
        "BERTScore": (26.0, 0.15), "BEwTE": (37.0, 0.00), "METEOR": (27.0, 0.00), "MoverScore": (35.0, 0.00),
        "QAEval-F1": (40.0, 0.01), "ROUGE-1": (32.0, 0.00), "ROUGE-2": (34.0, 0.00), "ROUGE-L": (26.0, 0.13),
        "ROUGE-SU4": (32.0, 0.00), "S3": (26.0, 0.00),
    },
    "realsumm": {
        "human": (75.0, 0.84), "AutoSummENG": (28.0, 0.55), "MeMoG": (28.0, 0.55), "NPowER": (28.0, 0.55),
        "BERTScore": (28.0, 0.18), "BEwTE": (33.0, 0.68), "METEOR": (30.0, 0.61), "MoverScore": (31.0, 0.50),
        "QAEval-F1": (45.0, 0.21), "ROUGE-1": (30.0, 0.91), "ROUGE-2": (61.0, 0.62), "ROUGE-L": (37.0, 0.12),
        "ROUGE-SU4": (44.0, 0.84), "S3": (47.0, 0.66),
    },
}

_PAPER_COLUMNS = {"summeval": "summeval", "fabbri2020": "summeval", "realsumm": "realsumm",
                  "bhandari2020": "realsumm"}


def paper_column(dataset_name: str) -> str | None:
    """The paper's column for an embedded dataset (``"summeval"`` for summeval/fabbri2020, ``"realsumm"`` for
    realsumm/bhandari2020), None for any other dataset (the paper has no values for it).

    Examples
    --------
    >>> paper_column("fabbri2020"), paper_column("realsumm"), paper_column("/data/my-study")
    ('summeval', 'realsumm', None)
    """
    return _PAPER_COLUMNS.get(str(dataset_name))


def paper_metrics(score_names: Sequence[str], *, recall_oriented: bool) -> dict[str, str]:
    """The paper's metric set as score names of a dataset: paper name -> score name, for those present.

    As the authors' setup script: ROUGE and BEwT-E are the recall variants on recall-oriented datasets
    (TAC, REALSumm; the paper's footnote 9) and F1 otherwise; BERTScore is recall, QAEval F1 and S3 the
    responsiveness model everywhere.

    Examples
    --------
    >>> paper_metrics(["rouge-1.f1", "rouge-1.recall", "qa-eval.f1", "s3.resp"], recall_oriented=True)
    {'QAEval-F1': 'qa-eval.f1', 'ROUGE-1': 'rouge-1.recall', 'S3': 's3.resp'}
    >>> paper_metrics(["R-2|stem=1|stop=0|F", "my_metric"], recall_oriented=False)
    {'ROUGE-2': 'R-2|stem=1|stop=0|F'}
    """
    stat = "recall" if recall_oriented else "f1"
    wanted = {
        "AutoSummENG": "AutoSummENG", "MeMoG": "MeMoG", "NPowER": "NPowER", "BERTScore": "bertscore.recall",
        "BEwTE": f"BEwTE.{stat}", "METEOR": "METEOR", "MoverScore": "MoverScore", "QAEval-F1": "qa-eval.f1",
        "ROUGE-1": f"rouge-1.{stat}", "ROUGE-2": f"rouge-2.{stat}", "ROUGE-L": f"rouge-l.{stat}",
        "ROUGE-SU4": f"rouge-su4.{stat}", "S3": "s3.resp",
    }
    present = set(score_names)
    found = {paper: name for paper, name in wanted.items() if name in present}
    # the same metrics under a dataset's own spelling (metaeval's key R-2|stem=1|stop=0|F, rouge_2_f, ...)
    papers = {"rouge-1": "ROUGE-1", "rouge-2": "ROUGE-2", "rouge-l": "ROUGE-L", "rouge-su4": "ROUGE-SU4",
              "bertscore": "BERTScore"}
    spelled = sorted((hit[2], papers[hit[0]], name) for name in score_names
                     if (hit := recognize(name)) is not None and hit[0] in papers
                     and hit[1] == ("R" if hit[0] == "bertscore" or recall_oriented else "F"))
    for _, paper, name in spelled:  # the best-ranked spelling of each
        found.setdefault(paper, name)
    return {paper: found[paper] for paper in wanted if paper in found}


def default_metrics(ds, *, embedded: bool) -> tuple[list[str], dict[str, str], list[str]]:
    """The metrics notebooks 22 and 23 analyse when their ``metrics`` parameter is None.

    On an embedded dataset, the paper's set (:func:`paper_metrics`); on the user's own data, every score that
    is not a human score, under the user's names (the paper's labels would rename them). Returns
    ``(metrics, paper_names, left_out)``: the score names, paper name -> score name for the paper's
    comparison columns (empty on the user's data), and the dataset's non-human scores not analysed, which the
    notebook names so that nothing the user gave disappears silently.

    Examples
    --------
    >>> from metaeval.data.datasets import load
    >>> metrics, paper, left = default_metrics(load("fabbri2020"), embedded=True)
    >>> paper["QAEval-F1"], "qa-eval.f1" in metrics, len(left) > 0
    ('qa-eval.f1', True, True)
    """
    humans = set(ds.human_scores)
    candidates = [name for name in ds.score_names if name not in humans]
    # the paper's set only on the paper's own data (SummEval, REALSumm): an atlas dataset is embedded too, but
    # the paper has nothing to say about its scores
    if embedded and paper_column(ds.name) is not None:
        paper = paper_metrics(ds.score_names, recall_oriented=ds.recall_oriented)
        metrics = list(paper.values())
    else:
        paper, metrics = {}, candidates
    left_out = [name for name in candidates if name not in metrics]
    return metrics, paper, left_out


def min_pvalue(n_resamples: int) -> float:
    """The smallest p-value a permutation test with ``n_resamples`` permutations can return, 1 / (P + 1).

    A Bonferroni-corrected cell can be significant only if this is below alpha / (number of tests).

    Examples
    --------
    >>> min_pvalue(1000) > 0.05 / 210, min_pvalue(9999) < 0.05 / 210
    (True, True)
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    return 1.0 / (n_resamples + 1)


def compare_normality(table: pd.DataFrame, names: Mapping[str, str], column: str | None) -> pd.DataFrame:
    """Appendix Table 2 next to the paper: ``names`` maps each score of ``table`` to the paper's row name
    (``"human"`` for the ground truth); ``column`` is :func:`paper_column` (None: no paper values)."""
    paper = PAPER_TABLE2.get(column or "", {})
    out = table.copy()
    out.insert(1, "paper_name", [names.get(s, "") for s in out["score"]])
    values = [paper.get(names.get(s, ""), (np.nan, np.nan)) for s in out["score"]]
    out["paper_summary_percent_rejected"] = [v[0] for v in values]
    out["paper_system_pvalue"] = [v[1] for v in values]
    return out


# ----------------------------------------------------------------------------------------------------
# Metric CIs, pairwise tests, normality


def metric_cis(metrics: Mapping[str, np.ndarray], Z, *, coefficient="kendall", levels=("system", "summary"),
               n_resamples=1000, confidence_level=0.95, rng=None) -> pd.DataFrame:
    """Boot-Both CI of every metric's correlation with Z at each level (Figure 4)."""
    rng = np.random.default_rng(rng)
    rows = []
    for level in levels:
        for (name, X), child in zip(metrics.items(), rng.spawn(len(metrics))):
            res = bootstrap_ci(X, Z, level=level, coefficient=coefficient, n_resamples=n_resamples,
                               confidence_level=confidence_level, rng=child)
            rows.append({"level": level, "metric": name, "r": res.statistic, "low": res.confidence_interval.low,
                         "high": res.confidence_interval.high, "se": res.standard_error})
    return pd.DataFrame(rows)


def pairwise_pvalues(metrics: Mapping[str, np.ndarray], Z, *, test="perm-both", coefficient="pearson",
                     levels=("system", "summary"), n_resamples=1000, rng=None) -> dict:
    """Level -> :class:`PairwiseResult` of a one-sided test for every ordered metric pair (Figures 5-6)."""
    rng = np.random.default_rng(rng)
    return {
        level: pairwise_tests(dict(metrics), Z, test=test, level=level, coefficient=coefficient,
                              n_resamples=n_resamples, rng=child)
        for level, child in zip(levels, rng.spawn(len(levels)))
    }


def corrected(pvalues: np.ndarray, *, alpha: float = 0.05, by: str = "row") -> np.ndarray:
    """Cells significant after Bonferroni: per row metric (``by="row"``, Figure 5: each metric against the
    K - 1 others) or over the whole matrix (``by="all"``, Figure 6: one dataset-level family)."""
    p = np.asarray(pvalues, float)
    if by == "row":
        adjusted = np.vstack([bonferroni(row) for row in p])
    elif by == "all":
        adjusted = bonferroni(p)
    else:
        raise ValueError(f"by must be 'row' or 'all', got {by!r}")
    return adjusted < alpha


def normality(scores: Mapping[str, np.ndarray], *, alpha: float = 0.05) -> pd.DataFrame:
    """Appendix Table 2: Shapiro-Wilk p-value of each score's system-level values, and the percentage of
    inputs whose per-input (across systems) scores fail the test at ``alpha``."""
    rows = []
    for name, X in scores.items():
        X = np.asarray(X, float)
        system_p = stats.shapiro(X.mean(axis=1)).pvalue
        per_input = [stats.shapiro(X[:, j]).pvalue for j in range(X.shape[1]) if np.ptp(X[:, j]) > 0]
        rows.append({"score": name, "system_pvalue": system_p,
                     "summary_percent_rejected": (100 * float(np.mean(np.array(per_input) < alpha))
                                                  if per_input else np.nan),
                     "inputs_tested": len(per_input)})
    return pd.DataFrame(rows)
