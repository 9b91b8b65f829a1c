"""The site's contents (site/build.py) without a browser: every executed notebook's entry names its run (the
dataset, and a sweep's other parameters), so no two entries of the sidebar read alike; the sidebar once listed
30 entries "00 · Dataset check ... (00_dataset_check)" for the atlas runs."""

import importlib.util
import subprocess
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _build():
    spec = importlib.util.spec_from_file_location("metaeval_site_build_contents", ROOT / "site" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_two_executed_notebooks_share_an_entry():
    build = _build()
    tracked = subprocess.run(["git", "ls-files", "results/*.ipynb"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    if not tracked:  # an installed copy without git: nothing committed to list
        return
    labels = build.contents_labels([doc.removesuffix(".ipynb") for doc in tracked])
    entries = Counter((Path(doc).stem, label) for doc, label in labels.items())
    assert len(tracked) > 50
    assert [e for e, n in entries.items() if n > 1] == []
    atlas = [build.run_label(d.removesuffix(".ipynb")) for d in tracked if d.startswith("results/atlas/00_")]
    assert atlas and all(label.startswith("atlas: ") for label in atlas)
    assert "atlas: summeval" in atlas and "atlas: hanna" in atlas


def _prose(doc: str) -> str:
    """A docstring's reStructuredText prose: without ``literals``, doctest blocks, ``::`` literal blocks and math."""
    lines, skip = [], False
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.startswith((">>>", "...", ".. math::")) or (skip and stripped):
            skip = True
            continue
        skip = stripped.endswith("::")
        lines.append(line)
    import re

    return re.sub(r"``.*?``", "", "\n".join(lines), flags=re.S)


def test_no_docstring_holds_an_undefined_substitution():
    """``|x|`` outside a literal is a docutils substitution: the API pages once had nine "Undefined substitution
    referenced" errors (make site now fails on any, with -W)."""
    import ast
    import re

    found = []
    for path in sorted((ROOT / "lib" / "metaeval").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value,
                                                                                                  str):
                for hit in re.findall(r"(?<![\w|`])\|[A-Za-z][^|\n`]*\|(?![\w|])", _prose(node.value.value)):
                    found.append(f"{path.relative_to(ROOT)}: {hit}")
    assert found == []
