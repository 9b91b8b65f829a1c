"""The command line (ROUGE drop-in) and the notebook runner."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES
from metaeval.run.cli import main
from metaeval.notebooks import NotebookError, find_notebook, notebook_parameters, run_notebook


def test_rouge_cli_matches_golden_demo(tmp_path):
    out = tmp_path / "out.jsonl"
    assert main(["rouge", str(FIXTURES / "rouge155" / "demo_input.jsonl"), str(out), "--refs", "AB"]) == 0
    ours = [json.loads(line) for line in out.read_text().splitlines()]
    gold = [json.loads(line) for line in (FIXTURES / "rouge155" / "demo_golden.jsonl").read_text().splitlines()]
    assert [o["id"] for o in ours] == [g["id"] for g in gold]
    for o, g in zip(ours, gold):
        assert set(o["scores"]) == set(g["scores"])
        for key, value in g["scores"].items():
            assert (o["scores"][key] is None) == (value is None)
            if value is not None:
                assert abs(o["scores"][key] - value) <= 1e-5 + 1e-12, (g["id"], key)


def test_rouge_cli_options_and_errors(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a", "peer": "the cat sat", "refs": ["the cat sat down"]}) + "\n")
    out = tmp_path / "out.jsonl"
    main(["rouge", str(src), str(out), "--methods", "R-9,R-SU*", "--stem", "no", "--stop", "no"])
    keys = set(json.loads(out.read_text())["scores"])
    assert keys == {f"{m}|stem=0|stop=0|{s}" for m in ("R-9", "R-SU*") for s in "PRF"}
    src.write_text('{"id": "a", "peer": "x", "refs": "not a list"}\n')
    with pytest.raises(SystemExit, match=r"in\.jsonl:1: 'refs' must be a list"):
        main(["rouge", str(src), str(out)])
    src.write_text('{"id": "a", "peer": 3, "refs": ["x"]}\n')
    with pytest.raises(SystemExit, match="'peer' must be a string"):
        main(["rouge", str(src), str(out)])
    src.write_text('{"id": "a", "peer": "x", "refs": ["x"]}\n')
    with pytest.raises(SystemExit, match="unknown ROUGE measure"):
        main(["rouge", str(src), str(out), "--methods", "R-X"])


def test_console_script_installed():
    result = subprocess.run([sys.executable, "-m", "metaeval", "params", "00"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "dataset = 'summeval'" in result.stdout and "output_dir = None" in result.stdout


@pytest.mark.parametrize("unbuffered", ["1", ""])
@pytest.mark.parametrize("command", [["datasets"], ["describe", "realsumm"]])
def test_a_reader_that_leaves_early_gets_no_broken_pipe_message(command, unbuffered):
    # `metaeval describe realsumm | head -1`: the reader closes the pipe before the text is written (here: before
    # the process starts writing at all, so that the test does not depend on timing). Without _dispatch's check
    # this printed "[Errno 32] Broken pipe" and exited 2, as if the user had erred; with a buffered stdout (no
    # PYTHONUNBUFFERED, as users run it) the text is written at exit and Python printed "Exception ignored ...
    # BrokenPipeError", exit 120, unless _dispatch flushes first.
    import os

    from processes import reaped

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"} | (
        {"PYTHONUNBUFFERED": unbuffered} if unbuffered else {})
    with reaped(subprocess.Popen([sys.executable, "-m", "metaeval", *command], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env)) as proc:
        proc.stdout.close()
        err = proc.stderr.read().decode()
        assert proc.wait(timeout=120) == 1
    assert err == ""


def test_runner_rejects_unknown_notebook_and_parameter():
    with pytest.raises(NotebookError, match="unknown notebook 'zz'.*00_dataset_check"):
        find_notebook("zz")
    with pytest.raises(NotebookError, match=r"does not declare parameter\(s\) \['coefficent'\]"):
        run_notebook("00", {"coefficent": "kendall"})
    assert notebook_parameters("00")["dataset"] == "summeval"


def test_failed_notebook_names_cell_and_leaves_nothing(tmp_path):
    out = tmp_path / "res"
    # a dataset that does not load fails before a kernel starts (run/preflight.py), naming it
    with pytest.raises(NotebookError, match=r"00_dataset_check\.py: unknown dataset 'no-such-dataset'"):
        run_notebook("00", {"dataset": "no-such-dataset", "output_dir": str(out)})
    assert not out.exists() or not any(out.iterdir())
    assert not any(p.name.startswith(".partial") for p in tmp_path.iterdir())


def test_rerun_with_same_seed_reproduces_every_file_byte_for_byte(tmp_path):
    params = {"n_trials": 5, "n_resamples": 50, "seed": 3}
    hashes = []
    for run in ("a", "b"):
        out = tmp_path / run
        run_notebook("20", {**params, "output_dir": str(out)})
        import hashlib

        hashes.append({p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(out.iterdir())})
    # the executed notebook records its output_dir, which differs between the two runs by design
    for h in hashes:
        h.pop("20_deutsch2021_ci_simulation.ipynb")
        h.pop(".metaeval-run.20_deutsch2021_ci_simulation.json")  # it lists the executed notebook's sha256
    assert hashes[0] == hashes[1]
    assert {"table1_ci_coverage.csv", "table1_ci_coverage.png", "table1_ci_coverage.svg"} <= set(hashes[0])


def test_run_all_in_parallel_names_each_run_and_logs(tmp_path, monkeypatch):
    from metaeval.run.notebooks import plan_all, run_all

    monkeypatch.setenv("METAEVAL_ROOT", str(tmp_path))
    planned = [(r.label, r.optional) for r in plan_all(["23"])]
    assert planned[0][1] is False  # the default or first listed dataset must work
    assert {label.split(" ")[1] for label, _ in planned} >= {"(summeval)", "(realsumm)"}
    lines: list[str] = []
    log = tmp_path / "run.log"
    results = run_all(only=["23"], jobs=2, log=log, echo=lines.append, tick=1.0)
    states = {r["label"]: r["state"] for r in results}
    assert states[planned[0][0]] == "done"
    assert set(states.values()) <= {"done", "not applicable"}
    total = len(planned)
    assert lines[0] == f"running {total} notebook runs, 2 at a time"
    assert any(line.startswith(f"[1/{total}] 23_deutsch2021_normality") and "done in" in line for line in lines)
    assert lines[-1].startswith(f"finished {list(states.values()).count('done')} of {total} runs in")
    text = log.read_text()
    # the kernels' start-up notice about unencrypted TCP is not a failure: left out, and said so once
    assert "running over TCP without encryption" not in text.split("\n", 2)[2]
    assert text.count("kernels listen on 127.0.0.1 only") == 1
    done = [r for r in results if r["state"] == "done"]
    for r in done:
        assert list((tmp_path / r["output_dir"]).glob(".metaeval-run.23_*.json"))
    # runs that do not apply leave no folder behind
    leftovers = [p for p in (tmp_path / "results").rglob("*") if p.is_dir() and not any(p.iterdir())]
    assert leftovers == []


def _thread_settings(_task):
    import os

    from metaeval.run.pool import THREAD_VARIABLES

    return {name: os.environ.get(name) for name in THREAD_VARIABLES}


def test_pool_workers_share_the_cores(monkeypatch):
    """Two workers on two cores get one BLAS/OpenMP/numba thread each (spinning BLAS threads made the power
    notebook 5x slower next to another run); a value the user set is kept."""
    from metaeval.run import pool

    monkeypatch.setattr(pool.os, "cpu_count", lambda: 2)
    for name in pool.THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MKL_NUM_THREADS", "7")
    seen = pool.run_in_pool(_thread_settings, [0, 1], 2)
    assert seen == [{"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "7",
                     "NUMBA_NUM_THREADS": "1"}] * 2
    assert pool.threads_per_worker(1) == 2 and pool.threads_per_worker(4) == 1
    assert pool.run_in_pool(_thread_settings, [0], 1, share_cores=False)[0]["OMP_NUM_THREADS"] is None


def test_folders_are_removed_only_when_this_program_wrote_them(tmp_path):
    """The one deletion helper of the runner and the card: a folder without its marks (a user's), a file
    or a link to a folder is never removed, whatever path a bug might hand it."""
    from metaeval._io import remove_own_tree
    from metaeval.run.outputs import RUNNER_MARKS, STAGING_MARK

    users = tmp_path / "users"
    users.mkdir()
    (users / "thesis.tex").write_text("x")
    staged = tmp_path / ".partial-x-1"
    staged.mkdir()
    (staged / STAGING_MARK).touch()
    (staged / "table.csv").write_text("a")
    run = tmp_path / "run"
    run.mkdir()
    (run / ".metaeval-run.20_x.json").write_text("{}")
    empty = tmp_path / "empty"
    empty.mkdir()
    link = tmp_path / "link"
    link.symlink_to(staged)
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    assert not remove_own_tree(users, RUNNER_MARKS) and (users / "thesis.tex").exists()
    assert not remove_own_tree(link, RUNNER_MARKS) and staged.exists()
    assert not remove_own_tree(afile, RUNNER_MARKS) and afile.exists()
    assert remove_own_tree(staged, RUNNER_MARKS) and not staged.exists()
    assert remove_own_tree(run, RUNNER_MARKS) and not run.exists()
    assert remove_own_tree(empty, RUNNER_MARKS) and not empty.exists()


# ----------------------------------------------------------------------------------------------------
# Clean, deterministic executed notebooks (issue 26 item 2, runner side)


def test_executed_notebooks_keep_no_progress_bar_whatever_its_unit():
    """Notebook 50's committed notebook held 475 bars in "sense/s" (the old pattern knew only it/s)."""
    import nbformat

    from metaeval.run.notebooks import _stable_outputs

    bars = ["\rPPR vectors:   0%|          | 0/17130 [00:00<?, ?sense/s]",
            "\rPPR vectors:   1%|          | 192/17130 [00:04<05:03, 55.85sense/s] ",
            "trials:  12%|##   | 120/1000 [00:01<00:10, 88.0trial/s]\rtrials: 100%|#####| 1000/1000 [00:11<00:00]\n",
            "\r 50%|#####     | 1.2k/2.4k [00:01<00:01, 1.1kit/s]"]
    warning = "metaeval/studies/deutsch.py:245: DegenerateResultWarning: 1 of 1000 resamples were dropped\n"
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text=t) for t in [*bars, warning]]
    cell.outputs.append(nbformat.v4.new_output("stream", name="stdout", text="50%|kept on stdout| 1/2\n"))
    assert [o.text for o in _stable_outputs(cell.outputs)] == [warning, "50%|kept on stdout| 1/2\n"]


def test_executed_notebooks_show_no_machine_path():
    """Committed notebooks 00 and 20 showed /tmp/cold/p/lib/metaeval/... and /tmp/ipykernel_1263/... paths."""
    import site

    import metaeval
    from metaeval.run.notebooks import project_root, scrub_machine_paths

    lib = Path(metaeval.__file__).resolve().parent
    packages = Path(site.getsitepackages()[0]).resolve()
    text = (f"{lib}/studies/deutsch.py:245: DegenerateResultWarning\n/tmp/ipykernel_1263/2683809839.py:9: "
            f"UserWarning\n{packages}/pandas/core/frame.py:1: FutureWarning\nsee {project_root()}/results/x.csv")
    clean = scrub_machine_paths(text)
    assert clean == ("metaeval/studies/deutsch.py:245: DegenerateResultWarning\n<cell>:9: UserWarning\n"
                     "<site-packages>/pandas/core/frame.py:1: FutureWarning\nsee results/x.csv")


def test_one_injected_parameters_form_however_the_run_was_started(tmp_path):
    """`metaeval run 20 -p dataset summeval` (a default given explicitly) and run-all's canonical run (no
    parameter) are the same run: the same injected cell."""
    from metaeval.run.notebooks import _injected, notebook_parameters, plan_all

    declared = notebook_parameters("20")
    staging = tmp_path / ".partial-x"
    by_run_all = [r for r in plan_all(["20"]) if r.dataset == declared["dataset"]][0].parameters
    assert _injected(declared, by_run_all, staging) == _injected(declared, {"dataset": "summeval"}, staging) == {
        "output_dir": str(staging)}
    changed = _injected(declared, {"n_trials": 5, "dataset": "realsumm", "seed": declared["seed"]}, staging)
    assert list(changed) == ["dataset", "n_trials", "output_dir"]  # sorted, defaults left out


def test_no_machine_path_in_committed_results():
    """Issue 26: committed notebooks 00 and 20 leaked /tmp/ipykernel_... and /tmp/cold/p/lib/metaeval/... paths.
    (Checks the committed default run; `make results` regenerates it.)"""
    import re

    from metaeval.run.notebooks import project_root

    root = project_root()
    absolute = re.compile(r"(?<![\w.~<>-])/(?:tmp|home|root|work|Users|var|private|usr|opt|mnt)/[\w.-]+")
    found = []
    for path in sorted((root / "results").rglob("*")):
        if path.suffix not in (".ipynb", ".csv", ".md", ".json", ".txt", ".svg") or "runs" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        hit = absolute.search(text) or (str(root) in text and re.search(re.escape(str(root)), text))
        if hit:
            found.append(f"{path.relative_to(root)}: {text[max(0, hit.start() - 40):hit.end() + 40]!r}")
    assert not found, "machine paths in results/ (rerun `make results`):\n" + "\n".join(found[:10])


def test_reaped_stops_a_subprocess_and_its_children_when_the_test_fails():
    """The Ctrl-C sweep test leaked its 300,000-trial child when it timed out: `reaped` kills the whole tree."""
    import psutil
    from processes import reaped

    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'], start_new_session=True)\n"
            "print(child.pid, flush=True)\ntime.sleep(120)\n")
    with pytest.raises(subprocess.TimeoutExpired):
        with reaped(subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)) as proc:
            grandchild = psutil.Process(int(proc.stdout.readline()))
            proc.communicate(timeout=0.5)  # a test timing out
    assert proc.poll() is not None
    psutil.wait_procs([grandchild], timeout=10)
    assert not grandchild.is_running()


def test_a_kernel_that_does_not_start_is_retried_then_fails_this_run_only(tmp_path, monkeypatch):
    """A run-all once stopped every run because one kernel of two started together never answered."""
    import papermill

    real = papermill.execute_notebook
    calls = []

    def flaky(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Kernel didn't respond in 60 seconds")
        return real(*args, **kwargs)

    monkeypatch.setattr(papermill, "execute_notebook", flaky)
    res = run_notebook("23", {"output_dir": str(tmp_path / "ok")})
    assert len(calls) == 2 and (res.output_dir / "23_deutsch2021_normality.ipynb").exists()

    def dead(*args, **kwargs):
        raise RuntimeError("Kernel didn't respond in 60 seconds")

    monkeypatch.setattr(papermill, "execute_notebook", dead)
    with pytest.raises(NotebookError, match=r"the Jupyter kernel did not start \(2 tries"):
        run_notebook("23", {"output_dir": str(tmp_path / "dead")})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok"]  # no staging folder left

    def other(*args, **kwargs):
        raise RuntimeError("something else")

    monkeypatch.setattr(papermill, "execute_notebook", other)
    with pytest.raises(RuntimeError, match="something else"):  # not a start failure: not retried, not hidden
        run_notebook("23", {"output_dir": str(tmp_path / "other")})
