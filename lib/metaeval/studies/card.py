"""A one-step meta-evaluation report card for a new metric.

Given a metric's per-summary scores keyed by (instance, summarizer) and an embedded dataset with human
judgments, :func:`card_tables` computes the whole battery:

* correlations with the human scores at system, summary and global level, with Boot-Both CIs, for the new
  metric and the dataset's standard metrics (the baselines);
* Perm-Both tests of the new metric against each baseline, both directions, Bonferroni over the baselines;
* the normality check of Deutsch et al. (2021, Appendix) (:func:`metaeval.deutsch.normality`);
* for each comparison that is not significant, the number of documents the planner
  (:func:`metaeval.planning.metric_comparison_power`) says a study with the same systems would need to
  detect the observed difference with the target power;
* a short summary generated from those numbers, with notes naming what the card left out: the default
  baselines the dataset lacks, the scores it does not analyse, and the systems or inputs dropped for missing
  cells (``incomplete=``; by default a missing cell stops the card with the setting that fixes it).

:func:`make_card` writes the tables as CSV (plus ``summary.md`` and ``provenance.json``: dataset,
signatures, seeds, versions) and, with ``render=True``, executes the card notebook
(``notebooks/61_report_card``, through :mod:`metaeval.run.card`), which also writes its one-page report
``report.html`` (:mod:`metaeval.studies.card_report`). Every random step draws from
``numpy.random.default_rng([seed, stage, row])`` (stage 1: CIs, 2: tests, 3: planner), recorded per row,
so any number of the card can be reproduced by one direct library call.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _stats

from metaeval._io import atomic_write, write_table
from metaeval._markup import md_code, md_text  # noqa: F401 - md_code: notebook 61's code spans
from metaeval._outputs import check_target, remove_run_folder, staging_dir, swap_into_place, write_manifest
from metaeval._version import __version__
from metaeval.data import datasets as _datasets
from metaeval.data.defaults import recognize
from metaeval.data.formats import DataError
from metaeval.studies._card_format import fmt_difference, planner_case
from metaeval.studies._card_format import fmt_p as _fmt_p
from metaeval.studies._card_grid import SignificanceGrid, significance_grid  # noqa: F401 - notebook 61's heatmap
from metaeval.stats.agreement import pairwise_accuracy, tie_calibrated_accuracy
from metaeval.stats.planning import metric_comparison_power, required_size
from metaeval.stats.ppi import MIN_LABELLED_CORRELATION, ppi_correlation, ppi_system_means
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import bonferroni, permutation_test
from metaeval.studies._card_inputs import (  # noqa: F401 - card re-exports default_baselines, CALLERS, INCOMPLETE
    _baselines_setting,
    _count,
    _family,
    _FAMILY_NAMES,
    _ids,
    _resolve_incomplete,
    _setting,
    _STANDARD,
    _user_scores,
    check_scores_path,
    CALLERS,
    default_baselines,
    INCOMPLETE,
)
from metaeval.studies.deutsch import normality

__all__ = ["Card", "CardData", "CardOptions", "CardSection", "SECTIONS", "card_section", "card_data", "card_tables",
           "make_card", "default_baselines", "CARD_NOTEBOOK", "LEVELS", "CALLERS", "INCOMPLETE",
           "SignificanceGrid", "significance_grid"]

LEVELS = ("system", "summary", "global")
CARD_NOTEBOOK = "61_report_card"
STAGE_CI, STAGE_TEST, STAGE_PLANNER = 1, 2, 3
STAGE_AGREEMENT = 5  # the agreement section (4 is the example stage of CONTRIBUTING)


@dataclass(frozen=True)
class Card:
    """The report card's tables and provenance (see :func:`card_tables`).

    ``tables`` holds one table per card section (:data:`SECTIONS`, in order); each is also an attribute:
    ``card.correlations``, ``card.tests``, ``card.normality``, ``card.planner``, ``card.agreement``.
    """

    dataset: str
    metric: str
    human: str
    baselines: tuple[str, ...]
    shape: tuple[int, int]
    tables: dict[str, pd.DataFrame]
    summary: str
    provenance: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)

    def __getattr__(self, name: str) -> pd.DataFrame:
        tables = self.__dict__.get("tables") or {}
        if name in tables:
            return tables[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute or card section {name!r}")

    def write(self, output_dir: str | os.PathLike) -> dict[str, Path]:
        """Write the tables (CSV), ``summary.md`` and ``provenance.json`` into ``output_dir`` atomically."""
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {}
        for name, frame in self.tables.items():
            files[name] = write_table(frame, out / f"{name}.csv", index=False)
        files["summary"] = out / "summary.md"
        atomic_write(files["summary"], lambda tmp: Path(tmp).write_text(self.summary + "\n", encoding="utf-8"))
        files["provenance"] = out / "provenance.json"
        atomic_write(files["provenance"],
                     lambda tmp: Path(tmp).write_text(json.dumps(self.provenance, indent=2) + "\n", encoding="utf-8"))
        return files


@dataclass(frozen=True)
class CardOptions:
    """The settings of a card (every one that changes a number; see :func:`card_tables`)."""

    coefficient: str = "pearson"
    levels: tuple[str, ...] = LEVELS
    test_levels: tuple[str, ...] = ("system", "summary")
    n_resamples: int = 1000
    confidence_level: float = 0.95
    alpha: float = 0.05
    target_power: float = 0.8
    planner_inputs: tuple[float, ...] = (0.5, 1, 2, 4, 8)
    planner_trials: int = 200
    planner_resamples: int = 200
    seed: int = 0


@dataclass(frozen=True)
class FewLabels:
    """A card with few human labels: the judge's name and the full N x M grids of the judge (``J``), the new
    metric (``X``) and the human score (``Z``, NaN on the inputs no human rated), and which inputs humans
    rated (``labelled``). The card's other sections use the labelled inputs; section ``few_labels`` all."""

    judge: str
    J: np.ndarray
    X: np.ndarray
    Z: np.ndarray
    labelled: np.ndarray


@dataclass(frozen=True)
class CardData:
    """What every section of a card sees: the dataset on the grid the new metric covers, the N x M matrices
    of the new metric (``X``), the human score (``Z``) and every compared metric (``mats``, the new metric
    first), and the options."""

    ds: Any
    metric: str
    human: str
    baselines: tuple[str, ...]
    X: np.ndarray
    Z: np.ndarray
    mats: dict[str, np.ndarray]
    options: CardOptions
    notes: tuple[str, ...] = ()
    #: what the card did with missing cells (:data:`INCOMPLETE`), and the systems / inputs it left out for them
    incomplete: str = "raise"
    dropped: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: scores of the dataset (and of the scores file) the card does not analyse
    not_analysed: tuple[str, ...] = ()
    #: with a judge (``judge=``): every input's scores before the unlabelled inputs were left out
    few: FewLabels | None = None

    @property
    def shape(self) -> tuple[int, int]:
        N, M = self.Z.shape
        return int(N), int(M)

    def name(self, score: str) -> str:
        """The display name of a score of the dataset."""
        return self.ds.display_name(score)

    def md_name(self, score: str) -> str:
        """The display name as literal text in the card's Markdown (a user's name is text, never markup)."""
        return md_text(self.name(score))

    def rng(self, stage: int, row: int) -> np.random.Generator:
        """The generator of row ``row`` of random stage ``stage``: ``default_rng([seed, stage, row])``."""
        return np.random.default_rng([self.options.seed, stage, row])

    def seed_label(self, stage: int, row: int) -> str:
        return f"default_rng([{self.options.seed}, {stage}, {row}])"


#: ``compute(data, tables)`` -> the section's table; ``tables`` holds the sections computed before it.
Compute = Callable[[CardData, Mapping[str, pd.DataFrame]], pd.DataFrame]
#: ``execute(parameters, executed)`` runs the card notebook with ``parameters`` (their ``output_dir`` the staging
#: folder) and saves the executed notebook at ``executed``; raises ``RuntimeError`` naming the failed cell.
Execute = Callable[[Mapping[str, Any], Path], None]
#: ``summarize(data, table)`` -> the section's lines of the card's summary (Markdown list items).
Summarize = Callable[[CardData, pd.DataFrame], list[str]]


@dataclass(frozen=True)
class CardSection:
    """One section of the report card: a table (``<name>.csv``, ``card.<name>``) and its summary lines."""

    name: str
    compute: Compute
    summarize: Summarize
    doc: str = ""
    #: whether the section belongs on this card (default: every card)
    applies: Callable[[CardData], bool] = lambda data: True


#: The card's sections in the order they are computed, written and summarised. Add one with
#: :func:`card_section` (see CONTRIBUTING.md, "Add a card section or a baseline").
SECTIONS: dict[str, CardSection] = {}


def card_section(name: str, summarize: Summarize,
                 applies: Callable[[CardData], bool] | None = None) -> Callable[[Compute], Compute]:
    """Register ``compute`` as the card section ``name`` (appended after the sections registered before it).

    A section's ``compute(data, tables)`` returns one DataFrame from :class:`CardData` (and the tables of
    earlier sections, by name); any random draw uses ``data.rng(stage, row)`` with a stage number of its own
    and records ``data.seed_label(stage, row)`` in a ``seed`` column, so each row can be reproduced by one
    library call. ``summarize(data, table)`` turns the table into summary lines; each line that reports a
    comparison names the test and its p-value.
    """
    if not name.isidentifier() or name in {f.name for f in fields(Card)}:
        raise ValueError(f"card section name {name!r} must be an identifier and not a Card field")

    def register(compute: Compute) -> Compute:
        doc = (compute.__doc__ or "").strip().split("\n")[0]
        SECTIONS[name] = (CardSection(name, compute, summarize, doc) if applies is None
                          else CardSection(name, compute, summarize, doc, applies))
        return compute

    return register


def _summarize_correlations(data: CardData, corr: pd.DataFrame) -> list[str]:
    conf = f"{data.options.confidence_level:.0%}"
    parts = []
    n_metrics = corr.metric.nunique()
    for level, block in corr.groupby("level", sort=False):
        block = block.sort_values("r", ascending=False).reset_index(drop=True)
        pos = int(block.index[block.metric == data.metric][0]) + 1
        row = block[block.metric == data.metric].iloc[0]
        parts.append(f"{level} r = {row.r:.3f} [{row.low:.3f}, {row.high:.3f}], rank {pos}")
    # the rank orders point estimates only: whether two metrics differ is the tests' business (below), never
    # read from overlapping or disjoint intervals
    return [f"- Correlation of {data.md_name(data.metric)} with {conf} Boot-Both CI (rank of the point estimate among "
            f"{n_metrics} metrics: a ranking of estimates, not a test): " + "; ".join(parts) + "."]


@card_section("correlations", _summarize_correlations)
def correlations_table(data: CardData, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Correlation of every compared metric with the human score at each level, with Boot-Both CIs."""
    opt = data.options
    rows = []
    k = 0
    for level in opt.levels:
        for name, V in data.mats.items():
            res = bootstrap_ci(V, data.Z, level=level, coefficient=opt.coefficient, resample="both",
                               n_resamples=opt.n_resamples, confidence_level=opt.confidence_level,
                               rng=data.rng(STAGE_CI, k))
            rows.append({"level": level, "metric": name, "display_name": data.name(name),
                         "role": "new" if name == data.metric else "baseline", "r": res.statistic,
                         "low": res.confidence_interval.low, "high": res.confidence_interval.high,
                         "se": res.standard_error, "seed": data.seed_label(STAGE_CI, k)})
            k += 1
    return pd.DataFrame(rows)


def _join(items: list[str], word: str = "and") -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {word} {items[-1]}"


def _summarize_tests(data: CardData, tests: pd.DataFrame) -> list[str]:
    lines = []
    for level, block in tests.groupby("level", sort=False):
        found: dict[str, list[str]] = {"new better": [], "baseline better": [], "not significant": []}
        for _, t in block.iterrows():
            found[t.verdict].append(f"{data.md_name(t.baseline)} ({fmt_difference(t.difference)}, p = "
                                    f"{_fmt_p(t.p_two_sided)}, adjusted {_fmt_p(t.p_two_sided_bonferroni)})")
        parts = [f"{word} {_join(items)}" for word, items in (("higher than", found["new better"]),
                                                              ("lower than", found["baseline better"])) if items]
        if found["not significant"]:
            parts.append(f"no significant difference from {_join(found['not significant'], 'or')} (not evidence "
                         "that they are equal)")
        lines.append(f"- {level.capitalize()} level, two-sided Perm-Both test of equal correlations with each baseline "
                     f"(difference in r; Bonferroni over {_count(len(data.baselines), 'baseline')}, alpha = "
                     f"{data.options.alpha}): " + "; ".join(parts) + ".")
    return lines


@card_section("tests", _summarize_tests)
def tests_table(data: CardData, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Perm-Both tests of the new metric against each baseline, both directions, Bonferroni over the
    baselines of a level."""
    opt = data.options
    rows = []
    k = 0
    for level in opt.test_levels:
        for b in data.baselines:
            # both directions from the same seed: the same permutations, as one two-tailed look at them
            p = {alt: permutation_test(data.X, data.mats[b], data.Z, level=level, coefficient=opt.coefficient,
                                       resample="both", n_resamples=opt.n_resamples, alternative=alt,
                                       rng=data.rng(STAGE_TEST, k))
                 for alt in ("greater", "less")}
            rows.append({"level": level, "baseline": b, "display_name": data.name(b),
                         "difference": p["greater"].statistic, "p_new_better": p["greater"].pvalue,
                         "p_baseline_better": p["less"].pvalue, "seed": data.seed_label(STAGE_TEST, k)})
            k += 1
    tests = pd.DataFrame(rows)
    if len(tests):
        # one two-sided test per baseline: reading a verdict from either one-sided p-value at alpha would test
        # at 2 * alpha; the two-sided p-value of the same permutations is twice the smaller tail
        tests["p_two_sided"] = np.minimum(1.0, 2 * np.minimum(tests["p_new_better"], tests["p_baseline_better"]))
        for col in ("p_new_better", "p_baseline_better", "p_two_sided"):
            tests[col + "_bonferroni"] = np.concatenate(
                [bonferroni(block[col].to_numpy(), n_tests=len(data.baselines)) for _, block in
                 tests.groupby("level", sort=False)])
        significant = tests["p_two_sided_bonferroni"] < opt.alpha
        tests["verdict"] = np.where(significant & (tests["difference"] > 0), "new better",
                                    np.where(significant & (tests["difference"] < 0), "baseline better",
                                             "not significant"))
    return tests


tests_table.__test__ = False  # type: ignore[attr-defined]  # not a test: pytest --doctest-modules collects "test*"


PLANNER_COLUMNS = ["level", "baseline", "better_here", "difference", "n_systems", "documents_needed", "ci_low",
                   "ci_high", "reached", "largest_size_tried", "power_curve", "seed"]


def _planned_inputs(data: CardData) -> list[int]:
    M = data.shape[1]
    return sorted({max(3, int(round(f * M))) for f in data.options.planner_inputs})


def _summarize_planner(data: CardData, planner: pd.DataFrame) -> list[str]:
    opt = data.options
    N, M = data.shape
    parts = []
    for _, p in planner.iterrows():
        who = data.md_name(p.better_here)
        other = data.md_name(p.baseline if p.better_here == data.metric else data.metric)
        case = planner_case(p.difference, p.reached)
        if case == "no difference":
            parts.append(f"{p.level} level, {who} and {other}: {fmt_difference(p.difference)}, so no study size "
                         "is planned for it")
        elif case == "reached":
            parts.append(f"{p.level} level, {who} beats {other} (difference {p.difference:.3f}): about "
                         f"{_fmt_docs(p.documents_needed)} documents (Monte-Carlo interval {_fmt_docs(p.ci_low)}-"
                         f"{_fmt_docs(p.ci_high)})")
        else:
            last = p.power_curve.split("; ")[-1].split(": ")[-1]
            parts.append(f"{p.level} level, {who} beats {other} (difference {p.difference:.3f}): not reached up to "
                         f"{p.largest_size_tried} documents (power {last} there)")
    if not parts:
        return []
    return [f"- Planner, documents needed with the same {N} systems (this study has {M}) for "
            f"{opt.target_power:.0%} power to show the undecided comparisons in the direction observed "
            f"(Perm-Both, two-sided, alpha = {opt.alpha} / {_count(len(data.baselines), 'baseline')}): "
            + "; ".join(parts) + "."]


@card_section("planner", _summarize_planner)
def planner_table(data: CardData, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """For each comparison the tests could not decide, the documents a study with the same systems would
    need to detect the observed difference with the target power."""
    opt = data.options
    N, _ = data.shape
    sizes_inputs = _planned_inputs(data)
    rows = []
    k = 0
    for _, t in tables["tests"].iterrows():
        if t["verdict"] != "not significant":
            continue
        # the direction the data point to: the metric that correlated better here is "X"; the planned study
        # tests in that direction at alpha / (2 x baselines), the tail of the card's two-sided Bonferroni test
        first, second = ((data.X, data.mats[t["baseline"]]) if t["difference"] >= 0
                         else (data.mats[t["baseline"]], data.X))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            power = metric_comparison_power(first, second, data.Z, sizes=[(N, m) for m in sizes_inputs],
                                            test="perm-both", level=t["level"], coefficient=opt.coefficient,
                                            alpha=opt.alpha / (2 * len(data.baselines)),
                                            n_trials=opt.planner_trials,
                                            n_resamples=opt.planner_resamples, rng=data.rng(STAGE_PLANNER, k))
        need = required_size(power, target=opt.target_power, size="n_inputs", n_trials=opt.planner_trials).iloc[0]
        rows.append({"level": t["level"], "baseline": t["baseline"],
                     "better_here": data.metric if t["difference"] >= 0 else t["baseline"],
                     "difference": abs(t["difference"]), "n_systems": N,
                     "documents_needed": need["required"], "ci_low": need["low"], "ci_high": need["high"],
                     "reached": bool(need["reached"]), "largest_size_tried": int(max(sizes_inputs)),
                     "power_curve": "; ".join(f"{m}: {p:.2f}" for m, p in zip(power.n_inputs, power.power)),
                     "seed": data.seed_label(STAGE_PLANNER, k)})
        k += 1
    return pd.DataFrame(rows, columns=PLANNER_COLUMNS)


def _percent_range(low: float, high: float) -> str:
    """``20%`` when both ends print alike, else ``3% to 7%``.

    >>> _percent_range(20.0, 20.4), _percent_range(3.3, 6.7)
    ('20%', '3% to 7%')
    """
    a, b = f"{low:.0f}%", f"{high:.0f}%"
    return a if a == b else f"{a} to {b}"


def _summarize_normality(data: CardData, norm: pd.DataFrame) -> list[str]:
    alpha = data.options.alpha
    non_normal = norm.loc[norm.system_pvalue < alpha, ["score", "system_pvalue"]]
    which = (" (" + ", ".join(f"{data.md_name(s)} p {_fmt_p(p, equals=True)}"
                              for s, p in non_normal.itertuples(index=False)) + ")") if len(non_normal) else ""
    return [f"- Normality, Shapiro-Wilk at {alpha} on each score's system-level values (no correction for the "
            f"{len(norm)} tests): rejected for {len(non_normal)} of {len(norm)} scores{which}; per input, for "
            f"{_percent_range(norm.summary_percent_rejected.min(), norm.summary_percent_rejected.max())} of inputs"
            + (". Williams' test and Fisher CIs assume normality; the card's Perm-Both tests and Boot-Both CIs do "
               "not." if len(non_normal) else ".")]


@card_section("normality", _summarize_normality)
def normality_table(data: CardData, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Shapiro-Wilk normality of the human score and every compared metric (Deutsch et al., Appendix
    Table 2)."""
    table = normality({data.human: data.Z, **data.mats}, alpha=data.options.alpha)
    table.insert(1, "display_name", [data.name(s) for s in table.score])
    return table


def _summarize_agreement(data: CardData, table: pd.DataFrame) -> list[str]:
    new = table[table.metric == data.metric].iloc[0]
    ranked = table.sort_values("pairwise_accuracy", ascending=False).reset_index(drop=True)
    pos = int(ranked.index[ranked.metric == data.metric][0]) + 1
    base = table[table.metric != data.metric]
    alpha = data.options.alpha

    def significant(col: str) -> list[str]:
        rows = base.loc[base[col] < alpha, ["metric", col]].itertuples(index=False)
        return [f"{data.md_name(b)} (p {_fmt_p(p, equals=True)})" for b, p in rows]

    better, worse = significant("p_new_better_bonferroni"), significant("p_baseline_better_bonferroni")
    verdict = f"significantly higher than {_join(better)}" if better else "not significantly higher than any"
    verdict += f"; significantly lower than {_join(worse)}" if worse else "; not significantly lower than any"
    return [f"- Pairwise accuracy (system pairs ordered as the humans order them; Kocmi et al. 2021): "
            f"{new.pairwise_accuracy:.3f}, rank {pos} of {len(table)}; acc_eq with ties (Deutsch et al. 2023) "
            f"{new.acc_eq:.3f} at epsilon = {new.epsilon:.3g}. One-sided Perm-Both tests of it against each baseline "
            f"in each direction (Bonferroni over {_count(len(base), 'baseline')}, adjusted p, alpha = {alpha}): "
            f"{verdict}."]


@card_section("agreement", _summarize_agreement)
def agreement_table(data: CardData, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """System-level pairwise accuracy and acc_eq (with its tie threshold) of every compared metric, and
    Perm-Both tests of the new metric's pairwise accuracy against each baseline, Bonferroni over baselines."""
    opt = data.options
    rows = []
    for k, (name, V) in enumerate(data.mats.items()):
        tie = tie_calibrated_accuracy(V, data.Z, level="system")
        row = {"metric": name, "display_name": data.name(name), "role": "new" if name == data.metric else "baseline",
               "pairwise_accuracy": pairwise_accuracy(V, data.Z, level="system"), "acc_eq": tie.statistic,
               "epsilon": tie.epsilon, "p_new_better": np.nan, "p_baseline_better": np.nan, "seed": ""}
        if name != data.metric:
            # both directions from the same seed: the same permutations, as in the tests section
            p = {alt: permutation_test(data.X, V, data.Z, level="system", coefficient="pairwise-accuracy",
                                       n_resamples=opt.n_resamples, alternative=alt, rng=data.rng(STAGE_AGREEMENT, k))
                 for alt in ("greater", "less")}
            row.update(p_new_better=p["greater"].pvalue, p_baseline_better=p["less"].pvalue,
                       seed=data.seed_label(STAGE_AGREEMENT, k))
        rows.append(row)
    table = pd.DataFrame(rows)
    n = int((table.role == "baseline").sum())
    for col in ("p_new_better", "p_baseline_better"):
        table[col + "_bonferroni"] = bonferroni(table[col].to_numpy(), n_tests=max(n, 1))
    return table


def _summarize_few_labels(data: CardData, table: pd.DataFrame) -> list[str]:
    few = data.few
    assert few is not None
    conf = f"{data.options.confidence_level:.0%}"
    means = table[table.kind == "system mean"]
    ratio = float(np.median(means.width / means.humans_width))
    corr = table[table.kind == "correlation"].iloc[0]
    if isinstance(corr.reason, str) and corr.reason:
        correlation = (f"- Few labels: system-level {data.options.coefficient} of {data.md_name(data.metric)} with "
                       f"{data.md_name(data.human)} from all inputs: {corr.reason}.")
    else:
        correlation = (
            f"- Few labels: system-level {data.options.coefficient} of {data.md_name(data.metric)} with "
            f"{data.md_name(data.human)}: {corr.estimate:.3f}, {conf} prediction-powered bootstrap interval "
            f"[{corr.low:.3f}, {corr.high:.3f}] (judge on all inputs), against {corr.humans_estimate:.3f} "
            f"[{corr.humans_low:.3f}, {corr.humans_high:.3f}] from the labelled inputs alone (Boot-Inputs).")
    return [
        f"- Few labels: humans rated {int(corr.n_labelled)} of {int(corr.n_labelled + corr.n_unlabelled)} inputs, "
        f"the judge {data.md_name(few.judge)} all of them. PPI++ {conf} intervals of the {len(means)} system means "
        f"are {ratio:.2f} times as wide as the humans-only intervals (median over systems).",
        correlation,
    ]


@card_section("few_labels", _summarize_few_labels, applies=lambda data: data.few is not None)
def few_labels_table(data: CardData, tables: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """With a judge: PPI++ system means and the prediction-powered interval of the metric's correlation."""
    few = data.few
    assert few is not None
    opt, lab = data.options, few.labelled
    Zl = few.Z[:, lab]
    means = ppi_system_means(Zl, few.J[:, lab], few.J[:, ~lab], confidence_level=opt.confidence_level,
                             rng=data.rng(6, 0))
    z = float(_stats.norm.ppf(0.5 + opt.confidence_level / 2))
    hum = Zl.mean(axis=1)
    n, N = int(lab.sum()), int((~lab).sum())
    rows = [{"kind": "system mean", "name": system, "estimate": est, "low": lo, "high": hi, "width": hi - lo,
             "humans_estimate": h, "humans_low": h - z * se, "humans_high": h + z * se, "humans_width": 2 * z * se,
             "lam": lam, "n_labelled": n, "n_unlabelled": N, "seed": data.seed_label(6, 0)}
            for system, est, lo, hi, h, se, lam in zip(data.ds.systems, means.statistic,
                                                       np.asarray(means.confidence_interval.low),
                                                       np.asarray(means.confidence_interval.high), hum,
                                                       means.classical_standard_error, means.lam)]
    row = {"kind": "correlation", "name": f"system-level {opt.coefficient}",
           **dict.fromkeys(["estimate", "low", "high", "width", "humans_estimate", "humans_low", "humans_high",
                            "humans_width", "lam"], float("nan")),
           "n_labelled": n, "n_unlabelled": N, "seed": f"{data.seed_label(6, 1)}; {data.seed_label(6, 2)}",
           "reason": ""}
    if n < MIN_LABELLED_CORRELATION:
        row["reason"] = (f"cannot be tested: {n} labelled inputs, fewer than {MIN_LABELLED_CORRELATION}, where the "
                         "prediction-powered interval's simulated coverage fell below its level")
    else:
        corr = ppi_correlation(few.X, few.Z, few.J, coefficient=opt.coefficient, n_resamples=opt.n_resamples,
                               confidence_level=opt.confidence_level, rng=data.rng(6, 1))
        alone = bootstrap_ci(few.X[:, lab], Zl, level="system", coefficient=opt.coefficient, resample="inputs",
                             n_resamples=opt.n_resamples, confidence_level=opt.confidence_level, rng=data.rng(6, 2))
        lo, hi = corr.confidence_interval.low, corr.confidence_interval.high
        row.update(estimate=corr.statistic, low=lo, high=hi, width=hi - lo, humans_estimate=alone.statistic,
                   humans_low=alone.confidence_interval.low, humans_high=alone.confidence_interval.high,
                   humans_width=alone.confidence_interval.high - alone.confidence_interval.low)
    rows.append(row)
    return pd.DataFrame(rows).assign(reason=lambda t: t.reason.fillna(""))


def _check_card_settings(opt: CardOptions, incomplete: str, called_from: str) -> None:
    seed = opt.seed
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    unknown = [lv for lv in [*opt.levels, *opt.test_levels] if lv not in LEVELS]
    if unknown:
        raise ValueError(f"levels must be among {LEVELS}, got {unknown}")
    if called_from not in CALLERS:
        raise ValueError(f"called_from must be one of {', '.join(CALLERS)}, got {called_from!r}")
    if incomplete not in INCOMPLETE:
        raise ValueError(f"incomplete must be one of {', '.join(INCOMPLETE)}, got {incomplete!r} "
                         f"({_setting(called_from, 'incomplete', 'drop-inputs')})")


def _choose_baselines(ds, dataset: str, metric: str, baselines: Sequence[str] | None, called_from: str,
                      notes: list[str]) -> list[str]:
    """The baselines given, checked, or the dataset's defaults (a note names the standard ones it lacks)."""
    chosen_by_default = baselines is None
    try:
        chosen = list(baselines) if baselines is not None else default_baselines(ds, exclude=(metric,))
    except DataError:  # no ROUGE / BERTScore nor texts: the dataset's other metrics (the note below says so)
        chosen = [n for n in ds.score_names if n not in {metric, *ds.human_scores} and recognize(n) is None]
        if not chosen:
            raise
    if not chosen:
        raise ValueError(f"no baselines: dataset {dataset!r} has none of the standard metrics; pass "
                         f"{_baselines_setting(called_from)}")
    missing = [b for b in chosen if b not in ds.score_names and not ds.computable(b)]
    if missing:
        raise ValueError(f"baselines {missing} are not scores of dataset {dataset!r}")
    if metric in chosen:
        raise ValueError(f"the new metric {metric!r} is also listed as a baseline")
    if chosen_by_default:
        stat = "R" if ds.recall_oriented else "F"
        # the new metric's own family is not missing: it is the one compared
        found = {(_family(b, stat) or ("",))[0] for b in [metric, *chosen]}
        absent = [_FAMILY_NAMES[m] for m in _STANDARD if m not in found]
        if absent:
            notes.append(f"no {_join(absent, 'or')} ({'recall' if stat == 'R' else 'F1'}, under any spelling) in "
                         f"dataset {ds.name!r}, so {'it is' if len(absent) == 1 else 'they are'} not among the "
                         f"default baselines; choose baselines with {_baselines_setting(called_from)}")
    return chosen


def _apply_incomplete(ds, X, metric: str, human: str, baselines: list[str], *, incomplete: str, called_from: str,
                      chosen_by_default: bool, notes: list[str]):
    """Every score the card uses complete on one grid: the user's policy decides which systems or inputs go.
    Returns ``(ds, X, dropped)``."""
    used = {metric: X, human: ds.matrix(human, allow_nan=True),
            **{b: ds.matrix(b, allow_nan=True) for b in baselines}}
    keep_s, keep_i, note = _resolve_incomplete(used, ds.systems, ds.inputs, ds_name=ds.name, incomplete=incomplete,
                                               called_from=called_from,
                                               default_baselines=baselines if chosen_by_default else ())
    dropped = {"systems": tuple(s for s, k in zip(ds.systems, keep_s) if not k),
               "inputs": tuple(i for i, k in zip(ds.inputs, keep_i) if not k)}
    if note is not None:
        notes.append(note)
        X = X[np.ix_(keep_s, keep_i)]
        ds = ds.subset([s for s, k in zip(ds.systems, keep_s) if k], [i for i, k in zip(ds.inputs, keep_i) if k])
    return ds, X, dropped


def _not_analysed_notes(ds, all_scores: Sequence[str], analysed: set[str], human: str, unused: Sequence[str],
                        called_from: str) -> list[str]:
    """Nothing the user gave disappears silently: name every score the card leaves out, as the settings spell it."""
    humans = set(ds.human_scores)
    other_metrics = [n for n in all_scores if n not in analysed and n not in humans]
    other_humans = [n for n in all_scores if n not in analysed and n in humans]
    notes = []
    if other_metrics:
        notes.append(f"{_count(len(other_metrics), 'metric score')} of dataset {ds.name!r} not analysed: "
                     f"{_ids(other_metrics, 8)} (compare with any of them with "
                     f"{_baselines_setting(called_from)})")
    if other_humans:
        notes.append(f"{_count(len(other_humans), 'other human score')} not used: "
                     f"{_ids(other_humans, 8)} (the card uses {human}; "
                     f"choose with {_setting(called_from, 'human', 'NAME')})")
    if unused:
        notes.append(f"{_count(len(unused), 'other score')} of the scores file not used: {_ids(unused, 8)} "
                     f"(choose the new metric with {_setting(called_from, 'metric', 'NAME')})")
    return notes


def card_data(scores, *, dataset: str, metric: str | None = None, baselines: Sequence[str] | None = None,
              human: str | None = None, options: CardOptions = CardOptions(), incomplete: str = "raise",
              called_from: str = "python", judge: str | None = None) -> CardData:
    """The checked inputs of a card: the new metric's scores on the grid it shares with ``dataset``, the
    human score and the baselines, complete (see :func:`card_tables` for the arguments).

    Steps: the settings checked; the dataset and its human score; the user's scores on the shared grid; the
    baselines; the incomplete policy applied to every score used; notes naming what is not analysed."""
    _check_card_settings(options, incomplete, called_from)
    ds = _datasets.load(dataset)
    human = human or ds.default_human
    if human not in ds.score_names:
        raise ValueError(f"human score {human!r} is not in dataset {dataset!r}")
    all_scores = list(ds.score_names)
    metric, X, notes, systems, inputs, unused = _user_scores(scores, ds, metric)
    if (systems, inputs) != (ds.systems, ds.inputs):
        ds = ds.subset(systems, inputs)
    if judge is not None and baselines is None and judge != metric:
        try:
            default_baselines(ds, exclude=(metric,))
        except ValueError:  # no standard metric: the judge is what the new metric is compared with
            baselines = [judge]
            notes.append(f"no standard baseline in dataset {ds.name!r}: the judge {judge} is the baseline")
    chosen = _choose_baselines(ds, dataset, metric, baselines, called_from, notes)
    few = None
    if judge is not None:
        few = _few_labels(ds, X, metric, human, judge, called_from)
        if incomplete == "raise":
            incomplete = "drop-inputs"  # the inputs no human rated: the other sections use the labelled ones
        notes.append(f"few labels: humans rated {int(few.labelled.sum())} of {few.labelled.size} inputs; the "
                     f"sections other than few_labels use those inputs, few_labels uses the judge {judge} on all")
    ds, X, dropped = _apply_incomplete(ds, X, metric, human, chosen, incomplete=incomplete, called_from=called_from,
                                       chosen_by_default=baselines is None, notes=notes)
    analysed = {metric, human, *chosen}
    notes.extend(_not_analysed_notes(ds, all_scores, analysed, human, unused, called_from))
    mats = {metric: X, **{b: ds.matrix(b) for b in chosen}}
    return CardData(ds=ds, metric=metric, human=human, baselines=tuple(chosen), X=X, Z=ds.matrix(human),
                    mats=mats, options=options, notes=tuple(notes), incomplete=incomplete, dropped=dropped,
                    not_analysed=tuple(n for n in [*all_scores, *unused] if n not in analysed and n != judge),
                    few=few)


def _few_labels(ds, X: np.ndarray, metric: str, human: str, judge: str, called_from: str) -> FewLabels:
    """The full grids of a card with a judge; the labelled inputs are those where every system has a human
    score (a missing human cell marks an input no human rated)."""
    if judge not in ds.score_names:
        raise ValueError(f"judge {judge!r} is not a score of dataset {ds.name!r} (its scores: "
                         f"{', '.join(ds.score_names)}); choose it with {_setting(called_from, 'judge', 'NAME')}")
    J = ds.matrix(judge, allow_nan=True)
    Z = ds.matrix(human, allow_nan=True)
    for name, V in ((f"judge {judge!r}", J), (f"metric {metric!r}", X)):
        if np.isnan(V).any():
            i, j = np.argwhere(np.isnan(V))[0]
            raise DataError(f"dataset {ds.name!r}: the {name} misses {int(np.isnan(V).sum())} cells (e.g. "
                            f"({ds.systems[i]}, {ds.inputs[j]})); with few human labels the judge and the metric "
                            "must score every input")
    labelled = ~np.isnan(Z).any(axis=0)
    if labelled.sum() < 3:
        raise DataError(f"dataset {ds.name!r}: humans rated every system on {int(labelled.sum())} inputs; the card "
                        "needs at least 3")
    return FewLabels(judge=judge, J=J, X=np.asarray(X, dtype=float), Z=Z, labelled=labelled)


def card_tables(
    scores,
    *,
    dataset: str,
    metric: str | None = None,
    baselines: Sequence[str] | None = None,
    human: str | None = None,
    coefficient: str = "pearson",
    levels: Sequence[str] = LEVELS,
    test_levels: Sequence[str] = ("system", "summary"),
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    alpha: float = 0.05,
    target_power: float = 0.8,
    planner_inputs: Sequence[float] = (0.5, 1, 2, 4, 8),
    planner_trials: int = 200,
    planner_resamples: int = 200,
    seed: int = 0,
    incomplete: str = "raise",
    called_from: str = "python",
    judge: str | None = None,
) -> Card:
    """Compute the report card of a new metric on an embedded dataset: every section of :data:`SECTIONS`
    in order, then the summary from their lines.

    Parameters
    ----------
    scores : path, Dataset or str
        The new metric's scores in any form :func:`metaeval.datasets.load` accepts (keyed by instance and
        summarizer ids matching the dataset's), a loaded Dataset, or the name of a score of the dataset
        itself (to card an embedded metric).
    dataset : str
        Embedded dataset name (``"summeval"``, ``"realsumm"``, ...).
    metric : str, optional
        Which score of ``scores`` is the new metric (needed when it holds several).
    baselines : sequence of str, optional
        Metrics to compare with (default: :func:`default_baselines`).
    human : str, optional
        The human score (default: the dataset's ``default_human``).
    coefficient : {"pearson", "spearman", "kendall"}
    levels : correlation levels of the CI table; ``test_levels``: levels of the tests and the planner.
    n_resamples : int
        Bootstrap resamples of each CI and permutations of each test.
    confidence_level, alpha : float
        CI level; significance level of the Bonferroni-corrected tests.
    target_power : float
        Power the planner aims at.
    planner_inputs : sequence of float
        Study sizes the planner tries, as multiples of the dataset's number of inputs (systems fixed).
    planner_trials, planner_resamples : int
        Monte-Carlo trials per size and permutations per planner test.
    seed : int
        Root of every random draw: row k of stage s uses ``numpy.random.default_rng([seed, s, k])``.
    incomplete : {"raise", "drop-inputs", "drop-systems"}
        When a score the card uses (the new metric, the human score, a baseline) misses cells: raise a
        ``DataError`` saying what each choice would leave out, or leave out the inputs (documents) / systems
        with a missing cell; the card's notes and ``provenance.json`` (``dropped``) name them.
    called_from : {"python", "notebook", "cli"}
        Where the card runs, so that an error names a setting in the form usable there
        (``incomplete='drop-inputs'``, ``-p incomplete drop-inputs``, ``--incomplete drop-inputs``).
    judge : str, optional
        A score of the dataset (an LLM, any metric) on every input, where humans rated only some inputs (the
        human score's missing cells mark the others): the card's sections then use the labelled inputs, and
        section ``few_labels`` adds prediction-powered (PPI++) intervals of the system means and of the
        metric's system-level correlation from all inputs (:mod:`metaeval.stats.ppi`).

    Returns
    -------
    Card
        Its notes (the summary's "Note:" lines, ``provenance["notes"]``) name the default baselines not found,
        the scores not analysed and anything left out.

    Raises
    ------
    metaeval.data.formats.DataError
        A score the card uses misses cells and ``incomplete="raise"``.
    """
    options = CardOptions(coefficient=coefficient, levels=tuple(levels), test_levels=tuple(test_levels),
                          n_resamples=n_resamples, confidence_level=confidence_level, alpha=alpha,
                          target_power=target_power, planner_inputs=tuple(planner_inputs),
                          planner_trials=planner_trials, planner_resamples=planner_resamples, seed=seed)
    data = card_data(scores, dataset=dataset, metric=metric, baselines=baselines, human=human, options=options,
                     incomplete=incomplete, called_from=called_from, judge=judge)
    tables: dict[str, pd.DataFrame] = {}
    for section in _sections(data):
        tables[section.name] = section.compute(data, tables)
    return Card(dataset=data.ds.name, metric=data.metric, human=data.human, baselines=data.baselines,
                shape=data.shape, tables=tables, summary=_summary(data, tables),
                provenance=_provenance(data, scores, dataset))


def _sections(data: CardData) -> list[CardSection]:
    """The sections of this card, in order (a section may apply to some cards only, e.g. ``few_labels``)."""
    return [section for section in SECTIONS.values() if section.applies(data)]


def _signature(opt: CardOptions, n_baselines: int) -> str:
    return (f"card|corr:{opt.coefficient}|ci:boot-both|B:{opt.n_resamples}|conf:{opt.confidence_level}|"
            f"test:perm-both,two-sided|alpha:{opt.alpha}|bonferroni:{n_baselines}|planner:perm-both,"
            f"{opt.planner_trials}x{opt.planner_resamples},power:{opt.target_power}|seed:{opt.seed}")


def _provenance(data: CardData, scores, dataset: str) -> dict:
    # a score's signature is its name (a ROUGE signature names its options)
    score_signatures = {name: name for name in [data.metric, *data.baselines, data.human]}
    N, M = data.shape
    return {
        "dataset": dataset, "dataset_name": data.ds.name, "shape": [N, M], "human": data.human,
        "metric": data.metric,
        "scores": str(scores) if not isinstance(scores, _datasets.Dataset) else scores.name,
        "baselines": list(data.baselines), "signature": _signature(data.options, len(data.baselines))
        # a grid cut for missing cells changes the numbers: say so in the signature (a complete grid keeps it as is)
        + (f"|incomplete:{data.incomplete}" if any(data.dropped.values()) else ""),
        "score_signatures": score_signatures, "seed": data.options.seed,
        "seeding": "row k of stage s draws from numpy.random.default_rng([seed, s, k]); "
                   "stages: 1 = Boot-Both CIs, 2 = Perm-Both tests, 3 = planner",
        "sections": [section.name for section in _sections(data)],
        "metaeval": __version__, "numpy": np.__version__, "notes": list(data.notes),
        "incomplete": data.incomplete, "dropped": {k: list(v) for k, v in data.dropped.items()},
        "not_analysed": list(data.not_analysed),
    }


def _summary(data: CardData, tables: Mapping[str, pd.DataFrame]) -> str:
    N, M = data.shape
    lines = [f"**{data.md_name(data.metric)}** on **{md_text(data.ds.name)}** ({N} systems x {M} inputs), against "
             f"{data.md_name(data.human)}, {data.options.coefficient.capitalize()} correlation."]
    for section in _sections(data):
        lines.extend(section.summarize(data, tables[section.name]))
    lines.extend(f"- Note: {md_text(n)}." for n in data.notes)  # notes quote names
    return "\n".join(lines)


def _fmt_docs(value: float) -> str:
    return f"{int(value)}" if np.isfinite(value) else "?"


# ----------------------------------------------------------------------------------------------------
# Files and rendering


#: The name a card's manifest (``.metaeval-run.card.json``) and staging folder carry: the card writes its
#: folders by the runner's rules (:mod:`metaeval._outputs`), with this as the "notebook" that owns them.
CARD_RUN = "card"


def make_card(
    scores,
    *,
    dataset: str,
    output_dir: str | os.PathLike,
    render: bool = True,
    execute: Execute | None = None,
    **options,
) -> Card:
    """Compute the report card of a new metric and write it to ``output_dir``.

    With ``render=True`` the card notebook (``notebooks/61_report_card``) is executed with these arguments by
    ``execute(parameters, executed)`` (running a notebook is the running layer's job:
    :func:`metaeval.run.card.make_card` passes the runner's executor, with its quiet kernel), which writes the
    CSV tables (``correlations.csv``, ``tests.csv``, ``normality.csv``, ``planner.csv``, ...), ``summary.md``,
    ``provenance.json``, the figures and the one-page ``report.html``, and the executed notebook as
    ``card.ipynb``. With ``render=False`` the tables are computed here and written without a notebook.
    ``options`` are those of :func:`card_tables` (``metric``, ``baselines``, ``n_resamples``, ``seed``, ...).

    The folder is written by the runner's ownership rules, in both modes: only a new or empty folder, or one
    holding a previous card's manifest (``.metaeval-run.card.json``, the sha256 of every file it wrote) whose
    files nobody changed; never the compendium root, a folder above it, the home folder, ``/``, ``results/``,
    ``data/`` or ``lib/``. The card is staged next to the folder and swapped in when complete; a file the card
    did not write is never removed or overwritten.

    Returns
    -------
    Card
        With ``files``: the paths written.

    Raises
    ------
    metaeval._outputs.OutputDirError
        (a ``ValueError``) A folder the card may not write, before anything is computed.
    """
    out = check_target(Path(output_dir), CARD_RUN, given=output_dir, paper=CARD_RUN)
    if render and execute is None:
        raise ValueError("render=True executes the card notebook, which the running layer does: call "
                         "metaeval.run.card.make_card (or `metaeval card`), or pass render=False")
    if render and isinstance(scores, _datasets.Dataset):
        raise TypeError("with render=True, scores must be a path or a score name (the notebook loads it); "
                        "pass render=False to card a loaded Dataset")
    check_scores_path(scores)  # a missing scores file fails here, not in the notebook's third cell
    if not isinstance(scores, _datasets.Dataset) and Path(scores).exists():
        # the notebook runs in the compendium root: a relative path must not change meaning
        scores = str(Path(scores).resolve())
    if isinstance(dataset, (str, os.PathLike)) and str(dataset) not in _datasets.known_datasets() \
            and Path(dataset).exists():
        dataset = str(Path(dataset).resolve())  # likewise for a user's dataset folder or table
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = staging_dir(out)
    card = None
    try:
        if render:
            assert execute is not None  # checked above
            # the notebook's errors name settings as the caller sets them (a Python keyword unless told otherwise)
            params = {"scores": str(scores), "dataset": dataset, "output_dir": str(staging), "called_from": "python",
                      **options}
            if params.get("baselines") is not None:
                params["baselines"] = list(params["baselines"])
            execute(params, staging / "card.ipynb")
        else:
            card = card_tables(scores, dataset=dataset, **options)
            card.write(staging)
        parameters = {"scores": str(scores) if not isinstance(scores, _datasets.Dataset) else scores.name,
                      "dataset": dataset, "render": render, **options}
        write_manifest(staging, CARD_RUN, parameters, paper=CARD_RUN)
        swap_into_place(staging, out, CARD_RUN, paper=CARD_RUN)
    except BaseException:
        remove_run_folder(staging)
        raise
    written = _read_card(out)
    # without rendering, the tables computed here (not their CSV round trip) with the files written
    return written if card is None else replace(card, files=written.files)


def _read_card(out: Path) -> Card:
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    tables = {name: pd.read_csv(out / f"{name}.csv") for name in provenance.get("sections", list(SECTIONS))}
    files = {name: out / f"{name}.csv" for name in tables}
    files.update(summary=out / "summary.md", provenance=out / "provenance.json")
    files.update({name: out / file for name, file in (("html", "report.html"), ("notebook", "card.ipynb"))
                  if (out / file).exists()})
    return Card(dataset=provenance["dataset_name"], metric=provenance["metric"], human=provenance["human"],
                baselines=tuple(provenance["baselines"]), shape=tuple(provenance["shape"]),  # type: ignore[arg-type]
                summary=(out / "summary.md").read_text(encoding="utf-8").strip(), provenance=provenance,
                files=files, tables=tables)
