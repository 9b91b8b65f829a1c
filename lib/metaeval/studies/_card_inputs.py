"""The report card's inputs: which stored scores are the default baselines (any spelling of ROUGE-1/2/L and
BERTScore), the human score, the user's scores file merged with the dataset, and the missing-cell policy
(``incomplete``) with errors that name the setting where the card runs (Python, notebook 61, ``metaeval card``).

Private to :mod:`metaeval.studies.card`, which re-exports :func:`default_baselines`, ``CALLERS`` and
``INCOMPLETE``."""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Mapping, Sequence

import numpy as np

from metaeval.data import datasets as _datasets
from metaeval.data.defaults import recognize
from metaeval.data.formats import DataError

_STANDARD = ("rouge-1", "rouge-2", "rouge-l", "bertscore")
_FAMILY_NAMES = {"rouge-1": "ROUGE-1", "rouge-2": "ROUGE-2", "rouge-l": "ROUGE-L", "bertscore": "BERTScore"}


def _family(name: str, stat: str) -> tuple[str, int] | None:
    """(standard metric, rank of the spelling) of a score name that spells one with statistic ``stat``
    (``"F"`` or ``"R"``), else None: :func:`metaeval.data.defaults.recognize`, the one spelling table (a plain
    name such as ``BERTScore`` counts as F and ranks last).

    Examples
    --------
    >>> [_family(n, "F") for n in ("bertscore.f1", "BERTScore", "bert_score f1", "BERTScore-F", "ROUGE-2")]
    [('bertscore', 0), ('bertscore', 3), ('bertscore', 2), ('bertscore', 2), ('rouge-2', 3)]
    >>> _family("BERTScore", "R"), _family("bertscore.precision", "F"), _family("METEOR (%)", "F")
    (None, None, None)
    """
    hit = recognize(name)
    return (hit[0], hit[2]) if hit is not None and hit[1] == stat else None


def default_baselines(ds, exclude: Sequence[str] = ()) -> list[str]:
    """The dataset's standard metrics present in it: ROUGE-1/2/L and BERTScore under any spelling (recall on
    recall-oriented datasets, F1 otherwise; a name without a statistic such as ``BERTScore`` or ``ROUGE-2``
    counts as F1), leaving out ``exclude``; with none stored, ROUGE-2 computed from the texts
    (:func:`metaeval.data.defaults.default_baselines`, the one rule for cards and notebooks).

    Examples
    --------
    >>> default_baselines(_datasets.load("realsumm"), exclude=["rouge-l.recall"])
    ['rouge-1.recall', 'rouge-2.recall', 'bertscore.recall']
    """
    from metaeval.data.defaults import default_baselines as from_data

    return from_data(ds, exclude)


#: Where a card runs: a Python call, notebook 61 (papermill, ``metaeval run 61``) or ``metaeval card``; an
#: error names a setting in the form usable there.
CALLERS = ("python", "notebook", "cli")
#: What the card does with missing cells of the scores it uses (``incomplete=``, ``--incomplete``).
INCOMPLETE = ("raise", "drop-inputs", "drop-systems")


def _setting(called_from: str, name: str, value: str) -> str:
    """How the user sets ``name`` to ``value`` where the card runs (``called_from``, one of :data:`CALLERS`).

    Examples
    --------
    >>> _setting("cli", "incomplete", "drop-inputs"), _setting("notebook", "incomplete", "drop-inputs")
    ('--incomplete drop-inputs', '-p incomplete drop-inputs')
    >>> _setting("python", "incomplete", "drop-inputs")
    "incomplete='drop-inputs'"
    """
    if called_from == "cli":
        return f"--{name.replace('_', '-')} {value}"
    if called_from == "notebook":
        return f"-p {name} {value}"
    return f"{name}={value!r}"


def _baselines_setting(called_from: str) -> str:
    if called_from == "cli":
        return "--baselines NAME,NAME"
    if called_from == "notebook":
        return "-p baselines '[NAME, NAME]'"
    return "baselines=[...]"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _ids(ids: Sequence[str], limit: int = 10) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


#: suffixes that make a card's ``scores`` a file name (never a score name such as ``rouge-2.f1``)
_SCORE_FILE_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".tab", ".parquet", ".pq", ".yml", ".yaml")


def check_scores_path(scores: object) -> None:
    """Refuse, before any work, a card's ``scores`` that names a file (by its suffix: ``.jsonl``, ``.csv`` ...)
    that does not exist; another name may be a score of the dataset, which the card checks once it is loaded.

    >>> check_scores_path("rouge-2.f1")
    >>> check_scores_path("runs/mine.jsonl")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: scores 'runs/mine.jsonl': no such file; give the path of the metric's scores ...
    """
    if not isinstance(scores, (str, os.PathLike)):
        return
    path = Path(scores).expanduser()
    if path.suffix.lower() in _SCORE_FILE_SUFFIXES and not path.exists():
        raise ValueError(f"scores {str(scores)!r}: no such file; give the path of the metric's scores (a JSONL, "
                         "CSV, TSV or parquet file, or a dataset folder)")


def _user_scores(scores, ds, metric: str | None):
    """The new metric's name, its N x M matrix (NaN where it is missing) on the grid it shares with ``ds``,
    notes on anything left out, that grid (systems, inputs), and the other scores of ``scores`` not used."""
    notes: list[str] = []
    if isinstance(scores, str) and scores in ds.score_names and not Path(scores).exists():
        # a score already in the dataset (e.g. the CI card of an embedded metric)
        return scores, ds.matrix(scores, allow_nan=True), notes, ds.systems, ds.inputs, []
    if isinstance(scores, (str, os.PathLike)) and not Path(scores).exists():
        check_scores_path(scores)
        raise ValueError(f"scores {str(scores)!r}: no such file or folder, and not a score of dataset {ds.name!r} "
                         f"(its scores: {', '.join(ds.score_names)}); give the path of the metric's scores or one "
                         "of those names")
    user = scores if isinstance(scores, _datasets.Dataset) else _datasets.load(scores, incomplete="keep-nan")
    humans = set(user.human_scores)
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
    if len(common_sys) < len(ds.systems) or len(common_inp) < len(ds.inputs):
        notes.append(f"the scores cover {len(common_sys)} of {len(ds.systems)} systems and {len(common_inp)} of "
                     f"{len(ds.inputs)} inputs; the card uses that grid")
    values = user.subset(common_sys, common_inp).matrix(metric, allow_nan=True)
    unused = [n for n in user.score_names if n != metric]
    return metric, values, notes, tuple(common_sys), tuple(common_inp), unused


def _resolve_incomplete(mats: Mapping[str, np.ndarray], systems: Sequence[str], inputs: Sequence[str], *,
                        ds_name: str, incomplete: str, called_from: str, default_baselines: Sequence[str] = ()
                        ) -> tuple[np.ndarray, np.ndarray, str | None]:
    """The systems and inputs to keep (boolean masks) when some score of ``mats`` misses cells, and the note
    saying what was left out; ``incomplete="raise"`` raises a ``DataError`` naming the setting where the card
    runs, and what each choice would leave out.

    Examples
    --------
    >>> X = np.array([[1.0, 2, 3, 4], [2, np.nan, 4, 5], [3, 4, 5, 6]])
    >>> keep_s, keep_i, note = _resolve_incomplete({"m": X}, ["A", "B", "C"], ["d1", "d2", "d3", "d4"],
    ...                                            ds_name="toy", incomplete="drop-inputs", called_from="cli")
    >>> keep_i.tolist(), note
    ([True, False, True, True], 'incomplete = drop-inputs: 1 of 4 inputs left out because m misses a cell there: d2')
    """
    missing = {name: np.isnan(V) for name, V in mats.items() if np.isnan(V).any()}
    N, M = len(systems), len(inputs)
    if not missing:
        return np.ones(N, bool), np.ones(M, bool), None
    mask = np.logical_or.reduce(list(missing.values()))
    # a system (an input) with none of the cells is left out first (XSum's Gold): Dataset.kept, the data's one rule
    keep = {policy: _datasets.Dataset.kept(mask, policy) for policy in ("drop-inputs", "drop-systems")}
    bad_inp = [i for i, k in zip(inputs, keep["drop-inputs"][1]) if not k]
    bad_sys = [s for s, k in zip(systems, keep["drop-systems"][0]) if not k]
    which = ", ".join(f"{name!r} ({int(m.sum())} of {m.size} cells)" for name, m in missing.items())
    if incomplete == "raise":
        cells = ", ".join(f"({systems[i]}, {inputs[j]})" for i, j in np.argwhere(mask)[:5])
        options = [f"{_setting(called_from, 'incomplete', 'drop-inputs')} (leaves out {len(bad_inp)} of {M} "
                   f"inputs: {_ids(bad_inp, 5)})",
                   f"{_setting(called_from, 'incomplete', 'drop-systems')} (leaves out {len(bad_sys)} of {N} "
                   f"systems: {_ids(bad_sys, 5)})"]
        also = [b for b in missing if b in default_baselines]
        tail = (f", or choose baselines without {', '.join(also)} with {_baselines_setting(called_from)}"
                if also else "")
        raise DataError(f"dataset {ds_name!r}: the card uses {which}, missing e.g. at {cells}; the card needs its "
                        f"scores complete: rerun with " + " or ".join(options) + tail)
    if incomplete not in ("drop-inputs", "drop-systems"):
        raise ValueError(f"incomplete must be one of {', '.join(INCOMPLETE)}, got {incomplete!r}")
    by_inputs = incomplete == "drop-inputs"
    keep_s, keep_i = keep[incomplete]
    dropped, total, kind = (bad_inp, M, "inputs") if by_inputs else (bad_sys, N, "systems")
    empty = [x for x, k in (zip(systems, keep_s) if by_inputs else zip(inputs, keep_i)) if not k]
    left = int(min(keep_i.sum(), keep_s.sum()))
    if left < 3:
        other = "drop-systems" if by_inputs else "drop-inputs"
        raise DataError(f"dataset {ds_name!r}: {which} miss cells in {len(dropped)} of {total} {kind}; "
                        f"{_setting(called_from, 'incomplete', incomplete)} would leave {left} (the card needs at "
                        f"least 3): try {_setting(called_from, 'incomplete', other)}")
    verb = "misses" if len(missing) == 1 else "miss"
    cell = "a cell" if int(mask.sum()) == 1 else "cells"
    return keep_s, keep_i, (f"incomplete = {incomplete}: {len(dropped)} of {total} {kind} left out because "
                            f"{' and '.join(missing)} {verb} {cell} there: {_ids(dropped)}" + (
                                f"; and {_count(len(empty), 'system' if by_inputs else 'input')} with none of the "
                                f"cells: {_ids(empty)}" if empty else ""))
