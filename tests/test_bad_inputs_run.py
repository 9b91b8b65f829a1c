"""Bad inputs and faults of the running layer (issues 15 and 24): typed notebook parameters, one-line CLI errors
instead of tracebacks, Ctrl-C and SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from metaeval.run import notebooks as nbrun
from metaeval.run.cli import main as cli
from metaeval.run.params import ParameterError, parse_cli_value
from processes import interruptible, reaped

ROOT = nbrun.project_root()


def _top(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


def _rouge_input(tmp_path, content: bytes) -> Path:
    path = tmp_path / "in.jsonl"
    path.write_bytes(content)
    return path

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
    with reaped(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=interruptible)) as proc:
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
    with reaped(_start_long_run(tmp_path)) as proc:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    assert list(tmp_path.iterdir()) == []


def _start_long_run(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "metaeval", "run", "20", "-p", "n_trials", "5000",
                             "-p", "output_dir", str(out)], stderr=subprocess.PIPE, text=True,
                            preexec_fn=interruptible)
    start = time.time()
    while not list(tmp_path.glob(".partial-*")) and time.time() - start < 120:
        time.sleep(0.2)
    time.sleep(4)
    return proc


@pytest.mark.slow
def test_sigterm_stops_a_run_and_cleans_up(tmp_path):
    with reaped(_start_long_run(tmp_path)) as proc:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143 and "terminated" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_staging_left_by_sigkill_is_removed_by_the_next_run(tmp_path):
    with reaped(_start_long_run(tmp_path)) as proc:
        proc.kill()  # the kernel it started is orphaned: the next run must cope; reaped() stops it afterwards
        proc.wait()
    assert [p.name for p in tmp_path.iterdir()] == [f".partial-out-{proc.pid}"]
    nbrun.run_notebook("20", {"n_trials": 2, "n_resamples": 20, "output_dir": str(tmp_path / "out")})
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


