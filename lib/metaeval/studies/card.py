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
* a short summary generated from those numbers.

:func:`make_card` writes the tables as CSV (plus ``summary.md`` and ``provenance.json``: dataset,
signatures, seeds, versions) and, with ``render=True``, executes the card notebook
(``notebooks/61_report_card``) and renders the one-page report (:mod:`metaeval.studies.card_report`) to
``card.html``. Every random step draws from
``numpy.random.default_rng([seed, stage, row])`` (stage 1: CIs, 2: tests, 3: planner), recorded per row,
so any number of the card can be reproduced by one direct library call.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from metaeval import _resources
from metaeval._io import atomic_write, remove_own_tree
from metaeval.data import datasets as _datasets
from metaeval.stats.planning import metric_comparison_power, required_size
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import bonferroni, permutation_test
from metaeval.studies.deutsch import normality

__all__ = ["Card", "card_tables", "make_card", "default_baselines", "CARD_NOTEBOOK", "LEVELS"]

LEVELS = ("system", "summary", "global")
CARD_NOTEBOOK = "61_report_card"
STAGE_CI, STAGE_TEST, STAGE_PLANNER = 1, 2, 3
#: The standard metrics of a dataset, in order of preference; the stat is recall on recall-oriented
#: datasets (REALSumm: the paper used recall), F1 otherwise.
_STANDARD = ("rouge-1", "rouge-2", "rouge-l", "bertscore")


def _rng(seed: int, stage: int, row: int) -> np.random.Generator:
    return np.random.default_rng([seed, stage, row])


def _seed_label(seed: int, stage: int, row: int) -> str:
    return f"default_rng([{seed}, {stage}, {row}])"


@dataclass(frozen=True)
class Card:
    """The report card's tables and provenance (see :func:`card_tables`)."""

    dataset: str
    metric: str
    human: str
    baselines: tuple[str, ...]
    shape: tuple[int, int]
    correlations: pd.DataFrame
    tests: pd.DataFrame
    normality: pd.DataFrame
    planner: pd.DataFrame
    summary: str
    provenance: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)

    def write(self, output_dir: str | os.PathLike) -> dict[str, Path]:
        """Write the tables (CSV), ``summary.md`` and ``provenance.json`` into ``output_dir`` atomically."""
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {}
        for name in ("correlations", "tests", "normality", "planner"):
            path = out / f"{name}.csv"
            frame: pd.DataFrame = getattr(self, name)

            def write_csv(tmp: Path, frame: pd.DataFrame = frame) -> None:
                frame.to_csv(tmp, index=False)

            atomic_write(path, write_csv)
            files[name] = path
        files["summary"] = out / "summary.md"
        atomic_write(files["summary"], lambda tmp: Path(tmp).write_text(self.summary + "\n", encoding="utf-8"))
        files["provenance"] = out / "provenance.json"
        atomic_write(files["provenance"],
                     lambda tmp: Path(tmp).write_text(json.dumps(self.provenance, indent=2) + "\n", encoding="utf-8"))
        return files


def default_baselines(ds, exclude: Sequence[str] = ()) -> list[str]:
    """The dataset's standard metrics present in it: ROUGE-1/2/L and BERTScore (recall on recall-oriented
    datasets, F1 otherwise), leaving out ``exclude``.

    Examples
    --------
    >>> default_baselines(_datasets.load("realsumm"), exclude=["rouge-l.recall"])
    ['rouge-1.recall', 'rouge-2.recall', 'bertscore.recall']
    """
    stat = "recall" if getattr(ds, "recall_oriented", False) else "f1"
    names = [f"{m}.{stat}" for m in _STANDARD]
    return [n for n in names if n in ds.score_names and n not in exclude]


def _display(ds, name: str) -> str:
    fn = getattr(ds, "display_name", None)
    return fn(name) if callable(fn) else name


def _human_names(ds) -> list[str]:
    names = getattr(ds, "human_scores", None)
    if names is not None:
        return list(names)
    prefixes = ("expert.", "turker.", "human.", "litepyramid.", "pyramid.", "responsiveness")
    return [n for n in ds.score_names if n.startswith(prefixes)]


def _default_human(ds) -> str:
    name = getattr(ds, "default_human", None)
    if name:
        return name
    for candidate in ("expert.relevance", "litepyramid.recall"):
        if candidate in ds.score_names:
            return candidate
    humans = _human_names(ds)
    if not humans:
        raise _datasets.DataError(f"dataset {ds.name!r} has no human scores; pass human=")
    return humans[0]


def _user_scores(scores, ds, metric: str | None):
    """The new metric's name, its N x M matrix on the grid it shares with ``ds``, notes on anything left
    out, and that grid (systems, inputs)."""
    notes: list[str] = []
    if isinstance(scores, str) and scores in ds.score_names and not Path(scores).exists():
        # a score already in the dataset (e.g. the CI card of an embedded metric)
        return scores, ds.matrix(scores), notes, ds.systems, ds.inputs
    user = scores if isinstance(scores, _datasets.Dataset) else _datasets.load(scores, incomplete="keep-nan")
    humans = set(_human_names(user))
    candidates = [n for n in user.score_names if n not in humans]
    if metric is None:
        if len(candidates) != 1:
            raise ValueError(f"scores holds {len(candidates)} metric scores ({', '.join(candidates) or 'none'}); "
                             "choose one with metric=")
        metric = candidates[0]
    elif metric not in user.score_names:
        raise ValueError(f"metric {metric!r} is not in scores; it holds {', '.join(user.score_names)}")
    extra_sys = sorted(set(user.systems) - set(ds.systems))
    extra_inp = sorted(set(user.inputs) - set(ds.inputs))
    if extra_sys or extra_inp:
        notes.append(f"{len(extra_sys)} systems and {len(extra_inp)} inputs of the scores are not in dataset "
                     f"{ds.name!r} and were left out (e.g. {(extra_sys + extra_inp)[:3]})")
    common_sys = [s for s in ds.systems if s in set(user.systems)]
    common_inp = [i for i in ds.inputs if i in set(user.inputs)]
    if len(common_sys) < 3 or len(common_inp) < 3:
        raise ValueError(f"scores and dataset {ds.name!r} share {len(common_sys)} systems and {len(common_inp)} "
                         "inputs; the card needs at least 3 of each (check the instance_id / summarizer_id keys)")
    values = user.subset(common_sys, common_inp).matrix(metric, allow_nan=True)
    missing_inputs = np.isnan(values).any(axis=0)
    if missing_inputs.all():
        raise ValueError(f"metric {metric!r} is missing in every input for some system; nothing to compare")
    if len(common_sys) < len(ds.systems) or len(common_inp) < len(ds.inputs) or missing_inputs.any():
        notes.append(f"the scores cover {len(common_sys)} of {len(ds.systems)} systems and "
                     f"{int((~missing_inputs).sum())} of {len(ds.inputs)} inputs completely; the card uses that grid")
    keep_inp = [i for i, miss in zip(common_inp, missing_inputs) if not miss]
    return metric, values[:, ~missing_inputs], notes, tuple(common_sys), tuple(keep_inp)


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
) -> Card:
    """Compute the report card of a new metric on an embedded dataset.

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

    Returns
    -------
    Card
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    unknown = [lv for lv in [*levels, *test_levels] if lv not in LEVELS]
    if unknown:
        raise ValueError(f"levels must be among {LEVELS}, got {unknown}")
    ds = _datasets.load(dataset)
    human = human or _default_human(ds)
    if human not in ds.score_names:
        raise ValueError(f"human score {human!r} is not in dataset {dataset!r}")
    metric, X, notes, systems, inputs = _user_scores(scores, ds, metric)
    if (systems, inputs) != (ds.systems, ds.inputs):
        ds = ds.subset(systems, inputs)
    baselines = list(baselines) if baselines is not None else default_baselines(ds, exclude=(metric,))
    if not baselines:
        raise ValueError(f"no baselines: dataset {dataset!r} has none of the standard metrics; pass baselines=")
    missing = [b for b in baselines if b not in ds.score_names]
    if missing:
        raise ValueError(f"baselines {missing} are not scores of dataset {dataset!r}")
    if metric in baselines:
        raise ValueError(f"the new metric {metric!r} is also listed as a baseline")
    Z = ds.matrix(human)
    mats = {metric: X, **{b: ds.matrix(b) for b in baselines}}
    N, M = Z.shape

    # Correlations with Boot-Both CIs
    rows = []
    k = 0
    for level in levels:
        for name, V in mats.items():
            res = bootstrap_ci(V, Z, level=level, coefficient=coefficient, resample="both", n_resamples=n_resamples,
                               confidence_level=confidence_level, rng=_rng(seed, STAGE_CI, k))
            rows.append({"level": level, "metric": name, "display_name": _display(ds, name),
                         "role": "new" if name == metric else "baseline", "r": res.statistic,
                         "low": res.confidence_interval.low, "high": res.confidence_interval.high,
                         "se": res.standard_error, "seed": _seed_label(seed, STAGE_CI, k)})
            k += 1
    correlations = pd.DataFrame(rows)

    # Perm-Both against each baseline, both directions, Bonferroni over the baselines of a level
    rows = []
    k = 0
    for level in test_levels:
        for b in baselines:
            # both directions from the same seed: the same permutations, as one two-tailed look at them
            p = {alt: permutation_test(X, mats[b], Z, level=level, coefficient=coefficient, resample="both",
                                       n_resamples=n_resamples, alternative=alt, rng=_rng(seed, STAGE_TEST, k))
                 for alt in ("greater", "less")}
            rows.append({"level": level, "baseline": b, "display_name": _display(ds, b),
                         "difference": p["greater"].statistic, "p_new_better": p["greater"].pvalue,
                         "p_baseline_better": p["less"].pvalue, "seed": _seed_label(seed, STAGE_TEST, k)})
            k += 1
    tests = pd.DataFrame(rows)
    if len(tests):
        for col in ("p_new_better", "p_baseline_better"):
            tests[col + "_bonferroni"] = np.concatenate(
                [bonferroni(block[col].to_numpy(), n_tests=len(baselines)) for _, block in
                 tests.groupby("level", sort=False)])
        tests["verdict"] = np.where(tests["p_new_better_bonferroni"] < alpha, "new better",
                                    np.where(tests["p_baseline_better_bonferroni"] < alpha, "baseline better",
                                             "not significant"))

    # Normality (Deutsch et al., Appendix Table 2)
    norm = normality({human: Z, **mats}, alpha=alpha)

    # Planner for the comparisons that are not significant
    sizes_inputs = sorted({max(3, int(round(f * M))) for f in planner_inputs})
    rows = []
    k = 0
    for _, t in tests.iterrows():
        if t["verdict"] != "not significant":
            continue
        # the direction the data point to: the metric that correlated better here is "X"
        first, second = (X, mats[t["baseline"]]) if t["difference"] >= 0 else (mats[t["baseline"]], X)
        rng = _rng(seed, STAGE_PLANNER, k)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            power = metric_comparison_power(first, second, Z, sizes=[(N, m) for m in sizes_inputs], test="perm-both",
                                            level=t["level"], coefficient=coefficient,
                                            alpha=alpha / len(baselines), n_trials=planner_trials,
                                            n_resamples=planner_resamples, rng=rng)
        need = required_size(power, target=target_power, size="n_inputs", n_trials=planner_trials).iloc[0]
        rows.append({"level": t["level"], "baseline": t["baseline"],
                     "better_here": metric if t["difference"] >= 0 else t["baseline"],
                     "difference": abs(t["difference"]), "n_systems": N,
                     "documents_needed": need["required"], "ci_low": need["low"], "ci_high": need["high"],
                     "reached": bool(need["reached"]), "largest_size_tried": int(max(sizes_inputs)),
                     "power_curve": "; ".join(f"{m}: {p:.2f}" for m, p in zip(power.n_inputs, power.power)),
                     "seed": _seed_label(seed, STAGE_PLANNER, k)})
        k += 1
    planner = pd.DataFrame(rows, columns=["level", "baseline", "better_here", "difference", "n_systems",
                                          "documents_needed", "ci_low", "ci_high", "reached", "largest_size_tried",
                                          "power_curve", "seed"])

    signature = (f"card|corr:{coefficient}|ci:boot-both|B:{n_resamples}|conf:{confidence_level}|test:perm-both|"
                 f"alpha:{alpha}|bonferroni:{len(baselines)}|planner:perm-both,{planner_trials}x{planner_resamples},"
                 f"power:{target_power}|seed:{seed}")
    card = Card(dataset=ds.name, metric=metric, human=human, baselines=tuple(baselines), shape=(N, M),
                correlations=correlations, tests=tests, normality=norm, planner=planner, summary="",
                provenance={})
    summary = _summary(card, ds, alpha=alpha, coefficient=coefficient, target_power=target_power, notes=notes,
                       sizes_inputs=sizes_inputs)
    score_signatures = {}
    sig_fn = getattr(ds, "signature", None)
    for name in [metric, *baselines, human]:
        score_signatures[name] = sig_fn(name) if callable(sig_fn) else name
    from metaeval import __version__

    provenance = {
        "dataset": dataset, "dataset_name": ds.name, "shape": [N, M], "human": human, "metric": metric,
        "scores": str(scores) if not isinstance(scores, _datasets.Dataset) else scores.name,
        "baselines": list(baselines), "signature": signature, "score_signatures": score_signatures,
        "seed": seed, "seeding": "row k of stage s draws from numpy.random.default_rng([seed, s, k]); "
                                "stages: 1 = Boot-Both CIs, 2 = Perm-Both tests, 3 = planner",
        "metaeval": __version__, "numpy": np.__version__, "notes": notes,
    }
    return Card(dataset=ds.name, metric=metric, human=human, baselines=tuple(baselines), shape=(N, M),
                correlations=correlations, tests=tests, normality=norm, planner=planner, summary=summary,
                provenance=provenance)


def _fmt_docs(value: float) -> str:
    return f"{int(value)}" if np.isfinite(value) else "?"


def _summary(card: Card, ds, *, alpha, coefficient, target_power, notes, sizes_inputs) -> str:
    name = _display(ds, card.metric)
    human = _display(ds, card.human)
    N, M = card.shape
    lines = [f"**{name}** on **{card.dataset}** ({N} systems x {M} inputs), against {human}, "
             f"{coefficient.capitalize()} correlation."]
    corr = card.correlations
    for level, block in corr.groupby("level", sort=False):
        block = block.sort_values("r", ascending=False).reset_index(drop=True)
        pos = int(block.index[block.metric == card.metric][0]) + 1
        row = block[block.metric == card.metric].iloc[0]
        lines.append(f"- {level.capitalize()} level: r = {row.r:.3f} [{row.low:.3f}, {row.high:.3f}], "
                     f"rank {pos} of {len(block)} among the new metric and {len(block) - 1} baselines; "
                     f"CI width {row.high - row.low:.3f}.")
    tests = card.tests
    for level, block in tests.groupby("level", sort=False):
        parts = []
        for verdict, label in (("new better", "significantly better than"),
                               ("baseline better", "significantly worse than"),
                               ("not significant", "not distinguishable from")):
            names = [_display(ds, b) for b in block.loc[block.verdict == verdict, "baseline"]]
            if names:
                parts.append(f"{label} {', '.join(names)}")
        lines.append(f"- Perm-Both at {level} level (alpha = {alpha}, Bonferroni over {len(card.baselines)} "
                     f"baselines): {'; '.join(parts)}.")
    for _, p in card.planner.iterrows():
        who = _display(ds, p.better_here)
        other = _display(ds, p.baseline if p.better_here == card.metric else card.metric)
        if p.reached:
            lines.append(f"- Planner, {p.level} level, {name} vs {_display(ds, p.baseline)}: detecting that {who} "
                         f"beats {other} (difference {p.difference:.3f}) with {target_power:.0%} power needs about "
                         f"{_fmt_docs(p.documents_needed)} documents with the same {N} systems (Monte-Carlo "
                         f"interval {_fmt_docs(p.ci_low)}-{_fmt_docs(p.ci_high)}; this study has {M}).")
        else:
            curve = p.power_curve.split("; ")
            lines.append(f"- Planner, {p.level} level, {name} vs {_display(ds, p.baseline)}: no size tried, up to "
                         f"{p.largest_size_tried} documents with the same {N} systems, gives {target_power:.0%} "
                         f"power to show that {who} beats {other} (difference {p.difference:.3f}; power by number "
                         f"of documents {curve[0]} ... {curve[-1]}).")
    norm = card.normality
    non_normal = norm.loc[norm.system_pvalue < alpha, "score"].tolist()
    which = f" ({', '.join(_display(ds, s) for s in non_normal)})" if non_normal else ""
    lines.append(f"- Normality: {len(non_normal)} of {len(norm)} scores have system-level values that fail "
                 f"Shapiro-Wilk at {alpha}{which}; "
                 f"per-input failures range from {norm.summary_percent_rejected.min():.0f}% to "
                 f"{norm.summary_percent_rejected.max():.0f}% of inputs"
                 + (" - tests that assume normality (Williams, Fisher CIs) are doubtful here." if non_normal
                    else "."))
    lines.extend(f"- Note: {n}." for n in notes)
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------------
# Files and rendering


def _card_notebook() -> Path:
    root = _resources.notebooks_root()
    for suffix in (".py", ".ipynb"):
        path = root / f"{CARD_NOTEBOOK}{suffix}"
        if path.exists():
            return path
    raise FileNotFoundError(f"the card notebook {CARD_NOTEBOOK} is missing from {root}")


def _kernel_name() -> str:
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        if "metaeval" in KernelSpecManager().find_kernel_specs():
            return "metaeval"
    except Exception:  # pragma: no cover - no jupyter_client: papermill will say so
        pass
    return "python3"


def make_card(
    scores,
    *,
    dataset: str,
    output_dir: str | os.PathLike,
    render: bool = True,
    **options,
) -> Card:
    """Compute the report card of a new metric and write it to ``output_dir``.

    With ``render=True`` the card notebook (``notebooks/61_report_card``) is executed with these arguments
    and rendered to ``card.html`` next to the CSV tables (``correlations.csv``, ``tests.csv``,
    ``normality.csv``, ``planner.csv``), ``summary.md`` and ``provenance.json``; the folder appears only when
    everything succeeded. ``options`` are those of :func:`card_tables` (``metric``, ``baselines``,
    ``n_resamples``, ``seed``, ...).

    Returns
    -------
    Card
        With ``files``: the paths written.
    """
    out = Path(output_dir)
    if not render:
        card = card_tables(scores, dataset=dataset, **options)
        files = card.write(out)
        return Card(**{**card.__dict__, "files": files})
    import jupytext
    import nbformat
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from metaeval.studies.card_report import render_report

    if isinstance(scores, _datasets.Dataset):
        raise TypeError("with render=True, scores must be a path or a score name (the notebook loads it); "
                        "pass render=False to card a loaded Dataset")
    if Path(scores).exists():
        # the notebook runs in the compendium root: a relative path must not change meaning
        scores = str(Path(scores).resolve())
    source = _card_notebook()
    out = out.resolve()
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "provenance.json").is_file()
                                              and not (out / "card.html").is_file())):
        # replace only a card this function wrote: never a user's folder or file that happens to be there
        raise ValueError(f"output {out} exists and does not hold a metaeval card; choose a new or empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".partial-{out.name}-", dir=out.parent))
    (staging / _STAGING_MARK).touch()
    try:
        nb = jupytext.read(source) if source.suffix == ".py" else nbformat.read(source, as_version=4)
        nb.metadata["kernelspec"] = {"name": _kernel_name(), "display_name": "Python 3", "language": "python"}
        template = staging / "card_template.ipynb"
        nbformat.write(nb, str(template))
        params = {"scores": str(scores), "dataset": dataset, "output_dir": str(staging), **options}
        if params.get("baselines") is not None:
            params["baselines"] = list(params["baselines"])
        executed = staging / "card.ipynb"
        try:
            papermill.execute_notebook(str(template), str(executed), parameters=params,
                                       cwd=str(_resources.project_root()), progress_bar=False,
                                       kernel_name=_kernel_name())
        except PapermillExecutionError as exc:
            raise RuntimeError(
                f"the card notebook failed in cell {exc.cell_index}: {exc.ename}: {exc.evalue}") from None
        template.unlink()
        # the card's page is its one-page report (no code, no parameters), not the executed notebook
        (staging / "card.html").write_text(render_report(staging), encoding="utf-8")
        if out.exists():
            backup = out.parent / f".old-{out.name}-{os.getpid()}"
            os.replace(out, backup)
            (staging / _STAGING_MARK).unlink()
            os.replace(staging, out)
            remove_own_tree(backup, _CARD_MARKS)
        else:
            (staging / _STAGING_MARK).unlink()
            os.replace(staging, out)
    except BaseException:
        remove_own_tree(staging, _CARD_MARKS)
        raise
    return _read_card(out)


# what marks a folder the card wrote (only such a folder, or an empty one, is ever deleted)
_STAGING_MARK = ".metaeval-staging"
_CARD_MARKS = (_STAGING_MARK, "provenance.json", "card.html")


def _read_card(out: Path) -> Card:
    provenance = json.loads((out / "provenance.json").read_text(encoding="utf-8"))
    tables = {name: pd.read_csv(out / f"{name}.csv") for name in ("correlations", "tests", "normality", "planner")}
    files = {name: out / f"{name}.csv" for name in tables}
    files.update(summary=out / "summary.md", provenance=out / "provenance.json", html=out / "card.html",
                 notebook=out / "card.ipynb")
    return Card(dataset=provenance["dataset_name"], metric=provenance["metric"], human=provenance["human"],
                baselines=tuple(provenance["baselines"]), shape=tuple(provenance["shape"]),  # type: ignore[arg-type]
                summary=(out / "summary.md").read_text(encoding="utf-8").strip(), provenance=provenance,
                files=files, **tables)
