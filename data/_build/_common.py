"""Shared helpers of the atlas conversion scripts (data/_build/<name>.py): read a pinned file of a fetched
repository snapshot, check its sha256, and write the dataset contract's JSONL deterministically.

Standard library only. A snapshot is a git directory (``fetch github:owner/repo`` gives one) or a work tree of
the repository checked out at the pinned commit; files are read with ``git show COMMIT:PATH`` so that the
commit, not whatever is checked out, decides the bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1]


def read_source(repo: str | os.PathLike[str], commit: str, path: str, sha256: str) -> bytes:
    """The bytes of ``path`` at ``commit`` in the snapshot ``repo``; an error if their sha256 is not ``sha256``."""
    data = subprocess.run(["git", "-C", os.fspath(repo), "show", f"{commit}:{path}"], check=True,
                          capture_output=True).stdout
    got = hashlib.sha256(data).hexdigest()
    if got != sha256:
        sys.exit(f"{repo}:{commit}:{path}: sha256 {got}, expected {sha256} (another file than the pinned one)")
    return data


def write_jsonl(path: Path, records: list[dict]) -> None:
    """One compact JSON object per line, keys in the order given, UTF-8 kept as is; written then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":"), allow_nan=False) + "\n")
    os.replace(tmp, path)


def write_text(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="\n")
    os.replace(tmp, path)


def sha256_lines(folder: Path) -> str:
    """The ``data/SHA256SUMS`` lines of every file in ``folder`` (paths relative to data/), sorted."""
    lines = []
    for f in sorted(folder.rglob("*")):
        if f.is_file():
            lines.append(f"{hashlib.sha256(f.read_bytes()).hexdigest()}  {f.relative_to(DATA).as_posix()}")
    return "\n".join(lines) + "\n"


def main_args(usage: str) -> Path:
    if len(sys.argv) != 2:
        sys.exit(f"usage: python {usage} SNAPSHOT  (a git directory or clone of the source repository)")
    return Path(sys.argv[1])
