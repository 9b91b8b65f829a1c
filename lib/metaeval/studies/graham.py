"""Graham (2015), "A Critical Evaluation of Summarization Metrics: 192 Shades of ROUGE", as library calls.

The analyses the notebook ``notebooks/10_graham2015.py`` shows:

* :func:`human_scores`: the human score per summary (one SummEval dimension, the mean of the four, or
  Graham's combination of a coverage-like and a quality-like score by arithmetic/geometric/harmonic mean);
* :func:`metric_scores`: the 192 system-level ROUGE variants plus system-level BLEU, per system, and the
  per-summary matrices behind them;
* :func:`variant_table`: every variant's correlation with the human score and whether it is *optimal*
  (not significantly outperformed by any other, Graham's bullet);
* :func:`option_proportions`: Table 2, the share of each option value among the optimal ROUGE variants;
* :func:`system_ranking`: Table 3 / Figure 4, systems ranked by a variant, all-pairs paired t-tests and
  Shapiro-Wilk normality per system.

On SummEval, "coverage" is expert *relevance* and "quality" the mean of coherence, consistency and fluency
(the closest analogues of DUC-2004's coverage score and linguistic-quality questions).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import cast

import numpy as np
import pandas as pd
from scipy import stats

from metaeval.metrics.bleu import bleu_signature, sentence_bleu, system_bleu
from metaeval.stats.correlation import batch_corr
from metaeval.data.datasets import Dataset
from metaeval.data.scoring import rouge_matrices, system_scores
from metaeval.stats.multiplicity import adjust
from metaeval.stats.significance import PairwiseResult, pairwise_tests, williams_matrix
from metaeval.metrics.variants import SystemVariant, graham_variants, parse_variant

__all__ = [
    "HUMAN_SCORES",
    "human_scores",
    "MetricScores",
    "metric_scores",
    "corpus_bleu",
    "variant_table",
    "option_proportions",
    "system_ranking",
    "HONG_VARIANTS",
    "CONVENTIONAL_VARIANT",
    "GRAHAM_BEST_VARIANT",
    "BLEU",
    "short_label",
    "rank_correlation",
    "pairwise",
]

DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")
HUMAN_SCORES = DIMENSIONS + ("mean4", "graham", "arithmetic", "geometric", "harmonic", "coverage", "quality")
BLEU = "bleu"

#: Variants used by Hong et al. (2014) / recommended by Owczarzak et al. (2012): recall, median, stemmed,
#: stopwords kept.
HONG_VARIANTS = tuple(
    f"rouge-{m}|stem:yes|stop:no|stat:R|agg:median|refs:A" for m in ("1", "2", "su4")
)
#: The conventional variant of Graham's Table 3: median ROUGE-2 recall, stemmed, stopwords kept.
CONVENTIONAL_VARIANT = "rouge-2|stem:yes|stop:no|stat:R|agg:median|refs:A"
#: Graham's recommendation on DUC-2004: average ROUGE-2 precision, stemmed, stopwords removed.
GRAHAM_BEST_VARIANT = "rouge-2|stem:yes|stop:yes|stat:P|agg:mean|refs:A"


def human_scores(ds: Dataset, which: str = "relevance", *, annotators: str = "expert") -> np.ndarray:
    """Human score per summary, an N x M matrix.

    Parameters
    ----------
    which : str
        ``coherence``, ``consistency``, ``fluency``, ``relevance``; ``mean4`` (mean of the four);
        ``coverage`` (= relevance), ``quality`` (mean of coherence, consistency, fluency); ``graham`` or
        ``arithmetic`` (their mean, Graham's gold standard), ``geometric``, ``harmonic``.
    annotators : {"expert", "turker"}
    """
    if which not in HUMAN_SCORES:
        raise ValueError(f"which must be one of {HUMAN_SCORES}, got {which!r}")
    if annotators not in ("expert", "turker"):
        raise ValueError(f"annotators must be 'expert' or 'turker', got {annotators!r}")
    if which in DIMENSIONS:
        return ds.matrix(f"{annotators}.{which}")
    if which == "mean4":
        return np.mean([ds.matrix(f"{annotators}.{d}") for d in DIMENSIONS], axis=0)
    return combined_human(ds, "arithmetic" if which == "graham" else which, coverage=f"{annotators}.relevance",
                          quality=[f"{annotators}.{d}" for d in ("coherence", "consistency", "fluency")])


@dataclass(frozen=True)
class MetricScores:
    """System-level scores of Graham's metrics and the per-summary matrices behind them.

    Attributes
    ----------
    system : DataFrame
        Rows = systems, columns = variant signatures (192 ROUGE + ``"bleu"``).
    matrices : dict
        Signature of each summary-level ROUGE variant (and ``"bleu"``: sentence BLEU) -> N x M matrix.
    variants : dict
        System-level signature -> SystemVariant (BLEU absent).
    bleu_signature : str
        sacrebleu's signature of the BLEU configuration.
    """

    system: pd.DataFrame
    matrices: dict
    variants: dict
    bleu_signature: str

    def matrix_of(self, name: str) -> tuple[np.ndarray, str]:
        """The per-summary matrix and aggregation behind a system-level column."""
        if name == BLEU:
            return self.matrices[BLEU], "mean"
        v = self.variants[name]
        return self.matrices[v.rouge.signature], v.agg


def metric_scores(ds: Dataset, *, n_refs: int | None = None, sentences: str = "ptb", cache=True) -> MetricScores:
    """Graham's 192 ROUGE variants and BLEU for every system of a texts dataset.

    BLEU's system score is corpus BLEU over the system's summaries (as Graham); its per-summary matrix
    (sentence BLEU) is used only by resampling tests, which need cell scores.
    """
    variants = graham_variants()
    matrices = rouge_matrices(ds, sorted({v.rouge for v in variants}, key=lambda v: v.signature),
                              n_refs=n_refs, sentences=sentences, cache=cache)
    N, M = ds.shape
    system = {v.signature: system_scores(matrices[v.rouge.signature], v.agg) for v in variants}
    summaries = ds.summaries()
    refs_k = _first_refs(ds, n_refs)
    system[BLEU] = corpus_bleu(ds, n_refs=n_refs)
    matrices[BLEU] = sentence_bleu(summaries.ravel().tolist(), refs_k.ravel().tolist()).reshape(N, M)
    n_ref = len(refs_k[0, 0])
    frame = pd.DataFrame(system, index=list(ds.systems))
    return MetricScores(frame, matrices, {v.signature: v for v in variants}, bleu_signature(n_ref, sentence=False))


def _first_refs(ds: Dataset, n_refs: int | None) -> np.ndarray:
    refs = ds.references()
    refs_k = np.empty_like(refs)
    for idx in np.ndindex(refs.shape):
        refs_k[idx] = list(refs[idx])[:n_refs] if n_refs else list(refs[idx])
    return refs_k


def corpus_bleu(ds: Dataset, *, n_refs: int | None = None, tokenizer: str = "none") -> np.ndarray:
    """Graham's system-level BLEU: corpus BLEU over each system's summaries (n-gram counts pooled over the
    inputs, as Moses' multi-bleu), against the first ``n_refs`` references (None: all), one value per system.
    ``tokenizer="unicode"`` for texts that are not English (:func:`metaeval.metrics.bleu.system_bleu`)."""
    summaries = ds.summaries()
    refs_k = _first_refs(ds, n_refs)
    return np.array([system_bleu(list(summaries[i]), list(refs_k[i]), tokenizer=tokenizer)
                     for i in range(ds.shape[0])])


def _options(name: str) -> dict:
    if name == BLEU:
        return {"method": "BLEU", "stemming": "", "stopwords": "", "aggregation": "", "statistic": ""}
    v = cast(SystemVariant, parse_variant(name))
    return {
        "method": v.rouge.measure.name,
        "stemming": "Y" if v.rouge.stem else "N",
        "stopwords": "removed" if v.rouge.stop else "kept",
        "aggregation": {"mean": "A", "median": "M"}[v.agg],
        "statistic": v.rouge.stat,
    }


def pairwise(
    scores: MetricScores,
    names: list[str],
    human: np.ndarray,
    *,
    test: str = "williams",
    coefficient: str = "pearson",
    n_resamples: int = 1000,
    rng=None,
) -> PairwiseResult:
    """Pairwise one-sided tests between system-level variants (``pvalues[i, j]``: i beats j)."""
    if test == "williams":
        human_system = human.mean(axis=1)
        return williams_matrix(scores.system[names].to_numpy(), human_system, coefficient=coefficient, names=names)
    if test not in ("perm-both", "boot-both", "perm-systems", "perm-inputs", "boot-systems", "boot-inputs"):
        raise ValueError(f"test must be 'williams', 'perm-both' or 'boot-both', got {test!r}")
    mats, aggs = zip(*(scores.matrix_of(n) for n in names))
    return pairwise_tests(dict(zip(names, mats)), human, test=test, level="system", coefficient=coefficient,
                          n_resamples=n_resamples, rng=rng, aggregates=list(aggs))


def variant_table(
    scores: MetricScores,
    human: np.ndarray,
    *,
    coefficient: str = "pearson",
    test: str = "williams",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    rng=None,
    correction: str = "none",
) -> tuple[pd.DataFrame, PairwiseResult]:
    """Table 1: every variant's system-level correlation with the human score, best first, with its options
    and ``optimal`` = not significantly outperformed by any other variant (Graham's bullet).

    With ``test="williams"`` the correlations are those of the system scores (corpus BLEU for BLEU); with a
    resampling test they are recomputed from the per-summary matrices (sentence BLEU averaged for BLEU).
    ``correction`` adjusts all K(K-1) p-values for multiplicity before "outperformed" is decided (``"none"``,
    Graham's choice; ``"bonferroni"``, ``"holm"``: family-wise error; ``"fdr_bh"``, ``"fdr_by"``: false
    discovery rate, see :func:`metaeval.stats.multiplicity.adjust`); the returned result keeps the raw p-values.
    """
    names = list(scores.system.columns)
    result = pairwise(scores, names, human, test=test, coefficient=coefficient, n_resamples=n_resamples, rng=rng)
    pvalues = adjust(result.pvalues, correction=correction)
    optimal = np.asarray(~(pvalues < alpha).any(axis=0))
    beaten_by = np.asarray((pvalues < alpha).sum(axis=0))
    rows = []
    for k, name in enumerate(names):
        rows.append({"variant": name, **_options(name), "r": result.correlations[k],
                     "optimal": bool(optimal[k]), "outperformed_by": int(beaten_by[k])})
    table = pd.DataFrame(rows).sort_values("r", ascending=False, kind="stable").reset_index(drop=True)
    table.index += 1
    table.index.name = "rank"
    return table, result


def option_proportions(table: pd.DataFrame) -> pd.DataFrame:
    """Table 2: percentage of each option value among the optimal ROUGE variants (BLEU excluded)."""
    best = table[(table["optimal"]) & (table["method"] != "BLEU")]
    rows = []
    for option, values in [
        ("method", ["R-1", "R-2", "R-3", "R-4", "R-L", "R-W1.2", "R-S4", "R-SU4"]),
        ("stemming", ["N", "Y"]),
        ("stopwords", ["kept", "removed"]),
        ("statistic", ["P", "R", "F"]),
        ("aggregation", ["A", "M"]),
    ]:
        for value in values:
            share = 100 * float((best[option] == value).mean()) if len(best) else np.nan
            count = int((best[option] == value).sum())
            rows.append({"option": option, "value": value, "percent": share, "count": count})
    return pd.DataFrame(rows)


def system_ranking(
    ds: Dataset, scores: MetricScores, variants: list[str], *, alpha: float = 0.05
) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """Table 3 / Figure 4: systems scored by each variant, paired t-tests, Shapiro-Wilk.

    Returns
    -------
    ranking : DataFrame
        Rows = systems (sorted by the first variant), a score and a rank column per variant.
    ttests : dict
        Variant -> DataFrame of one-sided paired t-test p-values (row system > column system) on the
        per-summary scores, over the inputs.
    normality : DataFrame
        Shapiro-Wilk p-value of each system's per-summary scores, per variant.
    """
    systems = list(ds.systems)
    ranking = pd.DataFrame(index=systems)
    ttests, normal = {}, {}
    for name in variants:
        matrix, agg = scores.matrix_of(name)
        ranking[name] = scores.system[name]
        ranking[f"rank: {name}"] = scores.system[name].rank(ascending=False, method="min").astype(int)
        p = np.full((len(systems), len(systems)), np.nan)
        for i, j in itertools.permutations(range(len(systems)), 2):
            diff = matrix[i] - matrix[j]
            p[i, j] = (np.nan if np.ptp(diff) == 0
                       else stats.ttest_rel(matrix[i], matrix[j], alternative="greater").pvalue)
        ttests[name] = pd.DataFrame(p, index=systems, columns=systems)
        normal[name] = [stats.shapiro(matrix[i]).pvalue if np.ptp(matrix[i]) > 0 else np.nan
                        for i in range(len(systems))]
    ranking = ranking.sort_values(variants[0], ascending=False)
    normality = pd.DataFrame(normal, index=systems).loc[ranking.index]
    return ranking, ttests, normality


def short_label(name: str) -> str:
    """Graham's Figure 3 labels: ``R-2 P ST1 RS1 A`` (method, statistic, stemming, stopword removal, mean/median)."""
    if name == BLEU:
        return "BLEU"
    v = cast(SystemVariant, parse_variant(name))
    r = v.rouge
    return f"{r.measure.name} {r.stat} ST{int(r.stem)} RS{int(r.stop)} {'A' if v.agg == 'mean' else 'M'}"


def rank_correlation(a, b) -> float:
    """Kendall tau-b between two rankings/score vectors (how much a ranking changes)."""
    return float(batch_corr(np.asarray(a, float), np.asarray(b, float), "kendall"))


# ----------------------------------------------------------------------------------------------------
# Dataset-agnostic human scores (the notebook's `human` and `quality` parameters) and the paper's values

#: Graham's combinations of a coverage score and a linguistic-quality score (Table 4), in the paper's order.
COMBINATIONS = ("arithmetic", "geometric", "harmonic", "coverage", "quality")

#: Graham (2015) on DUC-2004, for comparison with ours.
PAPER = {
    "bleu_r": 0.797,  # Table 1: BLEU has the highest correlation with the human score
    "best_rouge_r": 0.786,  # Table 1: mean ROUGE-2 precision, stemmed, stopwords removed
    "worst_rouge_r": 0.293,
    "n_metrics": 193,
    "n_optimal_rouge": 80,  # Table 2's percentages are multiples of 1/80
    "bleu_optimal": True,
    "systems_not_outperformed": ("DPP", "ICSISumm", "RegSum"),  # Figure 4, of 12 systems
    "n_systems": 12,
}
#: Table 2: percentage of the optimal ROUGE variants that use each option value.
PAPER_TABLE2 = {
    ("method", "R-3"): 28.7, ("method", "R-2"): 25.0, ("method", "R-4"): 18.8, ("method", "R-1"): 7.5,
    ("method", "R-L"): 7.5, ("method", "R-W1.2"): 7.5, ("method", "R-S4"): 2.5, ("method", "R-SU4"): 2.5,
    ("stemming", "N"): 53.8, ("stemming", "Y"): 46.2,
    ("stopwords", "kept"): 56.2, ("stopwords", "removed"): 43.8,
    ("statistic", "P"): 52.5, ("statistic", "F"): 25.0, ("statistic", "R"): 22.5,
    ("aggregation", "A"): 63.7, ("aggregation", "M"): 36.3,
}
#: Table 3: Hong et al.'s 12 systems scored by the best variant and by the conventional one (DUC-2004).
PAPER_TABLE3 = {
    "DPP": (8.498, 9.62), "ICSISumm": (8.317, 9.78), "RegSum": (8.187, 9.75), "Submodular": (8.047, 9.35),
    "CLASSY11": (7.717, 9.20), "CLASSY04": (7.690, 8.96), "OCCAMS_V": (7.643, 9.76), "GreedyKL": (6.918, 8.53),
    "FreqSum": (6.838, 8.11), "TsSum": (6.671, 8.15), "Centroid": (6.660, 7.97), "LexRank": (6.655, 7.47),
}
#: Table 4, BLEU's and the recommended variant's correlation with each human combination (DUC-2004).
PAPER_TABLE4 = {
    BLEU: {"arithmetic": 0.797, "geometric": 0.901, "harmonic": 0.936, "coverage": 0.944, "quality": 0.642},
    GRAHAM_BEST_VARIANT: {"arithmetic": 0.786, "geometric": 0.870, "harmonic": 0.887, "coverage": 0.878,
                          "quality": 0.660},
}

#: What the short labels of :func:`short_label` stand for (Graham's Figure 3 key).
LABEL_KEY = ("R-n: ROUGE-n; R-L / R-W1.2: longest / weighted common subsequence; R-S4 / R-SU4: skip-bigrams "
             "(+ unigrams) within 4 words; P / R / F: precision / recall / F; ST1 / ST0: stemmed / not; "
             "RS1 / RS0: stopwords removed / kept; A / M: mean / median over a system's summaries")


def paper_ranking_tau() -> float:
    """Kendall tau between the two system rankings of Graham's Table 3 (best vs conventional variant).

    >>> round(paper_ranking_tau(), 3)
    0.758
    """
    best, conventional = zip(*PAPER_TABLE3.values())
    return rank_correlation(best, conventional)


def quality_scores(ds: Dataset, human: str) -> list[str]:
    """The default "linguistic quality" scores for Table 4: the dataset's other human scores from the same
    annotators as ``human`` (same name prefix before the first dot), e.g. expert coherence, consistency and
    fluency for ``expert.relevance`` on SummEval; empty when the dataset has no other such score."""
    group = human.partition(".")[0]
    return [s for s in getattr(ds, "human_scores", []) if s != human and s.partition(".")[0] == group]


def missing_inputs(ds: Dataset, scores: list[str]) -> str | None:
    """Why an optional section cannot run on these scores (unknown or incomplete), or None if it can."""
    for name in scores:
        if name not in ds.score_names:
            return f"dataset {ds.name!r} has no score {name!r}"
        missing = int(np.isnan(ds.matrix(name, allow_nan=True)).sum())
        if missing:
            return f"score {name!r} is missing in {missing} of {ds.shape[0] * ds.shape[1]} cells"
    return None


def combined_human(ds: Dataset, which: str, *, coverage: str, quality: list[str]) -> np.ndarray:
    """Graham's human score combinations (Table 4), an N x M matrix.

    ``coverage`` is a score name; ``quality`` the score names averaged into linguistic quality. ``which`` is
    ``arithmetic`` (Graham's gold standard, (coverage + quality) / 2), ``geometric``, ``harmonic``,
    ``coverage`` or ``quality``. Geometric and harmonic means need non-negative scores.
    """
    if which not in COMBINATIONS:
        raise ValueError(f"which must be one of {COMBINATIONS}, got {which!r}")
    if not quality:
        raise ValueError("quality must name at least one score")
    cov = ds.matrix(coverage)
    qual = np.mean([ds.matrix(q) for q in quality], axis=0)
    if which == "coverage":
        return cov
    if which == "quality":
        return qual
    if which == "arithmetic":
        return (cov + qual) / 2
    if (cov < 0).any() or (qual < 0).any():
        raise ValueError(f"the {which} mean needs non-negative scores; {coverage} or the quality scores are negative")
    if which == "geometric":
        return np.sqrt(cov * qual)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cov + qual > 0, 2 * cov * qual / (cov + qual), 0.0)


def combinations_table(
    scores: MetricScores,
    ds: Dataset,
    names: list[str],
    *,
    coverage: str,
    quality: list[str],
    coefficient: str = "pearson",
    test: str = "williams",
    alpha: float = 0.05,
    n_resamples: int = 1000,
    rng=None,
) -> pd.DataFrame:
    """Table 4: the correlation of each metric in ``names`` with every human combination, and whether it is
    optimal (not significantly outperformed by any of all the metrics) under that combination.

    Columns are a MultiIndex (combination, ``r`` / ``optimal``); rows are ``names``.
    """
    rng = np.random.default_rng(rng)
    rows = {}
    for which in COMBINATIONS:
        human = combined_human(ds, which, coverage=coverage, quality=quality)
        table, _ = variant_table(scores, human, coefficient=coefficient, test=test, alpha=alpha,
                                 n_resamples=n_resamples, rng=rng)
        table = table.set_index("variant")
        rows[(which, "r")] = table.loc[names, "r"]
        rows[(which, "optimal")] = table.loc[names, "optimal"]
    return pd.DataFrame(rows)
