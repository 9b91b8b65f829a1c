"""The atlas across datasets, as library calls for ``notebooks/70_atlas.py``: do the seed papers' findings hold
on every dataset of :func:`metaeval.data.atlas.atlas_datasets`?

* :func:`support`: which analyses a dataset supports, and the reason for each it does not (no texts, too few
  systems, no per-annotator scores); nothing is skipped silently;
* :func:`dataset_metrics`: the metrics a dataset has: ROUGE-1/2/L and sentence BLEU computed from its texts by
  the library (the Unicode tokenizer for non-English texts; ROUGE through the scoring cache of
  :mod:`metaeval.data.scoring`) and the dataset's own metric scores;
* :func:`ceilings`: the noise ceiling (:func:`metaeval.stats.reliability.noise_ceiling`) at system and summary
  level of a dataset with per-annotator scores, with Krippendorff's alpha;
* :func:`correlation_table`: system- and summary-level Pearson/Spearman/Kendall with Boot-Both CIs, pairwise
  accuracy and tie-calibrated accuracy with Boot-Both CIs, the noise ceiling next to each correlation and
  Spearman's disattenuated value as a separate, labelled column;
* :func:`partial_conjunction_table`: for each ordered pair of metrics, "A beats B on at least u of the k
  datasets that have both" for every u (Benjamini & Heller, 2008), with Benjamini-Hochberg FDR control over
  the pairs at each u;
* :func:`findings`: one dataset's row of the finding matrix: every rule of
  :mod:`metaeval.studies.atlas_findings` (the seed papers' claims quoted, each tested by one registered rule
  with its minimum data), each cell with its status, value, reason and the data size.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from metaeval._markup import md_text
from metaeval.data.atlas import AtlasEntry
from metaeval.data.datasets import Dataset
from metaeval.data.scoring import rouge_matrices
from metaeval.metrics.bleu import sentence_bleu
from metaeval.metrics.variants import parse_variant
from metaeval.stats.agreement import pairwise_accuracy, tie_calibrated_accuracy
from metaeval.stats.correlation import correlate
from metaeval.stats.multiplicity import fdr, partial_conjunction_test
from metaeval.stats.reliability import (
    CEILING_COEFFICIENTS,
    MIN_SIZES,
    disattenuate,
    krippendorff_alpha,
    noise_ceiling,
)
from metaeval.stats.resampling import bootstrap_ci, draw_indices, percentile_interval
from metaeval.stats.significance import PairwiseResult, pairwise_tests
from metaeval.studies.atlas_findings import (
    HOLDS,
    NOT_HOLDS,
    NOT_REFUTED,
    NOT_SHOWN,
    RULES,
    UNTESTABLE,
    FindingData,
    FindingOptions,
    evaluate,
    rule_table,
    untestable,
)
from metaeval.studies.graham import corpus_bleu

__all__ = [
    "ANALYSES",
    "RULES",
    "HOLDS",
    "NOT_HOLDS",
    "NOT_SHOWN",
    "NOT_REFUTED",
    "UNTESTABLE",
    "FindingOptions",
    "untestable",
    "rule_table",
    "MIN_SIZES",
    "Ceiling",
    "Ceilings",
    "support",
    "dataset_metrics",
    "ceilings",
    "correlation_table",
    "pair_tests",
    "partial_conjunction_table",
    "findings",
    "finding_matrix",
    "load_datasets",
    "forest_plot",
    "finding_heatmap",
    "ceiling_sentences",
    "correlation_sentences",
    "replication_sentences",
    "finding_sentences",
]

ANALYSES = ("correlations", "system level", "text metrics", "noise ceiling")

#: the dataset's own metrics taken first when it has them (widely used, and shared by several datasets)
PREFERRED_OWN = ("bertscore.f1", "qa-eval.f1", "MoverScore", "s3.pyr", "METEOR", "bleurt", "bartscore",
                 "BertScore F1", "QAGS", "FactCC")  # the last three: FRANK's (else 3 of its 4 would be ROUGE)


def support(entry: AtlasEntry, ds: Dataset | None = None) -> dict[str, str | None]:
    """Which of :data:`ANALYSES` a dataset supports: analysis -> None, or the reason it cannot run there.

    Examples
    --------
    >>> from metaeval.data.atlas import atlas_datasets
    >>> support(atlas_datasets()["realsumm"])["noise ceiling"]
    'the source publishes only aggregated human scores (no per-annotator ratings), so there are no annotators to split'
    """
    human = entry.default_human
    n_systems, n_inputs = ds.shape if ds is not None else (entry.systems, entry.inputs)
    out: dict[str, str | None] = {a: None for a in ANALYSES}
    # MIN_SIZES: below 5 systems a system-level correlation takes few values and its Boot-Both interval is an
    # artefact of resampling 3 or 4 points (see metaeval.stats.reliability.MinimumSizes)
    if n_systems < MIN_SIZES.systems:
        out["system level"] = (f"cannot be tested: {n_systems} systems (at least {MIN_SIZES.systems} needed for a "
                               "system-level correlation and its Boot-Both interval)")
    has_texts = ds.has_texts if ds is not None else entry.texts and entry.references
    if not has_texts:
        out["text metrics"] = "the dataset has no summaries and references, so ROUGE and BLEU cannot be computed"
    ratings = (human in ds.ratings_table) if ds is not None else bool(entry.annotators and entry.annotators >= 2)
    if not ratings or (entry.annotators is not None and entry.annotators < 2):
        out["noise ceiling"] = ("the source publishes only aggregated human scores (no per-annotator ratings), "
                                "so there are no annotators to split")
        if entry.annotators == 1:
            out["noise ceiling"] = "one rating per item: no second annotator to estimate reliability from"
    elif MIN_SIZES.shortfall(n_systems, n_inputs):
        out["noise ceiling"] = f"cannot be tested: {MIN_SIZES.shortfall(n_systems, n_inputs)}"
    return out


# ----------------------------------------------------------------------------------------------------
# Metrics


def _text_variants(language: str, measures: Sequence[str], stats: Sequence[str]) -> dict[str, str]:
    """Display name -> summary-level variant signature; English: ROUGE-1.5.5 tokens with stemming; other
    languages: the Unicode tokenizer without stemming (no English Porter stemmer on other languages)."""
    lang = language.split(",")[0].split("-")[-1].strip() or "en"
    out = {}
    for m in measures:
        for s in stats:
            if lang == "en":
                sig = f"{m}|stem:yes|stop:no|stat:{s}"
            else:
                sig = f"{m}|stem:no|stop:no|stat:{s}|tok:unicode|lang:{lang}"
            out[f"{m.upper()} {s}"] = parse_variant(sig).signature
    return out


def dataset_metrics(
    ds: Dataset,
    entry: AtlasEntry,
    *,
    measures: Sequence[str] = ("rouge-1", "rouge-2", "rouge-l"),
    stats: Sequence[str] = ("R", "F"),
    bleu: bool = True,
    own: Sequence[str] | None = None,
    max_own: int = 4,
    cache=True,
) -> tuple[dict[str, np.ndarray], list[str]]:
    """The metric matrices (N x M) the atlas compares on one dataset, and notes on what was left out.

    Computed from texts (if any): ``"ROUGE-1 R"``, ..., ``"BLEU"`` (sentence BLEU, sacrebleu; the Unicode
    tokenizer for non-English). The dataset's own scores: ``own`` (names), else the entry's ``source_metrics``,
    else every non-human score except ROUGE (recomputed above),
    :data:`PREFERRED_OWN` first; the first ``max_own``; the others are
    named in the notes. A score with missing cells is left out with a note.
    """
    mats: dict[str, np.ndarray] = {}
    notes: list[str] = []
    if ds.has_texts:
        variants = _text_variants(entry.language, measures, stats)
        computed = rouge_matrices(ds, [parse_variant(v) for v in variants.values()], cache=cache)
        mats.update({name: computed[sig] for name, sig in variants.items()})
        if bleu:
            mats["BLEU"] = sentence_bleu(ds.summaries().ravel().tolist(), [list(r) for r in ds.references().ravel()],
                                         tokenizer=_bleu_tokenizer(entry)).reshape(ds.shape)
    humans = set(ds.human_scores) | set(entry.human_scores)
    if own is None:
        candidates = list(entry.source_metrics) or [
            s for s in ds.score_names if s not in humans and not s.lower().startswith("rouge")]
        candidates = sorted(candidates, key=lambda s: (PREFERRED_OWN.index(s) if s in PREFERRED_OWN else
                                                       len(PREFERRED_OWN), candidates.index(s)))
    else:
        candidates = list(own)
    taken: list[str] = []
    for name in candidates:
        if name not in ds.score_names:
            notes.append(f"{name}: not a score of this dataset")
            continue
        if len(taken) >= max_own:
            continue
        X = ds.matrix(name, allow_nan=True)
        if np.isnan(X).any():
            notes.append(f"{name}: left out, {int(np.isnan(X).sum())} cells have no score")
            continue
        mats[name] = X
        taken.append(name)
    rest = [c for c in candidates if c in ds.score_names and c not in taken and c not in mats]
    if rest:
        notes.append(f"own scores not analysed (max_own={max_own}): {', '.join(rest)}")
    if not mats:
        notes.append("no metric to correlate: no texts to compute ROUGE/BLEU from and no metric scores of its own")
    return mats, notes


# ----------------------------------------------------------------------------------------------------
# Reliability


@dataclass(frozen=True)
class Ceiling:
    """One level x coefficient's noise ceiling (:func:`metaeval.stats.reliability.noise_ceiling`), or why there
    is none.

    Attributes
    ----------
    level, coefficient : str
    value : float
        What a perfect metric is expected to reach against the annotators' mean (NaN when ``reason``).
    ci : tuple of float
        Its 95% Boot-Both interval.
    reliability : float
        The split-half reliability r_kk it rests on (Pearson scale).
    reason : str
        "" when computed; else why not ("cannot be tested: 3 systems (at least 5 needed)").
    """

    level: str
    coefficient: str
    value: float
    ci: tuple[float, float]
    reliability: float
    reason: str = ""


@dataclass(frozen=True)
class Ceilings:
    """A dataset's reliability summary: the noise ceiling per level and coefficient and Krippendorff's alpha
    (interval; of single ratings over the cells, so it is computed below :data:`MIN_SIZES` too)."""

    cells: tuple[Ceiling, ...]
    alpha_interval: float
    n_annotators: int
    note: str = ""

    def at(self, level: str, coefficient: str = "pearson") -> Ceiling:
        """The ceiling of ``level`` and ``coefficient``; one with a reason when it was not computed."""
        return next((c for c in self.cells if c.level == level and c.coefficient == coefficient),
                    Ceiling(level, coefficient, np.nan, (np.nan, np.nan), np.nan,
                            f"no noise ceiling for {coefficient} at {level} level"))


def ceilings(
    ratings,
    *,
    levels: Sequence[str] = ("system", "summary"),
    coefficients: Sequence[str] = CEILING_COEFFICIENTS,
    n_splits: int = 20,
    n_resamples: int = 200,
    rng=0,
) -> Ceilings:
    """Noise ceilings per level and coefficient and Krippendorff's interval alpha of ``ratings`` (N, M, A).

    Below :data:`MIN_SIZES` (systems and inputs with ratings) every cell is "cannot be tested" with the
    shortfall, not a number.

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> c = ceilings(g.normal(size=(8, 40, 1)) + 0.5 * g.normal(size=(8, 40, 3)), n_resamples=0)
    >>> c.n_annotators, c.at("system").value > c.at("summary").value > c.at("summary", "kendall").value
    (3, True)
    >>> ceilings(g.normal(size=(3, 40, 3)), n_resamples=0).at("system").reason
    'cannot be tested: 3 systems (at least 5 needed)'
    """
    arr = np.asarray(ratings, dtype=float)
    rated = ~np.all(np.isnan(arr), axis=2)
    n_annotators = int((~np.all(np.isnan(arr), axis=(0, 1))).sum())
    short = MIN_SIZES.shortfall(int(rated.any(axis=1).sum()), int(rated.any(axis=0).sum()))
    if short:
        cells = tuple(Ceiling(lv, cf, np.nan, (np.nan, np.nan), np.nan, f"cannot be tested: {short}")
                      for lv in levels for cf in coefficients)
        return Ceilings(cells, krippendorff_alpha(arr, level="interval").alpha, n_annotators)
    seeds = np.random.default_rng(rng).integers(2**63 - 1, size=len(levels) * len(coefficients))
    cells_: list[Ceiling] = []
    for i, (lv, cf) in enumerate((lv, cf) for lv in levels for cf in coefficients):
        res = noise_ceiling(arr, level=lv, coefficient=cf, n_splits=n_splits, n_resamples=n_resamples,
                            rng=seeds[i])
        reason = "" if np.isfinite(res.ceiling) else "the annotators' halves do not agree (reliability <= 0)"
        cells_.append(Ceiling(lv, cf, res.ceiling, (res.confidence_interval.low, res.confidence_interval.high),
                              res.reliability.reliability, reason))
    values = np.unique(arr[~np.isnan(arr)])
    note = ("the ratings take only two values, so the ceilings rest on a model of continuous scores whose bias "
            "was simulated for continuous scores only: read them as approximate" if values.size <= 2 else "")
    return Ceilings(tuple(cells_), krippendorff_alpha(arr, level="interval").alpha, n_annotators, note)


# ----------------------------------------------------------------------------------------------------
# Correlations and accuracies


def _boot_statistic(X, Z, statistic, rows, cols) -> np.ndarray:
    out = np.empty(rows.shape[0])
    for b in range(rows.shape[0]):
        Xb = X[np.ix_(rows[b], cols[b])]
        Zb = Z[np.ix_(rows[b], cols[b])]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out[b] = statistic(Xb, Zb)
    return out


def correlation_table(
    metrics: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    levels: Sequence[str] = ("system", "summary"),
    coefficients: Sequence[str] = ("pearson", "spearman", "kendall"),
    accuracies: bool = True,
    ceiling: Ceilings | None = None,
    n_resamples: int = 200,
    n_resamples_accuracy: int = 100,
    confidence_level: float = 0.95,
    rng=0,
) -> pd.DataFrame:
    """One row per (metric, level, statistic): value and Boot-Both percentile CI (systems and inputs resampled
    together; every metric shares the draws), the noise ceiling of that level and coefficient next to each
    correlation (``noise_ceiling``: what a perfect metric is expected to reach, :func:`ceilings`), and on Pearson
    rows Spearman's disattenuated value r / sqrt(r_kk) as a separate column (``disattenuated``; an estimate of the
    Pearson correlation with the true score, never an observed correlation; NaN on rank rows, which have no
    such correction). Accuracy rows: pairwise accuracy (Kocmi et
    al., 2021) and tie-calibrated accuracy acc_eq (Deutsch et al., 2023) at the same level (``n_resamples_accuracy``
    Boot-Both resamples; acc_eq re-optimises its tie threshold in every resample).

    Examples
    --------
    >>> g = np.random.default_rng(0)
    >>> Z = g.normal(size=(6, 20)); X = Z + g.normal(size=(6, 20))
    >>> t = correlation_table({"m": X}, Z, levels=["system"], coefficients=["pearson"], accuracies=False,
    ...                       n_resamples=50)
    >>> t[["metric", "level", "statistic"]].values.tolist()
    [['m', 'system', 'pearson']]
    """
    Z = np.asarray(Z, dtype=float)
    N, M = Z.shape
    seed = int(np.random.default_rng(rng).integers(2**63 - 1))
    rows_out = []
    rows_acc, cols_acc = draw_indices(N, M, n_resamples_accuracy, "both", np.random.default_rng(seed + 1)) \
        if accuracies and n_resamples_accuracy else (None, None)
    for name, X in metrics.items():
        X = np.asarray(X, dtype=float)
        for level in levels:
            # the Pearson-scale reliability, for Spearman's correction of Pearson rows only
            rkk = ceiling.at(level, "pearson").reliability if ceiling is not None else np.nan
            for coef in coefficients:
                ceil = ceiling.at(level, coef).value if ceiling is not None else np.nan
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    value = float(correlate(X, Z, level=level, coefficient=coef))
                    res = bootstrap_ci(X, Z, level=level, coefficient=coef, resample="both",
                                       n_resamples=n_resamples, confidence_level=confidence_level, rng=seed)
                lo, hi = res.confidence_interval
                # Spearman's correction divides a covariance-based r by sqrt(r_kk); rank coefficients have no
                # such correction (errors do not attenuate concordance by that factor): NaN on their rows
                dis = (disattenuate(value, rkk) if coef == "pearson" and np.isfinite(value) and rkk > 0
                       else np.nan)
                rows_out.append({"metric": name, "level": level, "statistic": coef, "value": value,
                                 "ci_low": lo, "ci_high": hi, "noise_ceiling": ceil, "disattenuated": dis})
            if not accuracies:
                continue
            stats_ = {
                "pairwise accuracy": lambda a, b, lv=level: pairwise_accuracy(a, b, level=lv),
                "tie-calibrated accuracy": lambda a, b, lv=level: tie_calibrated_accuracy(a, b, level=lv).statistic,
            }
            for label, fn in stats_.items():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    value = float(fn(X, Z))
                lo = hi = np.nan
                if rows_acc is not None:
                    boot = _boot_statistic(X, Z, fn, rows_acc, cols_acc)
                    lo, hi = percentile_interval(boot[~np.isnan(boot)], confidence_level)
                rows_out.append({"metric": name, "level": level, "statistic": label, "value": value,
                                 "ci_low": lo, "ci_high": hi, "noise_ceiling": np.nan, "disattenuated": np.nan})
    return pd.DataFrame(rows_out)


# ----------------------------------------------------------------------------------------------------
# Replication across datasets


def pair_tests(metrics: Mapping[str, np.ndarray], Z, *, level: str = "system", coefficient: str = "pearson",
               n_resamples: int = 200, rng=0) -> PairwiseResult:
    """One-sided Perm-Both tests of "A beats B" for every ordered pair (:func:`metaeval.pairwise_tests`)."""
    return pairwise_tests(dict(metrics), Z, test="perm-both", level=level, coefficient=coefficient,
                          n_resamples=n_resamples, rng=rng)


def partial_conjunction_table(
    tests: Mapping[str, PairwiseResult], *, alpha: float = 0.05, method: str = "bonferroni", min_datasets: int = 2,
) -> pd.DataFrame:
    """"A beats B on at least u of the k datasets that have both", for every ordered pair and every u.

    Per pair, the one-sided p-values of its datasets are combined by Benjamini & Heller's (2008) partial
    conjunction test (``method``; Bonferroni is valid under any dependence) for u = 1..k
    (:func:`metaeval.stats.multiplicity.partial_conjunction_test`). For each u, the p-values of all pairs with
    k >= u are adjusted by Benjamini-Hochberg (FDR ``alpha`` over the pairs); ``u_fdr`` is the largest u whose
    adjusted p-value (made non-decreasing in u) is at most ``alpha``. Pairs on fewer than ``min_datasets``
    datasets are left out (they are counted in the frame's ``attrs["left_out"]``).

    Examples
    --------
    >>> P = PairwiseResult(("a", "b"), np.array([.5, .4]), np.zeros((2, 2)), np.array([[np.nan, .01], [.9, np.nan]]))
    >>> t = partial_conjunction_table({"d1": P, "d2": P})
    >>> t[["metric_a", "metric_b", "k", "p_u1", "p_u2", "u_fdr"]].values.tolist()[0]
    ['a', 'b', 2, 0.02, 0.02, 2]
    """
    names = sorted({m for t in tests.values() for m in t.names})
    rows, left_out = [], 0
    for a in names:
        for b in names:
            if a == b:
                continue
            ps = {}
            for d, t in tests.items():
                if a in t.names and b in t.names:
                    p = float(t.pvalues[t.names.index(a), t.names.index(b)])
                    if not np.isnan(p):
                        ps[d] = p
            if len(ps) < min_datasets:
                left_out += bool(ps)  # on some dataset, but too few to speak of replication
                continue
            k = len(ps)
            res = partial_conjunction_test(list(ps.values()), u=k, method=method, alpha=alpha)
            row: dict = {"metric_a": a, "metric_b": b, "k": k, "datasets": ", ".join(ps)}
            row.update({f"p_u{u}": float(res.pvalues[u - 1]) for u in range(1, k + 1)})
            rows.append(row)
    frame = pd.DataFrame(rows)
    frame.attrs["left_out"] = left_out
    if not rows:
        return frame
    kmax = int(frame["k"].max())
    for u in range(1, kmax + 1):  # fdr leaves out the NaN of pairs on fewer than u datasets
        frame[f"q_u{u}"] = fdr(frame[f"p_u{u}"].to_numpy(dtype=float), method="bh")
    qs = frame[[f"q_u{u}" for u in range(1, kmax + 1)]].to_numpy()
    monotone = np.fmax.accumulate(np.where(np.isnan(qs), np.inf, qs), axis=1)
    frame["u_fdr"] = (monotone <= alpha).sum(axis=1)
    return frame.sort_values(["u_fdr", "p_u1"], ascending=[False, True], ignore_index=True)


# ----------------------------------------------------------------------------------------------------
# The finding matrix


def _bleu_tokenizer(entry: AtlasEntry) -> str:
    return "none" if entry.language.split("-")[-1].strip() == "en" else "unicode"


def findings(
    name: str,
    ds: Dataset,
    entry: AtlasEntry,
    metrics: Mapping[str, np.ndarray],
    Z: np.ndarray,
    *,
    options: FindingOptions = FindingOptions(),
    pair_tests: PairwiseResult | None = None,
    cache=True,
    rng=0,
) -> list[dict]:
    """One dataset's row of the finding matrix: every rule of :data:`RULES` (:mod:`metaeval.studies.atlas_findings`)
    on this dataset, each cell with its status, value, reason, the claim, the rule and the data size. An empty list
    where the dataset can test no rule (:func:`untestable`: list it apart). ``pair_tests``: the system-level
    Perm-Both tests between ``metrics`` if already run (:func:`pair_tests`), reused by Deutsch et al. (2021)'s
    rule; ``cache``: the ROUGE scoring cache (:mod:`metaeval.data.scoring`) for Lin's single-reference ROUGE-1."""
    if untestable(metrics):
        return []
    no_texts = support(entry, ds)["text metrics"]
    bleu = corpus_bleu(ds, tokenizer=_bleu_tokenizer(entry)) if not no_texts and "BLEU" in metrics else None
    single = None
    if not no_texts and "ROUGE-1 R" in metrics:
        sig = _text_variants(entry.language, ["rouge-1"], ["R"])["ROUGE-1 R"]
        single = rouge_matrices(ds, [parse_variant(sig)], n_refs=1, cache=cache)[sig] if ds.n_references > 1 \
            else metrics["ROUGE-1 R"]
    data = FindingData(name, metrics, np.asarray(Z, dtype=float), no_texts, bleu, pair_tests, single)
    seeds = np.random.default_rng(rng).integers(2**63 - 1, size=len(RULES))
    return [evaluate(rule, data, options, int(seed)) for rule, seed in zip(RULES.values(), seeds)]


def finding_matrix(cells: Sequence[dict]) -> pd.DataFrame:
    """Dataset x finding table of statuses (from :func:`findings` cells of several datasets), with each dataset's
    systems and inputs first (every cell's claim, rule, value and reason: the cells' own table)."""
    frame = pd.DataFrame(list(cells))
    if frame.empty:
        return frame
    order = list(dict.fromkeys(frame["dataset"]))
    status = frame.pivot(index="dataset", columns="finding", values="status").reindex(
        index=order, columns=[f for f in RULES if f in set(frame["finding"])])
    size = frame.drop_duplicates("dataset").set_index("dataset")[["systems", "inputs"]].reindex(order)
    return pd.concat([size, status], axis=1)


# ----------------------------------------------------------------------------------------------------
# Loading, figures and generated text


def load_datasets(names: Sequence[str] = ()) -> tuple[dict[str, tuple[AtlasEntry, Dataset]], dict[str, str]]:
    """The atlas datasets that load here (``names``: registered names, a user's dataset folders or imported names;
    empty: every registered one) and, for the others, why not (a download-only dataset not downloaded yet, a
    name that does not load). Nothing is dropped silently: the caller reports ``skipped``, and a name the user
    gave that does not load is an error (:func:`check_names`)."""
    from metaeval.data import datasets as _datasets
    from metaeval.data.atlas import atlas_datasets, user_entry

    registry = atlas_datasets()
    loaded: dict[str, tuple[AtlasEntry, Dataset]] = {}
    skipped: dict[str, str] = {}
    for name in (list(names) or list(registry)):
        if name not in registry:
            try:
                ds = _datasets.load(name)
                entry = user_entry(ds, name)
            except Exception as exc:  # noqa: BLE001 - the reason is reported, the other datasets go on
                skipped[name] = f"not an atlas dataset and does not load as a dataset folder or name: {exc}"
                continue
            name = ds.name if ds.name not in loaded and ds.name not in registry else name
        else:
            entry = registry[name]
            try:
                ds = _datasets.load(name)
            except Exception as exc:  # noqa: BLE001 - the reason is reported, the other datasets go on
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                if entry.distribution == "download":
                    # the reason without this machine's folders: it is written into committed pages
                    skipped[name] = f"not downloaded here (run `metaeval download {name}`)"
                else:
                    skipped[name] = f"does not load here: {first}"
                continue
        human = entry.default_human
        if human not in ds.score_names:
            skipped[name] = f"its default human score {human!r} is not among the loaded scores"
            continue
        Z = ds.matrix(human, allow_nan=True)
        if np.isnan(Z).any():
            keep = [i for j, i in enumerate(ds.inputs) if not np.isnan(Z[:, j]).any()]
            if len(keep) < 2:
                skipped[name] = f"{human} has missing cells in every input"
                continue
            ds = ds.subset(inputs=keep)
        if ds.shape[0] < 2:
            skipped[name] = f"only {ds.shape[0]} system: nothing to correlate"
            continue
        loaded[name] = (entry, ds)
    return loaded, skipped


def source_of(name: str, entry: AtlasEntry) -> str:
    """What :func:`metaeval.datasets.load` takes for the loaded dataset ``name``: the registered name, or the
    folder or imported name a user's dataset was loaded from (:func:`load_datasets` keys it by its own name)."""
    return entry.source if entry.distribution == "user" else name


def check_names(names: Sequence[str]) -> dict[str, str]:
    """The datasets of ``names`` (the user's list; empty: every registered one) that cannot be analysed, with why:
    a name that is neither registered nor a dataset folder or imported name, or a download-only dataset not
    downloaded here. Cheap (nothing is loaded but the names' existence), for a check before the kernel starts.

    Examples
    --------
    >>> check_names(["summeval", "no-such-study"])
    {'no-such-study': 'neither an atlas dataset nor a dataset folder or imported name (metaeval datasets lists \
the names; a folder must exist)'}
    """
    from pathlib import Path

    from metaeval.data.atlas import atlas_datasets
    from metaeval.data.datasets import known_datasets
    from metaeval.data.download import is_downloaded

    registry, known = atlas_datasets(), known_datasets()
    problems = {}
    for name in names:
        entry = registry.get(name)
        if entry is not None:
            if entry.distribution == "download" and not is_downloaded(name):
                problems[name] = f"not downloaded here (run `metaeval download {name}`)"
        elif name not in known and not Path(name).expanduser().exists():
            problems[name] = ("neither an atlas dataset nor a dataset folder or imported name (metaeval datasets "
                              "lists the names; a folder must exist)")
    return problems


def forest_plot(table: pd.DataFrame, metric: str, *, statistic: str = "pearson", ax=None):
    """Forest plot of one metric across datasets: the correlation and its Boot-Both CI per (dataset, level),
    with the noise ceiling as a grey tick where the dataset has one."""
    import matplotlib.pyplot as plt

    rows = table[(table["metric"] == metric) & (table["statistic"] == statistic)].reset_index(drop=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 0.35 * len(rows) + 1.2))
    colors = {"system": "C1", "summary": "C0"}
    y = np.arange(len(rows))[::-1]
    for yi, r in zip(y, rows.itertuples()):
        c = colors.get(r.level, "C2")
        ax.plot([r.ci_low, r.ci_high], [yi, yi], color=c, linewidth=2)
        ax.plot([r.value], [yi], "o", color=c, markersize=5)
        if np.isfinite(r.noise_ceiling):
            ax.plot([r.noise_ceiling], [yi], "|", color="0.35", markersize=12, markeredgewidth=2)
    ax.set_yticks(y, [f"{r.dataset} ({r.level})" for r in rows.itertuples()], fontsize=8)
    ax.axvline(0, color="0.6", linewidth=0.8)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel(f"{statistic} correlation, 95% Boot-Both CI (| = noise ceiling)")
    ax.set_title(metric, fontsize=10)
    return ax


STATUS_CODES = {HOLDS: 2.0, NOT_SHOWN: 1.0, NOT_REFUTED: 1.0, NOT_HOLDS: 0.0, UNTESTABLE: np.nan}


def finding_heatmap(matrix: pd.DataFrame, ax=None):
    """Heatmap of the dataset x finding matrix: green holds, amber not shown / not refuted (no evidence either
    way), red does not hold, grey cannot be tested."""
    import matplotlib.pyplot as plt
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    matrix = matrix[[c for c in matrix.columns if c in RULES]]
    if ax is None:
        _, ax = plt.subplots(figsize=(1.3 * matrix.shape[1] + 2.5, 0.45 * matrix.shape[0] + 1.8))
    values = matrix.apply(lambda col: col.map(STATUS_CODES)).to_numpy(dtype=float)
    cmap = ListedColormap(["#d9534f", "#f0ad4e", "#5cb85c"])
    cmap.set_bad("#cccccc")
    ax.imshow(np.ma.masked_invalid(values), cmap=cmap, vmin=0, vmax=2, aspect="auto")
    # the cells in words, and a key below: no code a reader must look up ("no", "n/a")
    words = {HOLDS: "holds", NOT_HOLDS: "does not\nhold", NOT_SHOWN: "not\nshown", NOT_REFUTED: "not\nrefuted",
             UNTESTABLE: "cannot\nbe tested"}
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            ax.text(j, i, words.get(matrix.iat[i, j], "cannot\nbe tested"), ha="center", va="center", fontsize=7)
    # each column by its paper and finding ("Graham\n(2015)\nbleu"), the rule itself in finding_rules.csv
    ax.set_xticks(range(matrix.shape[1]), [f"{RULES[c].paper.replace(' (', chr(10) + '(')}\n"
                                           f"{c.split('_', 1)[-1].replace('_', ' ')}" for c in matrix.columns],
                  fontsize=7)
    ax.set_yticks(range(matrix.shape[0]), list(matrix.index), fontsize=8)
    key = [Patch(color="#5cb85c", label="holds"), Patch(color="#d9534f", label="does not hold"),
           Patch(color="#f0ad4e", label="not shown / not refuted: no evidence either way"),
           Patch(color="#cccccc", label="cannot be tested (too little data, or no texts)")]
    ax.legend(handles=key, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7, frameon=False, title="key",
              title_fontsize=7)
    ax.grid(False)
    return ax


def _fmt_ci(lo: float, hi: float) -> str:
    return f"[{lo:.2f}, {hi:.2f}]"


_COEF_LABEL = {"pearson": "Pearson", "spearman": "Spearman", "kendall": "Kendall"}


def ceiling_sentences(ceil: Mapping[str, Ceilings], skipped: Mapping[str, str]) -> list[str]:
    """One generated sentence per dataset: what a perfect metric would be expected to reach at each level and
    coefficient (its own ceiling per coefficient), or why there is none.

    Examples
    --------
    >>> cell = Ceiling("system", "pearson", 0.97, (0.9, 0.99), 0.94)
    >>> ceiling_sentences({"d": Ceilings((cell,), 0.5, 3)}, {"e": "no ratings"})[1]
    '* **e**: no noise ceiling, no ratings.'
    """
    lines = []
    for name, c in ceil.items():
        levels = list(dict.fromkeys(x.level for x in c.cells))
        parts, reasons = [], []
        for lv in levels:
            cells = [x for x in c.cells if x.level == lv]
            done = [x for x in cells if not x.reason]
            if done:
                where = "averaged over inputs as the summary-level correlation is" if lv == "summary" else ""
                parts.append(", ".join(f"{_COEF_LABEL.get(x.coefficient, x.coefficient)} {x.value:.3f} "
                                       f"{_fmt_ci(*x.ci)}" for x in done)
                             + f" at {lv} level" + (f" ({where})" if where else ""))
            reasons += [f"{_COEF_LABEL.get(x.coefficient, x.coefficient)} at {lv} level: {x.reason}"
                        for x in cells if x.reason]
        if not parts:
            why = "; ".join(dict.fromkeys(x.reason for x in c.cells)) or "no level computed"
            lines.append(f"* **{md_text(name)}** ({c.n_annotators} annotators): no noise ceiling, {md_text(why)}.")
            continue
        rel = "; ".join(f"{x.level} {x.reliability:.3f}" for x in c.cells
                        if x.coefficient == "pearson" and not x.reason)
        text = (f"* **{md_text(name)}** ({c.n_annotators} annotators): a perfect metric (one equal to the true "
                f"score) would be expected to reach, against the mean of the {c.n_annotators} annotators, "
                + "; ".join(parts)
                + " (noise ceilings: the expected coefficient at correlation sqrt(r_kk), r_kk the split-half "
                f"reliability with Spearman-Brown{', ' + rel if rel else ''}; 95% Boot-Both CIs)")
        if reasons:
            text += "; not computed: " + "; ".join(reasons)
        if c.note:
            text += f"; {c.note}"
        lines.append(text + f". Krippendorff's interval alpha of single ratings {c.alpha_interval:.3f}.")
    for name, why in skipped.items():
        lines.append(f"* **{md_text(name)}**: no noise ceiling, {md_text(why)}.")
    return lines


def correlation_sentences(table: pd.DataFrame, *, statistic: str = "pearson") -> list[str]:
    """Per dataset and level: the best metric by ``statistic``, its CI, and how far it is from the ceiling."""
    lines = []
    rows = table[table["statistic"] == statistic]
    for (name, level), g in rows.groupby(["dataset", "level"], sort=False):
        best = g.loc[g["value"].idxmax()]
        text = (f"* **{md_text(name)}, {level} level:** the highest {statistic} correlation is "
                f"{md_text(best['metric'])}'s, "
                f"{best['value']:.3f} {_fmt_ci(best['ci_low'], best['ci_high'])} (95% Boot-Both percentile CI, no "
                "multiplicity correction across metrics)")
        if np.isfinite(best["noise_ceiling"]):
            # descriptive only: r and the ceiling are both estimates with their own uncertainty, and no test of
            # their difference is run here, so the sentence neither claims a gap nor its absence
            text += (f"; the noise ceiling (what a perfect metric would be expected to reach with these annotators, "
                     f"{statistic} at {level} level) is {best['noise_ceiling']:.3f}")
            if np.isfinite(best["disattenuated"]):
                text += (f"; r / sqrt(r_kk), a separate estimate of the correlation with the true score "
                         f"(disattenuated), is {best['disattenuated']:.3f}")
            text += " (descriptive: no test of the gap)"
        else:
            text += "; no noise ceiling (no per-annotator scores)"
        lines.append(text + ".")
    return lines


def replication_sentences(pc: pd.DataFrame, *, alpha: float = 0.05, top: int = 8) -> list[str]:
    """Generated sentences on the partial conjunction table: the pairs replicated on the most datasets."""
    if pc.empty:
        return ["* No pair of metrics is shared by two datasets: nothing to replicate."]
    lines = []
    rep = pc[pc["u_fdr"] > 0]
    lines.append(f"* Of {len(pc)} ordered metric pairs present on at least two datasets, the tests show for {len(rep)} "
                 f"that A beats B on at least one dataset (partial conjunction test of Benjamini & Heller, Bonferroni "
                 f"combination, one-sided Perm-Both tests per dataset; Benjamini-Hochberg FDR {alpha} over the "
                 "pairs at each u).")
    for r in rep.head(top).itertuples():
        lines.append(f"  * {md_text(r.metric_a)} beats {md_text(r.metric_b)} on at least {r.u_fdr} of {r.k} datasets "
                     f"(adjusted p at u = {r.u_fdr}: {getattr(r, f'q_u{r.u_fdr}'):.3g}).")
    full = pc[pc["u_fdr"] == pc["k"]]
    lines.append(f"* {len(full)} pairs replicate on every dataset that has both metrics; for the others the "
                 "evidence does not reach all datasets, which does not mean the metrics are equal there.")
    return lines


def finding_sentences(cells: Sequence[dict], apart: Mapping[str, str] | None = None) -> list[str]:
    """Per finding: the paper's claim quoted, the rule, its minimum data, and the datasets under each status
    with their size (systems x inputs) and value; then the datasets that can test no finding (``apart``)."""
    frame = pd.DataFrame(list(cells))
    lines = []
    for fid, rule in RULES.items():
        g = frame[frame["finding"] == fid] if not frame.empty else frame
        if g.empty:
            continue
        lines.append(f"* **{rule.paper}**: \u201c{rule.claim}\u201d ({rule.where}). *Rule:* {rule.rule}. *Minimum:* "
                     f"{rule.minimum}.")
        for status in (HOLDS, NOT_HOLDS, NOT_SHOWN, NOT_REFUTED, UNTESTABLE):
            rows = g[g["status"] == status]
            if rows.empty:
                continue
            where = ", ".join(
                f"{md_text(r.dataset)} ({r.systems} x {r.inputs}"
                + (f"; {r.measure} {r.value:.3g}" if status != UNTESTABLE and pd.notna(r.value) else "") + ")"
                for r in rows.itertuples())
            lines.append(f"  * {status.capitalize()} on {len(rows)}: {where}.")
    if apart:
        lines.append("* Datasets that can test no finding (not in the matrix): "
                     + "; ".join(f"{md_text(k)}: {md_text(v)}" for k, v in apart.items()) + ".")
    return lines
