"""Kernels forked from a warm process (metaeval.run._kernel_server) are ordinary kernels.

The test suite and run-all start their notebook kernels through a kernel server; these tests check what that
must not change: a notebook's outputs (every file byte for byte against a kernel started the usual way), what
Jupyter does with a kernel (interrupt, shutdown, kill: the forwarding client), and the fallback to a plain
kernel when the server cannot give an identical one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from metaeval.run import _kernel_server as ks
from metaeval.run.notebooks import forked_kernel_command, run_notebook

ROOT = Path(__file__).resolve().parents[1]


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
            and not p.name.startswith(".")}


@pytest.fixture(scope="module")
def server():
    """The test worker's kernel server (conftest.py), or one for this module when the suite runs without."""
    if ks.serving(dict(os.environ)):
        yield None
        return
    with ks.KernelServer() as own:
        yield own


@pytest.fixture()
def no_server(monkeypatch):
    monkeypatch.delenv(ks.ENV, raising=False)


def test_forked_kernel_writes_the_same_files_as_a_plain_kernel(tmp_path, server, monkeypatch):
    """Notebook 23 (tables, a figure, generated text): every output file identical, byte for byte."""
    params = {"dataset": "realsumm"}
    log = tmp_path / "kernels.log"
    monkeypatch.setenv("METAEVAL_KERNEL_SERVER_LOG", str(log))
    assert ks.serving(dict(os.environ))
    forked = run_notebook(ROOT / "notebooks" / "23_deutsch2021_normality.py",
                          {**params, "output_dir": str(tmp_path / "forked")})
    assert log.read_text().startswith("forked")
    monkeypatch.delenv(ks.ENV)
    plain = run_notebook(ROOT / "notebooks" / "23_deutsch2021_normality.py",
                         {**params, "output_dir": str(tmp_path / "plain")})
    assert len(log.read_text().splitlines()) == 1  # without a server the runner starts ipykernel itself
    a, b = _files(Path(plain.output_dir)), _files(Path(forked.output_dir))
    assert sorted(a) == sorted(b) and any(name.endswith(".png") for name in a)
    different = [name for name in a if a[name] != b[name]]
    assert not different, f"forked kernel changed {different}"


def _kernel(tmp_path):
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager

    ksm = KernelSpecManager(kernel_dirs=[str(ROOT / "tests" / "kernels")])
    km = KernelManager(kernel_name="metaeval-forked", kernel_spec_manager=ksm)
    km.start_kernel(cwd=str(tmp_path))
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def _run(kc, code: str, timeout: float = 30) -> tuple[str, str]:
    """(stdout text, status) of executing ``code``."""
    msg_id = kc.execute(code)
    out = []
    while True:
        msg = kc.get_iopub_msg(timeout=timeout)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:  # the replies of earlier (interrupted) requests come first
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return "".join(out), reply["content"]["status"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is gone for every purpose here
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _wait_gone(pid: int, seconds: float = 10) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not _alive(pid):
            return True
        time.sleep(0.1)
    return False


def _interrupt(km, kc) -> None:
    kc.execute("import time; time.sleep(60)")
    time.sleep(1.0)
    km.interrupt_kernel()
    error = None
    while True:
        msg = kc.get_iopub_msg(timeout=20)
        if msg["msg_type"] == "error":
            error = msg["content"]["ename"]
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    assert error == "KeyboardInterrupt"
    assert _run(kc, "print(6 * 7)")[0].strip() == "42"  # the kernel lives on after an interrupt


@pytest.mark.parametrize("how", ["shutdown", "kill"])
def test_forked_kernel_interrupts_and_ends_with_its_client(tmp_path, server, how):
    """Jupyter signals the process it started (the client): an interrupt reaches the kernel as
    KeyboardInterrupt; a shutdown ends both; killing the client (papermill's "immediate" shutdown) ends the
    kernel too, through the server."""
    km, kc = _kernel(tmp_path)
    try:
        text, status = _run(kc, "import os, sys; print(os.getpid(), os.getppid(), os.getcwd())")
        assert status == "ok"
        pid, ppid, cwd = text.split()
        pid = int(pid)
        client = km.provisioner.process.pid
        assert pid != client and int(ppid) != client  # forked from the server, not started by the client
        assert Path(cwd) == tmp_path  # the client's working directory
        if how == "shutdown":  # (once is enough)
            _interrupt(km, kc)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=how == "kill")  # now=True: SIGKILL to the client's process group
    assert _wait_gone(client) and _wait_gone(pid), "the kernel outlived its client"


def test_closing_the_server_ends_its_kernels(tmp_path, no_server):
    server = ks.KernelServer()
    km, kc = _kernel(tmp_path)
    try:
        pid = int(_run(kc, "import os; print(os.getpid())")[0])
        assert pid != km.provisioner.process.pid
        server.close()
        assert _wait_gone(pid)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_client_falls_back_to_a_plain_kernel(tmp_path, server, monkeypatch):
    """A kernel environment whose import-time settings differ from the server's (here the BLAS thread count)
    is not forked: the client runs ipykernel itself, so the kernel is its own process."""
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "7")
    km, kc = _kernel(tmp_path)
    try:
        text, _ = _run(kc, "import os; print(os.getpid(), os.environ['OPENBLAS_NUM_THREADS'])")
        assert text.split() == [str(km.provisioner.process.pid), "7"]
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_import_environment_ignores_only_per_kernel_variables():
    env = {"PATH": "/bin", "OMP_NUM_THREADS": "1"}
    digest = ks._import_environment(env)
    assert ks._import_environment({**env, "METAEVAL_CACHE": "/x", "JPY_PARENT_PID": "12"}) == digest
    assert ks._import_environment({**env, "OMP_NUM_THREADS": "2"}) != digest
    assert ks._import_environment({**env, "NUMBA_CACHE_DIR": "/y"}) != digest
    # the matplotlib backend a kernel gets by default is what the server imported matplotlib with
    assert ks._import_environment({**env, "MPLBACKEND": ks._MPL_INLINE}) == digest
    assert ks._import_environment({**env, "MPLBACKEND": "agg"}) != digest


def test_kernel_command_rewritten_only_for_this_interpreter(monkeypatch):
    cmd = [sys.executable, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "k.json"]
    monkeypatch.delenv(ks.ENV, raising=False)
    assert forked_kernel_command(cmd) == cmd
    monkeypatch.setenv(ks.ENV, "/tmp/x.sock|0")
    assert forked_kernel_command(cmd) == [sys.executable, "-m", "metaeval.run._kernel_server", "-f", "k.json"]
    other = ["/usr/bin/python3.11", "-m", "ipykernel_launcher", "-f", "k.json"]
    assert forked_kernel_command(other) == other  # another interpreter: its own kernel
    assert forked_kernel_command(["R", "--slave"]) == ["R", "--slave"]


def test_sigterm_to_the_client_is_passed_on(tmp_path, server):
    km, kc = _kernel(tmp_path)
    try:
        pid = int(_run(kc, "import os; print(os.getpid())")[0])
        client = km.provisioner.process.pid
        os.kill(client, signal.SIGTERM)
        assert _wait_gone(pid) and _wait_gone(client)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_an_edited_library_module_gets_a_plain_kernel(tmp_path):
    """The client forks only while every preloaded library file is as the server imported it."""
    module = tmp_path / "mod.py"
    module.write_text("x = 1\n")
    address = tmp_path / "server.sock"
    st = module.stat()
    (tmp_path / "library.json").write_text(f'{{"{module}": [{st.st_size}, {st.st_mtime_ns}]}}')
    assert ks._library_unchanged(str(address))
    module.write_text("x = 22\n")
    assert not ks._library_unchanged(str(address))
    module.unlink()
    assert not ks._library_unchanged(str(address))


def test_a_server_closed_before_it_is_ready_exits_without_a_traceback():
    """A 3-test run printed ``BrokenPipeError`` at the server's ready signal: its owner (the pytest worker) had
    closed the pipe before the server finished importing."""
    # what close() does, without its 10 s limit (after which it kills a server that is still importing)
    code = ("from metaeval.run._kernel_server import KernelServer\ns = KernelServer(wait=False)\n"
            "s._ready.close(); s.process.stdin.close(); s.process.wait(200)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
