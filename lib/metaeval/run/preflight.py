"""Data checks that need no kernel, run before one starts: a dataset that does not load, or a score the run
uses (the human score, a metric given as a parameter, or one the notebook derives from the data when its
parameter is None: every score of a user's dataset for notebooks 22 and 23) with missing cells while the run's
``incomplete`` policy is ``"raise"``, fails in a second with the same words the notebook would have used in cell
3 a minute later (:meth:`metaeval.data.datasets.Dataset.require`, with :data:`INCOMPLETE_FIX`).

The derived scores come from the library calls the notebooks make (:func:`derived_scores`); a default that
cannot be derived is left to the notebook, which says why in its own words.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# the one wording of the fix, for a notebook with an ``incomplete`` parameter and for one without (defined in the
# data layer, whose wording notebook 24's own check, ``studies/deutsch2022.check_complete``, uses too)
from metaeval.data.datasets import INCOMPLETE_FIX, NO_INCOMPLETE_FIX

__all__ = ["INCOMPLETE_FIX", "NO_INCOMPLETE_FIX", "SCORE_PARAMETERS", "check_data", "derived_scores",
           "incomplete_fix"]

#: Parameters whose values may name scores of the dataset (a string or a list of strings; a value that is not a
#: score of the dataset, such as the card's ``scores`` file, is left to the notebook).
SCORE_PARAMETERS = ("human", "scores", "metric", "metric_x", "metric_y", "metrics", "baselines", "bucket_score")


def incomplete_fix(has_parameter: bool) -> str:
    """The fix an incomplete-score error names: the notebook's ``incomplete`` parameter, or what to do without."""
    return INCOMPLETE_FIX if has_parameter else NO_INCOMPLETE_FIX


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def derived_scores(notebook: str, ds: Any, dataset: str, value: Mapping[str, Any]) -> list[str]:
    """The scores notebook ``notebook`` (its file stem, ``22_deutsch2021_metric_cis``) derives from the dataset
    when a score parameter is None, by the library calls its setup cell makes (``value``: the run's parameter
    values). Empty when nothing is derived or the default cannot be (left to the notebook)."""
    from metaeval.data.datasets import DataError, known_datasets

    number = notebook[:2]
    try:
        if number in ("22", "23") and value.get("metrics") is None:
            from metaeval.studies import deutsch

            return list(deutsch.default_metrics(ds, embedded=dataset in known_datasets())[0])
        if number == "24":
            from metaeval.studies import deutsch2022 as d22

            human = value.get("human") or ds.default_human
            return list(d22.choose_metrics(ds, value.get("metrics"), human=human,
                                           embedded=d22.is_embedded(dataset, ds)).scores)
        if number == "20" and value.get("metric") is None:
            from metaeval.data.defaults import default_metric

            return [default_metric(ds, None, paper="qa-eval.f1")]
        if number == "40" and value.get("human") is None:
            from metaeval.studies import miloulis

            return list(miloulis.default_humans(ds))
        if number == "60":
            from metaeval.data.defaults import default_metric

            y = value.get("metric_y") or default_metric(ds, None, param="metric_y", measures=("rouge-2",))
            x = default_metric(ds, value.get("metric_x"), paper="qa-eval.f1", param="metric_x", exclude=[y],
                               own_first=True)
            return [x, y]
    except (DataError, KeyError, ValueError):
        # a default the data cannot give: the notebook stops on it in its setup cell, in its own words (and the
        # tests of notebooks on user data expect that cell's error)
        return []
    return []


def check_data(notebook: str, declared: Mapping[str, Any], parameters: Mapping[str, Any]) -> None:
    """Load the run's dataset and check the scores it names or derives, before a kernel starts.

    Raises
    ------
    metaeval.data.formats.DataError
        The dataset does not load, or a score the run uses misses cells and the run's policy is ``"raise"``.
    """
    if "dataset" not in declared:
        return
    dataset = parameters.get("dataset", declared.get("dataset"))
    if not isinstance(dataset, str) or not dataset:
        return
    from metaeval.data.datasets import load

    ds = load(dataset)
    has_policy = "incomplete" in declared
    policy = parameters.get("incomplete", declared.get("incomplete")) if has_policy else "raise"
    if policy != "raise":
        return  # drop-inputs / drop-systems / keep-nan: the notebook applies it
    named = [n for key in SCORE_PARAMETERS if key in declared
             for n in _names(parameters.get(key, declared.get(key)))]
    human = parameters.get("human", declared.get("human")) if "human" in declared else None
    if "human" in declared and human is None and ds.info.default_human:
        named.append(ds.info.default_human)  # (ds.default_human raises when there is none: the notebook says so)
    # the named scores first (what the user gave), then those the notebook derives from the data
    values = {key: parameters.get(key, declared.get(key)) for key in declared}
    for scores in (named, lambda: derived_scores(notebook, ds, dataset, values)):
        needed = [n for n in dict.fromkeys(scores() if callable(scores) else scores) if n in ds.score_names]
        if needed:
            ds.require(scores=needed, incomplete="raise", purpose=f"notebook {notebook}",
                       fix=incomplete_fix(has_policy))
