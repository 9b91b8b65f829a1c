"""Data checks before a kernel starts (metaeval.run.preflight; issue 38: the card and notebooks 22, 24 and 60
found a missing cell only 28 to 56 s in, in cell 3, and phrased the fix four ways)."""

import numpy as np
import pandas as pd
import pytest

from metaeval.run.cli import main
from metaeval.run.preflight import INCOMPLETE_FIX


def _study(tmp_path, missing: str | None, second_metric: bool = False):
    from metaeval.data.tabular import import_table

    rng = np.random.default_rng(0)
    rows = [dict(doc=f"d{d}", system=f"s{s}", relevance=float(rng.normal()), my_metric=float(rng.normal()))
            for s in range(6) for d in range(8)]
    frame = pd.DataFrame(rows)
    if second_metric:  # complete: notebook 24 compares at least two metrics
        frame["z_metric"] = rng.normal(size=len(frame))
    if missing:
        frame.loc[3, missing] = np.nan
    folder = tmp_path / "study"
    import_table(frame, folder, human=["relevance"])
    return folder


@pytest.mark.parametrize("notebook, extra", [("60", []), ("24", []), ("22", []), ("61", ["-p", "scores", "my_metric"])])
def test_a_missing_human_cell_fails_before_the_kernel_with_the_one_wording(notebook, extra, tmp_path, capsys,
                                                                           monkeypatch):
    import papermill

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel was started: the check did not run before it")

    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)
    folder = _study(tmp_path, "relevance")
    rc = main(["run", notebook, "-p", "dataset", str(folder), "-p", "output_dir", str(tmp_path / "out"), *extra])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "'relevance'" in err and "missing in 1 of 48 cells" in err and INCOMPLETE_FIX in err, err
    assert not (tmp_path / "out").exists()


def test_a_named_metric_with_a_missing_cell_fails_early_and_a_drop_policy_lets_it_through(tmp_path):
    from metaeval.data.formats import DataError
    from metaeval.run.notebooks import notebook_parameters
    from metaeval.run.preflight import check_data

    folder = _study(tmp_path, "my_metric")
    declared = notebook_parameters("60")
    with pytest.raises(DataError, match="'my_metric'.*missing in 1 of 48 cells"):
        check_data("60_planning", declared, {"dataset": str(folder), "metric_x": "my_metric"})
    check_data("60_planning", declared, {"dataset": str(folder), "metric_x": "my_metric",
                                         "incomplete": "drop-inputs"})
    # the defaults are derived as the notebook derives them: X is the dataset's own metric, checked too; without a
    # second metric there is no default Y, which the notebook says in its setup cell
    with pytest.raises(DataError, match="'my_metric'.*missing in 1 of 48 cells"):
        check_data("60_planning", declared, {"dataset": str(folder), "metric_y": "relevance"})
    check_data("60_planning", declared, {"dataset": str(folder)})


@pytest.mark.parametrize("notebook", ["22", "23", "24"])
def test_a_score_the_run_does_not_name_but_uses_is_checked_before_the_kernel(notebook, tmp_path, capsys,
                                                                             monkeypatch):
    """metrics = None: notebooks 22 and 23 use every score of a user's dataset, 24 every metric score; a missing
    cell in one of them failed in cell 3 (issue 47). The one wording of the fix, with no placeholder left."""
    import papermill

    def no_kernel(*args, **kwargs):
        raise AssertionError("a kernel was started: the check did not run before it")

    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)
    folder = _study(tmp_path, "my_metric", second_metric=True)
    rc = main(["run", notebook, "-p", "dataset", str(folder), "-p", "output_dir", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "'my_metric'" in err and "missing in 1 of 48 cells" in err and INCOMPLETE_FIX in err, err
    assert "NN" not in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "out").exists()
