"""nlpstats' deterministic correlation, Fisher and Williams tests, ported case by case onto metaeval's public API.

Source: https://github.com/danieldeutsch/nlpstats, commit 55e6281065e10faad6dda4ee251f1e7e4c98953c, files
``tests/correlations/correlations_test.py``, ``fisher_test.py`` and ``williams_test.py``; Copyright Daniel
Deutsch, Apache License 2.0 (the repository's LICENSE). Inputs and expected values are the peer's, unchanged;
only the calls are translated. Each test is named ``test_<peer test>``.

Translation: nlpstats' ``X`` (metric) and ``Z`` (human) are N systems x M inputs, as metaeval's; its levels
"system" / "input" / "global" are metaeval's "system" / "summary" / "global"; NaN cells (the same in both
matrices, which nlpstats requires) need ``nan_policy="omit"`` in metaeval, which also accepts NaN in different
cells (scipy's meaning: a cell missing on either side is left out of both, counted in a warning) where
nlpstats refuses. The random inputs are drawn from the peer's legacy seeded stream (``np.random.seed(12)``),
reproduced with a local ``RandomState(12)``.

Documented deviations (each in its test): the input-validation cases raise ValueError as the peer does, with
metaeval's own messages, which the tests name; nlpstats refuses a system or input of all-NaN scores where metaeval leaves it out.
"""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest

from metaeval._warnings import DegenerateResultWarning
from metaeval.stats.correlation import correlate, fisher_ci
from metaeval.stats.significance import williams_test

LEVEL = {"system": "system", "input": "summary", "global": "global"}


def system_level(X, Z, coefficient):
    return correlate(X, Z, level="system", coefficient=coefficient, nan_policy="omit")


def input_level(X, Z, coefficient):
    return correlate(X, Z, level="summary", coefficient=coefficient, nan_policy="omit")


def global_level(X, Z, coefficient):
    return correlate(X, Z, level="global", coefficient=coefficient, nan_policy="omit")


X9 = np.array([[1, 9, 2], [4, 5, 2], [6, 7, 2]], dtype=float)
Y9 = np.array([[11, 12, 13], [14, 15, 16], [17, 18, 19]], dtype=float)


# ------------------------------------------------------------------------------------------------
# correlations_test.py


def test_system_level():
    assert system_level(X9, Y9, "pearson") == pytest.approx(0.7205766921, abs=5e-5)


def test_system_level_nans():
    X = np.array([[1, 9, 2], [4, 5, np.nan], [6, np.nan, 2]])
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [17, np.nan, 19]])
    assert system_level(X, Y, "pearson") == pytest.approx(-0.09578262852, abs=5e-5)


def test_system_level_nan_correlation():
    # the average of X is the same for both systems: undefined, NaN (with metaeval's warning)
    X = np.array([[1, 2], [1, 2]], dtype=float)
    Y = np.array([[11, 12], [14, 15]], dtype=float)
    with pytest.warns(DegenerateResultWarning):
        assert np.isnan(system_level(X, Y, "pearson"))


def test_system_level_custom_coefficient():
    X = np.array([[1, 3, 2], [4, 6, 2], [6, 7, 5]], dtype=float)

    def _coef(x: np.ndarray, z: np.ndarray):
        return np.mean(x) - np.mean(z)

    assert system_level(X, Y9, _coef) == -11


def _iv_one_dimensional(fn):
    X = np.array([1, 9, 2], dtype=float)
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [17, np.nan, 19]])
    with pytest.raises(ValueError, match="X must be a 2-D matrix"):  # nlpstats: "`X` must be two-dimensional"
        fn(X, Y, "pearson")
    with pytest.raises(ValueError, match="Z must be a 2-D matrix"):  # nlpstats: "`Z` must be two-dimensional"
        fn(Y, X, "pearson")


def _iv_rows(fn):
    X = np.array([[1, 9, 2], [8, 2, 3]], dtype=float)
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [17, np.nan, 19]])
    # nlpstats: "`X` and `Z` must have the same number of rows"
    with pytest.raises(ValueError, match=r"Z has shape \(2, 3\) but X has shape \(3, 3\)"):
        fn(Y, X, "pearson")


def test_system_level_iv():
    _iv_one_dimensional(system_level)
    _iv_rows(system_level)

    # Rows of all NaN. nlpstats: "`X` must not have a row of all NaN". Here X and Y also have their NaN in
    # different cells: metaeval's nan_policy="omit" is scipy's (a cell missing on either side is left out of
    # both, counted in a warning), where nlpstats refuses; the value is that of the cells scored in both
    X = np.array([[1, 9, 2], [np.nan, np.nan, np.nan], [8, 2, 1]])
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [17, np.nan, 19]])
    _same_as_union(system_level, X, Y, "1 cell of X (NaN in Z), 2 cells of Z (NaN in X): 5 of 9 cells used")
    _same_as_union(system_level, Y, X, "2 cells of X (NaN in Z), 1 cell of Z (NaN in X)")

    # Invalid correlation coefficient. nlpstats: "Unknown correlation coefficient"
    with pytest.raises(ValueError, match="coefficient must be one of"):
        system_level(Y9, X9, "DNE")


def test_system_level_row_of_all_nan_same_pattern():
    # not a peer case, the deviation made explicit: with the same all-NaN row in X and Z, nlpstats refuses;
    # metaeval's system mean of a system with no score is undefined, so the correlation is NaN with a warning
    X = np.array([[1, 9, 2], [np.nan, np.nan, np.nan], [8, 2, 1]])
    Z = np.array([[11, 12, 13], [np.nan, np.nan, np.nan], [17, 18, 19]])
    with pytest.warns(DegenerateResultWarning):
        assert math.isnan(system_level(X, Z, "pearson"))


def test_input_level():
    X = np.array([[1, 9, 2], [4, 5, 4], [6, 7, 1]], dtype=float)
    assert input_level(X, Y9, "pearson") == pytest.approx(0.05535747748, abs=5e-5)


def test_input_level_nan_values():
    X = np.array([[1, 9, 2], [np.nan, 5, 4], [6, 7, 7]])
    Y = np.array([[11, 12, 13], [np.nan, 15, 16], [17, 18, 19]])
    assert input_level(X, Y, "pearson") == pytest.approx(0.4977997559, abs=5e-5)


def test_input_level_skipped_column():
    # the last column of X is constant: its correlation is NaN and left out of the mean
    assert input_level(X9, Y9, "pearson") == pytest.approx(0.2466996339, abs=5e-5)


def test_input_level_nan_correlations():
    X = np.array([[1, 2], [1, 2]], dtype=float)
    Y = np.array([[11, 12], [14, 15]], dtype=float)
    with pytest.warns(DegenerateResultWarning):
        assert np.isnan(input_level(X, Y, "pearson"))


def test_input_level_iv():
    _iv_one_dimensional(input_level)
    _iv_rows(input_level)

    # Different number of columns. nlpstats: "`X` and `Z` must have the same number of columns"
    X = np.array([[9, 2], [2, 3], [9, 4]], dtype=float)
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [17, np.nan, 19]])
    with pytest.raises(ValueError, match=r"Z has shape \(3, 2\) but X has shape \(3, 3\)"):
        input_level(Y, X, "pearson")

    # Column of NaN. nlpstats: "`X` must not have a column of all NaN"; here the NaN cells also differ: left out
    # of both (scipy's omit), where nlpstats refuses
    X = np.array([[1, 9, np.nan], [4, 5, np.nan], [6, 7, np.nan]])
    _same_as_union(input_level, X, Y9, "3 cells of Z (NaN in X)")
    _same_as_union(input_level, Y9, X, "3 cells of X (NaN in Z)")

    # Different NaN locations. nlpstats: "`X` and `Z` must have identical NaN locations"; metaeval: scipy's omit
    X = np.array([[1, 9, np.nan], [4, 5, 4], [6, 7, 2]])
    Y = np.array([[11, 12, 13], [np.nan, 15, 16], [17, 18, 19]])
    _same_as_union(input_level, X, Y, "1 cell of X (NaN in Z), 1 cell of Z (NaN in X)")


def test_global_level():
    assert global_level(X9, Y9, "pearson") == pytest.approx(0.06691496051, abs=5e-5)


def test_global_level_nans():
    X = np.array([[1, 9, 2], [4, 5, np.nan], [np.nan, 7, 2]])
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [np.nan, 18, 19]])
    assert global_level(X, Y, "pearson") == pytest.approx(0.05436067275, abs=5e-5)

    # Almost all NaN
    X = np.array([[1, np.nan, np.nan], [4, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    Y = np.array([[11, np.nan, np.nan], [4, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    assert global_level(X, Y, "pearson") == pytest.approx(-1, abs=5e-5)


def test_global_level_iv():
    _iv_one_dimensional(global_level)
    _iv_rows(global_level)

    X = np.array([[9, 2], [2, 3], [9, 4]], dtype=float)
    Y = np.array([[11, 12, 13], [14, 15, np.nan], [17, np.nan, 19]])
    with pytest.raises(ValueError, match=r"Z has shape \(3, 2\) but X has shape \(3, 3\)"):
        global_level(Y, X, "pearson")

    X = np.array([[1, 9, np.nan], [4, 5, 4], [6, 7, 2]])
    Y = np.array([[11, 12, 13], [np.nan, 15, 16], [17, 18, 19]])
    _same_as_union(global_level, X, Y, "1 cell of X (NaN in Z), 1 cell of Z (NaN in X)")

    # Not enough non-NaN values. nlpstats: "`X` must have at least 2 non-NaN values"; one cell scored in both
    # is no correlation: NaN with a warning saying why
    X = np.array([[1, np.nan, np.nan], [np.nan, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    Y = np.array([[11, 12, 13], [np.nan, 15, 16], [17, 18, 19]])
    for a, b in ((X, Y), (Y, X)):
        with pytest.warns(DegenerateResultWarning, match="correlation is undefined"):
            assert math.isnan(global_level(a, b, "pearson"))


def _same_as_union(fn, X, Z, counted: str):
    """scipy's nan_policy="omit": the value of the cells scored in both, and a warning counting the cells left
    out on one side only."""
    missing = np.isnan(X) | np.isnan(Z)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateResultWarning)
        expected = fn(np.where(missing, np.nan, X), np.where(missing, np.nan, Z), "pearson")
    with pytest.warns(DegenerateResultWarning, match=re.escape(counted)):
        got = fn(X, Z, "pearson")
    assert got == expected or (math.isnan(got) and math.isnan(expected))


def test_global_level_one_value_is_nan():
    # not a peer case, the deviation made explicit: one scored cell in both is no correlation: NaN with a
    # warning (nlpstats raises)
    X = np.array([[1, np.nan, np.nan], [np.nan, np.nan, np.nan], [np.nan, np.nan, np.nan]])
    with pytest.warns(DegenerateResultWarning):
        assert math.isnan(global_level(X, X + 10, "pearson"))


def test_correlate():
    X = np.array([[1, 9, 2], [4, 5, 2], [6, 7, 1]], dtype=float)
    cases = [
        ("system", "pearson", 0.6546536707),
        ("input", "pearson", -0.124208712),
        ("global", "pearson", 0.0),
        ("system", "spearman", 0.5),
        ("input", "spearman", -0.1220084679),
        ("global", "spearman", 0.04201829034),
        ("system", "kendall", 0.33333333333),
        ("input", "kendall", -0.0499433047),
        ("global", "kendall", 0.11433239009),
    ]
    for level, coefficient, expected in cases:
        assert correlate(X, Y9, level=LEVEL[level], coefficient=coefficient) == pytest.approx(expected, abs=5e-5)


def test_correlate_iv():
    # nlpstats: "Unknown correlation level"
    with pytest.raises(ValueError, match="level must be one of"):
        correlate(X9, Y9, level="UNK", coefficient="kendall")


# ------------------------------------------------------------------------------------------------
# fisher_test.py


def test_fisher_regression():
    rs = np.random.RandomState(12)  # the peer's np.random.seed(12); np.random.rand
    X = rs.rand(5, 7)
    Y = rs.rand(5, 7)
    cases = [
        ("global", "pearson", -0.02763744135012373, 0.5818846438651135),
        ("global", "spearman", -0.06733469087453943, 0.5640758668009686),
        ("global", "kendall", -0.029964677270600665, 0.4098565164085108),
        ("system", "pearson", -0.6445648014599665, 0.9644395142168088),
        ("system", "spearman", -0.6708734441360908, 0.9756771001362685),
        ("system", "kendall", -0.7023910748254728, 0.9377789575997956),
        ("input", "pearson", -0.808376631595968, 0.9287863878043723),
        ("input", "spearman", -0.7262127280589684, 0.9653646507719408),
        ("input", "kendall", -0.684486849088761, 0.9418063314024349),
    ]
    for level, coefficient, lower, upper in cases:
        ci = fisher_ci(X, Y, level=LEVEL[level], coefficient=coefficient).confidence_interval
        # the peer's assertAlmostEqual: 7 decimal places
        assert ci.low == pytest.approx(lower, abs=5e-8), (level, coefficient)
        assert ci.high == pytest.approx(upper, abs=5e-8), (level, coefficient)


def test_fisher_iv():
    rs = np.random.RandomState(0)
    X = rs.rand(5, 7)
    Y = rs.rand(5, 7)
    # nlpstats: "`confidence_level` must be between 0 and 1"
    for confidence_level in (0.0, 1.0, -0.1, 1.1):
        with pytest.raises(ValueError, match=r"confidence_level must be (a number )?in \(0, 1\)"):
            fisher_ci(X, Y, level="summary", confidence_level=confidence_level)
    # nlpstats: "Unknown correlation coefficient"
    with pytest.raises(ValueError, match="coefficient must be one of"):
        fisher_ci(X, Y, level="summary", coefficient="UNK")  # type: ignore[arg-type]
    # nlpstats: "Unknown correlation level"
    with pytest.raises(ValueError, match="level must be one of"):
        fisher_ci(X, Y, level="UNK")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------
# williams_test.py (psych's r.test values). nlpstats: williams_test(X, Y, Z, level, coefficient,
# alternative="two-sided"), metaeval's default too (scipy's convention); the one-sided calls name it.


def test_williams_test():
    n, m = 9, 5
    rs = np.random.RandomState(12)  # the peer's np.random.seed(12); np.random.random
    X = rs.random((n, m))
    Y = rs.random((n, m))
    Z = rs.random((n, m))

    # One tail
    assert williams_test(X, Y, Z, level="global", alternative="greater").pvalue == pytest.approx(0.2716978, abs=5e-6)
    # The opposite order gives 1 - p (r.test would return 0.2716978, assuming r12 > r13)
    assert williams_test(Y, X, Z, level="global", alternative="greater").pvalue == pytest.approx(
        1.0 - 0.2716978, abs=5e-6)
    # Changing the alternative reverses them
    assert williams_test(X, Y, Z, level="global", alternative="less").pvalue == pytest.approx(
        1.0 - 0.2716978, abs=5e-6)
    assert williams_test(Y, X, Z, level="global", alternative="less").pvalue == pytest.approx(0.2716978, abs=5e-6)
    # Two tails (nlpstats' default)
    assert williams_test(X, Y, Z, level="global", alternative="two-sided").pvalue == pytest.approx(
        0.5433956, abs=5e-6)
    assert williams_test(Y, X, Z, level="global", alternative="two-sided").pvalue == pytest.approx(
        0.5433956, abs=5e-6)
    # the default is two-sided, as scipy's and the peer's: 2 x 0.2716978
    assert williams_test(X, Y, Z, level="global").pvalue == pytest.approx(0.5433956, abs=5e-6)

    X = rs.random((n, m))
    Y = rs.random((n, m))
    Z = rs.random((n, m))
    kw = dict(level="system", coefficient="spearman")
    assert williams_test(Y, X, Z, alternative="greater", **kw).pvalue == pytest.approx(0.4658712, abs=5e-6)
    assert williams_test(X, Y, Z, alternative="greater", **kw).pvalue == pytest.approx(1.0 - 0.4658712, abs=5e-6)
    assert williams_test(Y, X, Z, alternative="less", **kw).pvalue == pytest.approx(1.0 - 0.4658712, abs=5e-6)
    assert williams_test(X, Y, Z, alternative="less", **kw).pvalue == pytest.approx(0.4658712, abs=5e-6)
    assert williams_test(X, Y, Z, alternative="two-sided", **kw).pvalue == pytest.approx(0.9317423, abs=5e-6)
    assert williams_test(Y, X, Z, alternative="two-sided", **kw).pvalue == pytest.approx(0.9317423, abs=5e-6)


def test_williams_test_iv():
    rs = np.random.RandomState(0)
    X = rs.random((9, 5))
    Y = rs.random((9, 5))
    Z = rs.random((9, 5))
    # nlpstats: "Unknown correlation level"
    with pytest.raises(ValueError, match="level must be one of"):
        williams_test(Y, X, Z, level="UNK", coefficient="spearman")
    # nlpstats: "Unknown alternative"
    with pytest.raises(ValueError, match="alternative must be one of"):
        williams_test(Y, X, Z, level="system", coefficient="spearman", alternative="UNK")
