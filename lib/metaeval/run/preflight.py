"""Data checks that need no kernel, run before one starts: a dataset that does not load, or a score the run
names (the human score, a metric given as a parameter) with missing cells while the run's ``incomplete``
policy is ``"raise"``, fails in a second with the same words the notebook would have used in cell 3 a minute
later (:meth:`metaeval.data.datasets.Dataset.require`, with :data:`INCOMPLETE_FIX`).

What the check cannot know without running the notebook (defaults it derives from the data) is left to the
notebook, which applies the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["INCOMPLETE_FIX", "NO_INCOMPLETE_FIX", "SCORE_PARAMETERS", "check_data", "incomplete_fix"]

#: Parameters whose values may name scores of the dataset (a string or a list of strings; a value that is not a
#: score of the dataset, such as the card's ``scores`` file, is left to the notebook).
SCORE_PARAMETERS = ("human", "scores", "metric", "metric_x", "metric_y", "metrics", "baselines", "bucket_score")

#: The one wording of the fix, for a notebook with an ``incomplete`` parameter and for one without.
INCOMPLETE_FIX = ("set the notebook's parameter `incomplete`: `-p incomplete drop-inputs` or `-p incomplete "
                  "drop-systems` on the command line (`metaeval params NN` lists its choices)")
NO_INCOMPLETE_FIX = ("this notebook has no `incomplete` parameter: complete the missing cells or choose complete "
                     "scores (`metaeval describe DATASET` lists the missing cells)")


def incomplete_fix(has_parameter: bool) -> str:
    """The fix an incomplete-score error names: the notebook's ``incomplete`` parameter, or what to do without."""
    return INCOMPLETE_FIX if has_parameter else NO_INCOMPLETE_FIX


def _names(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, str)]
    return []


def check_data(notebook: str, declared: Mapping[str, Any], parameters: Mapping[str, Any]) -> None:
    """Load the run's dataset and check the scores it names, before a kernel starts.

    Raises
    ------
    metaeval.data.formats.DataError
        The dataset does not load, or a named score misses cells and the run's policy is ``"raise"``.
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
    needed = [n for n in dict.fromkeys(named) if n in ds.score_names]
    if needed:
        ds.require(scores=needed, incomplete="raise", purpose=f"notebook {notebook}",
                   fix=incomplete_fix(has_policy))
