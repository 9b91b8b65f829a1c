"""The one spelling table of the standard metrics (`metaeval.data.defaults.recognize`) on every embedded
dataset's own score names: each ROUGE-1/2/L and BERTScore spelling is found, nothing else is taken for one, and
the card's and notebooks' default baselines are the dataset's own spellings."""

import pytest

from metaeval.data import datasets
from metaeval.data.defaults import default_baselines, recognize

#: dataset -> {score name: (measure, statistic)} for every name the table must recognize; every other name
#: of the dataset's metric scores must be unrecognized (None).
EXPECTED = {
    "summeval": {f"{m}.{s}": (m, st) for m in ("rouge-1", "rouge-2", "rouge-3", "rouge-4", "rouge-l", "rouge-su4",
                                                 "bertscore") for s, st in (("f1", "F"), ("recall", "R"),
                                                                            ("precision", "P"))},
    "frank-cnndm": {"Rouge 1": ("rouge-1", "F"), "Rouge 2": ("rouge-2", "F"), "Rouge L": ("rouge-l", "F"),
                    "BertScore F1": ("bertscore", "F"), "BertScore P": ("bertscore", "P"),
                    "BertScore R": ("bertscore", "R")},
    "hanna": {**{f"ROUGE-{u} {w}": (f"rouge-{u.lower()}", st) for u in ("1", "2", "3", "4", "L")
                 for w, st in (("F-Score", "F"), ("Precision", "P"), ("Recall", "R"))},
              **{f"ROUGE-W-1.2 {w}": ("rouge-w", st) for w, st in (("F-Score", "F"), ("Precision", "P"),
                                                                   ("Recall", "R"))},
              "BERTScore F1": ("bertscore", "F"), "BERTScore Precision": ("bertscore", "P"),
              "BERTScore Recall": ("bertscore", "R")},
    "xsum-hallucinations": {"maynez.R1": ("rouge-1", "F"), "maynez.R2": ("rouge-2", "F"),
                            "maynez.RL": ("rouge-l", "F"), "maynez.BERTScore": ("bertscore", "F")},
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_spelling_of_a_dataset_is_recognized_and_nothing_else(name):
    ds = datasets.load(name)
    humans = set(ds.human_scores)
    got = {n: (hit[:2] if (hit := recognize(n)) else None) for n in ds.score_names if n not in humans}
    want = {n: EXPECTED[name].get(n) for n in got}
    assert got == want
    assert set(EXPECTED[name]) <= set(got), "a name the test expects is not in the dataset any more"


@pytest.mark.parametrize("name, baselines", [
    ("summeval", ["rouge-1.f1", "rouge-2.f1", "rouge-l.f1", "bertscore.f1"]),
    ("realsumm", ["rouge-1.recall", "rouge-2.recall", "rouge-l.recall", "bertscore.recall"]),
    ("frank-cnndm", ["Rouge 1", "Rouge 2", "Rouge L", "BertScore F1"]),
    ("hanna", ["ROUGE-1 F-Score", "ROUGE-2 F-Score", "ROUGE-L F-Score", "BERTScore F1"]),
])
def test_default_baselines_are_the_datasets_own_spellings(name, baselines):
    from metaeval.studies.card import default_baselines as card_baselines

    ds = datasets.load(name)
    assert default_baselines(ds) == baselines
    assert card_baselines(ds) == baselines  # one rule for the card and the notebooks


def test_a_spelling_with_a_statistic_is_preferred_to_one_without():
    # "ROUGE-2" (no statistic, taken as F) ranks after "ROUGE_2_F"
    assert recognize("ROUGE-2")[2] > recognize("ROUGE_2_F")[2] > recognize("rouge-2.f1")[2]
    assert recognize("ROUGE-2 F-Measure")[:2] == ("rouge-2", "F")
    assert recognize("ROUGE-WE-3 F-Score") is None and recognize("ROUGE-SU* Recall") is None
