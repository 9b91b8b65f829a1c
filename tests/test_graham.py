"""Graham (2015) analysis: table values against independent computations."""

import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval import graham
from metaeval.rouge import RougeWarning, score
from metaeval.text import split_ptb_sentences


@pytest.fixture(scope="module")
def analysis(summeval, tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RougeWarning)
        scores = graham.metric_scores(summeval, n_refs=1, cache=tmp_path_factory.mktemp("cache"))
    H = graham.human_scores(summeval, "relevance")
    table, pairs = graham.variant_table(scores, H)
    return scores, H, table, pairs


def test_one_correlation_against_scipy(summeval, analysis):
    scores, H, table, _ = analysis
    name = graham.CONVENTIONAL_VARIANT  # median ROUGE-2 recall, stemmed, stopwords kept
    summaries = [split_ptb_sentences(s) for s in summeval.texts["summary"]]
    refs = [[split_ptb_sentences(r[0])] for r in summeval.texts["references"]]
    per_summary = score(summaries, refs, ["R-2|stem=1|stop=0|R"]).iloc[:, 0].to_numpy().reshape(16, 100)
    expected = stats.pearsonr(np.median(per_summary, axis=1), H.mean(axis=1))[0]
    ours = table.set_index("variant").loc[name, "r"]
    assert ours == pytest.approx(expected, abs=1e-12)


def test_one_williams_pvalue_by_hand(analysis):
    scores, H, _, pairs = analysis
    a, b = graham.GRAHAM_BEST_VARIANT, graham.CONVENTIONAL_VARIANT
    x, y, h = scores.system[a].to_numpy(), scores.system[b].to_numpy(), H.mean(axis=1)
    r12, r13, r23 = abs(np.corrcoef(x, h)[0, 1]), abs(np.corrcoef(y, h)[0, 1]), abs(np.corrcoef(x, y)[0, 1])
    n = 16
    det = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (r12 - r13) * np.sqrt(
        (n - 1) * (1 + r23) / (2 * (n - 1) / (n - 3) * det + ((r12 + r13) / 2) ** 2 * (1 - r23) ** 3))
    i, j = pairs.names.index(a), pairs.names.index(b)
    assert pairs.pvalues[i, j] == pytest.approx(stats.t.sf(t, n - 3), abs=1e-12)


def test_table_structure(analysis):
    _, _, table, pairs = analysis
    assert len(table) == 193 and table["r"].is_monotonic_decreasing
    # optimal <=> no other metric has p < alpha against it
    np.testing.assert_array_equal(
        table.sort_values("variant")["optimal"].to_numpy(),
        np.array([not (pairs.pvalues[:, pairs.names.index(v)] < 0.05).any() for v in sorted(table["variant"])]),
    )
    props = graham.option_proportions(table)
    for option, group in props.groupby("option"):
        assert group["percent"].sum() == pytest.approx(100.0)


def test_human_combinations(summeval):
    cov = graham.human_scores(summeval, "coverage")
    qual = graham.human_scores(summeval, "quality")
    np.testing.assert_allclose(graham.human_scores(summeval, "harmonic"), 2 * cov * qual / (cov + qual))
    np.testing.assert_allclose(graham.human_scores(summeval, "graham"), (cov + qual) / 2)
    with pytest.raises(ValueError, match="which must be one of"):
        graham.human_scores(summeval, "overall")


def test_correction_fdr_beside_bonferroni(analysis):
    scores, H, table, pairs = analysis
    from metaeval.stats.multiplicity import adjust

    counts = {}
    for correction in ("bonferroni", "holm", "fdr_bh", "fdr_by"):
        corrected, raw = graham.variant_table(scores, H, correction=correction)
        np.testing.assert_array_equal(raw.pvalues, pairs.pvalues)  # the result keeps the raw p-values
        adjusted = adjust(pairs.pvalues, correction=correction)
        expected = {v: not (adjusted[:, pairs.names.index(v)] < 0.05).any() for v in table["variant"]}
        assert corrected.set_index("variant")["optimal"].to_dict() == expected
        counts[correction] = int(corrected["optimal"].sum())
    # an adjustment can only remove "outperformed" marks; BH is less strict than Holm, Holm than Bonferroni
    assert int(table["optimal"].sum()) <= counts["fdr_bh"] <= counts["holm"] <= counts["bonferroni"]
    assert counts["fdr_bh"] <= counts["fdr_by"]
