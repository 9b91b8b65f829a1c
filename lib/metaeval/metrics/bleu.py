"""BLEU through sacrebleu, at sentence level and at system (corpus) level.

Tokenization: the embedded texts are already PTB-tokenized (``team 's``, ``$ 2.6``), so sacrebleu's
``tokenize="none"`` splits on whitespace only and does not re-tokenize; ``lowercase=True`` because
ROUGE lower-cases too and BARTScore capitalized the first letter of every system sentence in SummEval.
Sentence-level BLEU uses sacrebleu's defaults for sentences (exponential smoothing, effective order).
Graham (2015) computes system-level BLEU as corpus BLEU over all of a system's summaries
(:func:`system_bleu`), which is not the mean of sentence BLEU.

Every result carries sacrebleu's signature, e.g. ``nrefs:11|case:lc|eff:yes|tok:none|smooth:exp|version:2.6.0``.

Text that is not English: ``tokenizer="unicode"`` (opt-in) splits every text with
:func:`metaeval.text.unicode_tokenize` (case-folded Unicode words, one token per character of scripts written
without spaces) before sacrebleu counts whitespace-separated tokens; the signature then says ``tok:unicode``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sacrebleu.metrics import BLEU

from metaeval.metrics.text import unicode_tokenize

__all__ = ["sentence_bleu", "system_bleu", "bleu_signature"]


_TOKENIZERS = ("none", "unicode")


def _check(hypotheses, references, tokenizer: str = "none"):
    if tokenizer not in _TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {_TOKENIZERS}, got {tokenizer!r}")
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses must be a sequence of texts, not a single string")
    hypotheses = list(hypotheses)
    references = list(references)
    if len(hypotheses) != len(references):
        raise ValueError(f"hypotheses and references differ in length: {len(hypotheses)} vs {len(references)}")
    for i, (h, refs) in enumerate(zip(hypotheses, references)):
        if not isinstance(h, str):
            raise TypeError(f"hypotheses[{i}] must be a string, got {type(h).__name__}")
        if not isinstance(refs, (list, tuple)) or not refs or not all(isinstance(r, str) for r in refs):
            raise TypeError(f"references[{i}] must be a non-empty list of strings")
    if tokenizer == "unicode":
        # sacrebleu then splits on whitespace only (tok:none): the Unicode tokens are what it counts
        def tok(text: str) -> str:
            return " ".join(unicode_tokenize(text))

        hypotheses = [tok(h) for h in hypotheses]
        references = [[tok(r) for r in refs] for refs in references]
    return hypotheses, references


def _bleu(sentence: bool) -> BLEU:
    # force=True: the texts are tokenized on purpose (tok:none), so sacrebleu's detokenization hint is noise
    return BLEU(tokenize="none", lowercase=True, effective_order=sentence, force=True)


def bleu_signature(n_refs: int, *, sentence: bool = True, tokenizer: str = "none") -> str:
    """sacrebleu's signature for the configuration used here (sacrebleu builds it only after scoring);
    ``tok:unicode`` with ``tokenizer="unicode"``.

    Examples
    --------
    >>> bleu_signature(11, sentence=False)                    # doctest: +ELLIPSIS
    'nrefs:11|case:lc|eff:no|tok:none|smooth:exp|version:...'
    >>> bleu_signature(1, tokenizer="unicode")                # doctest: +ELLIPSIS
    'nrefs:1|case:lc|eff:yes|tok:unicode|smooth:exp|version:...'
    """
    if tokenizer not in _TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {_TOKENIZERS}, got {tokenizer!r}")
    bleu = _bleu(sentence)
    bleu.corpus_score(["a"], [["a"] for _ in range(n_refs)])
    signature = str(bleu.get_signature())
    return signature.replace("|tok:none|", f"|tok:{tokenizer}|")


# Reference n-gram tables by reference set: sacrebleu extracts them again for every hypothesis, though the
# summaries of one document (one per system) share its references; kept for the process (bounded).
_REF_INFO: dict[tuple[str, ...], dict] = {}
_REF_INFO_MAX = 100_000
# These are the sacrebleu 2.x internals that sentence_score / corpus_score are made of (pyproject pins
# sacrebleu<3); tests/test_bleu_cache.py checks the scores equal the public calls'.


def _scores_stats(bleu: BLEU, hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> list[list[int]]:
    """sacrebleu's per-segment statistics (what ``sentence_score`` / ``corpus_score`` compute), with each
    distinct reference set's n-grams extracted once (the same preprocessing and counts, so the same scores)."""
    stats = []
    for h, refs in zip(hypotheses, references):
        key = tuple(refs)
        info = _REF_INFO.get(key)
        if info is None:
            if len(_REF_INFO) >= _REF_INFO_MAX:
                _REF_INFO.clear()
            info = bleu._extract_reference_info([bleu._preprocess_segment(r) for r in key])
            _REF_INFO[key] = info
        stats.append(bleu._compute_segment_statistics(bleu._preprocess_segment(h), info))
    bleu.num_refs = len(references[0]) if len({len(r) for r in references}) == 1 else -1
    return stats


def sentence_bleu(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, tokenizer: str = "none"
) -> np.ndarray:
    """Sentence BLEU (0-100) of each hypothesis against its own references (``tokenizer``: ``"none"``, the
    texts' own whitespace tokens, or ``"unicode"``).

    Examples
    --------
    >>> round(float(sentence_bleu(["the cat sat on the mat"], [["the cat was on the mat"]])[0]), 2)
    37.99
    """
    hypotheses, references = _check(hypotheses, references, tokenizer)
    bleu = _bleu(True)
    stats = _scores_stats(bleu, hypotheses, references)
    # sacrebleu's sentence_score: the statistics of one segment, aggregated
    return np.array([bleu._aggregate_and_compute([s]).score for s in stats], dtype=float)


def system_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], *, tokenizer: str = "none") -> float:
    """Corpus BLEU (0-100) over one system's summaries: n-gram counts pooled over all of them.

    Every hypothesis must have the same number of references (sacrebleu's reference streams). ``tokenizer``
    as :func:`sentence_bleu`.
    """
    hypotheses, references = _check(hypotheses, references, tokenizer)
    n_refs = {len(r) for r in references}
    if len(n_refs) != 1:
        raise ValueError(f"system_bleu needs the same number of references per hypothesis, got {sorted(n_refs)}")
    bleu = _bleu(False)
    # sacrebleu's corpus_score(hypotheses, reference streams): the segments' statistics pooled
    return float(bleu._aggregate_and_compute(_scores_stats(bleu, hypotheses, references)).score)
