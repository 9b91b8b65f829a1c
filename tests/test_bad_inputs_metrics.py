"""Bad inputs and crashes of the metrics layer, end to end through `metaeval rouge` (issue 15)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from metaeval.run import notebooks as nbrun
from metaeval.run.cli import main as cli

ROOT = nbrun.project_root()

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


