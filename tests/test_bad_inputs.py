"""Bad inputs and faults (issue 15): each case asserts the exact outcome, and none passes without its fix.

Areas: wrong correlations (constancy, invariances), silent degenerate results, data loss by the runner,
crashes and raw tracebacks in the CLI, sweeps and Ctrl-C.
"""

from __future__ import annotations

import metaeval
import numpy as np
import pytest
from metaeval.stats.correlation import batch_corr, constant, dense_codes, level_corr
from metaeval.stats.resampling import draw_indices, resampled_corr
from metaeval.stats.significance import (
    _coins,
    _permutation_deltas,
    _standardize,
    permutation_test,
)
from scipy import stats

LEVELS = ("system", "summary", "global")
COEFFICIENTS = ("pearson", "spearman", "kendall")


# ----------------------------------------------------------------------------------------------------
# Wrong correlations: constancy decided exactly, shift and scale invariance on the embedded data


@pytest.fixture(scope="module")
def rouge4(fabbri):
    # rouge-4.f1 is 0.0 for every system on 7 of the 100 inputs: those inputs are undefined at summary level
    return fabbri.matrix("rouge-4.f1"), fabbri.matrix("expert.relevance")


def _scipy_summary_pearson(X, Z):
    rs = []
    for j in range(X.shape[1]):
        if np.all(X[:, j] == X[0, j]) or np.all(Z[:, j] == Z[0, j]):
            continue
        rs.append(stats.pearsonr(X[:, j], Z[:, j])[0])
    return float(np.mean(rs)), len(rs)


def test_summary_pearson_on_real_data_equals_scipy_and_skips_constant_inputs(rouge4):
    X, Z = rouge4
    ref, n_defined = _scipy_summary_pearson(X, Z)
    assert n_defined == 93
    assert metaeval.correlate(X, Z, level="summary") == pytest.approx(ref, abs=1e-12)
    assert round(ref, 4) == 0.1630


@pytest.mark.parametrize("shift", [0.1, 0.7, -0.3])
def test_summary_pearson_is_shift_invariant_on_real_data(rouge4, shift):
    """Adding 0.1 to every score moved the value from 0.1630 to 0.1516 (centring noise of 1e-17)."""
    X, Z = rouge4
    assert metaeval.correlate(X + shift, Z, level="summary") == pytest.approx(0.16300215883600883, abs=1e-12)
    assert metaeval.correlate(X + shift, Z + shift, level="summary") == pytest.approx(0.16300215883600883, abs=1e-12)


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("coef", COEFFICIENTS)
@pytest.mark.parametrize("name", ["rouge-4.f1", "qa-eval.em", "BEwTE.precision"])
def test_every_level_and_coefficient_is_shift_and_scale_invariant(fabbri, level, coef, name):
    X, Z = fabbri.matrix(name), fabbri.matrix("expert.relevance")
    r = metaeval.correlate(X, Z, level=level, coefficient=coef)
    assert metaeval.correlate(X + 0.1, Z, level=level, coefficient=coef) == pytest.approx(r, abs=1e-12)
    assert metaeval.correlate(X * 0.7 + 0.1, Z * 3.0, level=level, coefficient=coef) == pytest.approx(r, abs=1e-12)


def test_bootstrap_statistic_and_interval_use_the_same_inputs(rouge4):
    X, Z = rouge4
    a = metaeval.bootstrap_ci(X, Z, level="summary", resample="both", n_resamples=300, rng=3)
    b = metaeval.bootstrap_ci(X + 0.1, Z, level="summary", resample="both", n_resamples=300, rng=3)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert a.statistic == pytest.approx(0.16300215883600883, abs=1e-12)
    np.testing.assert_allclose(b.bootstrap_distribution, a.bootstrap_distribution, atol=1e-10)
    assert b.n_dropped == a.n_dropped


def _tricky(seed=4):
    """Columns that are constant at a value that is not representable, constant but one system, and nearly
    constant far from the column mean (variance 1e-18 of a mean square 1e6: a relative tolerance calls it
    constant, scipy does not)."""
    rng = np.random.default_rng(seed)
    Z = rng.integers(1, 6, size=(8, 10)) / 3.0
    X = Z + rng.normal(size=(8, 10))
    X[:, 0] = 0.1
    X[:, 1] = 0.7
    X[1:, 2] = 0.3
    X[:, 3] = np.r_[1000.0 + 1e-10 * np.arange(6) ** 2, 0.0, 0.0]
    Z[:, 4] = 0.7
    return X, Z


def test_resampled_summary_pearson_decides_constancy_exactly():
    X, Z = _tricky()
    rng = np.random.default_rng(2)
    rows, cols = draw_indices(8, 10, 400, "systems", rng)
    fast = resampled_corr([X], Z, rows, cols, "summary", "pearson", 64)[0]
    direct = np.array([level_corr(X[rows[b]][:, cols[b]], Z[rows[b]][:, cols[b]], "summary", "pearson")
                       for b in range(400)])
    np.testing.assert_allclose(fast, direct, rtol=1e-9, equal_nan=True)
    # resamples drawing only the nearly constant rows of column 3 exist, and are counted as defined
    assert (rows < 6).all(axis=1).sum() > 10


def test_permuted_summary_pearson_decides_constancy_exactly():
    X, Z = _tricky()
    Y = X.copy()
    Y[:, 1] = 0.2  # a permuted column 1 mixes 0.7s and 0.2s: constant only if every coin is equal
    Y[:, 5] = np.r_[np.full(4, 0.1), Z[4:, 5]]
    Y[:, 3] = 1000.0 + 1e-9 * np.arange(8)  # nearly constant: the sums lose their digits
    Xs, Ys = _standardize(X), _standardize(Y)
    coins = _coins(np.random.default_rng(0), 300, X.shape, "both")
    fast = _permutation_deltas(Xs, Ys, Z, coins, "summary", "pearson", None)
    direct = np.array([
        level_corr(np.where(coins[b], Ys, Xs), Z, "summary", "pearson")
        - level_corr(np.where(coins[b], Xs, Ys), Z, "summary", "pearson")
        for b in range(300)
    ])
    np.testing.assert_allclose(fast, direct, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_permutation_statistic_is_shift_invariant_on_real_data(fabbri, rouge4):
    X, Z = rouge4
    Y = fabbri.matrix("rouge-1.f1")
    a = permutation_test(X, Y, Z, level="summary", n_resamples=200, rng=1)
    b = permutation_test(X + 0.1, Y, Z + 0.1, level="summary", n_resamples=200, rng=1)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert b.pvalue == a.pvalue


@pytest.mark.parametrize("value", [0.1, 0.7, 1 / 3])
def test_constant_vectors_are_undefined_for_every_coefficient(value):
    x = np.full(7, value)
    z = np.arange(7.0)
    for coef in COEFFICIENTS:
        assert np.isnan(batch_corr(x, z, coef)), coef
        assert np.isnan(batch_corr(z, x, coef)), coef


def test_constancy_helpers_are_exact():
    assert constant(np.array([[0.1, 0.1, 0.1], [0.1, 0.1, 0.1 + 2**-55]])).tolist() == [True, False]
    w = np.array([1.0, 1.0, 0.0])
    assert constant(np.array([0.3, 0.3, 5.0]), w)
    assert not constant(np.array([0.3, 0.3 + 1e-16, 5.0]), w)
    np.testing.assert_array_equal(dense_codes(np.array([0.1, 0.7, 0.1, 0.3])), [0, 2, 0, 1])


def test_standardizing_a_constant_matrix_of_point_one_is_refused():
    X = np.full((5, 4), 0.1)
    Z = np.arange(20.0).reshape(5, 4)
    with pytest.raises(ValueError, match="constant matrix: all its scores are equal"):
        permutation_test(X, Z, Z, n_resamples=10, rng=0)


# ----------------------------------------------------------------------------------------------------
# Silent degenerate results: a metaeval warning that says why, dropped resamples counted


def _small(seed=0, shape=(6, 8)):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=shape)
    return Z + rng.normal(size=shape), rng.normal(size=shape), Z


def test_undefined_correlation_warns_with_the_reason():
    X, _, Z = _small()
    with pytest.warns(metaeval.DegenerateResultWarning, match="system-level pearson correlation is NaN.*constant"):
        r = metaeval.correlate(np.full_like(X, 0.1), Z)
    assert np.isnan(r)


def test_bootstrap_counts_and_warns_dropped_resamples():
    X, _, Z = _small(shape=(4, 6))
    X[:, :] = X[:1, :]  # every system scores the same on each input, so resamples of the 4 systems ...
    X[0] += 1.0  # ... are constant exactly when system 0 is not drawn: (3/4)^4 = 32 % of them
    with pytest.warns(metaeval.DegenerateResultWarning, match=r"(\d+) of 500 resamples were dropped") as rec:
        res = metaeval.bootstrap_ci(X, Z, resample="systems", n_resamples=500, rng=0)
    n = int(str(rec[0].message).split()[0])
    assert res.n_dropped == n == 500 - res.bootstrap_distribution.size
    assert 0.25 * 500 < n < 0.40 * 500


def test_permutation_test_with_undefined_observed_is_nan_not_one():
    """An empty null distribution gave p = (0 + 1) / (0 + 1) = 1.0, which looks like a real result."""
    X, Y, Z = _small()
    Z[:] = 3.0
    with pytest.warns(metaeval.DegenerateResultWarning, match="observed difference of correlations is NaN"):
        res = permutation_test(X, Y, Z, n_resamples=50, rng=0)
    assert np.isnan(res.pvalue)


def test_bootstrap_test_with_undefined_observed_is_nan():
    X, Y, Z = _small()
    Z[:] = 0.7
    with pytest.warns(metaeval.DegenerateResultWarning, match="p-value is NaN"):
        res = metaeval.bootstrap_test(X, Y, Z, n_resamples=50, rng=0)
    assert np.isnan(res.pvalue)


def test_permutation_result_counts_dropped_permutations():
    X, Y, Z = _small(shape=(4, 6))
    X[:, 0] = 0.1  # column 0 constant in X and in Y: every permuted column 0 is constant
    Y[:, 0] = 0.1
    res = permutation_test(X, Y, Z, level="summary", n_resamples=100, rng=0)
    assert res.n_dropped == 0  # a constant input is skipped, not the permutation
    assert res.null_distribution.size == 100


def test_fisher_and_williams_warn_when_undefined():
    X, Y, Z = _small()
    with pytest.warns(metaeval.DegenerateResultWarning, match="Williams' test is NaN"):
        res = metaeval.williams_test(X, Y, np.full_like(Z, 0.1))
    assert np.isnan(res.pvalue)
    with pytest.warns(metaeval.DegenerateResultWarning, match="correlation is NaN"):
        metaeval.fisher_ci(np.full_like(X, 0.7), Z)


# ----------------------------------------------------------------------------------------------------
# Inputs that carry meaning: pandas labels aligned or refused, masked arrays respected


def test_dataframes_are_aligned_by_labels():
    import pandas as pd

    X, _, Z = _small()
    systems, inputs = [f"s{i}" for i in range(6)], [f"d{j}" for j in range(8)]
    Xf = pd.DataFrame(X, index=systems, columns=inputs)
    Zf = pd.DataFrame(Z, index=systems, columns=inputs)
    shuffled = Zf.iloc[::-1, ::-1]
    for level in LEVELS:
        assert metaeval.correlate(Xf, shuffled, level=level) == pytest.approx(metaeval.correlate(X, Z, level=level))


def test_dataframes_with_different_labels_are_refused():
    import pandas as pd

    X, _, Z = _small()
    Xf = pd.DataFrame(X, index=[f"s{i}" for i in range(6)])
    Zf = pd.DataFrame(Z, index=[f"t{i}" for i in range(6)])
    with pytest.raises(ValueError, match=r"Z and X are DataFrames with different systems \(index\) labels"):
        metaeval.correlate(Xf, Zf)


def test_masked_cells_are_missing_cells():
    X, _, Z = _small()
    mask = np.zeros(X.shape, dtype=bool)
    mask[2, 3] = True
    Xm = np.ma.masked_array(X, mask=mask)
    with pytest.raises(ValueError, match=r"X contain NaN \(or masked cells\)"):
        metaeval.correlate(Xm, Z)
    Xn, Zn = X.copy(), Z.copy()
    Xn[2, 3] = Zn[2, 3] = np.nan
    expected = metaeval.correlate(Xn, Zn, level="summary", nan_policy="omit")
    got = metaeval.correlate(Xm, np.ma.masked_array(Z, mask=mask), level="summary", nan_policy="omit")
    assert got == pytest.approx(expected)
    assert got != pytest.approx(metaeval.correlate(X, Z, level="summary"))


# ----------------------------------------------------------------------------------------------------
# Utilities validate their inputs


@pytest.mark.parametrize("pvalues", [[0.2, 1.5], [-0.01, 0.3], [[0.1, 2.0]]])
def test_multiple_comparison_corrections_refuse_out_of_range_pvalues(pvalues):
    with pytest.raises(ValueError, match=r"pvalues must be in \[0, 1\]"):
        metaeval.bonferroni(pvalues)
    with pytest.raises(ValueError, match=r"pvalues must be in \[0, 1\]"):
        metaeval.holm(pvalues)


@pytest.mark.parametrize("n_tests", [0, -3, 2.5, True])
def test_bonferroni_refuses_bad_n_tests(n_tests):
    with pytest.raises(ValueError, match="n_tests must be an integer >= 1"):
        metaeval.bonferroni([0.01, 0.02], n_tests=n_tests)


def test_bonferroni_refuses_fewer_tests_than_pvalues():
    with pytest.raises(ValueError, match="n_tests=2 is smaller than the 3 p-values"):
        metaeval.bonferroni([0.01, 0.02, 0.03], n_tests=2)
    np.testing.assert_allclose(metaeval.bonferroni([0.01, np.nan], n_tests=5), [0.05, np.nan])


# ----------------------------------------------------------------------------------------------------
# Resource guards: refuse before allocating, naming the parameter and the estimate


@pytest.mark.parametrize("call", ["bootstrap_ci", "bootstrap_test", "permutation_test", "pairwise_tests"])
def test_too_many_resamples_are_refused_before_allocating(call, monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "64M")
    X, Y, Z = _small()
    fn = getattr(metaeval, call)
    args = (X, Z) if call == "bootstrap_ci" else ([X, Y], Z) if call == "pairwise_tests" else (X, Y, Z)
    with pytest.raises(ValueError, match=r"n_resamples=10000000 needs about \d+\.\d GiB .* limit of 0\.1 GiB"):
        fn(*args, n_resamples=10_000_000, rng=0)


def test_huge_batch_is_refused(monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "1M")
    X, _, Z = _small()
    with pytest.raises(ValueError, match=r"batch=100000 needs about \d+\.\d GiB per chunk"):
        metaeval.bootstrap_ci(X, Z, n_resamples=100, batch=100_000, rng=0)
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match="METAEVAL_MAX_MEMORY must be a number of bytes"):
        metaeval.bootstrap_ci(X, Z, n_resamples=100, rng=0)


def test_one_resample_too_large_is_refused(monkeypatch):
    monkeypatch.setenv("METAEVAL_MAX_MEMORY", "1M")
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(20, 50))
    with pytest.raises(ValueError, match="one resample needs about .* GiB of temporaries"):
        metaeval.bootstrap_ci(Z + 1, Z, level="global", coefficient="kendall", n_resamples=10, rng=0)


# ----------------------------------------------------------------------------------------------------
# Data loss: the runner replaces only what it wrote itself

import hashlib  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from metaeval.run import notebooks as nbrun  # noqa: E402
from metaeval.run.cli import main as cli  # noqa: E402
from metaeval.run.outputs import OutputDirError, check_target, clean_stale, manifest_name  # noqa: E402
from metaeval.run.params import ParameterError, parse_cli_value  # noqa: E402

ROOT = nbrun.project_root()


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _top(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.mark.parametrize("given, words", [
    (".", "root of the compendium"),
    ("results", "results/ folder, which holds every notebook's results"),
    ("data", "data/ folder"),
    ("lib/metaeval", "lib/ folder"),
    ("notebooks", "notebooks/ folder"),
    ("/", "root of the file system"),
])
def test_runner_refuses_the_compendium_and_its_folders(given, words):
    before = _top(ROOT)
    with pytest.raises(OutputDirError, match=f"refusing output_dir '{given}'.*{words}"):
        nbrun.check_run("23", {"output_dir": given})
    assert _top(ROOT) == before


def test_runner_refuses_a_parent_of_the_compendium():
    with pytest.raises(OutputDirError, match="it contains the compendium"):
        nbrun.check_run("23", {"output_dir": str(ROOT.parent)})


def test_runner_refuses_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(OutputDirError, match="it is your home folder"):
        nbrun.check_run("23", {"output_dir": str(tmp_path)})


def test_runner_refuses_a_folder_with_unrelated_files(tmp_path):
    (tmp_path / "thesis.tex").write_text("years of work")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "data.csv").write_text("1,2\n")
    with pytest.raises(OutputDirError, match=r"not empty and was not written by metaeval .*sub, thesis\.tex"):
        nbrun.run_notebook("23", {"output_dir": str(tmp_path)})
    assert (tmp_path / "thesis.tex").read_text() == "years of work"
    assert (tmp_path / "sub" / "data.csv").exists()
    assert _top(tmp_path) == {"thesis.tex", "sub"}  # no staging folder either


def test_runner_refuses_a_file_as_output_dir(tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("x")
    with pytest.raises(OutputDirError, match="it is a file, not a folder"):
        nbrun.check_run("23", {"output_dir": str(target)})


def test_runner_refuses_another_notebooks_results(tmp_path):
    (tmp_path / "table.csv").write_text("a\n1\n")
    (tmp_path / manifest_name("30_lin2004")).write_text(
        json.dumps({"notebook": "30_lin2004", "paper": "lin2004", "files": {"table.csv": "0"}}))
    with pytest.raises(OutputDirError, match="holds the results of notebook '30_lin2004' .another paper than "
                                             "'deutsch2021'., not '23_deutsch"):
        nbrun.check_run("23", {"output_dir": str(tmp_path)})


def test_runner_allows_a_new_or_empty_folder(tmp_path):
    assert nbrun.check_run("23", {"output_dir": str(tmp_path / "new")})[2] == tmp_path / "new"
    assert nbrun.check_run("23", {"output_dir": str(tmp_path)})[2] == tmp_path


def test_cli_refuses_output_dir_dot_with_one_line(capsys):
    before = _top(ROOT)
    assert cli(["run", "23", "-p", "output_dir", "."]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "refusing output_dir '.'" in err[0] and "root of the compendium" in err[0]
    assert _top(ROOT) == before


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One real run of the normality notebook (a few seconds)."""
    out = tmp_path_factory.mktemp("run") / "normality"
    nbrun.run_notebook("23", {"output_dir": str(out)})
    return out


STEM23 = nbrun.find_notebook("23").stem


def test_a_run_leaves_a_manifest_of_what_it_wrote(finished_run):
    name = manifest_name(STEM23)
    manifest = json.loads((finished_run / name).read_text())
    assert manifest["notebook"] == STEM23 and manifest["status"] == "done" and manifest["paper"] == "deutsch2021"
    assert manifest["files"] == {k: v for k, v in _tree(finished_run).items() if k != name}


def test_a_run_may_replace_its_own_previous_run(finished_run):
    assert check_target(finished_run, STEM23) == finished_run


def test_a_previous_run_with_an_added_file_is_not_replaced(finished_run):
    extra = finished_run / "my_notes.md"
    extra.write_text("mine")
    try:
        with pytest.raises(OutputDirError, match=r"files no previous run wrote \(my_notes\.md\)"):
            nbrun.run_notebook("23", {"output_dir": str(finished_run)})
        assert extra.read_text() == "mine"
    finally:
        extra.unlink()


def test_a_previous_run_with_an_edited_file_is_not_replaced(finished_run):
    table = next(p for p in finished_run.glob("*.csv"))
    original = table.read_bytes()
    table.write_bytes(original + b"# my correction\n")
    try:
        with pytest.raises(OutputDirError, match=f"were edited since \\({table.name}\\)"):
            nbrun.check_run("23", {"output_dir": str(finished_run)})
    finally:
        table.write_bytes(original)


def test_failed_run_keeps_previous_results_and_its_own_in_failed_folder(finished_run):
    before = _tree(finished_run)
    with pytest.raises(nbrun.NotebookFailed, match=r"failed in cell \d+ .*DataError.*\.failed.*untouched"):
        nbrun.run_notebook("23", {"output_dir": str(finished_run), "dataset": "no-such-dataset"})
    assert _tree(finished_run) == before
    failed = finished_run.parent / f"{finished_run.name}.{STEM23}.failed"
    note = (failed / "FAILED.txt").read_text()
    assert "failed in cell" in note and "no-such-dataset" in note
    assert json.loads((failed / manifest_name(STEM23)).read_text())["status"] == "failed"
    assert any(p.suffix == ".ipynb" for p in failed.iterdir())  # the executed notebook, up to the failing cell
    assert not [p for p in finished_run.parent.iterdir() if p.name.startswith(".partial")]


def test_notebooks_of_one_paper_share_a_folder_each_replacing_only_its_files(finished_run, tmp_path):
    shared = tmp_path / "deutsch"
    nbrun.run_notebook("23", {"output_dir": str(shared)})
    mine = _tree(shared)
    nbrun.run_notebook("20", {"output_dir": str(shared), "n_trials": 2, "n_resamples": 20})
    both = _tree(shared)
    assert {k: v for k, v in both.items() if k in mine} == mine  # 23's files kept, byte for byte
    stem20 = nbrun.find_notebook("20").stem
    assert f"{stem20}.ipynb" in both and manifest_name(stem20) in both
    nbrun.run_notebook("23", {"output_dir": str(shared)})  # a rerun of 23 keeps 20's files
    again = _tree(shared)
    assert {k: v for k, v in again.items() if k in both and k not in mine} == {
        k: v for k, v in both.items() if k not in mine}
    (shared / "mine.txt").write_text("x")
    with pytest.raises(OutputDirError, match=r"files no previous run wrote \(mine\.txt\)"):
        nbrun.check_run("20", {"output_dir": str(shared)})


def test_stale_staging_of_killed_runs_is_cleaned_live_ones_kept(tmp_path):
    final = tmp_path / "out"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f".partial-out-{dead.pid}"
    stale.mkdir()
    (stale / "half.csv").write_text("a,b\n1,")
    (stale / ".metaeval-staging").touch()  # what staging_dir marks its folders with
    old = tmp_path / f".old-out-{dead.pid}"
    old.mkdir()
    (old / ".metaeval-run.20_deutsch2021_ci_simulation.json").write_text("{}")  # a backup of a run folder
    live = tmp_path / f".partial-out-{os.getppid()}"
    live.mkdir()
    removed = clean_stale(final)
    assert set(removed) == {stale, old}
    assert not stale.exists() and not old.exists() and live.exists()


def test_safe_reruns_never_write_over_canonical_results():
    canonical = nbrun.resolve_output_dir("23")
    declared = nbrun.notebook_parameters("23")["output_dir"]
    if declared is None:  # results/<paper>/<dataset>, shared by the notebooks of the paper (20-23)
        dataset = nbrun.notebook_parameters("23")["dataset"]
        assert canonical == ROOT / "results" / "deutsch2021" / dataset
    else:
        assert canonical == ROOT / declared
    other = nbrun.resolve_output_dir("23", {"seed": 5})
    assert other.relative_to(ROOT).parts[:2] == ("results", "runs")
    assert other.name.startswith("seed=5__")
    assert nbrun.resolve_output_dir("23", {"seed": 5}) == other  # stable name
    assert nbrun.resolve_output_dir("23", {"seed": 6}) != other
    # the defaults given explicitly are the canonical run
    defaults = {k: v for k, v in nbrun.notebook_parameters("23").items() if k != "output_dir"}
    assert nbrun.resolve_output_dir("23", defaults) == canonical


def test_a_users_folder_named_like_an_embedded_dataset_does_not_take_its_place(tmp_path):
    own = tmp_path / "summeval"
    own.mkdir()
    target = nbrun.resolve_output_dir("23", {"dataset": str(own)})
    assert target.relative_to(ROOT).parts[:2] == ("results", "runs")


# ----------------------------------------------------------------------------------------------------
# Typed notebook parameters: refused before anything runs, naming the parameter and the type


@pytest.mark.parametrize("name, value, words", [
    ("n_trials", 2.5, "parameter 'n_trials' expects int"),
    ("seed", "abc", "parameter 'seed' expects int"),
    ("n_trials", True, "parameter 'n_trials' expects int"),
    ("alpha", "0.05", "parameter 'alpha' expects float"),
    ("ks", [0.1, "half"], r"parameter 'ks' expects list\[float\]"),
    ("tests", "perm-both", r"parameter 'tests' expects list\[str\]"),
    ("coefficient", 1, "parameter 'coefficient' expects str"),
])
def test_wrong_parameter_types_are_refused_before_running(name, value, words, tmp_path):
    with pytest.raises(ParameterError, match=words):
        nbrun.run_notebook("21", {name: value, "output_dir": str(tmp_path / "out")})
    assert not (tmp_path / "out").exists() and not list(tmp_path.iterdir())


def test_parameter_values_that_fit_are_accepted_and_converted():
    _, params, _ = nbrun.check_run("21", {"alpha": 1, "ks": [1, 0.5], "seed": 7})
    assert params["alpha"] == 1.0 and isinstance(params["alpha"], float)
    assert params["ks"] == [1, 0.5] and params["seed"] == 7


def test_command_line_values_are_read_by_the_parameters_type():
    assert parse_cli_value("dataset", "2021", "summeval") == "2021"
    assert parse_cli_value("n_trials", "10", 1000) == 10
    assert parse_cli_value("ks", "[0.1, 1]", [0.5]) == [0.1, 1]
    assert parse_cli_value("human", "null", None) is None
    with pytest.raises(ParameterError, match=r"-p n_trials: parameter 'n_trials' expects int .* got 2\.5"):
        parse_cli_value("n_trials", "2.5", 1000, where="-p n_trials")


@pytest.mark.parametrize("args, words", [
    (["run", "21", "-p", "n_trials", "2.5"], "parameter 'n_trials' expects int (default 1000), got 2.5"),
    (["run", "21", "-p", "seed", "abc"], "parameter 'seed' expects int (default 0), got 'abc'"),
    (["run", "99"], "unknown notebook '99'"),
    (["run", "21", "-p", "n_trails", "5"], "does not declare parameter(s) ['n_trails']"),
    (["params", "99"], "unknown notebook '99'"),
])
def test_cli_run_user_errors_are_one_line_exit_2(args, words, capsys):
    assert cli(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0], err


def test_params_shows_type_and_meaning(capsys, tmp_path, monkeypatch):
    source = tmp_path / "42_demo.py"
    source.write_text('# %% tags=["parameters"]\nn_trials = 100  # Monte-Carlo trials per cell\n'
                      'ks = [0.1, 1.0]  # kept fractions\nhuman = None  # None: the dataset\'s own\n'
                      'output_dir = None\n')
    assert cli(["params", str(source)]) == 0
    out = capsys.readouterr().out
    assert "n_trials = 100" in out and "[int]" in out and "Monte-Carlo trials per cell" in out
    assert "[list[float]]" in out and "kept fractions" in out and "[any]" in out


# ----------------------------------------------------------------------------------------------------
# The command line never prints a raw traceback for user errors


def _rouge_input(tmp_path, content: bytes) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize("case, words", [
    ("missing", "No such file or directory"),
    ("directory", "Is a directory"),
    ("latin1", "in.jsonl:2: not UTF-8 text (invalid continuation byte at byte 13 of the line)"),
])
def test_rouge_cli_bad_input_files(case, words, tmp_path, capsys):
    if case == "missing":
        src = tmp_path / "nope.jsonl"
    elif case == "directory":
        src = tmp_path
    else:
        src = _rouge_input(tmp_path, b'{"peer": "a", "refs": ["a"]}\n{"peer": "caf\xe9 au lait", "refs": ["x"]}\n')
    with pytest.raises(SystemExit) as exc:
        rc = cli(["rouge", str(src), str(tmp_path / "out.jsonl")])
        raise SystemExit(rc)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0] and err[0].startswith("metaeval rouge: "), err


def test_rouge_cli_unwritable_output(tmp_path, capsys):
    src = _rouge_input(tmp_path, b'{"peer": "a b", "refs": ["a b"]}\n')
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert cli(["rouge", str(src), str(blocker / "out.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(blocker) in err[0], err


def test_sweep_cli_invalid_yaml_and_unknown_notebook(tmp_path, capsys):
    grid = tmp_path / "grid.yml"
    grid.write_text("n_trials: [1, 2\n")
    assert cli(["sweep", "20", str(tmp_path / "s"), "--grid", str(grid)]) == 2
    assert cli(["sweep", "99", str(tmp_path / "s"), "-p", "seed", "1"]) == 2
    assert cli(["sweep", "20", str(tmp_path / "s"), "--grid", str(tmp_path / "none.yml")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and "not valid YAML" in err[0] and "unknown notebook '99'" in err[1]
    assert "none.yml does not exist" in err[2]
    assert not (tmp_path / "s").exists()


def test_sweep_refuses_unsafe_folders_and_wrong_types(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("x")
    assert cli(["sweep", "20", ".", "-p", "n_trials", "2"]) == 2
    assert cli(["sweep", "20", str(tmp_path), "-p", "n_trials", "2"]) == 2
    assert cli(["sweep", "20", str(tmp_path / "s"), "-p", "n_trials", "2.5"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "root of the compendium" in err[0]
    assert "holds no sweep" in err[1] and "mine.txt" in err[1]
    assert "parameter 'n_trials' expects int" in err[2]
    assert _top(tmp_path) == {"mine.txt"}


def test_unreachable_scheduler_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("METAEVAL_DASK_TIMEOUT", "1s")
    rc = cli(["sweep", "20", str(tmp_path / "s"), "-p", "n_trials", "2", "--scheduler", "tcp://127.0.0.1:9"])
    assert rc == 2
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("metaeval")]
    assert err == [e for e in err if "cannot reach the Dask scheduler 'tcp://127.0.0.1:9'" in e] and err


# ----------------------------------------------------------------------------------------------------
# Ctrl-C stops a sweep promptly, keeps finished combinations, leaves nothing half-written, exits 130


def _interrupt_sweep(tmp_path, workers: int):
    out = tmp_path / "sweep"
    # the long combinations must outlast the wait below by far on a quiet machine too (3000 trials of 100
    # resamples took a few seconds once notebook 20's bootstrap was compiled, and the sweep ended first)
    cmd = [sys.executable, "-m", "metaeval", "sweep", "20", str(out), "-p", "n_trials", "2,300000,300001,300002",
           "-p", "n_resamples", "1000", "--workers", str(workers)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.time()
    while not list(out.glob("*/_sweep_status.json")) and time.time() - start < 240:
        time.sleep(0.2)
    time.sleep(3)  # the long combinations are running now
    sent = time.time()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return out, proc.returncode, time.time() - sent, err


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_stops_a_sweep(tmp_path, workers):
    out, rc, took, err = _interrupt_sweep(tmp_path, workers)
    assert rc == 130, err[-2000:]
    assert took < 20
    assert "metaeval sweep: interrupted" in err and "Traceback" not in err
    statuses = [json.loads(p.read_text()) for p in out.glob("*/_sweep_status.json")]
    assert [s["state"] for s in statuses] == ["done"]  # the finished one kept, the interrupt not a failure
    assert statuses[0]["params"]["n_trials"] == 2
    assert not (out / "failures.csv").exists()
    leftovers = [p.name for p in out.iterdir() if p.name.startswith((".partial", ".old")) or p.suffix == ".failed"]
    assert leftovers == []
    assert len((out / "sweep.csv").read_text().splitlines()) > 1


@pytest.mark.slow
def test_ctrl_c_stops_a_single_run(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "metaeval", "run", "20", "-p", "n_trials", "5000",
                             "-p", "output_dir", str(out)], stderr=subprocess.PIPE, text=True)
    start = time.time()
    while not list(tmp_path.glob(".partial-*")) and time.time() - start < 120:
        time.sleep(0.2)
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    assert list(tmp_path.iterdir()) == []


# ----------------------------------------------------------------------------------------------------
# Crashes (fixed in metrics/rouge.py) and silent loss of user data (fixed in the loaders), end to end


@pytest.mark.parametrize("content", [b"", b"\n  \n\n"])
def test_rouge_cli_on_empty_input_writes_an_empty_output(content, tmp_path):
    """It died with SIGSEGV in a numba kernel; a subprocess, so that a crash cannot take pytest down."""
    src = _rouge_input(tmp_path, content)
    out = tmp_path / "out.jsonl"
    proc = subprocess.run([sys.executable, "-m", "metaeval", "rouge", str(src), str(out)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-1000:]
    assert out.read_bytes() == b""
    assert "wrote 0 records" in proc.stderr


def test_rouge_score_of_nothing_is_an_empty_table():
    from metaeval.metrics.rouge import score

    frame = score([], [])
    assert frame.shape == (0, 96)


def test_rouge_w_best_reference_tie_is_cpu_independent(tmp_path):
    """pow() 1 ulp off made a fully matched sentence score 1 + 2**-52 and broke first-reference-wins."""
    src = _rouge_input(tmp_path, b'{"id": "x", "peer": "a b c d e f g", "refs": ["a", "a b c d e f g"]}\n')
    out = tmp_path / "out.jsonl"
    assert cli(["rouge", str(src), str(out), "--methods", "R-W1.2,R-W1.5", "--refs", "B", "--stem", "no",
                "--stop", "no"]) == 0
    scores = json.loads(out.read_text())["scores"]
    for w in ("1.2", "1.5"):
        assert [scores[f"R-W{w}|stem=0|stop=0|{s}|f=B"] for s in "PRF"] == [0.14286, 1.0, 0.25]


def _metrics_file(tmp_path, change=None) -> Path:
    records = [{"instance_id": f"i{i}", "summarizer_id": f"s{s}", "summarizer_type": "peer",
                "metrics": {"m": i + s, "h": i * s}} for i in range(3) for s in range(3)]
    if change:
        change(records)
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.parametrize("kind", ["Peer", None, "PEER "])
def test_a_record_that_is_not_exactly_peer_is_an_error_not_skipped(kind, tmp_path):
    path = _metrics_file(tmp_path, lambda rs: rs[4].update(summarizer_type=kind))
    with pytest.raises(metaeval.datasets.DataError,
                       match=r"metrics\.jsonl:5: field 'summarizer_type' must be exactly \"peer\""):
        metaeval.datasets.load(path)


def test_flattened_name_collision_is_an_error(tmp_path):
    path = _metrics_file(tmp_path, lambda rs: rs[0].update(metrics={"x": {"y": 1}, "x.y": 2}))
    with pytest.raises(metaeval.datasets.DataError, match=r"metrics\.jsonl:1: score name 'x\.y' occurs twice"):
        metaeval.datasets.load(path)


def test_a_complete_file_loads_every_record(tmp_path):
    ds = metaeval.datasets.load(_metrics_file(tmp_path))
    np.testing.assert_array_equal(ds.matrix("m"), np.add.outer(np.arange(3), np.arange(3)).T)


def test_empty_dataset_paths_are_refused():
    with pytest.raises(metaeval.datasets.DataError, match="name_or_path is empty"):
        metaeval.datasets.load("")


def _start_long_run(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "metaeval", "run", "20", "-p", "n_trials", "5000",
                             "-p", "output_dir", str(out)], stderr=subprocess.PIPE, text=True)
    start = time.time()
    while not list(tmp_path.glob(".partial-*")) and time.time() - start < 120:
        time.sleep(0.2)
    time.sleep(4)
    return proc


@pytest.mark.slow
def test_sigterm_stops_a_run_and_cleans_up(tmp_path):
    proc = _start_long_run(tmp_path)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "terminated" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_staging_left_by_sigkill_is_removed_by_the_next_run(tmp_path):
    proc = _start_long_run(tmp_path)
    proc.kill()
    proc.wait()
    assert [p.name for p in tmp_path.iterdir()] == [f".partial-out-{proc.pid}"]
    nbrun.run_notebook("20", {"n_trials": 2, "n_resamples": 20, "output_dir": str(tmp_path / "out")})
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_stale_cleanup_leaves_a_user_folder_named_like_staging(tmp_path):
    # a folder that merely looks like a dead run's staging (no marker, no manifest) is the user's: kept
    from metaeval.run.outputs import clean_stale, staging_dir

    final = tmp_path / "out"
    theirs = tmp_path / ".partial-out-999999999"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("mine")
    ours = staging_dir(final)  # marked
    dead = tmp_path / ".partial-out-999999998"
    os.replace(ours, dead)
    removed = clean_stale(final)
    assert removed == [dead] and (theirs / "notes.txt").read_text() == "mine"


def test_card_never_replaces_a_folder_it_did_not_write(tmp_path):
    from metaeval.studies.card import make_card

    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(ValueError, match="does not hold a metaeval card"):
        make_card(tmp_path / "scores.jsonl", dataset="summeval", output_dir=out)
    assert (out / "thesis.tex").read_text() == "precious"


def test_a_relative_dataset_path_is_read_from_where_the_user_is(tmp_path, monkeypatch):
    # the kernel runs in the compendium root; `-p dataset my_study` means the folder beside the user
    from metaeval.run.notebooks import check_run

    (tmp_path / "my_study").mkdir()
    monkeypatch.chdir(tmp_path)
    _, params, _ = check_run("23", {"dataset": "my_study", "output_dir": str(tmp_path / "out")})
    assert params["dataset"] == str(tmp_path / "my_study")
    _, params, _ = check_run("23", {"dataset": "realsumm", "output_dir": str(tmp_path / "out2")})
    assert params["dataset"] == "realsumm"
