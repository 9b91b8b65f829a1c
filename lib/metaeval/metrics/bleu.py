"""BLEU through sacrebleu, at sentence level and at system (corpus) level.

Tokenization: the embedded texts are already PTB-tokenized (``team 's``, ``$ 2.6``), so sacrebleu's
``tokenize="none"`` splits on whitespace only and does not re-tokenize; ``lowercase=True`` because
ROUGE lower-cases too and BARTScore capitalized the first letter of every system sentence in SummEval.
Sentence-level BLEU uses sacrebleu's defaults for sentences (exponential smoothing, effective order).
Graham (2015) computes system-level BLEU as corpus BLEU over all of a system's summaries
(:func:`system_bleu`), which is not the mean of sentence BLEU.

Every result carries sacrebleu's signature, e.g. ``nrefs:11|case:lc|eff:yes|tok:none|smooth:exp|version:2.6.0``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from sacrebleu.metrics import BLEU

__all__ = ["sentence_bleu", "system_bleu", "bleu_signature"]


def _check(hypotheses, references):
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
    return hypotheses, references


def _bleu(sentence: bool) -> BLEU:
    # force=True: the texts are tokenized on purpose (tok:none), so sacrebleu's detokenization hint is noise
    return BLEU(tokenize="none", lowercase=True, effective_order=sentence, force=True)


def bleu_signature(n_refs: int, *, sentence: bool = True) -> str:
    """sacrebleu's signature for the configuration used here (sacrebleu builds it only after scoring).

    Examples
    --------
    >>> bleu_signature(11, sentence=False)                    # doctest: +ELLIPSIS
    'nrefs:11|case:lc|eff:no|tok:none|smooth:exp|version:...'
    """
    bleu = _bleu(sentence)
    bleu.corpus_score(["a"], [["a"] for _ in range(n_refs)])
    return str(bleu.get_signature())


def sentence_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> np.ndarray:
    """Sentence BLEU (0-100) of each hypothesis against its own references.

    Examples
    --------
    >>> round(float(sentence_bleu(["the cat sat on the mat"], [["the cat was on the mat"]])[0]), 2)
    37.99
    """
    hypotheses, references = _check(hypotheses, references)
    bleu = _bleu(True)
    return np.array([bleu.sentence_score(h, list(r)).score for h, r in zip(hypotheses, references)])


def system_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """Corpus BLEU (0-100) over one system's summaries: n-gram counts pooled over all of them.

    Every hypothesis must have the same number of references (sacrebleu's reference streams).
    """
    hypotheses, references = _check(hypotheses, references)
    n_refs = {len(r) for r in references}
    if len(n_refs) != 1:
        raise ValueError(f"system_bleu needs the same number of references per hypothesis, got {sorted(n_refs)}")
    streams = [list(s) for s in zip(*references)]
    return float(_bleu(False).corpus_score(hypotheses, streams).score)
