"""Bad inputs of round 4 (issue 33): each test is one reported case, reduced. Errors must name the input and
the fix in one line (exit status 2 on the command line); undefined statistics are NaN with a warning; a number
is never computed from something else. Each test failed before its fix (the message or number it replaced is
quoted in its docstring)."""

from __future__ import annotations

import gzip
import warnings
from types import SimpleNamespace

import metaeval
import numpy as np
import pandas as pd
import pytest
from metaeval._warnings import DegenerateResultWarning
from metaeval.data.datasets import from_frame
from metaeval.data.formats import DataError
from metaeval.data.tabular import import_table, read_table
from metaeval.metrics import rouge
from metaeval.metrics.text import unicode_tokenize
from metaeval.run.cli import main as cli
from metaeval.run.params import split_values
from metaeval.run.sweep import parse_flags
from metaeval.stats.correlation import check_rng
from metaeval.stats.planning import required_size
from scipy import stats


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and "\n" not in err, err
    return err


# ----------------------------------------------------------------------------------------------------
# Silent wrong numbers


def test_summary_pearson_with_a_1e308_cell_is_the_mean_of_the_per_input_correlations():
    """Before: one rescale for the whole matrix made every other input subnormal (variance 0, undefined), and
    the summary-level value was the first input's alone: -0.4106 here, where the answer is -0.3963."""
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    big = X.copy()
    big[0, 0] = 1e308
    moderate = big.copy()
    moderate[:, 0] /= 1e300  # each input's correlation does not depend on its scale: the same answer, no overflow
    expected = np.mean([stats.pearsonr(moderate[:, j], Z[:, j])[0] for j in range(6)])
    assert round(expected, 4) == -0.3963
    assert metaeval.correlate(big, Z, level="summary") == pytest.approx(expected, abs=1e-12)
    # per-system level: each system on its own scale too (the 1e308 system's row is rescaled, the others not)
    per_system = np.mean([stats.pearsonr(big[i] / (1e300 if i == 0 else 1.0), Z[i])[0] for i in range(5)])
    assert metaeval.correlate(big, Z, level="per-system") == pytest.approx(per_system, abs=1e-12)


def test_csv_with_a_column_named_twice_is_refused_naming_both_columns(tmp_path):
    """Before: exit 0, the second 'm' became 'm.1' (a score nobody named)."""
    path = tmp_path / "dup.csv"
    path.write_text("doc,system,m,m,relevance\n" + "".join(f"d{d},{s},0.{d},0.5,{d}\n" for d in (1, 2, 3)
                                                         for s in "abc"))
    with pytest.raises(DataError, match=r"dup.csv:1: column 'm' appears twice in the header \(columns 3 and 4\); "
                                        r"rename one"):
        read_table(path)


def test_repeated_document_system_rows_with_different_values_are_refused_at_import_naming_the_rows(tmp_path):
    """Before: exit 0, and the next command failed pointing at the generated records.jsonl."""
    path = tmp_path / "rows.csv"
    path.write_text("doc,system,m,relevance\nd1,a,0.1,1\nd1,a,0.2,2\nd1,b,0.3,3\nd2,a,0.1,1\nd2,b,0.5,2\n"
                    "d3,a,0.3,1\nd3,b,0.2,4\n")
    with pytest.raises(DataError, match=r"rows.csv:3 \(row 2\), column 'm': document 'd1', system 'a' has '?0.2'? "
                                        r"here and '?0.1'? at .*rows.csv:2 \(row 1\); give each \(document, system\)"):
        import_table(path, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_significance_clusters_leave_a_nan_statistic_unranked_and_keep_the_others_wins():
    """Before: the metric with a NaN statistic was ranked (last, as if it were the worst) without a word."""
    p = np.array([[np.nan, 0.01, 0.01], [0.9, np.nan, 0.5], [0.9, 0.5, np.nan]])
    tests = SimpleNamespace(names=("a", "b", "c"), correlations=np.array([0.9, 0.5, np.nan]), pvalues=p)
    with pytest.warns(DegenerateResultWarning, match="c not ranked \\(rank NaN\\): the statistic is NaN"):
        res = metaeval.significance_clusters(tests)
    assert res.names == ("a", "b", "c")
    assert res.ranks[:2].tolist() == [1, 2]  # a beats b significantly: that win stays
    assert np.isnan(res.ranks[2])


def test_unicode_tokenizer_keeps_a_persian_word_with_a_zero_width_non_joiner_whole():
    """Before: ['می', 'خواهم'] against ['میخواهم']: two spellings of one word shared no token."""
    assert unicode_tokenize("می\u200cخواهم") == unicode_tokenize("میخواهم") == ["میخواهم"]
    assert unicode_tokenize("co\u00adoperate") == ["cooperate"]  # a soft hyphen neither


def test_unicode_tokenizer_folds_turkish_dotted_capital_i_with_lang_tr():
    """Before: İSTANBUL vs istanbul scored 0 even with lang:tr (Unicode's default folds İ to i + U+0307)."""
    assert unicode_tokenize("İSTANBUL", lang="tr") == ["istanbul"]
    assert unicode_tokenize("ISPARTA", lang="tr") == ["ısparta"]  # the dotless capital I is dotless
    assert unicode_tokenize("İSTANBUL") == ["i\u0307stanbul"]  # without lang: Unicode's default, unchanged
    frame = rouge.score(["İSTANBUL güzel"], [["istanbul güzel"]],
                        ["rouge-1|tok:unicode|lang:tr|stem:no", "rouge-1|tok:unicode|stem:no"], columns="signature")
    assert frame.iloc[0].tolist() == [1.0, 0.5]


# ----------------------------------------------------------------------------------------------------
# Errors that name the input and the fix


@pytest.mark.parametrize("call, error, words", [
    (lambda: rouge.score([["a b", None]], [["a b"]], ["R-1"]), TypeError,
     r"summaries\[0\]\[1\] is None, not a sentence string: remove it from the list, or pass ''"),
    (lambda: rouge.score(["a b"], [["a b"]], ["rouge-1|alpha:abc"]), ValueError,
     r"variant 'rouge-1\|alpha:abc': option alpha:abc is not a number; .* e.g. alpha:0.5"),
    (lambda: rouge.score(["a b c"], [["a b c"]], ["R-W99999"]), ValueError,
     r"ROUGE-W weight must be in \(1, 16\] .* got 99999.0: e.g. R-W1.2"),
    (lambda: rouge.score(["a b"], [["a b"]], 1), TypeError,
     r"variants must be a variant name such as 'R-1' or a list of them, got 1"),
])
def test_text_metric_inputs_are_named(call, error, words):
    """Before: "got list"; numpy's "could not convert string to float"; OverflowError; "'int' object is not
    iterable"."""
    with pytest.raises(error, match=words):
        call()


def test_rouge_w_at_the_largest_weight_is_a_number():
    # ROUGE-1.5.5's R-W of identical texts is not 1 (0.89058 at weight 1.2, 0.5 at 2 for 3 words): a number
    frame = rouge.score(["a b c"], [["a b c"]], ["R-W1.2", "R-W2", "R-W16"])
    assert frame.iloc[0, :2].tolist() == [0.89058, 0.5]
    assert 0.0 <= frame.iloc[0, 2] <= 1.0


def test_embeddings_of_no_records_is_an_empty_table_like_rouge():
    """Before: numpy's "ufunc 'bitwise_or' not supported"."""
    from metaeval.metrics import embeddings

    e = embeddings.Embeddings.from_dict({"cat": [1.0, 0.0], "dog": [0.96, 0.28]}, name="toy")
    frame = embeddings.score([], [], ["wmd", "rouge-we-1"], embeddings=e, columns="name")
    assert frame.shape == (0, 2) and list(frame.columns) == ["wmd", "rouge-we-1"]
    assert rouge.score([], [], ["R-1"]).shape == (0, 1)


def test_williams_on_three_systems_is_nan_with_a_warning():
    """Before: ZeroDivisionError (df = n - 3 = 0)."""
    X = np.array([[0.1, 0.5, 0.2], [0.4, 0.2, 0.9], [0.3, 0.8, 0.4]])
    Y = np.array([[0.2, 0.1, 0.7], [0.1, 0.6, 0.3], [0.9, 0.3, 0.5]])
    Z = np.array([[1.0, 2.0, 4.0], [3.0, 1.0, 2.0], [2.0, 5.0, 1.0]])
    with pytest.warns(DegenerateResultWarning, match="n - 3 degrees of freedom and needs n >= 4, got n = 3 at the system level"):
        res = metaeval.williams_test(X, Y, Z)
    assert np.isnan(res.statistic) and np.isnan(res.pvalue) and res.df == 0
    with pytest.warns(DegenerateResultWarning, match="n = 3"):
        pw = metaeval.pairwise_tests([X, Y], Z, test="williams")
    assert np.isnan(pw.pvalues).all()


def test_confidence_level_accepts_numpy_reals_and_refuses_other_values():
    """Before: np.float32(0.95) refused ("must be in (0, 1)")."""
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(8, 5))
    X = Z + rng.normal(size=(8, 5))
    a = metaeval.fisher_ci(X, Z, confidence_level=np.float32(0.95))
    b = metaeval.fisher_ci(X, Z, confidence_level=0.95)
    assert a.confidence_interval.low == pytest.approx(b.confidence_interval.low, abs=1e-6)  # float32's 0.95
    with pytest.raises(ValueError, match=r"confidence_level must be a number in \(0, 1\) such as 0.95, got 95"):
        metaeval.fisher_ci(X, Z, confidence_level=95)
    with pytest.raises(ValueError, match=r"confidence_level must be a number in \(0, 1\)"):
        metaeval.bootstrap_ci(X, Z, confidence_level=True, n_resamples=10, rng=0)


@pytest.mark.parametrize("rng", ["abc", 1.5, -1, True, [1, -2]])
def test_rng_is_validated_once_naming_rng(rng):
    """Before: numpy's "SeedSequence expects int or sequence of ints" and "expected non-negative integer"."""
    Z = np.arange(20.0).reshape(4, 5) % 7
    words = r"rng must be None, a non-negative integer seed, a SeedSequence or a numpy Generator"
    with pytest.raises(ValueError, match=words):
        metaeval.bootstrap_ci(Z + 1, Z, n_resamples=10, rng=rng)
    with pytest.raises(ValueError, match=words):
        metaeval.permutation_test(Z + 1, Z * 2, Z, n_resamples=10, rng=rng)
    with pytest.raises(ValueError, match=words):
        check_rng(rng)


def test_accepted_seeds_give_the_generator_numpy_gives():
    for seed in (None, 0, 7, np.int64(3), [1, 2], np.random.SeedSequence(5)):
        check_rng(seed)
    assert check_rng(7).integers(1000) == np.random.default_rng(7).integers(1000)
    g = np.random.default_rng(0)
    assert check_rng(g) is g


def test_pairwise_tests_names_the_test_values():
    """Before: test='perm' was refused naming resample ("resample must be one of ..., got ''")."""
    Z = np.arange(20.0).reshape(4, 5) % 7
    with pytest.raises(ValueError, match=r"test must be one of 'williams', 'boot-both', .*'perm-both'.*, got "
                                         r"'perm' \(e.g. test='perm-both'\)"):
        metaeval.pairwise_tests([Z + 1, Z * 2], Z, test="perm", n_resamples=10, rng=0)


def test_callable_coefficient_returning_a_string_is_named():
    """Before: numpy's "could not convert string to float: 'x'", the coefficient not named."""
    Z = np.arange(20.0).reshape(4, 5) % 7

    def mine(x, z):
        return "x"

    with pytest.raises(TypeError, match=r"coefficient: the callable mine returned 'x', not a number; it must "
                                        r"return one float"):
        metaeval.correlate(Z + 1, Z, coefficient=mine)
    # scipy's result objects are numbers enough
    r = metaeval.correlate(Z + np.arange(5), Z, level="summary", coefficient=lambda x, z: stats.kendalltau(x, z))
    assert r == pytest.approx(metaeval.correlate(Z + np.arange(5), Z, level="summary", coefficient="kendall"))


def test_required_size_of_an_empty_table_says_what_table_it_needs():
    """Before: "table has no column 'size'; columns: []"."""
    with pytest.raises(ValueError, match=r"table: empty; pass a power table with rows \(a 'size' column, 'power' "
                                         r"and 'se'\)"):
        required_size(pd.DataFrame())


def test_gzip_file_is_named_as_compressed(tmp_path):
    """Before: "looks like a table" / "not UTF-8 text (byte 0x8b ...)"."""
    path = tmp_path / "scores.csv"
    path.write_bytes(gzip.compress(b"doc,system,m\nd1,a,1\n"))
    with pytest.raises(DataError, match=r"scores.csv: a gzip-compressed file, not a text table; decompress it"):
        read_table(path)


def test_import_into_a_path_under_a_file_does_not_say_exists(tmp_path, capsys):
    """Before: "File exists" for a folder that does not exist (its parent is a file)."""
    src = tmp_path / "ok.csv"
    src.write_text("doc,system,m,relevance\nd1,a,0.1,1\nd1,b,0.3,3\nd2,a,0.1,1\nd2,b,0.5,2\n")
    assert cli(["import", str(src), str(src / "sub")]) == 2
    err = _one_line(capsys)
    assert "exists" not in err and f"{src} is a file, not a folder; choose a dest outside it" in err


def test_from_frame_reads_ids_from_a_multiindex_and_refuses_an_empty_frame():
    """Before: "no document column" for ids in the index; "no record names a system" for an empty frame."""
    df = pd.DataFrame({"doc": ["d1", "d1", "d2", "d2"], "system": ["a", "b", "a", "b"], "m": [1.0, 2, 3, 4],
                       "relevance": [1.0, 3, 2, 5]})
    flat, indexed = from_frame(df), from_frame(df.set_index(["doc", "system"]))
    assert indexed.systems == flat.systems == ("a", "b") and indexed.inputs == ("d1", "d2")
    assert indexed.matrix("m").tolist() == flat.matrix("m").tolist() == [[1.0, 3.0], [2.0, 4.0]]
    with pytest.raises(DataError, match=r"frame: no rows \(columns: doc, system, m, relevance\); pass a DataFrame"):
        from_frame(df.iloc[:0])


def test_sweep_values_split_at_top_level_commas_only():
    """Before: '[0.1,0.5]' became two values '[0.1' and '0.5]' (and a YAML error)."""
    assert split_values("[0.1,0.5]") == ["[0.1,0.5]"]
    assert split_values("pearson,kendall") == ["pearson", "kendall"]
    assert parse_flags([("ks", "[0.1,0.5],[0.2]")], {"ks": [0.1]}) == {"ks": [[0.1, 0.5], [0.2]]}


def test_card_with_a_scores_file_that_does_not_exist_names_scores(tmp_path, capsys):
    """Before: the notebook failed in cell 3 with "unknown dataset 'nope.jsonl'"."""
    missing = tmp_path / "nope.jsonl"
    assert cli(["card", "--dataset", "summeval", str(missing), "--output", str(tmp_path / "card")]) == 2
    err = _one_line(capsys)
    assert f"scores '{missing}': no such file; give the path of the metric's scores" in err
    assert not (tmp_path / "card").exists()


def test_miloulis_study_on_two_systems_names_the_shape():
    """Before: a scikit-learn error in cell 5 of notebook 40 (then: "X needs at least 3 systems" in cell 13)."""
    from metaeval.studies import miloulis

    df = pd.DataFrame({"doc": [f"d{k}" for k in range(12) for _ in "ab"], "system": list("ab") * 12,
                       "relevance": np.arange(24.0) % 5})
    ds = from_frame(df, name="tiny")
    with pytest.raises(ValueError, match=r"dataset 'tiny' has 2 systems and 12 inputs: the study correlates at "
                                         r"system and summary level, which needs at least 3 systems"):
        miloulis.human_targets(ds)


def test_moderate_data_are_not_rescaled():
    rng = np.random.default_rng(0)
    X, Z = rng.normal(size=(5, 6)), rng.normal(size=(5, 6))
    expected = np.mean([stats.pearsonr(X[:, j], Z[:, j])[0] for j in range(6)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert metaeval.correlate(X, Z, level="summary") == pytest.approx(expected, abs=1e-15)
        assert metaeval.correlate(X * 2.0**-500, Z, level="summary") == pytest.approx(expected, abs=1e-12)


def test_import_counts_records_against_the_rows_of_the_table():
    # issue 38: "wrote 1300 records" for a table of 1,200 rows, with no word on where the other 100 came from
    import pandas as pd

    from metaeval.data.tabular import import_table

    frame = pd.DataFrame({"doc": ["d1", "d1", "d2", "d2"], "system": ["A", "B", "A", "B"],
                          "summary": ["a b", "c d", "e f", "g h"], "reference": ["r1", "r1", "r2", "r2"],
                          "relevance": [1, 2, 3, 4]})
    result = import_table(frame, "unused", dry_run=True)
    assert (result.n_records, result.n_rows, result.n_input_records) == (6, 4, 2)
    assert result.describe() == "6 records from 4 rows (2 of them input-level records holding each document's references)"
