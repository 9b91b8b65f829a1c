import json
import os
from pathlib import Path

import pytest

# `make test` runs pytest-xdist with one worker per core. Each worker, and every kernel or subprocess it starts,
# gets its share of the cores for BLAS/OpenMP/numba threads, as metaeval's own pool gives its workers
# (run/pool.py): two workers whose threads spin on each other's cores made numeric tests several times slower.
# Set here, before numpy is first imported (OpenBLAS reads it once); a value the user set is kept.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT"):
    from metaeval.run.pool import THREAD_VARIABLES, threads_per_worker

    for _name in THREAD_VARIABLES:
        os.environ.setdefault(_name, str(threads_per_worker(int(os.environ["PYTEST_XDIST_WORKER_COUNT"]))))

import metaeval  # noqa: E402

# nbval runs the notebooks in the kernelspec of tests/kernels/ (`--nbval-kernel-name metaeval` in the Makefile):
# this interpreter's ipykernel, whatever kernel the notebook's metadata names.
os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parent), os.environ.get("JUPYTER_PATH")]))

FIXTURES = Path(__file__).parent / "fixtures"
# The scripts that printed golden values import the reference implementations from outside the repository: they
# are records of how the fixtures were made, not tests (doctest collection would import them).
collect_ignore_glob = ["fixtures/*"]

# Metric names of the stats fixtures -> flattened score names of metaeval.datasets.
FIXTURE_METRICS = {
    "ROUGE-1": "rouge-1.f1",
    "ROUGE-2": "rouge-2.f1",
    "ROUGE-L": "rouge-l.f1",
    "ROUGE-SU4": "rouge-su4.f1",
    "BEwTE": "BEwTE.f1",
    "QAEval": "qa-eval.f1",
    "AutoSummENG": "AutoSummENG",
    "MeMoG": "MeMoG",
    "NPowER": "NPowER",
    "BERTScore": "bertscore.recall",
    "METEOR": "METEOR",
    "MoverScore": "MoverScore",
    "S3": "s3.resp",
}


@pytest.fixture(scope="session")
def fabbri():
    return metaeval.datasets.load("fabbri2020")


@pytest.fixture(scope="session")
def summeval():
    return metaeval.datasets.load("summeval")


@pytest.fixture(scope="session")
def Z(fabbri):
    return fabbri.matrix("expert.relevance")


@pytest.fixture(scope="session")
def metric(fabbri):
    def get(fixture_name):
        return fabbri.matrix(FIXTURE_METRICS[fixture_name])

    return get


def load_json(*parts):
    return json.loads(FIXTURES.joinpath(*parts).read_text())


# The slowest files of `make test`, slowest first (each test's time in the junit XML of a fresh clone's run, summed
# per file: `PYTEST_ADDOPTS=--junitxml=t.xml make test`). pytest-xdist (`--dist loadfile --no-loadscope-reorder`)
# hands files to the workers in collection order, so the longest start first and the short ones fill in at the end: both cores stay busy to the finish
# instead of one long file running alone at the tail (longest-processing-time-first scheduling). A file not named
# here keeps its place after these; a name that no longer exists is harmless.
SLOWEST_FIRST = (
    # seconds in a fresh clone's `make test` (2026-11-27)
    "test_grouge.py",  # 84 (numba compiles its engine there)
    "test_notebooks_on_user_data.py",  # 76
    "test_combination.py",  # 45
    "test_deutsch.py",  # 45
    "test_cli_and_runner.py",  # 44
    "test_sweep.py",  # 38
    "test_wheel_install.py",  # 31, most of it the installer in a subprocess
    "test_embeddings.py",  # 29
    "test_bad_inputs_run.py",  # 28
    "test_rouge_exactness.py",  # 24
    "test_jupyterlab_browser.py",  # 19
    "test_output_folder_safety.py",  # 18
)


def pytest_collection_modifyitems(config, items):
    rank = {name: k for k, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: a file's tests keep their order
