"""The package list, the one thing pyproject.toml cannot say: every package under lib/ (found, so a new
subpackage such as metaeval.metrics.grouge is never left out of the wheel, as it once was), and every data
folder as a subpackage of metaeval._data (so setuptools does not warn that it "would be ignored"). Everything
else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

ROOT = Path(__file__).resolve().parent


def _data_packages() -> list[str]:
    data = ROOT / "data"
    names = ["metaeval._data"]
    for folder in sorted(p for p in data.rglob("*") if p.is_dir() and p.name != "__pycache__"):
        parts = folder.relative_to(data).parts
        if all(part.isidentifier() for part in parts):  # other folders are not importable: plain package data
            names.append(".".join(("metaeval._data", *parts)))
    return names


setup(packages=[*find_packages("lib", include=["metaeval", "metaeval.*"]), *_data_packages(), "metaeval._notebooks"])
