"""Analysis functions of the study modules against independent computations and hand-checked values.

Each test names the bug it was verified to catch (the bug was injected, the test failed, the bug was
reverted); see the issue-12 closing note.
"""

import warnings

import numpy as np
import pandas as pd
import pytest
from metaeval import deutsch, graham, lin
from metaeval.bleu import bleu_signature, sentence_bleu, system_bleu
from metaeval.data.scoring import rouge_table
from metaeval.metrics.rouge import RougeWarning, resolve_variants
from metaeval.metrics.variants import lin_measures
from metaeval.stats.resampling import bootstrap_ci
from metaeval.stats.significance import pairwise_tests
from scipy import stats

# ----------------------------------------------------------------------------------------------------
# Lin (2004)


def _three_measures(rng):
    Z = rng.normal(size=(12, 30))
    good = Z + 0.3 * rng.normal(size=Z.shape)
    return Z, {("STEM", "good"): good, ("STEM", "copy"): good.copy(), ("STEM", "noise"): rng.normal(size=Z.shape)}


def test_lin_measure_table_best_and_indistinguishable():
    """Catches: the "indistinguishable" flag flipped, the wrong best measure, CI ends swapped or equal."""
    Z, mats = _three_measures(np.random.default_rng(7))
    table = lin.measure_table(mats, Z, n_resamples=500, rng=1).set_index("measure")
    # good and copy tie for the best correlation (the first one is "best"); a copy of the best has delta 0 in
    # every resample, so it can never be significantly worse (p = 1); pure noise is far worse (p ~ 0).
    assert table["best"].tolist() == [True, False, False]
    assert table.loc["copy", "p_best_beats"] == 1.0
    assert table.loc["noise", "p_best_beats"] < 0.01
    assert table["indistinguishable"].tolist() == [True, True, False]
    r_good = stats.pearsonr(mats[("STEM", "good")].mean(1), Z.mean(1))[0]
    assert table.loc["good", "r"] == pytest.approx(r_good, abs=1e-12)
    assert (table["low"] < table["r"]).all() and (table["r"] < table["high"]).all()


def test_lin_variants_use_lins_settings():
    v = lin.lin_variants(lin_measures()[:1], settings=("CASE", "STOP"))
    (case, m), (stop, _) = list(v)
    assert (v[(case, m)].stem, v[(case, m)].stop) == (False, False)
    assert (v[(stop, m)].stem, v[(stop, m)].stop) == (True, True)


# ----------------------------------------------------------------------------------------------------
# BLEU and the ROUGE cache


def test_bleu_is_case_insensitive():
    """Catches: BLEU with lowercase=False (BARTScore capitalized SummEval's system sentences)."""
    hyp, ref = "The Cat sat on The Mat .", "the cat sat on the mat ."
    assert sentence_bleu([hyp], [[ref]])[0] == pytest.approx(100.0)
    assert system_bleu([hyp, "A dog ."], [[ref], ["a dog ."]]) == pytest.approx(100.0)
    assert "|case:lc|" in bleu_signature(1)


def test_bleu_hand_checked_value():
    # 6 tokens, clipped matches 1-4 grams: 5/6, 3/5, 1/4, 0/3; sentence BLEU uses exponential smoothing
    # (sacrebleu's "exp": the k-th zero precision becomes 1 / (2^k * total)), brevity penalty 1 (equal length)
    hyp, ref = "the cat sat on the mat", "the cat was on the mat"
    precisions = [5 / 6, 3 / 5, 1 / 4, 1 / (2 * 3)]
    expected = 100 * np.exp(np.mean(np.log(precisions)))
    assert sentence_bleu([hyp], [[ref]])[0] == pytest.approx(expected, abs=1e-9)


@pytest.fixture(scope="module")
def tiny_texts(summeval):
    return summeval.subset(systems=summeval.systems[:2], inputs=summeval.inputs[:3])


def test_rouge_cache_key_includes_the_variants(tiny_texts, tmp_path):
    """Catches: the rouge_table cache key without the variant signatures (a second call with other
    variants on the same texts would get the first call's table)."""
    a = resolve_variants(["R-1|stem=1|stop=0|R"])
    b = resolve_variants(["R-2|stem=0|stop=1|P"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RougeWarning)
        first = rouge_table(tiny_texts, a, cache=tmp_path)
        second = rouge_table(tiny_texts, b, cache=tmp_path)
        fresh = rouge_table(tiny_texts, b, cache=False)
    assert list(first.columns) == [v.signature for v in a]
    assert list(second.columns) == [v.signature for v in b]
    pd.testing.assert_frame_equal(second, fresh)
    assert len(list(tmp_path.rglob("rouge/*.json"))) == 2
    # n_refs changes the texts scored, so it changes the key as well
    one_ref = rouge_table(tiny_texts, b, n_refs=1, cache=tmp_path)
    assert not np.allclose(one_ref.to_numpy(), fresh.to_numpy())


def test_rouge_cache_key_follows_the_rouge_code(tiny_texts, tmp_path, monkeypatch):
    """Catches: a changed ROUGE implementation (same release number) served the tables its predecessor
    cached."""
    from metaeval.data import scoring

    a = resolve_variants(["R-1|stem=1|stop=0|R"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RougeWarning)
        rouge_table(tiny_texts, a, cache=tmp_path)
        assert len(list(tmp_path.rglob("rouge/*.json"))) == 1
        monkeypatch.setattr(scoring, "_rouge_code_digest", lambda: "0123456789abcdef")
        rouge_table(tiny_texts, a, cache=tmp_path)
        assert len(list(tmp_path.rglob("rouge/*.json"))) == 2  # a new key: recomputed, not served from the first
        monkeypatch.setattr(scoring, "_rouge_code_digest", lambda: None)  # sources not installed: no cache
        rouge_table(tiny_texts, a, cache=tmp_path)
        assert len(list(tmp_path.rglob("rouge/*.json"))) == 2


# ----------------------------------------------------------------------------------------------------
# Graham (2015)


def test_graham_human_scores_from_the_raw_ratings(summeval):
    """Catches: a wrong geometric / harmonic / arithmetic combination, coverage or quality of the wrong
    dimensions, mean4 over three dimensions."""
    raw = {d: summeval.matrix(f"expert.{d}") for d in ("coherence", "consistency", "fluency", "relevance")}
    quality = (raw["coherence"] + raw["consistency"] + raw["fluency"]) / 3
    cov = raw["relevance"]
    expected = {
        "relevance": cov, "coverage": cov, "quality": quality,
        "mean4": (raw["coherence"] + raw["consistency"] + raw["fluency"] + raw["relevance"]) / 4,
        "graham": (cov + quality) / 2, "arithmetic": (cov + quality) / 2,
        "geometric": np.sqrt(cov * quality), "harmonic": 2 * cov * quality / (cov + quality),
    }
    for which, value in expected.items():
        np.testing.assert_allclose(graham.human_scores(summeval, which), value, rtol=1e-12, err_msg=which)
    # hand check on one cell: relevance 3, quality 4.5 -> geometric sqrt(13.5)
    got = graham.human_scores(summeval, "geometric")
    i, j = np.argwhere((cov == cov.flat[0]) & (quality == quality.flat[0]))[0]
    assert got[i, j] == pytest.approx(np.sqrt(cov.flat[0] * quality.flat[0]))
    # AM >= GM >= HM, with equality only where coverage == quality
    am, gm, hm = (graham.human_scores(summeval, w) for w in ("arithmetic", "geometric", "harmonic"))
    assert (am >= gm - 1e-12).all() and (gm >= hm - 1e-12).all() and (am > gm).any()
    turker = graham.human_scores(summeval, "relevance", annotators="turker")
    np.testing.assert_array_equal(turker, summeval.matrix("turker.relevance"))


def test_graham_option_proportions_hand_made():
    table = pd.DataFrame({
        "optimal": [True, True, True, False, True],
        "method": ["R-1", "R-2", "R-2", "R-1", "BLEU"],
        "stemming": ["Y", "Y", "N", "N", ""], "stopwords": ["kept", "removed", "kept", "kept", ""],
        "statistic": ["P", "R", "R", "F", ""], "aggregation": ["A", "A", "M", "M", ""],
    })
    props = graham.option_proportions(table).set_index(["option", "value"])
    # three optimal ROUGE variants (BLEU excluded, the non-optimal one too)
    assert props.loc[("method", "R-2"), "percent"] == pytest.approx(200 / 3)
    assert props.loc[("method", "R-1"), "count"] == 1
    assert props.loc[("stemming", "Y"), "percent"] == pytest.approx(200 / 3)
    assert props.loc[("statistic", "F"), "count"] == 0
    assert props.loc[("aggregation", "M"), "percent"] == pytest.approx(100 / 3)


def test_graham_short_label_and_rank_correlation():
    assert graham.short_label(graham.GRAHAM_BEST_VARIANT) == "R-2 P ST1 RS1 A"
    assert graham.short_label(graham.CONVENTIONAL_VARIANT) == "R-2 R ST1 RS0 M"
    a, b = [1, 2, 3, 4, 5], [2, 1, 3, 5, 4]
    assert graham.rank_correlation(a, b) == pytest.approx(stats.kendalltau(a, b)[0])
    assert graham.rank_correlation(a, b) == pytest.approx(0.6)  # 8 concordant, 2 discordant of 10


@pytest.fixture(scope="module")
def tiny_scores(summeval, tmp_path_factory):
    small = summeval.subset(systems=summeval.systems[:4], inputs=summeval.inputs[:6])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RougeWarning)
        return small, graham.metric_scores(small, n_refs=2, cache=tmp_path_factory.mktemp("cache"))


def test_graham_metric_scores_against_direct_scoring(tiny_scores):
    """Catches: system scores not the mean/median of the right rows, BLEU not corpus BLEU, n_refs ignored."""
    small, scores = tiny_scores
    assert scores.system.shape == (4, 193)
    refs2 = [list(r)[:2] for r in small.texts["references"]]
    summaries = small.texts["summary"].tolist()
    for i in range(4):
        rows = slice(6 * i, 6 * i + 6)
        assert scores.system.iloc[i][graham.BLEU] == pytest.approx(system_bleu(summaries[rows], refs2[rows]))
    np.testing.assert_allclose(scores.matrices[graham.BLEU].ravel(), sentence_bleu(summaries, refs2))
    assert "nrefs:2" in scores.bleu_signature
    matrix, agg = scores.matrix_of(graham.CONVENTIONAL_VARIANT)
    assert agg == "median"
    np.testing.assert_allclose(scores.system[graham.CONVENTIONAL_VARIANT], np.median(matrix, axis=1))
    matrix, agg = scores.matrix_of(graham.GRAHAM_BEST_VARIANT)
    np.testing.assert_allclose(scores.system[graham.GRAHAM_BEST_VARIANT], matrix.mean(axis=1))


def test_graham_system_ranking_against_scipy(tiny_scores):
    """Catches: t-test direction, ranks ascending, Shapiro-Wilk on the wrong axis."""
    small, scores = tiny_scores
    name = graham.GRAHAM_BEST_VARIANT
    ranking, ttests, normal = graham.system_ranking(small, scores, [name])
    matrix, _ = scores.matrix_of(name)
    assert ranking[name].is_monotonic_decreasing
    assert ranking[f"rank: {name}"].tolist() == [1, 2, 3, 4]
    p = ttests[name]
    s0, s1 = small.systems[0], small.systems[1]
    expected = stats.ttest_rel(matrix[0], matrix[1], alternative="greater").pvalue
    assert p.loc[s0, s1] == pytest.approx(expected)
    assert p.loc[s0, s1] + p.loc[s1, s0] == pytest.approx(1.0)  # one-sided p-values of the two directions
    assert normal.loc[s0, name] == pytest.approx(stats.shapiro(matrix[0]).pvalue)


# ----------------------------------------------------------------------------------------------------
# Deutsch et al. (2021)


def test_deutsch_metric_cis_against_bootstrap_ci():
    """Catches: metric_cis reporting low = high (or swapped), the wrong level or coefficient."""
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(10, 40))
    metrics = {"a": Z + rng.normal(size=Z.shape), "b": Z + 2 * rng.normal(size=Z.shape)}
    table = deutsch.metric_cis(metrics, Z, n_resamples=500, rng=11).set_index(["level", "metric"])
    assert len(table) == 4
    # the documented seeding: one child generator per metric, spawned again for each level
    parent = np.random.default_rng(11)
    for level in ("system", "summary"):
        for (name, X), child in zip(metrics.items(), parent.spawn(len(metrics))):
            ref = bootstrap_ci(X, Z, level=level, coefficient="kendall", n_resamples=500, rng=child)
            row = table.loc[(level, name)]
            assert (row["low"], row["high"]) == (ref.confidence_interval.low, ref.confidence_interval.high)
            tau = stats.kendalltau(X.mean(1), Z.mean(1))[0] if level == "system" else np.mean(
                [stats.kendalltau(X[:, j], Z[:, j])[0] for j in range(Z.shape[1])])
            assert row["r"] == pytest.approx(tau, abs=1e-12)
            # a percentile interval around tau, roughly +-1.96 standard errors wide
            assert row["low"] < row["r"] < row["high"]
            assert 2.5 < (row["high"] - row["low"]) / row["se"] < 5.5


def test_deutsch_power_table_hand_checked():
    """Catches: a wrong binomial SE or power in power_table."""
    trials = pd.DataFrame({
        "trial": list(range(10)) * 2, "k": [0.5] * 10 + [1.0] * 10, "level": "system", "test": "williams",
        "pvalue": [0.01] * 3 + [0.5] * 7 + [0.9] * 10,
    })
    trials["reject"] = trials["pvalue"] < 0.05
    table = deutsch.power_table(trials).set_index("k")
    assert table.loc[0.5, "power"] == pytest.approx(0.3)
    assert table.loc[0.5, "se"] == pytest.approx(np.sqrt(0.3 * 0.7 / 10))  # 0.1449
    assert table.loc[0.5, "se"] == pytest.approx(0.1449, abs=1e-4)
    assert table.loc[1.0, "power"] == 0 and table.loc[1.0, "se"] == 0
    assert (table["trials"] == 10).all()


def test_deutsch_power_simulation_pvalues_and_type1():
    """Catches: p-values not those of the named test, X and Y swapped (one-sided direction), k not applied."""
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(30)]
    refs = [" ".join(rng.choice(words, 12)) for _ in range(6 * 5)]
    summaries = [" ".join(rng.choice(words, 15)) for _ in range(6 * 5)]
    sampler = deutsch.RougeOneSubsampler(summaries, refs, stem=False)
    full = sampler.full()
    Z = full.reshape(6, 5) + 0.01 * rng.normal(size=(6, 5))
    trials = deutsch.power_simulation(full, sampler, Z, ks=(0.2, 1.0), n_trials=3, n_resamples=200,
                                      tests=("williams", "boot-both"), levels=("system",), rng=4)
    at1 = trials[trials["k"] == 1.0]
    # k = 1: R_k is ROUGE-1 itself: every bootstrap delta is 0 >= 2 * 0, p = 1; nothing may be rejected
    assert (at1[at1["test"] == "boot-both"]["pvalue"] == 1.0).all()
    assert not at1["reject"].any()
    trials = trials[trials["test"] == "williams"]
    # k = 0.2: recompute Williams with the same R_k draw (one child per trial)
    from metaeval.stats.significance import williams_test

    child = np.random.default_rng(4).spawn(3)[0]
    Y = sampler.sample((0.2, 1.0), child)[0].reshape(6, 5)
    expected = williams_test(full.reshape(6, 5), Y, Z, level="system", alternative="greater").pvalue
    got = trials[(trials["trial"] == 0) & (trials["k"] == 0.2)]["pvalue"].item()
    assert got == pytest.approx(expected)
    assert got < 0.5  # ROUGE-1 tracks Z (built from it) better than a 20% subsample


def test_deutsch_pairwise_pvalues_against_pairwise_tests():
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(8, 20))
    metrics = {"a": Z + rng.normal(size=Z.shape), "b": rng.normal(size=Z.shape)}
    out = deutsch.pairwise_pvalues(metrics, Z, n_resamples=300, rng=5)
    children = np.random.default_rng(5).spawn(2)
    for level, child in zip(("system", "summary"), children):
        ref = pairwise_tests(metrics, Z, test="perm-both", level=level, n_resamples=300, rng=child)
        np.testing.assert_array_equal(out[level].pvalues, ref.pvalues)
    assert out["summary"].pvalues[0, 1] < 0.01 < out["summary"].pvalues[1, 0]


def test_deutsch_normality_against_scipy():
    """Catches: normality's ``< alpha`` turned into ``> alpha``, system means on the wrong axis."""
    n = 20
    normal_col = stats.norm.ppf((np.arange(1, n + 1) - 0.5) / n)  # textbook normal: Shapiro p ~ 1
    skewed = np.r_[np.zeros(n - 1), 50.0]                               # one outlier: p ~ 1e-9
    X = np.column_stack([skewed, skewed + 1, 2 * skewed, normal_col, np.ones(n)])  # last: constant, skipped
    table = deutsch.normality({"x": X}).iloc[0]
    assert table["inputs_tested"] == 4
    assert table["summary_percent_rejected"] == pytest.approx(75.0)
    assert table["system_pvalue"] == pytest.approx(stats.shapiro(X.mean(axis=1)).pvalue)
    assert stats.shapiro(normal_col).pvalue > 0.9 and stats.shapiro(skewed).pvalue < 1e-6  # the premise


def test_deutsch_coverage_table_hand_made():
    """Catches: coverage/too_high/too_low mixed up, SE formula, the best mark (incl. degenerate coverage 1)."""
    def block(level, method, contains, n=400, high=0):
        rows = []
        for t in range(n):
            inside = t < contains
            above = (not inside) and t < contains + high
            low, hi = (0.0, 1.0) if inside else ((0.6, 0.9) if above else (0.0, 0.4))
            rows.append((t, level, method, low, hi, 0.5))
        return rows
    rows = (block("system", "fisher", 300, high=100) + block("system", "boot-both", 380, high=5)
            + block("system", "boot-inputs", 250))
    trials = pd.DataFrame(rows, columns=["trial", "level", "method", "low", "high", "target"])
    trials["contains"] = (trials["low"] <= trials["target"]) & (trials["target"] <= trials["high"])
    trials["too_high"] = trials["low"] > trials["target"]
    trials["too_low"] = trials["high"] < trials["target"]
    table = deutsch.coverage_table(trials).set_index("method")
    assert table.loc["fisher", "coverage"] == 0.75 and table.loc["fisher", "too_high"] == 0.25
    assert table.loc["boot-both", "too_high"] == pytest.approx(5 / 400)
    assert table.loc["boot-both", "too_low"] == pytest.approx(15 / 400)
    assert table.loc["boot-both", "se"] == pytest.approx(np.sqrt(0.95 * 0.05 / 400))
    assert table.loc["fisher", "mean_width"] == pytest.approx(0.75 * 1.0 + 0.25 * 0.3)
    assert table["best"].tolist() == [False, True, False]


def test_deutsch_ci_simulation_one_trial_by_hand():
    """Catches: targets from the wrong half, Fisher on the wrong n, contains/too_high/too_low mixed up."""
    rng = np.random.default_rng(9)
    Z = rng.normal(size=(10, 12))
    X = Z + rng.normal(size=Z.shape)
    trials = deutsch.ci_coverage_simulation(X, Z, n_trials=2, n_resamples=100, methods=("fisher",), rng=3)
    narrow = deutsch.ci_coverage_simulation(X, Z, n_trials=10, methods=("fisher",), confidence_level=0.2, rng=3)
    child = np.random.default_rng(3).spawn(2)[0]
    sa, sb, ia, ib = deutsch.split_halves(10, 12, child)
    row = trials[(trials["trial"] == 0) & (trials["level"] == "system")].iloc[0]
    target = stats.pearsonr(X[np.ix_(sb, ib)].mean(1), Z[np.ix_(sb, ib)].mean(1))[0]
    r = stats.pearsonr(X[np.ix_(sa, ia)].mean(1), Z[np.ix_(sa, ia)].mean(1))[0]
    half = stats.norm.ppf(0.975) / np.sqrt(len(sa) - 3)
    assert row["target"] == pytest.approx(target, abs=1e-12)
    assert (row["low"], row["high"]) == pytest.approx((np.tanh(np.arctanh(r) - half), np.tanh(np.arctanh(r) + half)))
    # 20% intervals miss often, on both sides: each miss must be classified by where the interval lies
    assert narrow["too_high"].any() and narrow["too_low"].any()
    for _, t in narrow.iterrows():
        assert t["contains"] + t["too_high"] + t["too_low"] == 1
        assert t["too_high"] == (t["low"] > t["target"]) and t["too_low"] == (t["high"] < t["target"])


def test_deutsch_power_table_does_not_count_undefined_tests_as_non_rejections():
    """Catches: a NaN p-value (Williams at k = 1, where r(X, Y) = 1) counted as 'not rejected', which made
    an undefined test read as a type-I error of 0.000 over every trial."""
    trials = pd.DataFrame({"trial": list(range(4)) * 2, "k": [0.5] * 4 + [1.0] * 4, "level": "summary",
                           "test": "williams", "pvalue": [0.01, np.nan, 0.5, 0.02] + [np.nan] * 4})
    trials["reject"] = trials["pvalue"] < 0.05
    table = deutsch.power_table(trials).set_index("k")
    assert table.loc[0.5, "power"] == pytest.approx(2 / 3) and table.loc[0.5, "trials"] == 3
    assert table.loc[0.5, "undefined"] == 1
    assert np.isnan(table.loc[1.0, "power"]) and table.loc[1.0, "trials"] == 0 and table.loc[1.0, "undefined"] == 4
