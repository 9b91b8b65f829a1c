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

from metaeval._markup import md_text
from metaeval.data.datasets import Dataset
from metaeval.stats.alt_test import alt_test, alt_test_calibration, equate

__all__ = [
    "ALT_DATASETS",
    "Judge",
    "alt_judges",
    "alt_test_table",
    "alt_test_calibration_table",
    "alt_test_sentences",
    "dataset_sizes",
    "default_judge",
    "labelled_mask",
    "ppi_interval_table",
    "label_budget_table",
    "correlation_width_table",
    "alt_power_table",
    "few_label_sentences",
    "alt_on_scale",
    "coverage_sentences",
    "calibration_sentences",
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
        verdict = ("passes (H0 rejected for at least half the annotators): by the test's rule it may replace an "
                   "annotator at this margin" if r["passed"] else
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


# ----------------------------------------------------------------------------------------------------
# Notebook 80: PPI against humans only on a labelled share, the label planner, the alt-test's power

_DEFAULT_JUDGES = {"hanna": "ChatGPT {code} 1", "summeval": "bertscore.f1"}


def default_judge(ds: Dataset, human: str) -> str:
    """The judge notebook 80 takes by default: ChatGPT's first prompt for HANNA's criterion, BERTScore F1 on
    SummEval, else the dataset's first non-human score."""
    if ds.name in _DEFAULT_JUDGES:
        name = _DEFAULT_JUDGES[ds.name].format(code=_HANNA_CODES.get(human, "RE"))
        if name in ds.score_names:
            return name
    others = [n for n in ds.score_names if n not in ds.human_scores]
    if not others:
        raise ValueError(f"dataset {ds.name!r} has no score besides the human ones to take as the judge; "
                         "give one with -p judge NAME")
    return others[0]


def labelled_mask(n_inputs: int, share: float, rng) -> np.ndarray:
    """Which inputs humans labelled: a uniformly random ``round(share * n_inputs)`` of them (at least 2)."""
    if not 0 < share <= 1:
        raise ValueError(f"labelled_share must be in (0, 1], got {share!r}")
    k = max(2, int(round(share * n_inputs)))
    mask = np.zeros(n_inputs, bool)
    mask[np.random.default_rng(rng).choice(n_inputs, size=k, replace=False)] = True
    return mask


def ppi_interval_table(ds: Dataset, human: str, judge: str, labelled: np.ndarray, *,
                       confidence_level: float = 0.95, rng=0) -> pd.DataFrame:
    """Each system's mean human score from the labelled inputs: PPI++ with the judge on every input against
    the humans' own mean (normal interval, the same ``classical_standard_error``), next to the full-data mean
    (what hiding the labels lost). Columns ``ppi_covers`` / ``humans_covers``: whether each interval holds
    the full-data mean (one draw, not a coverage rate)."""
    from scipy import stats as _stats

    from metaeval.stats.ppi import ppi_system_means

    Z, J = ds.matrix(human), ds.matrix(judge)
    res = ppi_system_means(Z[:, labelled], J[:, labelled], J[:, ~labelled], confidence_level=confidence_level,
                           rng=rng)
    z = float(_stats.norm.ppf(0.5 + confidence_level / 2))
    humans = Z[:, labelled].mean(axis=1)
    truth = Z.mean(axis=1)
    frame = pd.DataFrame({
        "system": ds.systems, "truth": truth, "ppi": res.statistic, "ppi_low": res.confidence_interval.low,
        "ppi_high": res.confidence_interval.high, "humans": humans,
        "humans_low": humans - z * res.classical_standard_error,
        "humans_high": humans + z * res.classical_standard_error,
        "lam": res.lam,
    })
    frame["ppi_width"] = frame.ppi_high - frame.ppi_low
    frame["humans_width"] = frame.humans_high - frame.humans_low
    frame["ppi_covers"] = (frame.ppi_low <= truth) & (truth <= frame.ppi_high)
    frame["humans_covers"] = (frame.humans_low <= truth) & (truth <= frame.humans_high)
    frame.insert(0, "n_labelled", int(labelled.sum()))
    frame.insert(1, "n_unlabelled", int((~labelled).sum()))
    return frame


def label_budget_table(ds: Dataset, human: str, judge: str, labelled: np.ndarray, widths: Sequence[float], *,
                       n_unlabelled: int | None = None, confidence_level: float = 0.95) -> pd.DataFrame:
    """Human labels (inputs, each with every system's output rated) for a target interval width, from the
    labelled inputs as the pilot: for every system's mean (the hardest system decides) and every pairwise
    difference of two systems (the hardest pair decides), with humans only and with PPI++ next to the
    judge-only inputs (``n_unlabelled``, None: the dataset's inputs;
    :func:`metaeval.stats.label_budget.labels_for_width`)."""
    from metaeval.stats.label_budget import labels_for_width

    Z, J = ds.matrix(human)[:, labelled], ds.matrix(judge)[:, labelled]
    n_unlabelled = ds.shape[1] if n_unlabelled is None else int(n_unlabelled)
    K = Z.shape[0]
    targets = {"system mean": [(Z[k], J[k], ds.systems[k]) for k in range(K)],
               "system difference": [(Z[a] - Z[b], J[a] - J[b], f"{ds.systems[a]} - {ds.systems[b]}")
                                     for a in range(K) for b in range(a + 1, K)]}
    rows = []
    for target, cases in targets.items():
        for width in widths:
            plans = []
            for y, f, label in cases:
                sd = float(np.std(y, ddof=1))
                if sd == 0:
                    continue
                with np.errstate(invalid="ignore"):
                    rho = float(np.corrcoef(y, f)[0, 1]) if np.std(f) > 0 else 0.0
                rho = min(max(rho, -0.999), 0.999)
                plan = labels_for_width(width, sd=sd, rho=rho, n_unlabelled=n_unlabelled,
                                        confidence_level=confidence_level)
                plans.append((plan["humans_only"], plan["ppi"], label, sd, rho))
            hardest = max(plans)
            rows.append({"target": target, "width": width, "humans_only": int(np.ceil(hardest[0])),
                         "ppi": int(np.ceil(max(p[1] for p in plans))), "hardest": hardest[2], "sd": hardest[3],
                         "rho": hardest[4], "n_unlabelled": n_unlabelled, "pilot_inputs": int(labelled.sum())})
    return pd.DataFrame(rows)


def correlation_width_table(ds: Dataset, human: str, metric: str, judge: str, sizes: Sequence[int], *,
                            coefficient: str = "kendall", n_replicates: int = 5, n_resamples: int = 500,
                            confidence_level: float = 0.95, rng=0) -> pd.DataFrame:
    """Mean width of the system-level ``coefficient``'s interval at each number of labelled inputs: the
    prediction-powered bootstrap (:func:`metaeval.stats.ppi.ppi_correlation`, the judge on every input)
    against humans only (Boot-Inputs percentile interval on the labelled inputs), ``n_replicates`` random
    labelled subsets each. The planner's curve for a correlation: the smallest size whose mean width is
    below a target."""
    from metaeval.stats.ppi import MIN_LABELLED_CORRELATION, ppi_correlation
    from metaeval.stats.resampling import bootstrap_ci

    X, Z, J = ds.matrix(metric), ds.matrix(human), ds.matrix(judge)
    gen = np.random.default_rng(rng)
    rows = []
    for size in sizes:
        if size < MIN_LABELLED_CORRELATION:
            rows.append({"n_labelled": int(size), "coefficient": coefficient, "ppi_width": np.nan,
                         "humans_width": np.nan, "n_replicates": 0,
                         "reason": f"cannot be tested: fewer than {MIN_LABELLED_CORRELATION} labelled inputs"})
            continue
        ppi_w, hum_w = [], []
        for _ in range(n_replicates):
            mask = labelled_mask(Z.shape[1], size / Z.shape[1], gen)
            Zl = np.where(mask, Z, np.nan)
            res = ppi_correlation(X, Zl, J, coefficient=coefficient, n_resamples=n_resamples,
                                  confidence_level=confidence_level, rng=gen)
            ppi_w.append(res.confidence_interval.high - res.confidence_interval.low)
            hum = bootstrap_ci(X[:, mask], Z[:, mask], level="system", coefficient=coefficient, resample="inputs",
                               n_resamples=n_resamples, confidence_level=confidence_level, rng=gen)
            hum_w.append(hum.confidence_interval.high - hum.confidence_interval.low)
        rows.append({"n_labelled": int(size), "coefficient": coefficient, "ppi_width": float(np.nanmean(ppi_w)),
                     "humans_width": float(np.nanmean(hum_w)), "n_replicates": n_replicates, "reason": ""})
    return pd.DataFrame(rows)


def alt_power_table(ratings, judge, *, items: Sequence[int], annotators: Sequence[int], epsilon: float,
                    q: float = 0.05, n_trials: int = 200, rng=0) -> pd.DataFrame:
    """The alt-test's power (probability of passing) at each number of items and annotators, for the judge
    and annotators of a rating model fitted to the pilot (:func:`metaeval.stats.alt_test.fit_rating_model`)."""
    from metaeval.stats.alt_test import alt_test_power, fit_rating_model

    model = fit_rating_model(ratings, judge)
    gen = np.random.default_rng(rng)
    rows = []
    for m in annotators:
        for n in items:
            out = alt_test_power(model, int(n), int(m), epsilon=epsilon, q=q, n_trials=n_trials, rng=gen)
            rows.append({**out, "epsilon": epsilon, "noise": model.noise, "judge_noise": model.judge_noise,
                         "spread": model.spread})
    return pd.DataFrame(rows)


def few_label_sentences(intervals: pd.DataFrame, budget: pd.DataFrame, widths: pd.DataFrame,
                        power: pd.DataFrame, *, judge: str, target_power: float = 0.8) -> list[str]:
    """The notebook's generated conclusions: what the judge bought (interval widths), the label budget, the
    alt-test's required size. Widths are compared as numbers, not as tests; nothing is inferred from overlap.
    ``judge`` comes as Markdown (the notebook's ``nb.md_name``); the system names of ``budget`` are escaped here."""
    n, N = int(intervals.n_labelled.iloc[0]), int(intervals.n_unlabelled.iloc[0])
    ratio = float((intervals.ppi_width / intervals.humans_width).median())
    out = [f"- With humans on {n} inputs and the judge {judge} on {N} more, the PPI++ intervals of the "
           f"{len(intervals)} system means are {ratio:.2f} times as wide as the humans-only intervals (median over "
           f"systems); {int(intervals.ppi_covers.sum())} of {len(intervals)} PPI++ and "
           f"{int(intervals.humans_covers.sum())} of {len(intervals)} humans-only intervals hold the full-data "
           "mean in this one draw (the coverage rate is the simulation's table)."]
    for target, block in budget.groupby("target", sort=False):
        row = block.iloc[len(block) // 2]
        hardest = md_text(str(row.hardest))  # a system's name, from the user's data
        out.append(f"- {target.capitalize()} to width {row.width:g} (the hardest: {hardest}; pilot sd "
                   f"{row.sd:.3g}, human-judge correlation {row.rho:.2f}): {row.humans_only} labelled inputs with "
                   f"humans only, {row.ppi} with PPI++ next to {row.n_unlabelled} judge-scored inputs.")
    tested = widths[widths.n_replicates > 0] if len(widths) else widths
    if len(tested):
        last = tested.iloc[-1]
        out.append(f"- System-level {last.coefficient} at {int(last.n_labelled)} labelled inputs: mean interval "
                   f"width {last.ppi_width:.3f} with the prediction-powered bootstrap, {last.humans_width:.3f} with "
                   f"humans only ({int(last.n_replicates)} random labelled subsets).")
    for m, block in power.groupby("n_annotators", sort=False):
        ok = block[block.power >= target_power]
        eps = block.epsilon.iloc[0]
        if ok.empty:
            out.append(f"- Alt-test at epsilon = {eps:g} with {m} annotators: no size on the grid reaches power "
                       f"{target_power:g} for this judge (largest {block.power.max():.2f} at "
                       f"{int(block.n_items.max())} items).")
        else:
            out.append(f"- Alt-test at epsilon = {eps:g} with {m} annotators: {int(ok.n_items.min())} items give "
                       f"power {ok.power.iloc[0]:.2f} (simulated, SE {ok.se.iloc[0]:.2f}) for a judge like this one.")
    return out


def alt_on_scale(ds: Dataset, judge: str) -> bool:
    """Whether a judge rates on the annotators' scale (HANNA's LLM ratings, a dataset's other human ratings),
    so the alt-test compares it as it is; otherwise it is equated first."""
    return judge in ds.human_scores or (ds.name == "hanna" and judge.split(" ")[0] in _HANNA_LLMS)


def coverage_sentences(coverage: pd.DataFrame, *, confidence_level: float) -> list[str]:
    """One line per interval of the coverage simulation: its coverage with Monte-Carlo SE against the nominal
    level, and its mean width against the humans-only interval on the same labelled subsets."""
    out = []
    for _, r in coverage.iterrows():
        verdict = ("below the nominal level by more than Monte-Carlo error" if bool(r["below_nominal"]) else
                   "not below the nominal level by more than Monte-Carlo error")
        width = ("" if r["judge"] == "humans only" else
                 f"; mean width {r['mean_width']:.3f} against {r['human_only_width']:.3f} with humans only")
        out.append(f"- Coverage of the {confidence_level:.0%} interval of the system-level {r['coefficient']} "
                   f"({r['judge']}, {int(r['n_labelled'])} labelled inputs, {int(r['n_replicates'])} subsets): "
                   f"{r['coverage']:.3f} (MC SE {r['mc_se']:.3f}), {verdict}{width}.")
    return out


def calibration_sentences(calibration: pd.DataFrame) -> list[str]:
    """One line per epsilon: the alt-test's measured type-I error at the boundary of H0 against q."""
    out = []
    for _, r in calibration.iterrows():
        where = "within" if bool(r["within_3se"]) else "not within"
        out.append(f"- Alt-test at the boundary of H0 ({int(r['items'])} items, {int(r['annotators'])} annotators, "
                   f"ratings {r['levels']}, epsilon = {r['epsilon']:g}, {int(r['n_trials'])} simulated studies): "
                   f"each annotator's t-test rejected at rate {r['type1']:.3f} (SE {r['type1_se']:.3f}), {where} 3 "
                   f"SE of q = {r['q']:g}; the whole procedure passed the boundary judge in {r['pass_rate']:.3f} "
                   "of the studies.")
    return out
