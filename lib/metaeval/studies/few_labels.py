"""Evaluation with few human labels (notebook 80): may a judge replace an annotator, and how many labels.

* :func:`alt_judges`: the judges each embedded dataset offers for the alternative annotator test (HANNA's
  LLM raters, the crowd workers' mean on SummEval, every dataset's metrics) and the human score they stand
  in for;
* :func:`alt_test_table`: the alt-test (:func:`metaeval.stats.alt_test.alt_test`) of each judge against
  the dataset's annotators: advantage probability, winning rate, pass/fail at epsilon, each annotator's
  p-value, or "cannot be tested" with its reason;
* :func:`alt_test_calibration_table`: the test's type-I error at the boundary of H0 at the sizes of the
  datasets (:func:`metaeval.stats.alt_test.alt_test_calibration`);
* :func:`alt_test_sentences`: the generated conclusions (each names the test, the margin and the p-values;
  a judge that does not pass is never called "worse", only "not shown to be within epsilon").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from metaeval.data.datasets import Dataset
from metaeval.stats.alt_test import alt_test, alt_test_calibration, equate

__all__ = [
    "ALT_DATASETS",
    "Judge",
    "alt_judges",
    "alt_test_table",
    "alt_test_calibration_table",
    "alt_test_sentences",
]

# the embedded datasets with per-annotator ratings of >= 3 annotators (data/atlas, data/summeval)
ALT_DATASETS = ("summeval", "hanna", "squality", "xsum-hallucinations", "goyal2022-cnn", "goyal2022-bbc",
                "goyal2022-keyword")
_HANNA_LLMS = ("Beluga-13B", "ChatGPT", "Llama-13B", "OrcaPlatypus")
_HANNA_CODES = {"human.relevance": "RE", "human.coherence": "CH", "human.empathy": "EM", "human.surprise": "SU",
                "human.engagement": "EG", "human.complexity": "CX"}
_METRICS = {
    "summeval": ("rouge-1.f1", "rouge-2.f1", "bertscore.f1", "qa-eval.f1", "MoverScore"),
    "hanna": ("BERTScore F1", "BARTScore-SH", "ROUGE-1 F-Score", "BLEU"),
    "xsum-hallucinations": ("maynez.Entailment", "maynez.BERTScore", "maynez.R2"),
}
_SQUALITY_ROUGE = "rouge-2|stem:yes|stop:no|stat:F|refs:A"


@dataclass(frozen=True)
class Judge:
    """A judge for the alt-test: its label, kind (``llm``, ``crowd``, ``metric``), scores (systems x inputs)
    and whether it is on the humans' scale (else :func:`metaeval.stats.alt_test.equate` maps it)."""

    name: str
    kind: str
    scores: np.ndarray
    same_scale: bool


def alt_judges(ds: Dataset, human: str, *, controls: bool = True, seed: int = 0) -> list[Judge]:
    """The judges the dataset offers for ``human``: LLM raters and the crowd's mean on the humans' scale,
    metrics (equated). Empty when the dataset has no automatic score (Goyal et al.'s preferences).

    ``controls``: two judges that know nothing about the items are added after them, so the table shows what
    passing means at the chosen margin: the humans' mean rating on every item (``kind`` ``control``), and
    the first judge's scores shuffled over the items (``seed``).
    """
    out: list[Judge] = []
    if ds.name == "hanna" and human in _HANNA_CODES:
        for llm in _HANNA_LLMS:
            for prompt in (1, 2, 3, 4):
                name = f"{llm} {_HANNA_CODES[human]} {prompt}"
                if name in ds.score_names:
                    out.append(Judge(name, "llm", ds.matrix(name, allow_nan=True), True))
    if ds.name == "summeval" and human.startswith("expert."):
        crowd = "turker." + human.split(".", 1)[1]
        out.append(Judge(f"{crowd} (mean of 5)", "crowd", ds.matrix(crowd, allow_nan=True), True))
    for name in _METRICS.get(ds.name, ()):
        if name in ds.score_names:
            out.append(Judge(name, "metric", ds.matrix(name, allow_nan=True), False))
    if ds.name == "squality":
        from metaeval.data.scoring import rouge_matrices

        out.append(Judge("ROUGE-2 F1", "metric", rouge_matrices(ds, [_SQUALITY_ROUGE])[_SQUALITY_ROUGE], False))
    if controls and out:
        ratings = ds.ratings(human)
        out.append(Judge("control: the mean rating on every item", "control",
                         np.full(ratings.shape[:-1], np.nanmean(ratings)), True))
        first = out[0]
        flat = np.random.default_rng(seed).permutation(first.scores.ravel())
        out.append(Judge(f"control: {first.name} shuffled over the items", "control", flat.reshape(first.scores.shape),
                         first.same_scale))
    return out


def alt_test_table(ds: Dataset, judges: Sequence[Judge], *, human: str, epsilon: float, q: float = 0.05,
                   alignment: str | None = None) -> pd.DataFrame:
    """One row per judge: the alt-test against the annotators of ``human``.

    ``alignment`` None: ``accuracy`` for 0/1 or -1/0/+1 ratings, ``mean-distance`` otherwise. A judge not
    on the humans' scale is equated to it first (column ``equated``).
    """
    ratings = ds.ratings(human)
    values = np.unique(ratings[~np.isnan(ratings)])
    if alignment is None:
        alignment = "accuracy" if values.size <= 3 else "mean-distance"
    rows = []
    for judge in judges:
        scores = judge.scores if judge.same_scale else equate(judge.scores, ratings)
        if alignment == "accuracy" and not judge.same_scale:
            # equated scores are quantiles of the labels: round to the nearest label so equality is defined
            scores = values[np.abs(scores[..., None] - values).argmin(axis=-1)]
        res = alt_test(scores, ratings, epsilon=epsilon, q=q, alignment=alignment)
        row = {"dataset": ds.name, "human": human, "judge": judge.name, "kind": judge.kind,
               "equated": not judge.same_scale, "alignment": alignment, "epsilon": epsilon, "q": q,
               "annotators": len(res.annotators), "items": int(res.n_items.min()) if res.n_items.size else 0,
               "advantage_probability": res.advantage_probability, "winning_rate": res.winning_rate,
               "passed": res.passed, "reason": res.reason or ""}
        for k, j in enumerate(res.annotators):
            row[f"rho_h{j + 1}"] = res.human_advantage[k]
            row[f"p_h{j + 1}"] = res.pvalue[k]
            row[f"p_by_h{j + 1}"] = res.adjusted_pvalue[k]
        rows.append(row)
    if not rows:
        rows.append({"dataset": ds.name, "human": human, "judge": "", "kind": "", "equated": False,
                     "alignment": alignment, "epsilon": epsilon, "q": q, "annotators": ratings.shape[-1],
                     "items": int(np.prod(ratings.shape[:-1])), "advantage_probability": np.nan,
                     "winning_rate": np.nan, "passed": False,
                     "reason": "cannot be tested: the dataset has no automatic score to take as the judge"})
    return pd.DataFrame(rows)


def alt_test_calibration_table(sizes: Sequence[tuple[str, int, int, tuple | None]], *, epsilons=(0.0, 0.1, 0.2),
                               q: float = 0.05, n_trials: int = 2000, rng=0) -> pd.DataFrame:
    """Type-I error of the alt-test at the boundary of H0 for each (label, items, annotators, levels).

    ``levels`` None simulates continuous ratings. Columns: the per-annotator t-test's rejection rate with its
    Monte-Carlo SE and whether it lies within 3 SE of q, and the rate at which the whole procedure passed a
    judge at the boundary (omega >= 0.5 after Benjamini-Yekutieli).
    """
    gen = np.random.default_rng(rng)
    rows = []
    for label, n_items, n_annotators, levels in sizes:
        for eps in epsilons:
            cal = alt_test_calibration(n_items, n_annotators, epsilon=eps, q=q, levels=levels,
                                       n_trials=n_trials, rng=gen)
            rows.append({"setting": label, "items": n_items, "annotators": n_annotators,
                         "levels": "continuous" if levels is None else "-".join(str(v) for v in levels),
                         "epsilon": eps, "q": q, "n_trials": n_trials, "type1": cal.rejection_rate,
                         "type1_se": cal.rejection_se,
                         "within_3se": abs(cal.rejection_rate - q) <= 3 * cal.rejection_se,
                         "pass_rate": cal.pass_rate, "pass_se": cal.pass_se})
    return pd.DataFrame(rows)


def dataset_sizes(ds: Dataset, human: str) -> tuple[int, int, tuple | None]:
    """(items, annotators, rating levels) of a dataset's ratings, for the calibration table."""
    ratings = ds.ratings(human)
    values = np.unique(ratings[~np.isnan(ratings)])
    levels = tuple(float(v) for v in values) if values.size <= 10 else None
    return int(np.prod(ratings.shape[:-1])), int(ratings.shape[-1]), levels


def alt_test_sentences(table: pd.DataFrame) -> list[str]:
    """One Markdown item per judge: the test, the margin, the winning rate and the annotators' p-values."""
    out = []
    for _, r in table.iterrows():
        if r["reason"]:
            out.append(f"- {r['dataset']} ({r['human']}){': ' + r['judge'] if r['judge'] else ''}: {r['reason']}.")
            continue
        ps = [f"{r[c]:.3g}" for c in table.columns if c.startswith("p_by_h") and pd.notna(r[c])]
        verdict = ("passes: it may replace an annotator at this margin" if r["passed"] else
                   "does not pass: the data do not show it within the margin of at least half the annotators "
                   "(this is not evidence that it is worse)")
        equated = " (equated to the human scale)" if r["equated"] else ""
        out.append(
            f"- {r['dataset']} ({r['human']}), judge {r['judge']}{equated}: "
            f"alt-test (one-sided paired t-test of H0 rho_judge <= rho_human - {r['epsilon']:g} per annotator, "
            f"Benjamini-Yekutieli at q = {r['q']:g}; {r['items']} items, {r['annotators']} annotators): "
            f"Benjamini-Yekutieli-adjusted p = {', '.join(ps)}; winning rate {r['winning_rate']:.2f}, average "
            f"advantage probability {r['advantage_probability']:.3f}; the judge {verdict}."
        )
    if "kind" in table:
        for (dataset, human), group in table.groupby(["dataset", "human"], sort=False):
            blind = group[(group.kind == "control") & group.passed.astype(bool)]
            if len(blind):
                out.append(
                    f"- {dataset} ({human}): {_join(blind.judge.tolist())} also pass{'es' if len(blind) == 1 else ''} "
                    f"at epsilon = {blind.epsilon.iloc[0]:g}: a judge that knows nothing about the items wins against "
                    "the annotators at this margin, so on these data passing does not show that a judge tracks the "
                    "items; compare advantage probabilities, or a smaller epsilon."
                )
    return out


def _join(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]
