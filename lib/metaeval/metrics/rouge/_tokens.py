"""Private: ROUGE's input texts as token-id arrays, shared by every variant of one text-processing setting.

Every distinct text is split into sentences, tokenized once (:func:`_tokenize_texts`), then stopword-filtered
and stemmed per (stem, stop, exceptions) setting on its vocabulary, each type once (:func:`_process`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metaeval.metrics.text import rouge_stem, snowball_stem, stopwords, tokenize_batch


@dataclass
class _Tokens:
    """Every distinct text tokenized once, before stopword removal and stemming."""

    tok: np.ndarray  # base token ids of all sentences, concatenated
    sent_len: np.ndarray  # tokens per sentence
    text_sent: np.ndarray  # sentence offsets per text (T + 1)
    vocab: list[str]  # base id -> token


@dataclass
class _Processed:
    tok: np.ndarray  # all token ids, texts concatenated
    text_tok: np.ndarray  # token offsets per text (T + 1)
    sent_off: np.ndarray  # token offsets per sentence
    text_sent: np.ndarray  # sentence offsets per text (T + 1)
    vocab_size: int


def _tokenize_texts(texts: list[tuple[str, ...]], tokenizer: str = "rouge", lang: str | None = None) -> _Tokens:
    """Tokenize every sentence of every text in one batch (ROUGE-1.5.5's tokens, or ``"unicode"``, whose case
    folding depends on ``lang``). O(total characters)."""
    n_sent = np.fromiter(map(len, texts), np.int64, len(texts))
    text_sent = np.zeros(len(texts) + 1, np.int64)
    np.cumsum(n_sent, out=text_sent[1:])
    tok, sent_len, vocab = tokenize_batch([s for t in texts for s in t], tokenizer=tokenizer, lang=lang)
    return _Tokens(tok, sent_len, text_sent, vocab)


def _process(
    base: _Tokens | list[tuple[str, ...]], stem: bool, stop: bool, exceptions: str, lang: str | None = None
) -> _Processed:
    """Stopword removal then stemming, applied to the vocabulary (each type once), then mapped onto the
    tokens. O(V) Python work (the stemmer's cache makes repeated calls cheap) + O(total tokens) numpy.
    ``base`` may also be the texts themselves (tuples of sentences), tokenized first. With ``lang`` (the
    Unicode tokenizer's texts) stemming is that language's Snowball stemmer, on every token."""
    if not isinstance(base, _Tokens):
        base = _tokenize_texts(list(base))
    vocab = base.vocab
    if stem and lang is not None:
        processed = [snowball_stem(t, lang) for t in vocab]
    elif stem:
        processed = [rouge_stem(t, exceptions=exceptions) for t in vocab]
    else:
        processed = vocab
    ids: dict[str, int] = {}
    new_id = np.fromiter((ids.setdefault(t, len(ids)) for t in processed), np.int64, len(vocab))
    tok = new_id[base.tok] if base.tok.size else base.tok
    sent_len = base.sent_len
    if stop:
        sw = stopwords()
        keep_type = np.fromiter((t not in sw for t in vocab), bool, len(vocab))
        keep = keep_type[base.tok] if base.tok.size else np.zeros(0, bool)
        sent_of = np.repeat(np.arange(sent_len.size), sent_len)
        tok = tok[keep]
        sent_len = np.bincount(sent_of[keep], minlength=sent_len.size).astype(np.int64)
    sent_off = np.zeros(sent_len.size + 1, np.int64)
    np.cumsum(sent_len, out=sent_off[1:])
    return _Processed(
        np.ascontiguousarray(tok, np.int64), sent_off[base.text_sent], sent_off, base.text_sent, max(len(ids), 1)
    )

