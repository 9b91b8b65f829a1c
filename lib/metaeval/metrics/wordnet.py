"""Princeton WordNet 3.0 read directly from its database files: the synset graph and lemma lookup.

The embedded files (``data/wordnet30/``, gzip, sha256-checked; format in ``PROVENANCE.md`` and WordNet's
``wndb(5WN)``) are parsed into

* a graph with **one node per synset** (117,659: nouns, then verbs, adjectives incl. satellites, adverbs,
  each in file order) and an **undirected, unweighted edge for every pointer**: semantic pointers between
  synsets and lexical pointers between words, lifted to the synsets of those words (an edge that would
  join a synset to itself is dropped; parallel edges count once). This is UKB's WordNet graph *without*
  the gloss relations of the Princeton WordNet Gloss Corpus (UKB's ``wn30g``), which are not in the
  database files;
* lemma lookup through the index files (senses in WordNet's frequency order) after WordNet's morphology
  (``morphy``): for each part of speech, the word itself if it is a lemma, then the base forms of the
  exception list (``*.exc``) if the word is there, otherwise the suffix-detachment rules applied once
  (as WordNet's C ``morphstr``); all parts of speech (n, v, a, r) unless one is given.

Senses are named as NLTK names them, ``lemma.pos.NN`` (``fire.v.04``: the fourth verb sense of *fire* in
index order; ``pos`` is the synset's type, ``s`` for satellite adjectives).

Examples
--------
>>> wn = load()
>>> wn.n_nodes
117659
>>> [s.name for s in wn.senses("fired", pos="v")][:4]
['fire.v.01', 'fire.v.02', 'fire.v.03', 'fire.v.04']
>>> wn.morphy("geese", "n"), wn.morphy("pouring", "v")
(['goose'], ['pour'])
"""

from __future__ import annotations

import gzip
import hashlib
import json
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.sparse as sp

import metaeval._resources as _resources
from metaeval._io import atomic_write, cache_dir

__all__ = ["POS", "Sense", "WordNet", "load"]

#: Parts of speech in WordNet's order; the files are named by these.
POS = ("n", "v", "a", "r")
_FILE = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_POS_OF_TYPE = {"n": "n", "v": "v", "a": "a", "s": "a", "r": "r"}

# WordNet's suffix-detachment rules (morph.c, the same list as NLTK's MORPHOLOGICAL_SUBSTITUTIONS)
_RULES: dict[str, tuple[tuple[str, str], ...]] = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
          ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}


@dataclass(frozen=True)
class Sense:
    """One sense of a word: its NLTK-style name and the graph node of its synset."""

    name: str
    node: int


def _folder() -> Path:
    return _resources.data_root() / "wordnet30"


def _cache_path(digest: str) -> Path:
    """The parse cache: ``<path>.npz`` (arrays, read with ``allow_pickle=False``) and ``<path>.json`` (tables,
    the sha256 of the WordNet files and of the ``.npz``). Nothing that executes code on load (no pickle)."""
    return cache_dir() / "wordnet" / f"parsed-v2-{digest[:32]}"


def _lines(path: Path):
    with gzip.open(path, "rt", encoding="latin-1") as fh:
        for line in fh:
            if not line.startswith("  "):  # licence header
                yield line


class WordNet:
    """The WordNet 3.0 synset graph (``adjacency``, symmetric 0/1 CSR) and lemma lookup.

    Build it with :func:`load` (cached). ``node_pos[i]`` is the synset type of node ``i`` (n, v, a, s, r),
    ``node_offset[i]`` its byte offset in its data file, ``sha256`` a digest of the database files that
    keys caches of anything computed from the graph.
    """

    n_nodes: int
    n_pointers: int
    folder: Path
    node_offset: np.ndarray
    node_pos: np.ndarray
    first_lemma: list[str]
    adjacency: sp.csr_matrix
    _index: dict[str, dict[str, list[int]]]
    _exc: dict[str, dict[str, list[str]]]

    def __init__(self, folder: Path | None = None, *, use_cache: bool = True):
        folder = Path(folder) if folder is not None else _folder()
        self.folder = folder
        names = [f"{kind}.{_FILE[p]}.gz" for p in POS for kind in ("data", "index")]
        names += [f"{_FILE[p]}.exc.gz" for p in POS]
        paths = [folder / n for n in names]
        _resources.verify_checksums(paths)
        missing = [str(p) for p in paths if not p.exists()]
        if missing:
            raise FileNotFoundError(f"WordNet 3.0 database files missing: {missing}")
        digest = hashlib.sha256()
        for path in paths:
            digest.update(path.name.encode())
            digest.update(_resources.sha256(path).encode())
        self.sha256 = digest.hexdigest()
        self._sense_cache: dict[tuple[str, str | None], tuple[Sense, ...]] = {}
        # parsing takes seconds; the parsed tables are kept on disk, keyed by the files' digest
        cached = _cache_path(self.sha256) if use_cache else None
        if cached is not None and self._load_parsed(cached):
            return
        self._parse(folder)
        if cached is not None:
            self._save_parsed(cached)

    def _load_parsed(self, path: Path) -> bool:
        npz, meta = path.with_suffix(".npz"), path.with_suffix(".json")
        if not (npz.exists() and meta.exists()):
            return False
        try:
            with open(meta, encoding="utf-8") as fh:
                state = json.load(fh)
            if not isinstance(state, dict) or state.get("sha256") != self.sha256:
                raise ValueError("written for other WordNet files")
            if state.get("npz_sha256") != _resources.sha256(npz):
                raise ValueError("checksum mismatch")
            with np.load(npz, allow_pickle=False) as z:
                node_offset, node_pos = z["node_offset"], z["node_pos"]
                indptr, indices = z["indptr"], z["indices"]
            n = int(state["n_nodes"])
            if node_offset.shape != (n,) or node_pos.shape != (n,) or indptr.shape != (n + 1,) \
                    or indptr[0] != 0 or indptr[-1] != indices.shape[0] or (np.diff(indptr) < 0).any() \
                    or (indices.size and (indices.min() < 0 or indices.max() >= n)):
                raise ValueError("inconsistent arrays")
            index, exc = state["index"], state["exc"]
            if len(state["first_lemma"]) != n or any(
                    not 0 <= node < n for table in index.values() for nodes in table.values() for node in nodes):
                raise ValueError("node ids out of range")
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc_:
            warnings.warn(f"ignoring the WordNet parse cache {npz} ({exc_}): parsing again", UserWarning,
                          stacklevel=3)
            return False
        self.n_nodes = n
        self.node_offset, self.node_pos = node_offset, node_pos
        self.first_lemma = list(state["first_lemma"])
        self.n_pointers = int(state["n_pointers"])
        adj = sp.csr_matrix((np.ones(indices.shape[0]), indices, indptr), shape=(n, n))
        adj.sort_indices()
        self.adjacency = adj
        self._index, self._exc = index, exc
        return True

    def _save_parsed(self, path: Path) -> None:
        npz, meta = path.with_suffix(".npz"), path.with_suffix(".json")
        adj = self.adjacency

        def write_npz(tmp: Path) -> None:
            with open(tmp, "wb") as fh:
                np.savez(fh, node_offset=self.node_offset, node_pos=self.node_pos.astype("U1"),
                         indptr=adj.indptr.astype(np.int64), indices=adj.indices.astype(np.int64))

        try:
            atomic_write(npz, write_npz)
            state = {"sha256": self.sha256, "npz_sha256": _resources.sha256(npz), "n_nodes": self.n_nodes,
                     "n_pointers": self.n_pointers, "first_lemma": self.first_lemma, "index": self._index,
                     "exc": self._exc}
            atomic_write(meta, lambda tmp: tmp.write_text(json.dumps(state), encoding="utf-8"))
        except OSError:  # a read-only cache costs time, not correctness
            pass

    def _parse(self, folder: Path) -> None:
        node_of: dict[tuple[str, int], int] = {}  # (file pos, offset) -> node
        offsets: list[int] = []
        types: list[str] = []
        records: list[list[str]] = []
        for p in POS:
            for line in _lines(folder / f"data.{_FILE[p]}.gz"):
                fields = line.split(" | ", 1)[0].split()
                node_of[(p, int(fields[0]))] = len(offsets)
                offsets.append(int(fields[0]))
                types.append(fields[2])
                records.append(fields)
        self.n_nodes = len(offsets)
        self.node_offset = np.asarray(offsets, np.int64)
        self.node_pos = np.asarray(types)
        self.first_lemma = []
        src: list[int] = []
        dst: list[int] = []
        for i, fields in enumerate(records):
            w_cnt = int(fields[3], 16)
            self.first_lemma.append(fields[4].lower())
            k = 4 + 2 * w_cnt
            p_cnt = int(fields[k])
            k += 1
            for _ in range(p_cnt):
                # symbol offset pos source/target: lexical pointers are lifted to the target's synset
                target = node_of[(_POS_OF_TYPE[fields[k + 2]], int(fields[k + 1]))]
                if target != i:
                    src.append(i)
                    dst.append(target)
                k += 4
        self.n_pointers = len(src)
        rows = np.asarray(src + dst, np.int64)
        cols = np.asarray(dst + src, np.int64)
        adj = sp.coo_matrix((np.ones(rows.shape[0]), (rows, cols)), shape=(self.n_nodes, self.n_nodes)).tocsr()
        adj.data[:] = 1.0  # parallel pointers (e.g. both directions of hypernym/hyponym) count once
        adj.sort_indices()
        self.adjacency = adj

        self._index = {}
        for p in POS:
            table: dict[str, list[int]] = {}
            for line in _lines(folder / f"index.{_FILE[p]}.gz"):
                f = line.split()
                p_cnt = int(f[3])
                synsets = f[4 + p_cnt + 2:]
                table[f[0]] = [node_of[(p, int(o))] for o in synsets]
            self._index[p] = table
        self._exc = {}
        for p in POS:
            exc: dict[str, list[str]] = {}
            for line in _lines(folder / f"{_FILE[p]}.exc.gz"):
                f = line.split()
                if len(f) >= 2:
                    exc.setdefault(f[0], []).extend(f[1:])
            self._exc[p] = exc

    # ------------------------------------------------------------------------------------------
    def _check_pos(self, pos: str | None) -> tuple[str, ...]:
        if pos is None:
            return POS
        if pos == "s":
            return ("a",)
        if pos not in POS:
            raise ValueError(f"pos must be one of n, v, a, s, r or None, got {pos!r}")
        return (pos,)

    def morphy(self, word: str, pos: str) -> list[str]:
        """Lemmas of ``word`` for one part of speech, in WordNet's order (the word, exceptions, rules).

        Examples
        --------
        >>> load().morphy("officers", "n"), load().morphy("better", "a")
        (['officer'], ['better', 'good', 'well'])
        """
        (p,) = self._check_pos(pos)
        word = word.lower().replace(" ", "_")
        index = self._index[p]
        found: list[str] = []

        def add(form: str) -> None:
            if form in index and form not in found:
                found.append(form)

        add(word)
        if word in self._exc[p]:
            for base in self._exc[p][word]:
                add(base)
            return found
        for old, new in _RULES[p]:
            if word.endswith(old) and len(word) > len(old):
                add(word[: len(word) - len(old)] + new)
        return found

    def senses(self, word: str, pos: str | None = None) -> tuple[Sense, ...]:
        """The senses of ``word`` (any inflected form): for each part of speech (n, v, a, r, or ``pos``), each
        lemma of :meth:`morphy`, its synsets in index order; a synset reached twice is listed once.

        Examples
        --------
        >>> [s.name for s in load().senses("pouring")]
        ['pour.v.01', 'pour.v.02', 'pour.v.03', 'pour.v.04', 'pour.v.05', 'pour.v.06', 'pouring.s.01']
        """
        key = (word, pos)
        hit = self._sense_cache.get(key)
        if hit is not None:
            return hit
        out: list[Sense] = []
        seen: set[int] = set()
        for p in self._check_pos(pos):
            for lemma in self.morphy(word, p):
                for k, node in enumerate(self._index[p][lemma], 1):
                    if node not in seen:
                        seen.add(node)
                        out.append(Sense(f"{lemma}.{self.node_pos[node]}.{k:02d}", node))
        result = tuple(out)
        self._sense_cache[key] = result
        return result

    def synset(self, name: str) -> int:
        """The graph node of a sense name ``lemma.pos.NN`` (``fire.v.04``).

        Examples
        --------
        >>> wn = load()
        >>> wn.synset("fire.v.04") == wn.senses("fire", "v")[3].node
        True
        """
        try:
            lemma, pos, num = name.rsplit(".", 2)
            k = int(num)
        except ValueError:
            raise ValueError(f"name must look like 'lemma.pos.NN', got {name!r}") from None
        (p,) = self._check_pos(pos)
        nodes = self._index[p].get(lemma.lower())
        if nodes is None or not 1 <= k <= len(nodes):
            raise KeyError(f"no WordNet sense {name!r}")
        return nodes[k - 1]

    def in_vocabulary(self, word: str, pos: str | None = None) -> bool:
        """True when ``word`` has at least one sense."""
        return len(self.senses(word, pos)) > 0

    def transition(self) -> sp.csr_matrix:
        """The column-normalised adjacency ``M`` (``M[i, j] = 1 / deg(j)`` for an edge i-j); columns of
        isolated synsets are zero."""
        deg = np.asarray(self.adjacency.sum(axis=0)).ravel()
        inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
        return (self.adjacency @ sp.diags(inv)).tocsr()

    def subgraph(self, nodes: Sequence[int]) -> sp.csr_matrix:
        """Adjacency restricted to ``nodes`` (in that order)."""
        idx = np.asarray(nodes, np.int64)
        return self.adjacency[idx][:, idx].tocsr()


@lru_cache(maxsize=2)
def load(folder: str | None = None) -> WordNet:
    """The WordNet 3.0 graph and index (parsed once per process and kept in a disk cache,
    ``metaeval._io.cache_dir()/wordnet``: about 3 s to parse, 0.3 s to read back)."""
    return WordNet(Path(folder) if folder is not None else None)
