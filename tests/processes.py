"""Subprocesses in tests: every one is stopped, with all its children, when the test ends.

A test that starts ``metaeval run`` or ``metaeval sweep`` in a subprocess starts kernels and pool workers
under it (Jupyter kernels in sessions of their own, so a process-group kill misses them). If the test fails
or times out (``communicate(timeout=...)`` raises) before the command ends, those would outlive pytest:
the Ctrl-C sweep test once left a 300,000-trial child computing for hours. :func:`reaped` kills the whole
tree in ``finally``.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections.abc import Iterator

import psutil


def kill_tree(pid: int, timeout: float = 10.0) -> list[int]:
    """Terminate ``pid`` and every descendant (SIGTERM, then SIGKILL after ``timeout``); returns the pids that
    were still running."""
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return []
    # the descendants first, while the parent still links them (an orphan is reparented and lost)
    procs = root.children(recursive=True) + [root]
    for proc in procs:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(procs, timeout=timeout)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=timeout)
    return [p.pid for p in procs]


def interruptible() -> None:
    """``preexec_fn`` of a subprocess the test interrupts with SIGINT: restore SIGINT's default action.

    A command started in the background by a non-interactive shell (``bash .ci/run &``, ``nohup``) inherits
    SIGINT *ignored*, and Python then installs no KeyboardInterrupt handler, which is right for a program
    the user detached from Ctrl-C, but would make the Ctrl-C tests wait for a 300,000-trial run."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@contextlib.contextmanager
def reaped(proc: subprocess.Popen) -> Iterator[subprocess.Popen]:
    """``with reaped(subprocess.Popen(...)) as proc:``: whatever happens in the block, the process and all
    its children are gone after it (those of a process that already exited were its own business, and the
    tests check it cleaned them up)."""
    try:
        yield proc
    finally:
        if proc.poll() is None:
            kill_tree(proc.pid)
        with contextlib.suppress(Exception):
            proc.communicate(timeout=10)
