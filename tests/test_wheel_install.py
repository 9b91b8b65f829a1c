"""The package as a user gets it: a wheel installed (not editable) into a fresh venv, then the CLI.

Catches: data, word lists or notebooks reached through paths of the source checkout (they are absent from a
wheel), a cache written inside the installation, a console script that is not installed, ``run-all`` that
runs nothing. It builds a wheel and installs it with the project's constraints, so it takes a minute or two;
it runs in `make test` (CI) because that is the only place that catches packaging regressions.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheel")
    # Build from a clean copy of the source files (tracked, or new and not ignored): a developer's stale
    # build/ folder or egg-info would otherwise leak old files into the wheel.
    src = tmp / "src"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for rel in filter(None, listed):
        origin = ROOT / rel
        if origin.is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, src / rel)
    wheels = tmp / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(src), "-w", str(wheels)],
        check=True, capture_output=True, text=True,
    )
    (wheel,) = wheels.glob("metaeval-*.whl")
    env_dir = tmp / "venv"
    uv = Path(sys.executable).parent / "uv"  # `make setup` installs with uv (requirements/constraints.txt)
    venv.create(env_dir, with_pip=not uv.is_file())
    py = env_dir / "bin" / "python"
    # The wheel and its dependencies as the project's constraints pin them, resolved from the wheel's own
    # metadata. uv (what `make setup` uses) installs from its cache in seconds; pip took 70 s of this file's
    # 86 s. Without uv, pip; --no-compile: byte-compiling every installed module was a fifth of pip's time.
    installer = ([str(uv), "pip", "install", "--python", str(py)] if uv.is_file()
                 else [str(py), "-m", "pip", "install", "--no-compile"])
    proc = subprocess.run(
        [*installer, "--quiet", "-c", str(ROOT / "requirements" / "constraints.txt"), str(wheel)],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    work = tmp / "work"  # outside the checkout: nothing may be found through the source tree
    work.mkdir()
    # PYTHONDONTWRITEBYTECODE off: the first process writes the bytecode of what it imports (the installer wrote
    # none) and the next ones read it, instead of each compiling scipy, pandas & co. again
    env = {k: v for k, v in os.environ.items() if not k.startswith("METAEVAL_")
           and k not in ("PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    env["METAEVAL_CACHE"] = str(tmp / "cache")
    return py, work, env, tmp


def _run(installed, *args, check=True):
    py, work, env, _ = installed
    script = py.parent / "metaeval"
    proc = subprocess.run([str(script), *args], cwd=work, env=env, capture_output=True, text=True)
    if check:
        assert proc.returncode == 0, f"metaeval {' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_wheel_has_its_data_and_version(installed):
    py, work, env, tmp = installed
    code = (
        # every subpackage travels in the wheel (metrics.grouge and metrics.embeddings once did not)
        "import json, metaeval, metaeval.rouge as r, metaeval.metrics.grouge, metaeval.metrics.embeddings\n"
        "from metaeval import _resources\n"
        "ds = metaeval.datasets.load('summeval')\n"
        "s = r.score(['the cat sat'], [['the cat sat down']], ['rouge-1|stem:yes|stop:no|stat:R|refs:A'])\n"
        "print(json.dumps({'file': metaeval.__file__, 'data': str(_resources.data_root()),"
        " 'nb': str(_resources.notebooks_root()), 'shape': list(ds.shape), 'r1': float(s.iloc[0, 0]),"
        " 'version': metaeval.__version__}))\n"
    )
    out = subprocess.run([str(py), "-c", code], cwd=work, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    info = json.loads(out.stdout.strip().splitlines()[-1])
    site = str(py.parent.parent)
    assert info["file"].startswith(site) and info["data"].startswith(site) and info["nb"].startswith(site)
    assert info["shape"] == [16, 100]
    assert info["r1"] == pytest.approx(0.75)
    assert _run(installed, "--version").stdout.strip().endswith(info["version"])
    # the ROUGE cache of dataset scoring goes to $METAEVAL_CACHE, never into the installation
    assert not any(p.name == ".cache" for p in Path(site).rglob(".cache"))


def test_wheel_runs_a_notebook(installed):
    _, work, _, tmp = installed
    out = tmp / "out00"
    _run(installed, "run", "00", "-p", "output_dir", str(out))
    assert any(out.glob("*.csv")), "notebook 00 wrote no table"
    assert any(out.glob("*.ipynb")), "notebook 00 wrote no executed notebook"
