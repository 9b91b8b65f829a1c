"""Defaults from the user's data: when a notebook or the card defaults to a paper's metric that the dataset
does not hold, take the dataset's own equivalent, in one documented order.

Order (``data/README.md``, "Defaults on your data"):

1. the score asked for, when the dataset has it (stored, or a metaeval ROUGE key/signature it can score);
2. the dataset's ROUGE-2 under any of its spellings (``rouge-2.f1``, ``rouge_2_f``, ``ROUGE-2-F``,
   ``R-2|stem=1|stop=0|F``, ``rouge-2|stem:yes|stop:no|stat:F|refs:A``, ...), recall on a recall-oriented
   dataset (REALSumm), F otherwise;
3. ROUGE-2 computed from the dataset's texts (``R-2|stem=1|stop=0|F``, stemmed, stopwords kept);
4. the dataset's own first metric (a stored score neither human nor ROUGE / BERTScore);
5. otherwise a one-line error listing the dataset's scores and the parameter (``-p NAME``) or option
   (``--flag``) that sets one.

A second metric that must differ from a first one (notebook 60's X against its Y) continues the order with
ROUGE-1 (2-3 again).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence

from metaeval.data._dataset import _rouge_variant
from metaeval.data.datasets import Dataset, load
from metaeval.data.formats import DataError

__all__ = ["default_baselines", "default_metric", "recognize"]

#: The one spelling table of the standard metrics (ROUGE-N/L/SU4/W and BERTScore): every dataset's score names,
#: the card's baselines and the notebooks' defaults go through :func:`recognize`. A statistic is spelled
#: ``f1``/``f``/``f-score``/``f-measure``/``fmeasure``, ``recall``/``r`` or ``precision``/``p`` (any case, after
#: ``-``, ``_``, ``.`` or a space); a name without one (``ROUGE-2``, ``Rouge 2``, ``BERTScore``) is the F score,
#: which these metrics report by default. A namespace (``maynez.R2``, ``maynez.BERTScore``) may stand before the name.
_STAT = {"f1": "F", "f": "F", "fmeasure": "F", "fscore": "F", "recall": "R", "r": "R", "precision": "P", "p": "P"}
_STAT_WORD = r"(f1|f|f[-_ ]?measure|f[-_ ]?score|recall|r|precision|p)"
_SPELLED = re.compile(r"^(?:[a-z]+\.)?(rouge|r)[-_ ]?([0-9]+|l|su4|w(?:[-_]1\.2)?)(?:[-_. ]" + _STAT_WORD + r")?$",
                      re.IGNORECASE)
_PLAIN = re.compile(r"^(?:[a-z]+\.)?bert[-_ ]?score(?:[-_. ]" + _STAT_WORD + r")?$", re.IGNORECASE)
#: Rank of a spelling among a dataset's spellings of one metric (lower is preferred): the embedded datasets'
#: own keys, metaeval's stemmed ROUGE key, any other spelling with a statistic, a name without one.
_OWN, _METAEVAL, _OTHER, _NO_STAT = range(4)


def _stat(word: str | None) -> tuple[str, int]:
    if word is None:
        return "F", _NO_STAT
    return _STAT[re.sub(r"[-_ ]", "", word.lower())], _OTHER


def recognize(name: str) -> tuple[str, str, int] | None:
    """(measure, statistic, rank) of a score name that spells a standard metric, else None; ``rank`` orders
    spellings of one metric (0: the embedded datasets' own, 1: metaeval's stemmed key, 2: anything else with a
    statistic, 3: a name without a statistic, taken as F).

    Examples
    --------
    >>> recognize("rouge-2.f1"), recognize("R-2|stem=1|stop=0|F"), recognize("ROUGE_2_Recall")
    (('rouge-2', 'F', 0), ('rouge-2', 'F', 1), ('rouge-2', 'R', 2))
    >>> recognize("rouge-2|stem:yes|stop:no|stat:R|refs:A"), recognize("qa-eval.f1")
    (('rouge-2', 'R', 1), None)

    The spellings of the atlas datasets (FRANK, HANNA, XSum hallucinations):

    >>> recognize("Rouge 2"), recognize("ROUGE-2 F-Score"), recognize("ROUGE-L Precision"), recognize("maynez.R2")
    (('rouge-2', 'F', 3), ('rouge-2', 'F', 2), ('rouge-l', 'P', 2), ('rouge-2', 'F', 3))
    >>> recognize("BertScore F1"), recognize("BERTScore"), recognize("BertScore F1 Art"), recognize("ROUGE-WE-3 Recall")
    (('bertscore', 'F', 2), ('bertscore', 'F', 3), None, None)
    """
    if "|" in name:
        v = _rouge_variant(name)
        if v is None or v.refs != "A":
            return None
        measure = f"rouge-{v.measure.name.removeprefix('R-').lower()}"
        return measure, v.stat, _METAEVAL if (v.stem, v.stop) == (True, False) else _OTHER
    text = name.strip()
    m = _SPELLED.match(text)
    if m:
        unit = m.group(2).lower()
        measure = "rouge-w" if unit.startswith("w") else f"rouge-{unit}"  # ROUGE-W-1.2: the weight of ROUGE-1.5.5
        stat, rank = _stat(m.group(3))
        own = name in (f"{measure}.f1", f"{measure}.recall", f"{measure}.precision")
        return measure, stat, _OWN if own else rank
    m = _PLAIN.match(text)
    if m:
        stat, rank = _stat(m.group(1))
        return "bertscore", stat, _OWN if name.startswith("bertscore.") else rank
    return None


def _dataset(dataset: Dataset | str | os.PathLike[str]) -> Dataset:
    return dataset if isinstance(dataset, Dataset) else load(dataset)


def _find(ds: Dataset, measure: str, exclude: Iterable[str], computed: bool = True) -> str | None:
    """The dataset's stored ``measure`` (its statistic), best spelling first; else (``computed``) the computable
    key."""
    stat = "R" if ds.recall_oriented else "F"
    excluded = set(exclude)
    found = []
    for name in ds.score_names:
        hit = recognize(name)
        if hit is not None and hit[:2] == (measure, stat) and name not in excluded:
            found.append((hit[2], name))
    if found:
        return min(found)[1]
    if computed and measure.startswith("rouge-"):
        key = f"R-{measure.removeprefix('rouge-').upper()}|stem=1|stop=0|{stat}"
        if key not in excluded and ds.computable(key):
            return key
    return None


def _no_default(ds: Dataset, what: str, setting: str) -> DataError:
    humans = set(ds.human_scores)
    metrics = [n for n in ds.score_names if n not in humans]
    return DataError(f"dataset {ds.name!r} has no {what}, no ROUGE-2 under any spelling and no texts to compute it "
                     f"(its metric scores: {', '.join(metrics) or 'none'}); set one with {setting}")


def default_metric(
    dataset: Dataset | str | os.PathLike[str],
    value: str | None,
    *,
    paper: str | None = None,
    param: str = "metric",
    exclude: Sequence[str] = (),
    measures: Sequence[str] = ("rouge-2", "rouge-1"),
    quiet: bool = False,
    own_first: bool = False,
) -> str:
    """The metric a notebook analyses: ``value`` if the dataset has it, else the documented fallback.

    Parameters
    ----------
    dataset : Dataset, name or path
    value : str or None
        The parameter's value. A value other than ``paper`` (the user's own choice) is never replaced: it is
        returned as is, and the analysis reports it if the dataset lacks it.
    paper : str, optional
        The paper's metric, the parameter's default (e.g. ``"qa-eval.f1"``).
    param : str
        The parameter's name, for the message (``-p NAME``).
    exclude : sequence of str
        Scores that may not be chosen (the other metric of a comparison).
    measures : sequence of str
        Fallback measures in order (each stored under any spelling, else computed from the texts).
    quiet : bool
        Do not print the one-line note saying which score replaced the default.
    own_first : bool
        When the dataset lacks the paper's metric, take its first own metric (a stored score that is neither
        human nor a standard baseline: ROUGE or BERTScore under any spelling) before the fallback measures:
        the metric a user brings is the one to study (notebook 60's X). Without, the own metric comes after
        the fallback measures, the last resort.

    Examples
    --------
    >>> default_metric("fabbri2020", "qa-eval.f1", paper="qa-eval.f1")
    'qa-eval.f1'
    >>> default_metric("realsumm", None)
    'rouge-2.recall'
    >>> import pandas as pd
    >>> from metaeval.data.datasets import from_frame
    >>> study = from_frame(pd.DataFrame({"doc": ["d1", "d1"], "system": ["A", "B"], "relevance": [1, 2],
    ...                                  "rouge-2.f1": [.1, .2], "my_metric": [.3, .4]}), name="study")
    >>> default_metric(study, "qa-eval.f1", paper="qa-eval.f1", own_first=True, quiet=True)
    'my_metric'
    """
    if value is not None and value != paper:
        return value
    ds = _dataset(dataset)
    wanted = value if value is not None else paper
    if wanted is not None and (wanted in ds.score_names or ds.computable(wanted)) and wanted not in exclude:
        return wanted
    humans = set(ds.human_scores)
    own = [n for n in ds.score_names if n not in humans and n not in exclude and recognize(n) is None]
    # the user's own metric first (own_first), else the fallback measures, and last the dataset's own metric
    found = next((f for f in [*(own[:1] if own_first else []), *(_find(ds, m, exclude) for m in measures), *own[:1]]
                  if f is not None), None)
    if found is None:
        what = f"score {wanted!r} (the default of {param})" if wanted else f"default for {param}"
        raise _no_default(ds, what, f"-p {param} NAME (metaeval run/sweep) or {param}=... (Python)")
    if wanted is not None and not quiet:
        print(f"{ds.name} has no {wanted!r} (the paper's metric, the default of {param}): using "
              f"{'its own metric ' if found in own else ''}{ds.display_name(found)} ({found}); set another "
              f"with -p {param} NAME")
    return found


def default_baselines(dataset: Dataset | str | os.PathLike[str], exclude: Sequence[str] = (),
                      measures: Sequence[str] = ("rouge-1", "rouge-2", "rouge-l", "bertscore")) -> list[str]:
    """The card's default baselines: the dataset's ROUGE-1/2/L and BERTScore under any spelling (recall on a
    recall-oriented dataset, F otherwise); if it has none, ROUGE-2 computed from its texts; else an error
    naming ``--baselines``.

    Examples
    --------
    >>> default_baselines("realsumm", exclude=["rouge-l.recall"])
    ['rouge-1.recall', 'rouge-2.recall', 'bertscore.recall']
    """
    ds = _dataset(dataset)
    chosen = [f for f in (_find(ds, m, exclude, computed=False) for m in measures) if f is not None]
    if chosen:
        return chosen
    computed = _find(ds, "rouge-2", exclude)
    if computed is not None:
        return [computed]
    raise _no_default(ds, "standard baseline (ROUGE-1/2/L, BERTScore)",
                      "--baselines NAME,... (metaeval card) or baselines=[...] (Python)")
