"""metaeval.shafieibavani: GRouge(lam) from its parts, the ROUGE counterpart, tables and the lam curve."""

import numpy as np
import pytest

from metaeval import shafieibavani as sb
from metaeval.stats.correlation import correlate


def _data(seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(8, 20))
    L = Z + rng.normal(scale=1.0, size=Z.shape)
    S = Z + rng.normal(scale=0.5, size=Z.shape)  # the better part
    return L, S, Z


def test_at_lam_endpoints_and_linearity():
    L, S, _ = _data()
    np.testing.assert_array_equal(sb.at_lam((L, S), 1.0), L)
    np.testing.assert_array_equal(sb.at_lam((L, S), 0.0), S)
    np.testing.assert_allclose(sb.at_lam((L, S), 0.25), 0.25 * L + 0.75 * S)
    with pytest.raises(ValueError, match="lam"):
        sb.at_lam((L, S), 1.5)


def test_rouge_counterpart_names():
    assert sb.rouge_counterpart("grouge-2") == "R-2|stem=1|stop=0|R"
    assert sb.rouge_counterpart("G-SU4", stop=True) == "R-SU4|stem=1|stop=1|R"


def test_correlation_table_marks_the_best_metric():
    L, S, Z = _data()
    t = sb.correlation_table({"L": L, "S": S}, {"h": Z}, coefficients=("pearson", "kendall"))
    assert t.loc["L", ("h", "pearson")] == pytest.approx(correlate(L, Z, level="system", coefficient="pearson"))
    assert t.attrs["best"][("h", "pearson")] == ("S" if t.loc["S", ("h", "pearson")] > t.loc["L", ("h", "pearson")]
                                                 else "L")


def test_lam_curve_endpoints_and_comparison_direction():
    L, S, Z = _data()
    curve = sb.lam_curve((L, S), Z, [0.0, 0.5, 1.0], level="summary", n_resamples=200, rng=1)
    assert curve["r"].iloc[-1] == pytest.approx(correlate(L, Z, level="summary", coefficient="pearson"))
    assert curve["r"].iloc[0] == pytest.approx(correlate(S, Z, level="summary", coefficient="pearson"))
    assert (curve["ci_low"] <= curve["r"]).all() and (curve["r"] <= curve["ci_high"]).all()
    comp = sb.comparison_table([("S", "L")], {"S": S, "L": L}, Z, levels=("summary",), n_resamples=200, rng=2)
    row = comp.iloc[0]
    # S is much closer to Z than L: the resampling tests over 160 cells find it; Williams' n is the number
    # of systems (8) even at summary level, so it only points the right way
    assert row["delta"] > 0.1 and row["p_williams"] < 0.5 and row["p_perm_both"] < 0.05
    assert row["p_boot_both"] < 0.05


def test_all_cells_covers_every_cell_and_adjusts_over_the_table():
    L, S, Z = _data()
    humans = {"h1": Z, "h2": -Z + 0.1 * np.random.default_rng(3).normal(size=Z.shape)}
    cells = sb.all_cells([("S", "L")], {"S": S, "L": L}, humans, coefficients=("pearson", "kendall"),
                         n_resamples=200, rng=4)
    assert len(cells) == 2 * 2 * 2 * 1  # levels x humans x coefficients x pairs
    row = cells[(cells.level == "summary") & (cells.human == "h1") & (cells.coefficient == "kendall")].iloc[0]
    assert row["r_metric"] == pytest.approx(correlate(S, Z, level="summary", coefficient="kendall"))
    for test in ("williams", "perm_both", "boot_both"):
        assert (cells[f"p_{test}_holm"] >= cells[f"p_{test}"] - 1e-15).all()
    # S is the better part for h1, the worse for h2 (one-sided H1: S > L)
    h1 = cells[(cells.human == "h1") & (cells.level == "summary")]
    h2 = cells[(cells.human == "h2") & (cells.level == "summary")]
    assert (h1["p_perm_both_holm"] < 0.05).all() and (h2["p_perm_both"] > 0.5).all()


def test_lam_tests_compare_each_lam_with_rouge_on_paired_resamples():
    L, S, Z = _data()
    t = sb.lam_tests((L, S), Z, [0.0, 0.5, 1.0], level="summary", n_resamples=200, rng=5)
    last = t.iloc[-1]
    assert last["lam"] == 1.0 and last["delta"] == 0.0 and np.isnan(last["p_perm_both"])
    first = t.iloc[0]
    assert first["delta"] == pytest.approx(correlate(S, Z, level="summary", coefficient="pearson")
                                           - correlate(L, Z, level="summary", coefficient="pearson"))
    assert first["p_perm_both"] < 0.05 and first["p_boot_both"] < 0.05  # S is much better than L
    assert (t["p_perm_both_holm"].iloc[:2] >= t["p_perm_both"].iloc[:2]).all()
