"""Single-sense PPR vectors truncated to their top ``topk`` dimensions, computed on demand and cached on disk
as validated ``.npz`` shards (no pickle: ``allow_pickle=False``; every shard carries a sha256 of its arrays).

As ADW ships precomputed signatures, the compendium ships the top-128 vectors of every sense its default
run of notebook 50 needs (``data/wordnet30/ppr/``, written by ``metaeval grouge-vectors``; provenance in
``data/README.md``); they are read like a cache shard and are bit-identical to what :meth:`SenseVectors.ensure`
computes (tested), so they change run time only."""

from __future__ import annotations

import hashlib
import os
import warnings
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numba
import numpy as np

from metaeval import _resources
from metaeval._io import atomic_write, cache_dir
from metaeval.metrics import wordnet as _wordnet
from metaeval.metrics.grouge._options import DEFAULT_TOPK, GRougeWarning, _check_topk
from metaeval.metrics.grouge._ppr import _COLS, _compile_vectorized, _top, _wordnet_walker

_SHARD_KEYS = ("nodes", "idx", "val", "length", "sha256")


def _digest(nodes, idx, val, length) -> np.ndarray:
    h = hashlib.sha256()
    for a in (nodes, idx, val, length):
        h.update(np.ascontiguousarray(a).tobytes())
    return np.frombuffer(h.digest(), np.uint8).copy()


class ShardError(ValueError):
    """A cache shard failed validation."""


def validate_shard(z, *, n_nodes: int, width: int, dtype) -> tuple[np.ndarray, ...]:
    """The arrays of a cache shard, checked: keys, dtypes, shapes, node and dimension ranges, finite
    positive values in decreasing order, and the sha256 written with them; :class:`ShardError` otherwise."""
    missing = [k for k in _SHARD_KEYS if k not in z.files]
    if missing:
        raise ShardError(f"missing arrays {missing}")
    nodes, idx, val, length, sha = (z[k] for k in _SHARD_KEYS)
    if nodes.dtype != np.int64 or idx.dtype != np.int32 or val.dtype != np.dtype(dtype) or length.dtype != np.int64:
        raise ShardError("unexpected dtypes")
    m = nodes.shape[0]
    if nodes.ndim != 1 or length.shape != (m,) or idx.ndim != 2 or idx.shape != val.shape or idx.shape[0] != m \
            or idx.shape[1] < width:
        raise ShardError(f"inconsistent shapes {nodes.shape} {idx.shape} {val.shape} {length.shape}")
    if not np.array_equal(sha, _digest(nodes, idx, val, length)):
        raise ShardError("checksum mismatch")
    if m and (nodes.min() < 0 or nodes.max() >= n_nodes or np.unique(nodes).size != m):
        raise ShardError(f"node ids outside 0..{n_nodes - 1} or repeated")
    if m and (length.min() < 0 or length.max() > idx.shape[1]):
        raise ShardError("lengths out of range")
    inside = np.arange(idx.shape[1])[None, :] < length[:, None]
    if (idx[inside] < 0).any() or (idx[inside] >= n_nodes).any() or (idx[~inside] != -1).any():
        raise ShardError(f"dimension indices outside 0..{n_nodes - 1}")
    v = val[inside]
    if not np.isfinite(val).all() or (v <= 0).any() or (val[~inside] != 0).any():
        raise ShardError("values not finite and positive")
    with np.errstate(invalid="ignore"):
        steps = np.diff(np.where(inside, val, -np.inf), axis=1)
    if (steps[inside[:, 1:]] > 0).any():
        raise ShardError("values not in decreasing order")
    return nodes, idx, val, length


class SenseVectors:
    """Single-sense PPR vectors truncated to their ``topk`` largest dimensions (all non-zero ones if
    ``topk`` is None), computed on demand in blocks and cached on disk (``cache=True``) as ``.npz`` shards
    under ``cache_dir()/grouge/v2-<graph sha256>-r<restart>-i<iterations>-k<topk>-<dtype>/``.

    The iteration runs in ``dtype`` (float32 by default). ``idx[row]`` lists the row's dimensions by
    decreasing value (ties: smaller node first; ``-1`` pads), ``val[row]`` their values, ``length[row]`` how
    many there are; ``row_of[node]`` is the row of a node (-1 until computed). Rows are stored sparse: only
    the ``topk`` kept dimensions, in buffers that grow by doubling.

    A cached shard is used only if it passes :func:`validate_shard`; otherwise it is ignored with a
    :class:`GRougeWarning` and its vectors are recomputed (the file is left in place: delete it to silence
    the warning). With ``cache=True`` the vectors shipped in ``<WordNet folder>/ppr/`` (same format, a
    ``topk`` at least this one's) are read first (``shipped=False``: not); ``cache=False`` computes every
    vector.
    """

    def __init__(self, *, restart: float = 0.15, iterations: int = 30, topk: int | None = DEFAULT_TOPK,
                 cache: bool = True, progress: bool = False, dtype=np.float32, shipped: bool = True):
        _check_topk(topk)
        self.dtype = np.dtype(dtype)
        self.wn = _wordnet.load()
        self.restart, self.iterations, self.topk = float(restart), int(iterations), topk
        self.width = self.wn.n_nodes if topk is None else min(int(topk), self.wn.n_nodes)
        self.progress = progress
        self.row_of = np.full(self.wn.n_nodes, -1, np.int64)
        self._n = 0
        self._idx = np.zeros((0, self.width), np.int32)
        self._val = np.zeros((0, self.width), self.dtype)
        self._len = np.zeros(0, np.int64)
        # the full vectors are too large to be worth caching on disk
        self.folder: Path | None = None
        self.shipped = bool(shipped)
        if cache and topk is not None:
            self.folder = cache_dir() / "grouge" / self.tag
            self._load_shards()

    @property
    def idx(self) -> np.ndarray:
        return self._idx[: self._n]

    @property
    def val(self) -> np.ndarray:
        return self._val[: self._n]

    @property
    def length(self) -> np.ndarray:
        return self._len[: self._n]

    def _load_shards(self) -> None:
        assert self.folder is not None
        # vectors cached with a larger top-K serve this one: their first ``width`` dimensions are the
        # top ``width`` in the same order
        head = f"v2-{self.wn.sha256[:16]}-r{self.restart:g}-i{self.iterations}-k"
        shipped = self.wn.folder / "ppr"
        for path in sorted(shipped.glob(f"{head}*-{self.dtype.name}.npz")) if self.shipped and shipped.is_dir() else []:
            k = path.name[len(head):-len(self.dtype.name) - 5]
            if k.isdigit() and int(k) >= self.width:
                _resources.verify_checksums([path])  # embedded data: a modified file is an error, not a cache miss
                self._load_file(path, "shipped GRouge vectors")
        folders = []
        for f in self.folder.parent.glob(f"{head}*-{self.dtype.name}") if self.folder.parent.is_dir() else []:
            k = f.name[len(head):-len(self.dtype.name) - 1]
            if k.isdigit() and int(k) >= self.width:
                folders.append((f != self.folder, int(k), f))
        for _, _, folder in sorted(folders):
            for path in sorted(folder.glob("shard-*.npz")):
                self._load_file(path, "GRouge cache file")

    def _load_file(self, path: Path, what: str) -> None:
        try:
            with np.load(path, allow_pickle=False) as z:
                nodes, idx, val, length = validate_shard(z, n_nodes=self.wn.n_nodes, width=self.width,
                                                         dtype=self.dtype)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            warnings.warn(f"ignoring {what} {path} ({type(exc).__name__}: {exc}); its vectors are "
                          f"recomputed (delete the file to silence this warning)", GRougeWarning, stacklevel=4)
            return
        new = self.row_of[nodes] < 0
        w = self.width
        self._append(nodes[new], idx[new][:, :w], val[new][:, :w], np.minimum(length[new], w))

    def _append(self, nodes, idx, val, length) -> None:
        k = len(nodes)
        if self._n + k > self._idx.shape[0]:
            cap = max(self._n + k, 2 * self._idx.shape[0], 64)
            for name, fill in (("_idx", -1), ("_val", 0), ("_len", 0)):
                old = getattr(self, name)
                new = np.full((cap,) + old.shape[1:], fill, old.dtype)
                new[: self._n] = old[: self._n]
                setattr(self, name, new)
        self._idx[self._n : self._n + k] = idx
        self._val[self._n : self._n + k] = val
        self._len[self._n : self._n + k] = length
        self.row_of[nodes] = self._n + np.arange(k)
        self._n += k

    def ensure(self, nodes) -> None:
        """Compute (and cache) the vectors of every node in ``nodes`` not yet known."""
        todo = np.unique(np.asarray(list(nodes), np.int64))
        todo = todo[self.row_of[todo] < 0] if todo.size else todo
        if todo.size == 0:
            return
        walker = _wordnet_walker()
        # nearby seeds walk together: their hop balls overlap, so fewer rows are active early on
        todo = todo[np.argsort(walker.row[todo], kind="stable")]
        chunks = [todo[a : a + _COLS] for a in range(0, todo.size, _COLS)]
        alpha, iterations, width = 1.0 - self.restart, self.iterations, self.width

        def job(chunk: np.ndarray):
            V, hops = walker.walk([chunk[c : c + 1] for c in range(chunk.size)], alpha, iterations, self.dtype)
            idx = np.empty((chunk.size, width), np.int32)
            val = np.empty((chunk.size, width), self.dtype)
            length = np.empty(chunk.size, np.int64)
            _top(V, chunk.size, walker.order, hops, iterations, width, idx, val, length)
            return chunk, idx, val, length

        from tqdm import tqdm

        bar = tqdm(total=int(todo.size), desc="PPR vectors", unit="sense", disable=not self.progress)
        _compile_vectorized()
        workers = max(1, min(numba.get_num_threads(), len(chunks)))
        shard: list[tuple] = []
        # the kernels release the GIL: one block of 16 seeds per core
        with ThreadPoolExecutor(workers) as pool:
            for k, result in enumerate(pool.map(job, chunks)):
                self._append(*result)
                shard.append(result)
                bar.update(result[0].size)
                if self.folder is not None and (sum(r[0].size for r in shard) >= 512 or k == len(chunks) - 1):
                    self._write_shard(*[np.concatenate(p) for p in zip(*shard)])
                    shard = []
        bar.close()

    def _write_shard(self, nodes, idx, val, length) -> None:
        assert self.folder is not None
        name = f"shard-{os.getpid()}-{int(nodes[0])}-{nodes.size}-{np.random.default_rng().integers(1 << 62):x}.npz"
        try:
            self._write(self.folder / name, nodes, idx, val, length, np.savez)
        except OSError as exc:  # a read-only cache costs time, not correctness
            warnings.warn(f"could not write the GRouge cache {self.folder}: {exc}", GRougeWarning, stacklevel=2)

    def save(self, path, nodes) -> Path:
        """Write the vectors of ``nodes`` (computed if needed) to ``path`` as one compressed, checksummed
        ``.npz`` in the shard format (rows by increasing node); refuses to overwrite an existing file.

        This is how ``data/wordnet30/ppr/`` was written (``metaeval grouge-vectors``); the file name must be
        the store's tag (``v2-<graph sha256[:16]>-r<restart>-i<iterations>-k<topk>-<dtype>.npz``) for the
        store to find it.
        """
        path = Path(path)
        if path.exists():
            raise FileExistsError(f"{path} exists: remove it first (save never overwrites a file)")
        nodes = np.unique(np.asarray(list(nodes), np.int64))
        self.ensure(nodes)
        rows = self.row_of[nodes]
        self._write(path, nodes, self.idx[rows], self.val[rows], self.length[rows], np.savez_compressed)
        return path

    def _write(self, path: Path, nodes, idx, val, length, savez) -> None:
        """One shard file, atomically: the arrays in their shard dtypes and their sha256."""
        nodes, idx = nodes.astype(np.int64), idx.astype(np.int32)
        val, length = val.astype(self.dtype), length.astype(np.int64)
        sha = _digest(nodes, idx, val, length)

        def write(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                savez(fh, nodes=nodes, idx=idx, val=val, length=length, sha256=sha)

        atomic_write(path, write)

    @property
    def tag(self) -> str:
        """The name of this store's cache folder and shipped file (without ``.npz``)."""
        return f"v2-{self.wn.sha256[:16]}-r{self.restart:g}-i{self.iterations}-k{self.width}-{self.dtype.name}"

    def dense(self, node: int) -> np.ndarray:
        """The (truncated) vector of one node as a dense array."""
        self.ensure([node])
        r = self.row_of[node]
        v = np.zeros(self.wn.n_nodes)
        n = self.length[r]
        v[self.idx[r, :n]] = self.val[r, :n]
        return v


_STORES: dict[tuple, SenseVectors] = {}


def _store(restart: float, iterations: int, topk: int | None, cache: bool = True,
           progress: bool = False) -> SenseVectors:
    key = (float(restart), int(iterations), topk, cache)
    st = _STORES.get(key)
    if st is None:
        st = _STORES[key] = SenseVectors(restart=restart, iterations=iterations, topk=topk, cache=cache)
    st.progress = progress
    return st
