"""Worker processes for notebook runs (``run-all --jobs``, sweeps), stoppable with Ctrl-C.

Ctrl-C (SIGINT to this process, or to the whole terminal process group) stops every running notebook
(each removes its staging folder), starts no further task, keeps what finished, and raises
KeyboardInterrupt here. Workers ignore a second SIGINT so that it cannot interrupt the cleanup of the first.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from typing import Any

__all__ = ["run_in_pool", "stopped", "cpu_seconds", "quiet_after_interrupt"]

_STOP: Any = None  # a multiprocessing Event in worker processes, set when the pool is interrupted


def stopped() -> bool:
    """True in a worker once the pool was interrupted: queued tasks must not start."""
    return _STOP is not None and _STOP.is_set()


def quiet_after_interrupt() -> None:
    """After Ctrl-C or SIGTERM the kernel is shut down on purpose; nbclient's cell task then ends with
    DeadKernelError, which asyncio would print as a traceback ("Task exception was never retrieved") when the
    task is collected. That is expected, not an error to show: the command says "interrupted" instead."""
    import logging

    logging.getLogger("asyncio").setLevel(logging.CRITICAL)


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (a pool's workers, notebook kernels)."""
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


# Thread pools a notebook kernel may start: BLAS (numpy, scipy), OpenMP and numba's parallel kernels.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def threads_per_worker(workers: int) -> int:
    """The cores each of ``workers`` processes may use: ``os.cpu_count() // workers``, at least 1."""
    return max(1, (os.cpu_count() or 1) // max(1, workers))


def _worker_init(stop: Any, threads: int | None = None) -> None:
    global _STOP
    _STOP = stop
    if threads is not None:
        # Each kernel started from this worker inherits the environment. Without a limit every process
        # starts one BLAS/OpenMP thread per core, and threads that spin while waiting for a busy core made
        # the same notebook several times slower next to another one (OpenBLAS: 2.3 s instead of 0.18 s in
        # the power study's matrix products). A variable the user set is kept.
        for name in THREAD_VARIABLES:
            os.environ.setdefault(name, str(threads))

    def interrupt(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        quiet_after_interrupt()
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, interrupt)


def run_in_pool(
    fn: Callable[[Any], Any],
    tasks: Iterable[Any],
    workers: int,
    on_done: Callable[[Any, Any], None] | None = None,
    on_tick: Callable[[], None] | None = None,
    tick: float = 10.0,
    share_cores: bool = True,
) -> list[Any]:
    """``fn(task)`` for every task in ``workers`` processes; ``on_done(task, result)`` as each finishes (in
    this process), ``on_tick()`` every ``tick`` seconds while tasks run. Exceptions of ``fn`` propagate.
    With ``share_cores`` each worker (and the kernels it starts) gets :func:`threads_per_worker` threads
    (``THREAD_VARIABLES``, unless already set), so that the workers together do not oversubscribe the cores."""
    stop = multiprocessing.get_context().Event()
    threads = threads_per_worker(workers) if share_cores else None
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_init, initargs=(stop, threads))
    futures: dict[Future, Any] = {pool.submit(fn, t): t for t in tasks}
    results: list[Any] = []
    pending = set(futures)
    try:
        while pending:
            done, pending = wait(pending, timeout=tick, return_when=FIRST_COMPLETED)
            for future in done:
                result = future.result()
                results.append(result)
                if on_done:
                    on_done(futures[future], result)
            if not done and on_tick:
                on_tick()
    except BaseException:
        stop.set()  # tasks already handed to a worker do not start either
        for future in futures:
            future.cancel()
        # Ctrl-C in a terminal reaches every process of the group, `kill -INT` only this one: pass it on
        for proc in list(getattr(pool, "_processes", {}).values()):
            try:
                os.kill(proc.pid, signal.SIGINT)
            except OSError:
                pass
        # let the running notebooks stop their kernels and remove their staging folders
        wait([f for f in futures if not f.cancelled()], timeout=60)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return results
