"""The ``metaeval.metrics.rouge`` package: its public API and the cache key that follows its code."""

from __future__ import annotations

import ast
from pathlib import Path

import metaeval.metrics.rouge as rouge_package
from metaeval.data import scoring

PACKAGE = Path(rouge_package.__file__).parent


def test_public_api_is_unchanged():
    import metaeval.rouge

    assert metaeval.rouge is rouge_package
    assert sorted(rouge_package.__all__) == ["RougeWarning", "resolve_variants", "score"]
    assert all(callable(getattr(rouge_package, name)) for name in rouge_package.__all__)


def test_cache_key_reads_every_module_of_the_package(monkeypatch):
    """Catches: a ROUGE module left out of rouge_table's cache key (a changed kernel would be served the
    tables of its predecessor)."""
    read: list[Path] = []
    real = Path.read_bytes

    def spy(self: Path) -> bytes:
        read.append(self.resolve())
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    assert scoring._rouge_code_digest() is not None
    modules = {p.resolve() for p in PACKAGE.glob("*.py")}
    assert len(modules) >= 6
    assert modules <= set(read)


def test_private_names_come_only_from_private_modules():
    """The package's modules import private names (``_foo``) only from private modules (``_bar.py``)."""
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("metaeval"):
                private = [a.name for a in node.names if a.name.startswith("_")]
                if private:
                    assert node.module.rsplit(".", 1)[-1].startswith("_"), (path.name, node.module, private)
