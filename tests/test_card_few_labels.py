"""A card with few human labels (issue 46, item 6): a user table with a judge column and a column saying which
rows humans labelled -> `metaeval import --labelled` -> `card_tables(..., judge=)`: section few_labels equals the
direct metaeval.stats.ppi calls with the recorded seeds, the other sections use the labelled inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

from metaeval.data.formats import DataError
from metaeval.data.tabular import import_table
from metaeval.stats.ppi import ppi_correlation, ppi_system_means
from metaeval.studies import card as cards

K, M, SHARE = 5, 300, 0.10  # 1,500 judge scores, humans on 30 documents (150 labels)


def _table(rng_seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(rng_seed)
    truth = np.linspace(2, 4, K)[:, None] + rng.normal(0, 0.7, (K, M))
    human = np.clip(np.round(truth + rng.normal(0, 0.5, (K, M))), 1, 5)
    lab = np.zeros(M, bool)
    lab[rng.choice(M, int(SHARE * M), replace=False)] = True
    return pd.DataFrame([{"doc": f"d{j:03d}", "system": f"s{k}", "relevance": human[k, j],
                          "llm_judge": truth[k, j] + rng.normal(0, 0.4), "my_metric": 0.1 * truth[k, j] + rng.normal(0, 0.1),
                          "labelled": "yes" if lab[j] else "no"} for k in range(K) for j in range(M)])


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("few") / "study"
    import_table(_table(), folder, human="relevance", labelled="labelled")
    return folder


def test_import_blanks_the_unlabelled_rows(study):
    records = pd.read_json(study / "records.jsonl", lines=True)
    rated = records.metrics.map(lambda m: m.get("relevance") is not None)
    assert rated.sum() == K * M * SHARE and len(records) == K * M
    assert records.metrics.map(lambda m: "labelled" in m).sum() == 0


def test_import_rejects_a_bad_labelled_cell(tmp_path):
    frame = _table()
    frame.loc[7, "labelled"] = "maybe"
    with pytest.raises(DataError, match=r"DataFrame, row 8: column 'labelled' holds 'maybe'"):
        import_table(frame, tmp_path / "bad", human="relevance", labelled="labelled")


def test_card_with_a_judge_is_the_direct_ppi_calls(study):
    card = cards.card_tables("my_metric", dataset=str(study), judge="llm_judge", n_resamples=200,
                             planner_trials=5, planner_resamples=20, planner_inputs=[1], seed=3)
    assert list(card.tables)[-1] == "few_labels" and card.provenance["sections"][-1] == "few_labels"
    assert card.shape == (K, int(M * SHARE))  # the other sections: the labelled inputs
    table = card.few_labels
    ds = cards._datasets.load(str(study))
    Z, J, X = (ds.matrix(n, allow_nan=True) for n in ("relevance", "llm_judge", "my_metric"))
    lab = ~np.isnan(Z).any(axis=0)
    means = ppi_system_means(Z[:, lab], J[:, lab], J[:, ~lab], rng=np.random.default_rng([3, 6, 0]))
    rows = table[table.kind == "system mean"]
    assert_allclose(rows.estimate, means.statistic, rtol=1e-13)
    assert_allclose(rows.low, means.confidence_interval.low, rtol=1e-13)
    assert_allclose(rows.humans_estimate, Z[:, lab].mean(axis=1), rtol=1e-13)
    # humans only: the normal interval of the labelled mean, its standard error sd (ddof 0, as ppi_py) / sqrt(n)
    se = Z[:, lab].std(axis=1) / np.sqrt(lab.sum())
    assert_allclose(rows.humans_high - rows.humans_low, 2 * 1.959963984540054 * se, rtol=1e-10)
    corr = ppi_correlation(X, Z, J, coefficient="pearson", n_resamples=200, rng=np.random.default_rng([3, 6, 1]))
    row = table[table.kind == "correlation"].iloc[0]
    assert_allclose([row.estimate, row.low, row.high],
                    [corr.statistic, corr.confidence_interval.low, corr.confidence_interval.high], rtol=1e-13)
    assert (rows.width < rows.humans_width).all()  # a good judge narrows every system's interval here
    assert "Few labels: humans rated 30 of 300 inputs" in card.summary
    assert "the judge llm_judge is the baseline" in card.summary


def test_a_judge_with_missing_cells_is_refused(tmp_path):
    frame = _table()
    frame.loc[3, "llm_judge"] = np.nan
    import_table(frame, tmp_path / "s", human="relevance", labelled="labelled")
    with pytest.raises(DataError, match="judge 'llm_judge' misses 1 cells"):
        cards.card_tables("my_metric", dataset=str(tmp_path / "s"), judge="llm_judge", n_resamples=50,
                          planner_trials=2, planner_resamples=10, planner_inputs=[1])


def test_too_few_labels_for_the_correlation_say_so(tmp_path):
    frame = _table()
    docs = sorted(frame.doc.unique())[:10]
    frame["labelled"] = np.where(frame.doc.isin(docs), "yes", "no")
    import_table(frame, tmp_path / "s10", human="relevance", labelled="labelled")
    card = cards.card_tables("my_metric", dataset=str(tmp_path / "s10"), judge="llm_judge", n_resamples=50,
                             planner_trials=2, planner_resamples=10, planner_inputs=[1])
    row = card.few_labels[card.few_labels.kind == "correlation"].iloc[0]
    assert row.reason.startswith("cannot be tested: 10 labelled inputs") and np.isnan(row.estimate)
    assert "from all inputs: cannot be tested: 10 labelled inputs" in card.summary
