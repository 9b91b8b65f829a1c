"""Warnings inside a notebook session (metaeval.run.session): one line each, never fused with a progress bar."""


def test_notebook_warnings_sit_on_their_own_line_with_a_short_path(capsys):
    # the bug: in JupyterLab a warning printed mid-progress-bar fused with it and showed an absolute library path
    from tqdm import tqdm

    from metaeval.run.session import _short_warning

    with tqdm(total=3, desc="trials", file=__import__("sys").stderr) as bar:
        bar.update(1)
        _short_warning(UserWarning("degenerate"), UserWarning, "/x/y/lib/metaeval/stats/resampling.py", 12)
    err = capsys.readouterr().err
    line = next(ln for ln in err.replace("\r", "\n").splitlines() if "degenerate" in ln)
    assert line == "UserWarning: degenerate (metaeval/stats/resampling.py:12)"
