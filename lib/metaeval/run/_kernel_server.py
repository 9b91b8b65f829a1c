"""Notebook kernels forked from a warm process: a kernel starts in ~1 s instead of ~5 s.

Every notebook kernel imports the same heavy libraries (scipy.stats alone takes 1.3 s on a 2-core machine,
numpy + pandas + matplotlib + seaborn + numba another 2 s, and numba sets up its compiler). ``make results``
starts 25 kernels and ``make test`` more than a hundred, so those imports were a third of the test suite's CPU.
A process that runs many notebooks (``run-all``, a sweep, a pytest worker) can start a *kernel server*
(:class:`KernelServer`): one process that imports those libraries once and forks a kernel for each request.

How a kernel is started through it: the kernel command of the notebook runner (``quiet_kernel_manager``) and
of the test suite's kernelspec is ``python -m metaeval.run._kernel_server -f {connection_file}``. That small
client process finds the server in ``$METAEVAL_KERNEL_SERVER`` and sends it its argv, environment, working
directory, ``sys.path`` and standard streams (the file descriptors themselves); the server forks, and the
child becomes an ordinary ipykernel (``ipykernel_launcher``) with exactly those. The client stays alive as the
kernel's stand-in for Jupyter: signals sent to it (interrupt, terminate) are passed on to the kernel, it
exits with the kernel's exit status, and if it is killed the server kills the kernel. Without a server, or
when the server cannot give an identical kernel (another interpreter, or an environment variable that the
preloaded libraries read at import differs), the client runs ``ipykernel_launcher`` itself: the kernel a
user's JupyterLab starts. The preloaded modules of this package are checked by the client against their
source files, so a library edit is seen by the next kernel as before. ``tests/test_kernel_server.py`` runs a
notebook both ways and compares every output byte for byte; ``make results`` reproduces every committed file
with forked kernels. ``$METAEVAL_KERNEL_SERVER_LOG`` (a file) gets one line per kernel: forked, or why not.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["KernelServer", "ENV", "serving"]

ENV = "METAEVAL_KERNEL_SERVER"  # "<socket path>|<digest of what the server's imports depended on>"

# What a notebook kernel imports anyway, in dependency order (~3 s on this machine).
PRELOAD = (
    "numpy",
    "scipy.stats",
    "scipy.optimize",
    "pandas",
    "pyarrow",
    "pyarrow.parquet",
    "matplotlib",
    "matplotlib.pyplot",
    "seaborn",
    "numba",
    "yaml",
    "tqdm",
    # ipykernel's parts, but not ipykernel.kernelapp: it reads the kernel's JPY_PARENT_PID into a default
    # when it is imported, so each kernel imports it (8 ms) with its own environment
    "IPython",
    "zmq",
    "tornado",
    "jupyter_client.session",
    "comm",
    "ipykernel.ipkernel",
    "ipykernel.zmqshell",
    "ipykernel.iostream",
)
# This package's modules that most notebooks import (another ~1 s per kernel, most of it numba building the
# compiled ufuncs of stats._kernels). A kernel is forked only while every preloaded module's source file is as
# it was when the server imported it (size and modification time, checked by the client): an edited library
# gets a plain kernel, which imports the new code.
PRELOAD_LIBRARY = (
    "metaeval",
    "metaeval.run.session",
    "metaeval.studies.plotting",
    "metaeval.studies.deutsch",
    "metaeval.data.scoring",
    "metaeval.data.defaults",
)
# The backend ipykernel sets for matplotlib (kernelapp.init_gui_pylab), before matplotlib is imported: the
# server imports it with the value a kernel would have given it.
_MPL_INLINE = "module://matplotlib_inline.backend_inline"
# Environment variables that differ between kernels and that no preloaded library reads at import (the kernel
# itself gets the client's whole environment). KMP_*: Intel OpenMP's, which scikit-learn sets in the environment
# of any process that imports it; no preloaded library loads Intel OpenMP.
_PER_KERNEL = ("METAEVAL_", "JPY_", "PYDEVD_", "PYTEST_", "PAPERMILL", "COLUMNS", "LINES", "_", "KMP_DUPLICATE_LIB_OK",
               "KMP_INIT_AT_FORK")


def _import_environment(env: dict[str, str]) -> str:
    """Digest of the environment as the preloaded libraries saw it at import (thread counts, numba's and
    matplotlib's settings, paths...): a kernel whose environment differs elsewhere than in the per-kernel
    variables is not started from the server."""
    items = sorted((k, v) for k, v in env.items() if not k.startswith(_PER_KERNEL) and k != "MPLBACKEND")
    items.append(("MPLBACKEND", env.get("MPLBACKEND") or _MPL_INLINE))
    text = json.dumps([sys.executable, sys.version, items])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _send(sock: socket.socket, obj: Any, fds: Sequence[int] = ()) -> None:
    data = json.dumps(obj).encode("utf-8")
    head = struct.pack("!I", len(data))
    if fds:
        socket.send_fds(sock, [head + data], list(fds))
    else:
        sock.sendall(head + data)


def _recv(sock: socket.socket, with_fds: int = 0) -> tuple[Any, list[int]]:
    fds: list[int] = []
    if with_fds:
        data, fds, _, _ = socket.recv_fds(sock, 1 << 20, with_fds)
    else:
        data = sock.recv(4)
    if len(data) < 4:
        raise ConnectionError("closed")
    (size,) = struct.unpack("!I", data[:4])
    body = data[4:]
    while len(body) < size:
        chunk = sock.recv(size - len(body))
        if not chunk:
            raise ConnectionError("closed")
        body += chunk
    return json.loads(body[:size].decode("utf-8")), fds


def _file_state(path: str) -> list[int] | None:
    """``[size, mtime_ns]`` of a file, or None when it is gone."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def _library_state() -> dict[str, list[int]]:
    """{source file: [size, mtime_ns]} of every module of this package this process has imported."""
    files = [getattr(module, "__file__", None) for name, module in list(sys.modules.items())
             if name == "metaeval" or name.startswith("metaeval.")]
    state = {path: _file_state(path) for path in files if path}
    return {path: st for path, st in state.items() if st is not None}


def _library_unchanged(address: str) -> bool:
    try:
        state = json.loads(Path(address).with_name("library.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return all(_file_state(path) == st for path, st in state.items())


def serving(env: dict[str, str]) -> bool:
    """Whether a running server (named in ``env``) would fork the kernels of a process with environment ``env``.

    >>> serving({"PATH": "/bin"})
    False
    """
    address, _, digest = env.get(ENV, "").partition("|")
    return (bool(address) and os.path.exists(address) and digest == _import_environment(env)
            and _library_unchanged(address))


# ----------------------------------------------------------------------------------------------------
# the server


class KernelServer:
    """A warm process that forks notebook kernels, for as long as this object lives (a context manager).

    While it runs, ``$METAEVAL_KERNEL_SERVER`` names it in this process's environment, so every kernel
    started from here or from a subprocess started after it (with the same environment) is forked from it.
    ``close()`` stops the server (its running kernels are killed) and restores the variable. If the server
    cannot start, kernels simply start the usual way. Use it as a context manager around the runs::

        with KernelServer():
            for notebook in notebooks:
                run_notebook(notebook)   # each kernel forked from the server

    (``run_in_pool`` does this for run-all and sweeps; ``tests/conftest.py`` for each test worker.)
    """

    def __init__(self, env: dict[str, str] | None = None, *, wait: bool = True) -> None:
        """``wait=False`` returns at once: kernels started while the server still imports are started the usual
        way (the client finds no socket yet), later ones are forked."""
        self.env = dict(os.environ if env is None else env)
        self._dir = tempfile.mkdtemp(prefix="metaeval-kernels-")
        self.address = os.path.join(self._dir, "server.sock")
        self._previous = os.environ.get(ENV)
        ready_r, ready_w = os.pipe()
        cmd = [sys.executable, "-m", "metaeval.run._kernel_server", "--serve", self.address, str(ready_w)]
        # stdin is the server's lifeline: when this process ends (even killed), the pipe closes and it exits
        self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, env=self.env, pass_fds=(ready_w,),
                                        start_new_session=True)
        os.close(ready_w)
        self._ready = os.fdopen(ready_r, "rb")
        if not wait or self._ready.read() == b"ok":
            os.environ[ENV] = f"{self.address}|{_import_environment(self.env)}"
            # what the server was started with, for the diagnostics of a kernel it does not fork (_why_not)
            Path(self.address).with_name("environment.json").write_text(
                json.dumps({"executable": sys.executable, "env": self.env}), encoding="utf-8")

    def close(self) -> None:
        self._ready.close()
        if self._previous is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = self._previous
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for name in os.listdir(self._dir):
            os.unlink(os.path.join(self._dir, name))
        os.rmdir(self._dir)

    def __enter__(self) -> KernelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _serve(address: str, ready_fd: int) -> None:
    """The server's loop: accept a request, fork a kernel, report its pid and later its exit status; kill it
    if its client goes away; exit (killing the kernels left) when stdin closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the terminal is for the runs, not for the server
    os.environ.setdefault("MPLBACKEND", _MPL_INLINE)
    import builtins
    import importlib

    # A library that asks at import whether it runs in a Jupyter kernel must get the kernel's answer: pandas
    # (config_init.is_terminal: display.max_columns 20 in a kernel, 0 = the terminal's width elsewhere) calls
    # IPython's get_ipython(), which a kernel puts into builtins. tests/test_kernel_server.py compares a forked
    # kernel's outputs with a plain kernel's byte for byte.
    class _InAKernel:
        kernel = None

    builtins.get_ipython = _InAKernel  # type: ignore[attr-defined]
    try:
        for name in PRELOAD:
            with contextlib.suppress(ImportError):
                importlib.import_module(name)
    finally:
        del builtins.get_ipython  # type: ignore[attr-defined]
    for name in PRELOAD_LIBRARY:
        with contextlib.suppress(Exception):  # a broken library is reported by the kernel that imports it
            importlib.import_module(name)
    with contextlib.suppress(Exception):  # numba's compiler: set up once here instead of in every kernel
        import numba

        numba.njit(lambda x: x + 1)(1)
    Path(address).with_name("library.json").write_text(json.dumps(_library_state()), encoding="utf-8")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(address)
    listener.listen(64)
    try:
        os.write(ready_fd, b"ok")
    except BrokenPipeError:  # the owner closed before the server was ready (KernelServer(wait=False)): done
        return
    finally:
        os.close(ready_fd)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "owner")
    kernels: dict[int, socket.socket] = {}  # pid -> its client's connection
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *a: None)
    sel.register(wake_r, selectors.EVENT_READ, "child")
    try:
        while True:
            for key, _ in sel.select(timeout=5.0):
                if key.data == "owner":
                    if not os.read(sys.stdin.fileno(), 4096):
                        return
                elif key.data == "accept":
                    conn, _ = listener.accept()
                    try:
                        request, fds = _recv(conn, with_fds=3)
                    except (ConnectionError, OSError, ValueError):
                        conn.close()
                        continue
                    pid = os.fork()
                    if pid == 0:  # the kernel
                        sel.close()
                        listener.close()
                        for c in kernels.values():
                            c.close()
                        os.close(wake_r)
                        os.close(wake_w)
                        conn.close()
                        _become_kernel(request, fds)
                    for fd in fds:
                        os.close(fd)
                    kernels[pid] = conn
                    _send(conn, {"pid": pid})
                    sel.register(conn, selectors.EVENT_READ, pid)
                elif key.data == "child":
                    os.read(wake_r, 4096)
                elif isinstance(key.data, int):  # the client went away (killed): its kernel goes too
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(key.data, signal.SIGKILL)
            for pid in list(kernels):
                try:
                    done, status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done, status = pid, 0
                if done:
                    conn = kernels.pop(pid)
                    sel.unregister(conn)
                    with contextlib.suppress(OSError):
                        _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
                    conn.close()
    finally:
        for pid in kernels:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _become_kernel(request: dict[str, Any], fds: list[int]) -> None:
    """In the forked child: take the client's streams, environment, directory and path, then run ipykernel."""
    code = 1
    try:
        os.setsid()  # a kernel has its own session, as jupyter_client starts it
        for target, fd in zip((0, 1, 2), fds):
            os.dup2(fd, target)
            os.close(fd)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGCHLD, signal.SIGPIPE):
            signal.signal(sig, signal.SIG_DFL if sig != signal.SIGINT else signal.default_int_handler)
        signal.set_wakeup_fd(-1)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[:] = request["path"]
        _run_ipykernel(request["argv"])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


# ----------------------------------------------------------------------------------------------------
# the client: the kernel command


def _why_not(env: dict[str, str]) -> str:
    """Why the server named in ``env`` does not fork this kernel: the variables that differ from the server's."""
    address = env.get(ENV, "").partition("|")[0]
    if not address:
        return "no server"
    try:
        theirs = json.loads(Path(address).with_name("environment.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "server gone"
    if theirs.get("executable") != sys.executable:
        return f"another interpreter ({theirs.get('executable')})"
    if not _library_unchanged(address):
        return "a library module changed since the server imported it"
    mine = {k: v for k, v in env.items() if not k.startswith(_PER_KERNEL)}
    other = {k: v for k, v in theirs["env"].items() if not k.startswith(_PER_KERNEL)}
    return "environment differs: " + ", ".join(sorted(k for k in set(mine) | set(other) if mine.get(k) != other.get(k)))


def _client(argv: list[str]) -> int:
    """Start the kernel through the server named in the environment, or run ipykernel here."""
    env = dict(os.environ)
    log = env.get("METAEVAL_KERNEL_SERVER_LOG")  # diagnostics: one line per kernel, forked or why not
    if serving(env):
        address = env[ENV].partition("|")[0]
        try:
            return _forked(address, argv, log)
        except (OSError, ConnectionError, ValueError) as exc:
            reason = f"server did not answer: {exc}"  # no server there any more: the usual way
    else:
        reason = _why_not(env) if log else ""
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"plain {os.getpid()}: {reason}\n")
    _run_ipykernel(argv)
    return 0


def _run_ipykernel(argv: list[str]) -> None:
    """``python -m ipykernel_launcher ARGV`` in this process."""
    import runpy

    sys.argv = ["ipykernel_launcher", *argv]
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)


def _forked(address: str, argv: list[str], log: str | None = None) -> int:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(address)
    path = [os.getcwd(), *sys.path[1:]]  # `python -m ipykernel_launcher` puts the working directory first
    _send(sock, {"argv": argv, "env": dict(os.environ), "cwd": os.getcwd(), "path": path}, [0, 1, 2])
    reply, _ = _recv(sock)
    pid = int(reply["pid"])
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"forked {pid} for client {os.getpid()}\n")

    def forward(signum, frame):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, forward)
    try:
        status, _ = _recv(sock)
    except ConnectionError:
        return 1
    code = int(status.get("exit", 1))
    return code if code >= 0 else 128 - code


def main(args: list[str]) -> int:
    if args[:1] == ["--serve"]:
        _serve(args[1], int(args[2]))
        return 0
    return _client(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
