"""The primer's helpers (notebook ``01_primer``): correlation levels by hand, sampling distributions and the
true coverage of confidence intervals on synthetic data whose population correlation is known, pictures of the
resampling schemes, and the exercises' answers.

The three levels of a correlation between a metric X and human scores Z (systems x inputs):

>>> X, Z = TOY_METRIC, TOY_HUMAN
>>> steps = levels_by_hand(X, Z)
>>> [round(steps[level], 3) for level in ("system", "summary", "global")]
[0.634, 0.342, 0.314]
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from scipy.stats import binomtest, kendalltau

from metaeval._markup import md_text
from metaeval.data.synthetic import synthetic
from metaeval.stats.alt_test import alt_test
from metaeval.stats.correlation import correlate, fisher_ci
from metaeval.stats.reliability import MIN_SIZES, disattenuate, krippendorff_alpha, noise_ceiling
from metaeval.stats.resampling import bootstrap_ci, draw_indices

__all__ = ["TOY_METRIC", "TOY_HUMAN", "TOY_RATINGS", "TOY_JUDGE",
           "SCHEMES", "METHODS", "levels_by_hand", "sampling_distribution",
           "true_coverage", "coverage_summary", "coverage_sentences", "resampling_counts", "bootstrap_distributions",
           "ExerciseAnswers", "exercise_answers", "check", "plot_levels", "plot_sampling_distribution",
           "plot_coverage", "plot_resampling_schemes", "plot_bootstrap_distributions", "reliability_table",
           "reliability_sentences"]

#: A metric's scores of 4 systems (rows) on 3 documents (columns): small enough to correlate by hand.
TOY_METRIC = np.array([[0.30, 0.50, 0.40],
                       [0.20, 0.45, 0.20],
                       [0.35, 0.30, 0.50],
                       [0.10, 0.20, 0.30]])
#: The human scores of the same 12 summaries (1-5 Likert-like).
TOY_HUMAN = np.array([[4.0, 2.0, 3.0],
                      [2.0, 3.0, 2.0],
                      [3.0, 5.0, 4.0],
                      [1.0, 4.0, 3.0]])
#: Section 6's toy alt-test: 4 items rated by 3 annotators (columns), and a judge's rating of each item
TOY_RATINGS = np.array([[1.0, 2.0, 3.0], [4.0, 4.0, 5.0], [2.0, 2.0, 2.0], [5.0, 1.0, 3.0]])
TOY_JUDGE = np.array([2.0, 4.5, 3.0, 3.0])
#: Bootstrap schemes: what each resamples.
SCHEMES = {"systems": "Boot-Systems", "inputs": "Boot-Inputs", "both": "Boot-Both"}
#: Interval methods compared against the known population correlation.
METHODS = ("Fisher", "Boot-Systems", "Boot-Inputs", "Boot-Both")


def levels_by_hand(X, Z) -> dict:
    """The three correlation levels of metric ``X`` and human ``Z`` (Pearson), step by step, with plain numpy.

    Returns a dict with the intermediate tables (``system_means``: the two columns of system means,
    ``per_input``: one correlation per input) and the three values ``system``, ``summary`` and ``global``.
    """
    X, Z = np.asarray(X, dtype=float), np.asarray(Z, dtype=float)
    if X.shape != Z.shape or X.ndim != 2:
        raise ValueError(f"X and Z must be matrices of the same shape (systems x inputs), got {X.shape} and {Z.shape}")
    means = pd.DataFrame({"metric mean": X.mean(axis=1), "human mean": Z.mean(axis=1)},
                         index=pd.Index([f"system {i + 1}" for i in range(X.shape[0])]))
    per_input = pd.Series([np.corrcoef(X[:, j], Z[:, j])[0, 1] for j in range(X.shape[1])],
                          index=[f"input {j + 1}" for j in range(X.shape[1])], name="r within the input")
    return {"system_means": means, "per_input": per_input,
            "system": float(np.corrcoef(means.iloc[:, 0], means.iloc[:, 1])[0, 1]),
            "summary": float(per_input.mean()),
            "global": float(np.corrcoef(X.ravel(), Z.ravel())[0, 1])}


def _truth(data, level: str) -> float:
    return data.system_correlation_finite if level == "system" else data.summary_correlation


def sampling_distribution(n_systems: int, n_inputs: int, *, system_correlation: float, summary_correlation: float,
                          n_studies: int, rng) -> pd.DataFrame:
    """The correlation of ``n_studies`` independent studies drawn from one synthetic population.

    Returns one row per study and level: ``study``, ``level``, ``r`` and ``truth`` (the population value that
    level estimates: the correlation of system means over ``n_inputs`` inputs, or the within-input correlation).
    """
    rng = np.random.default_rng(rng)
    rows = []
    for study in range(n_studies):
        data = synthetic(n_systems, n_inputs, system_correlation=system_correlation,
                         summary_correlation=summary_correlation, rng=rng)
        for level in ("system", "summary"):
            rows.append((study, level, correlate(data.metrics[0], data.human, level=level), _truth(data, level)))
    return pd.DataFrame(rows, columns=["study", "level", "r", "truth"])


def true_coverage(n_systems: int, n_inputs: int, *, system_correlation: float, summary_correlation: float,
                  n_trials: int, n_resamples: int, levels=("system", "summary"), confidence_level: float = 0.95,
                  rng) -> pd.DataFrame:
    """Whether each method's interval contains the known population correlation, over ``n_trials`` studies.

    One row per trial, level and method (``Fisher``, ``Boot-Systems``, ``Boot-Inputs``, ``Boot-Both``) with the
    interval, the truth and ``covered``. Every study is a fresh draw of :func:`metaeval.datasets.synthetic`;
    the bootstrap draws come from the same generator, in a fixed order.
    """
    rng = np.random.default_rng(rng)
    rows = []
    for trial in range(n_trials):
        data = synthetic(n_systems, n_inputs, system_correlation=system_correlation,
                         summary_correlation=summary_correlation, rng=rng)
        X, Z = data.metrics[0], data.human
        for level in levels:
            truth = _truth(data, level)
            low, high = fisher_ci(X, Z, level=level, confidence_level=confidence_level).confidence_interval
            rows.append((trial, level, "Fisher", low, high, truth))
            for resample, name in SCHEMES.items():
                res = bootstrap_ci(X, Z, level=level, resample=resample, n_resamples=n_resamples,
                                   confidence_level=confidence_level, rng=rng)
                rows.append((trial, level, name, *res.confidence_interval, truth))
    frame = pd.DataFrame(rows, columns=["trial", "level", "method", "low", "high", "truth"])
    frame["covered"] = (frame.low <= frame.truth) & (frame.truth <= frame.high)
    return frame


def coverage_summary(trials: pd.DataFrame, *, nominal: float = 0.95) -> pd.DataFrame:
    """Coverage per level and method with its exact (Clopper-Pearson) 95% interval and the two-sided exact
    binomial test of "true coverage = nominal"."""
    rows = []
    for (level, method), group in trials.groupby(["level", "method"], sort=False):
        k, n = int(group.covered.sum()), len(group)
        test = binomtest(k, n, nominal)
        ci = test.proportion_ci(confidence_level=0.95, method="exact")
        rows.append((level, method, k, n, k / n, ci.low, ci.high, test.pvalue,
                     float((group.high - group.low).mean())))
    return pd.DataFrame(rows, columns=["level", "method", "covered", "trials", "coverage", "coverage_low",
                                       "coverage_high", "pvalue_vs_nominal", "mean_width"])


def coverage_sentences(summary: pd.DataFrame, *, nominal: float = 0.95, alpha: float = 0.05) -> str:
    """One generated sentence per level and method: the coverage, and the exact binomial test against nominal."""
    lines = []
    for row in summary.itertuples():
        verdict = ("significantly below" if row.coverage < nominal else "significantly above") \
            if row.pvalue_vs_nominal < alpha else "not significantly different from"
        lines.append(f"- {row.level} level, {row.method}: covered the true correlation in {row.covered} of "
                     f"{row.trials} studies ({row.coverage:.1%}, exact 95% CI {row.coverage_low:.1%} to "
                     f"{row.coverage_high:.1%}); {verdict} the nominal {nominal:.0%} (exact binomial test, "
                     f"p = {row.pvalue_vs_nominal:.3g}); mean width {row.mean_width:.3f}.")
    return "\n".join(lines)


def resampling_counts(n_systems: int, n_inputs: int, *, rng) -> dict[str, np.ndarray]:
    """How many times each cell (system, input) enters one bootstrap resample under each scheme.

    Uses the library's own index draw (:func:`metaeval.stats.resampling.draw_indices`), so the picture shows
    exactly what :func:`metaeval.bootstrap_ci` does.
    """
    rng = np.random.default_rng(rng)
    counts = {}
    for resample, name in SCHEMES.items():
        rows, cols = draw_indices(n_systems, n_inputs, 1, resample, rng)
        r = np.bincount(rows[0], minlength=n_systems)
        c = np.bincount(cols[0], minlength=n_inputs)
        counts[name] = np.outer(r, c)
    return counts


def bootstrap_distributions(X, Z, *, level: str = "system", n_resamples: int, rng) -> pd.DataFrame:
    """One metric's bootstrap distributions under the three schemes (long format: ``scheme``, ``r``)."""
    rng = np.random.default_rng(rng)
    frames = []
    for resample, name in SCHEMES.items():
        res = bootstrap_ci(X, Z, level=level, resample=resample, n_resamples=n_resamples, rng=rng)
        frames.append(pd.DataFrame({"scheme": name, "r": res.bootstrap_distribution,
                                    "low": res.confidence_interval.low, "high": res.confidence_interval.high}))
    return pd.concat(frames, ignore_index=True)


@dataclass(frozen=True)
class ExerciseAnswers:
    """The primer's exercises, answered (``tests/test_primer.py`` checks them against independent computations).

    1. ``toy_summary_kendall``: the toy matrix's summary-level Kendall tau (mean of ``toy_kendall_per_input``).
    2. ``toy_*_after_swap``: the three levels after swapping the human scores of systems 1 and 4 on input 1.
    3. ``toy_fisher_interval``: the Fisher 95% interval of the toy matrix's system-level r (4 systems).
    4. ``widest_scheme``: the bootstrap scheme with the widest 95% interval for the real metric (None without
       the distributions of section 4).

    6. ``toy_alt_advantage``: the judge's and annotator 1's advantage probabilities (rho_judge, rho_human)
       when annotator 1 is left out of the toy alt-test (:data:`TOY_RATINGS`, :data:`TOY_JUDGE`).
    """

    toy_summary_kendall: float
    toy_kendall_per_input: tuple[float, ...]
    toy_system_after_swap: float
    toy_summary_after_swap: float
    toy_global_after_swap: float
    toy_fisher_interval: tuple[float, float]
    widest_scheme: str | None
    toy_alt_advantage: tuple[float, float]


def exercise_answers(distributions: pd.DataFrame | None = None) -> ExerciseAnswers:
    """The answers, from the library (:func:`bootstrap_distributions` gives ``distributions``)."""
    swapped = TOY_HUMAN.copy()
    swapped[[0, 3], 0] = swapped[[3, 0], 0]
    low, high = fisher_ci(TOY_METRIC, TOY_HUMAN, level="system").confidence_interval
    per_input = tuple(float(kendalltau(TOY_METRIC[:, j], TOY_HUMAN[:, j]).statistic)
                      for j in range(TOY_METRIC.shape[1]))
    widest = None
    if distributions is not None:
        bounds = distributions.groupby("scheme", sort=False).agg(low=("low", "first"), high=("high", "first"))
        widest = str((bounds.high - bounds.low).idxmax())
    alt = alt_test(TOY_JUDGE, TOY_RATINGS, min_items=2)  # 4 items: far below the real minimum, for hand work
    return ExerciseAnswers(
        toy_summary_kendall=correlate(TOY_METRIC, TOY_HUMAN, level="summary", coefficient="kendall"),
        toy_kendall_per_input=per_input,
        toy_system_after_swap=correlate(TOY_METRIC, swapped, level="system"),
        toy_summary_after_swap=correlate(TOY_METRIC, swapped, level="summary"),
        toy_global_after_swap=correlate(TOY_METRIC, swapped, level="global"),
        toy_fisher_interval=(float(low), float(high)),
        widest_scheme=widest,
        toy_alt_advantage=(float(alt.judge_advantage[0]), float(alt.human_advantage[0])))


def check(exercise: int, value, *, distributions: pd.DataFrame | None = None, tolerance: float = 0.005) -> str:
    """Check a student's own answer to one of the primer's exercises; returns a one-line verdict.

    Parameters
    ----------
    exercise : {1, 2, 3, 4, 5, 6}
    value
        1: the summary-level Kendall tau (a number); 2: the correlations after the swap, a dict with any of the
        keys ``"system"``, ``"summary"``, ``"global"``; 3: the Fisher interval ``(low, high)``; 4: the scheme's
        name (e.g. ``"Boot-Systems"``), which needs ``distributions`` (:func:`bootstrap_distributions`); 5:
        ``"first"`` or ``"second"``; 6: ``(rho_judge, rho_human)`` with annotator 1 left out.
    tolerance : float
        How far a number may be from the answer (hand computations round).

    Examples
    --------
    >>> check(1, None)
    'Exercise 1: replace None with your value in check(1, None) and run the cell again.'
    >>> a = exercise_answers()
    >>> check(1, round(a.toy_summary_kendall, 3))
    'Exercise 1: correct.'
    >>> check(3, (-1.0, 1.0))
    'Exercise 3: not yet: low is off by more than 0.005. Hint: Fisher z = atanh(r), standard error 1/sqrt(n - 3).'
    """
    if exercise == 5 and value is not None:
        # r / ceiling: 0.5 / 0.6 = 0.83 against the first score, 0.6 / 0.95 = 0.63 against the second
        ok = str(value).strip().lower() == "first"
        return (f"Exercise 5: {'correct' if ok else 'not yet'}." + ("" if ok else
                " Hint: compare r / ceiling for each human score."))
    if value is None or value is ...:
        return f"Exercise {exercise}: replace None with your value in check({exercise}, None) and run the cell again."
    a = exercise_answers(distributions)
    if exercise == 1:
        expected = {"tau": a.toy_summary_kendall}
        given = {"tau": value}
        hint = "count concordant minus discordant pairs within each input, divide by the pairs, then average."
    elif exercise == 2:
        expected = {"system": a.toy_system_after_swap, "summary": a.toy_summary_after_swap,
                    "global": a.toy_global_after_swap}
        if not isinstance(value, dict) or not value or set(value) - set(expected):
            return ("Exercise 2: give a dict with any of the keys 'system', 'summary', 'global', e.g. "
                    "{'system': 0.8}.")
        given = dict(value)
        hint = "only the scores of input 1 change; which levels use input 1's scores, and how?"
    elif exercise == 3:
        expected = dict(zip(("low", "high"), a.toy_fisher_interval))
        try:
            given = dict(zip(("low", "high"), (float(value[0]), float(value[1]))))
        except (TypeError, ValueError, IndexError):
            return "Exercise 3: give the interval as (low, high), e.g. (-0.5, 0.9)."
        hint = "Fisher z = atanh(r), standard error 1/sqrt(n - 3)."
    elif exercise == 4:
        if a.widest_scheme is None:
            return "Exercise 4: pass distributions=... (the table of section 4) to check this one."
        ok = str(value).strip().lower() == a.widest_scheme.lower()
        return (f"Exercise 4: {'correct' if ok else 'not yet'}." + ("" if ok else
                " Hint: look at the width (high - low) of each scheme's interval in the figure."))
    elif exercise == 6:
        expected = dict(zip(("rho_judge", "rho_human"), a.toy_alt_advantage))
        try:
            given = dict(zip(("rho_judge", "rho_human"), (float(value[0]), float(value[1]))))
        except (TypeError, ValueError, IndexError):
            return "Exercise 6: give (rho_judge, rho_human), e.g. (0.5, 0.5)."
        hint = ("on each item compare |judge - mean of annotators 2 and 3| with |annotator 1 - that mean|; the "
                "closer one wins, a tie counts for both.")
    else:
        raise ValueError(f"exercise must be 1, 2, 3, 4, 5 or 6, got {exercise!r}")
    for key, want in expected.items():
        if key not in given:
            continue
        try:
            off = abs(float(given[key]) - want)
        except (TypeError, ValueError):
            return f"Exercise {exercise}: {key} must be a number, got {given[key]!r}."
        if not off <= tolerance:
            return f"Exercise {exercise}: not yet: {key} is off by more than {tolerance:g}. Hint: {hint}"
    return f"Exercise {exercise}: correct."


# ---------------------------------------------------------------------------------------------------- figures


def plot_levels(X, Z, steps: dict, *, title: str = "The toy matrix at three levels"):
    """Three panels: the system means, the per-input scatter, all cells."""
    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4), layout="constrained")
    means = steps["system_means"]
    axes[0].scatter(means.iloc[:, 0], means.iloc[:, 1], color="C0")
    for name, (x, z) in means.iterrows():
        axes[0].annotate(name.replace("system ", "S"), (x, z), textcoords="offset points", xytext=(4, 3), fontsize=8)
    axes[0].set(title=f"system level: r = {steps['system']:.2f}", xlabel="metric mean", ylabel="human mean")
    for j in range(X.shape[1]):
        axes[1].plot(X[:, j], Z[:, j], "o-", color=f"C{j + 1}",
                     label=f"input {j + 1}: r = {steps['per_input'].iloc[j]:.2f}")
    axes[1].set(title=f"summary level: mean r = {steps['summary']:.2f}", xlabel="metric", ylabel="human")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(0, -0.25), ncol=1, frameon=False)
    axes[2].scatter(X.ravel(), Z.ravel(), color="C5")
    axes[2].set(title=f"global level: r = {steps['global']:.2f}", xlabel="metric (all 12 cells)", ylabel="human")
    fig.suptitle(title)
    return fig


def plot_sampling_distribution(frame: pd.DataFrame):
    """Histograms of r over the simulated studies, one panel per level, with the population value marked."""
    levels = list(dict.fromkeys(frame.level))
    fig, axes = plt.subplots(1, len(levels), figsize=(9, 3.2), layout="constrained", squeeze=False)
    for ax, level in zip(axes[0], levels):
        part = frame[frame.level == level]
        ax.hist(part.r, bins=30, color="C0", alpha=0.8)
        ax.axvline(part.truth.mean(), color="C3", lw=2, label="population value")
        ax.set(title=f"{level} level ({len(part)} studies)", xlabel="r of one study", ylabel="studies")
        ax.legend(fontsize=8, loc="upper left", frameon=False)
    fig.suptitle("Sampling distribution of r")
    return fig


def plot_coverage(summary: pd.DataFrame, *, nominal: float = 0.95):
    """Coverage per method and level with exact binomial intervals; the nominal level dashed."""
    levels = list(dict.fromkeys(summary.level))
    fig, axes = plt.subplots(1, len(levels), figsize=(9, 3.2), layout="constrained", sharey=True, squeeze=False)
    for ax, level in zip(axes[0], levels):
        part = summary[summary.level == level].reset_index(drop=True)
        ax.errorbar(part.coverage, range(len(part)), xerr=[part.coverage - part.coverage_low,
                                                           part.coverage_high - part.coverage],
                    fmt="o", color="C0", capsize=3)
        ax.axvline(nominal, color="C3", ls="--", lw=1)
        ax.set_yticks(range(len(part)), part.method)
        ax.set(title=f"{level} level", xlabel="coverage of the true r", xlim=(0, 1.02))
    axes[0, 0].invert_yaxis()  # the axes share y: one inversion puts the first method on top in every panel
    fig.suptitle(f"True coverage of nominal {nominal:.0%} intervals (exact 95% CI of each rate)")
    return fig


def plot_resampling_schemes(counts: dict[str, np.ndarray]):
    """One bootstrap resample under each scheme: how often each (system, input) cell is drawn."""
    fig, axes = plt.subplots(1, len(counts), figsize=(10, 3.4), layout="constrained")
    vmax = max(int(c.max()) for c in counts.values())
    for ax, (name, count) in zip(axes, counts.items()):
        image = ax.imshow(count, cmap="Blues", vmin=0, vmax=vmax, aspect="auto", interpolation="nearest")
        ax.set(title=name, xlabel="input (document)", ylabel="system")
        ax.grid(False)  # a theme's grid would cut through the cells
    fig.colorbar(image, ax=axes, label="times the cell is drawn", shrink=0.9)
    fig.suptitle("Which rows and columns one resample draws (white: left out)")
    return fig


def plot_bootstrap_distributions(frame: pd.DataFrame, *, statistic: float, title: str):
    """The three bootstrap distributions of one metric's correlation, overlaid, with the observed value."""
    fig, ax = plt.subplots(figsize=(7, 3.4), layout="constrained")
    bins = np.linspace(frame.r.min(), frame.r.max(), 40).tolist()
    for k, (name, part) in enumerate(frame.groupby("scheme", sort=False)):
        ax.hist(part.r, bins=bins, alpha=0.45, color=f"C{k}",
                label=f"{name}: 95% CI [{part.low.iloc[0]:.2f}, {part.high.iloc[0]:.2f}]")
    ax.axvline(statistic, color="k", lw=1.5, label=f"observed r = {statistic:.2f}")
    ax.set(xlabel="resampled r", ylabel="resamples", title=title)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    return fig


# ----------------------------------------------------------------------------------------------------
# 5. Why reliability bounds correlation


def reliability_table(ds, scores, metric: str, *, n_resamples: int = 200, rng=None) -> pd.DataFrame:
    """For each human score with per-annotator ratings: annotators, Krippendorff's interval alpha, the
    split-half reliability r_kk of the annotators' mean and the noise ceiling (what a perfect metric is expected
    to reach, about sqrt(r_kk); :func:`metaeval.stats.reliability.noise_ceiling`) at system and summary level,
    next to ``metric``'s Pearson correlation with that mean and Spearman's disattenuated value r / sqrt(r_kk) (a
    separate estimate, not an observed correlation). A score without
    per-annotator ratings gets a row with the reason in ``note``.

    Examples
    --------
    >>> from metaeval.data.datasets import load
    >>> t = reliability_table(load("summeval"), ["expert.relevance", "litepyramid.recall"], "qa-eval.f1",
    ...                       n_resamples=0, rng=0)
    >>> t[["score", "level"]].values.tolist()[:2], t["annotators"].tolist()[:2]
    ([['expert.relevance', 'system'], ['expert.relevance', 'summary']], [3.0, 3.0])
    >>> t["note"].iloc[-1]
    'not a score of this dataset'
    """
    gen = np.random.default_rng(rng)
    rows = []
    X = ds.matrix(metric)
    for score in scores:
        if score not in ds.score_names:
            rows.append({"score": score, "note": "not a score of this dataset"})
            continue
        if score not in ds.ratings_table:
            rows.append({"score": score, "note": "no per-annotator ratings (only their aggregate)"})
            continue
        ratings = ds.ratings(score)
        short = MIN_SIZES.shortfall(*ratings.shape[:2])
        if short:
            rows.append({"score": score, "note": f"cannot be tested: {short}"})
            continue
        alpha = krippendorff_alpha(ratings, level="interval").alpha
        Z = ds.matrix(score)
        for level in ("system", "summary"):
            res = noise_ceiling(ratings, level=level, n_resamples=n_resamples, rng=int(gen.integers(2**63 - 1)))
            r = float(correlate(X, Z, level=level))
            rows.append({"score": score, "level": level, "annotators": res.reliability.n_annotators,
                         "alpha_interval": alpha, "reliability": res.reliability.reliability,
                         "ceiling": res.ceiling, "ceiling_low": res.confidence_interval.low,
                         "ceiling_high": res.confidence_interval.high, "metric_r": r,
                         "disattenuated": disattenuate(r, res.reliability.reliability)
                         if res.reliability.reliability > 0 else np.nan, "note": ""})
    return pd.DataFrame(rows)


def reliability_sentences(table: pd.DataFrame, metric_name: str) -> str:
    """The section's conclusion, generated from :func:`reliability_table` (names quoted as text)."""
    lines = []
    metric_name = md_text(metric_name)
    for score, g in table.groupby("score", sort=False):
        score = md_text(score)
        if g["note"].iloc[0]:
            lines.append(f"* **{score}**: {g['note'].iloc[0]}; no ceiling.")
            continue
        s, m = g.set_index("level").loc["system"], g.set_index("level").loc["summary"]
        lines.append(
            f"* **{score}** ({int(s['annotators'])} annotators, Krippendorff's interval alpha "
            f"{s['alpha_interval']:.2f}): a perfect metric would correlate about {m['ceiling']:.2f} "
            f"[{m['ceiling_low']:.2f}, {m['ceiling_high']:.2f}] with the annotators' mean at summary level and "
            f"{s['ceiling']:.2f} [{s['ceiling_low']:.2f}, {s['ceiling_high']:.2f}] at system level (noise ceiling: "
            f"the expected r at correlation sqrt(r_kk), r_kk by split halves and Spearman-Brown; 95% Boot-Both CIs). "
            f"{metric_name} reaches "
            f"r = {m['metric_r']:.2f} and {s['metric_r']:.2f}; Spearman's disattenuated values, estimates for a "
            f"noise-free human score and not observed correlations, are {m['disattenuated']:.2f} and "
            f"{s['disattenuated']:.2f}.")
    ok = table[table["note"] == ""]
    if ok["score"].nunique() >= 2:
        summ = ok[ok["level"] == "summary"].set_index("score")
        lo, hi = summ["ceiling"].idxmin(), summ["ceiling"].idxmax()
        lines.append(f"* The ceilings differ: {lo} {summ.loc[lo, 'ceiling']:.2f}, {hi} {summ.loc[hi, 'ceiling']:.2f} "
                     "at summary level, so the same correlation means more against the lower ceiling; compare "
                     "correlations across human scores or datasets only next to their ceilings (overlapping "
                     "intervals are not evidence that the ceilings are equal). The reliability of a mean grows "
                     "with its number of annotators (Spearman-Brown), and a high ceiling says the annotators agree "
                     "with each other, not that they measure what the metric is meant to measure.")
    return "\n".join(lines)
