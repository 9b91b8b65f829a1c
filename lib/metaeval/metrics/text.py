"""ROUGE-1.5.5's text pipeline: tokenization, SMART stopwords, WordNet-2.0 exceptions, ROUGE's Porter stemmer.

Reproduces ``ROUGE-1.5.5.pl`` (md5 d5a9bde6135cfb21cc23ddf3e3d0c81d) exactly:

* lower-case ASCII letters only; ``-`` becomes its own token and every other byte that is not an ASCII
  letter or digit (each byte of a UTF-8 character too) becomes a space; tokens must start with
  ``[a-z0-9$]``, which drops the ``-`` tokens. Net effect: tokens are the maximal runs of ASCII letters and
  digits, lower-cased;
* stopwords (SMART list, ``-s``) are removed *before* stemming;
* with stemming (``-m``), tokens longer than 3 characters are looked up in the WordNet-2.0 exception
  table (returned verbatim if found) and otherwise stemmed with ROUGE's own Porter variant, whose step 4
  treats ``ement``/``ment``/``ent`` in sequence (``statement -> statem``).

Texts given as one string are split into sentences at newlines (ROUGE's SPL format: one sentence per
line; empty lines are skipped). Sentence boundaries matter only for ROUGE-L and ROUGE-W.

Opt-in, for text that is not English (``tok:unicode`` in a signature; never a default, never ROUGE-1.5.5):
:func:`unicode_tokenize` (NFKC, Unicode case folding, words by Unicode letter/digit classes, one token per
character in scripts written without spaces) and :func:`snowball_stem` (the Snowball stemmer of a language).
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from collections.abc import Sequence
from functools import cache, lru_cache
from pathlib import Path

import numpy as np
import regex

import metaeval._resources as _resources

__all__ = [
    "exception_table",
    "porter_stem",
    "process_tokens",
    "rouge_stem",
    "snowball_stem",
    "SNOWBALL_LANGUAGES",
    "split_ptb_sentences",
    "split_sentences",
    "stopwords",
    "tokenize",
    "tokenize_batch",
    "unicode_tokenize",
]

_TOKEN = re.compile(r"[A-Za-z0-9]+")
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _rouge_data() -> Path:
    return _resources.data_root() / "rouge155"


def split_sentences(text: str) -> list[str]:
    """ROUGE's SPL reading: one sentence per line, empty lines skipped (only ``\\n`` ends a line)."""
    return [line for line in text.split("\n") if len(line) > 0]


_PTB_SENTENCE_END = re.compile(r"(?<= [.!?]) ")


def split_ptb_sentences(text: str) -> list[str]:
    """Split a PTB-tokenized text into sentences after stand-alone ``.``, ``!`` or ``?`` tokens.

    For ROUGE-L/W, which work per sentence (line). SummEval's texts are PTB-tokenized, so the sentence
    ends are the tokens ``" . "``; abbreviations such as ``v.`` stay inside their sentence.

    Examples
    --------
    >>> split_ptb_sentences("mr. smith left . he was tired ! why ?")
    ['mr. smith left .', 'he was tired !', 'why ?']
    """
    return [s for s in _PTB_SENTENCE_END.split(text) if s]


def tokenize(sentence: str) -> list[str]:
    """ROUGE-1.5.5 tokens of one sentence (before stopword removal and stemming).

    Examples
    --------
    >>> tokenize("The ex-Clippers' $2.6 million Résumé")
    ['the', 'ex', 'clippers', '2', '6', 'million', 'r', 'sum']
    """
    return [t.translate(_ASCII_LOWER) for t in _TOKEN.findall(sentence)]


# Bytes that can be part of a token keep their value (after ASCII lower-casing), newlines stay sentence
# separators, everything else becomes a space. Non-ASCII characters are encoded as bytes >= 0x80, which all
# become spaces: the same split as ``tokenize`` on the characters.
_TOKEN_BYTES = bytes(c if (48 <= c <= 57 or 97 <= c <= 122 or c == 10) else 32 for c in range(256))


def tokenize_batch(
    sentences: Sequence[str], *, tokenizer: str = "rouge", lang: str | None = None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """:func:`tokenize` for many sentences at once, as integer ids over a shared vocabulary.

    One pass over all sentences in C (encode, ASCII lower-case, byte translation, split) instead of a
    regular expression and a ``str.translate`` per token; about 10x faster than :func:`tokenize` in a loop.

    Parameters
    ----------
    sentences : sequence of str
        Sentences without newlines (a newline would end the sentence early: ``ValueError``).
    tokenizer : {"rouge", "unicode"}
        ROUGE-1.5.5's tokens (:func:`tokenize`) or :func:`unicode_tokenize`'s.
    lang : str, optional
        The language, for the Unicode tokenizer's case folding (see :func:`unicode_tokenize`).

    Returns
    -------
    ids : ndarray of int64
        The token ids of all sentences, concatenated.
    lengths : ndarray of int64
        Tokens per sentence (``lengths.sum() == ids.size``).
    vocab : list of str
        ``vocab[i]`` is the token of id ``i``, in order of first occurrence.

    Examples
    --------
    >>> ids, lengths, vocab = tokenize_batch(["The cat's hat", "", "the HAT"])
    >>> [vocab[i] for i in ids], lengths.tolist()
    (['the', 'cat', 's', 'hat', 'the', 'hat'], [4, 0, 2])
    """
    n = len(sentences)
    if tokenizer == "unicode":
        return _ids([unicode_tokenize(s, lang) for s in sentences], n)
    if tokenizer != "rouge":
        raise ValueError(f"tokenizer must be 'rouge' or 'unicode', got {tokenizer!r}")
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), []
    joined = "\n".join(sentences)
    lines = joined.encode("utf-8", "surrogatepass").lower().translate(_TOKEN_BYTES).split(b"\n")
    if len(lines) != n:
        raise ValueError("sentences must not contain newlines (split the text into sentences first)")
    ids, lengths, vocab = _ids([line.split() for line in lines], n)
    return ids, lengths, [t.decode("ascii") for t in vocab]


def _ids(tokens: list, n: int) -> tuple[np.ndarray, np.ndarray, list]:
    """Dense ids (in order of first occurrence) of the tokens of ``n`` sentences, the sentence lengths and the
    vocabulary."""
    lengths = np.fromiter(map(len, tokens), np.int64, n)
    flat = list(itertools.chain.from_iterable(tokens))
    first_seen: dict = {}
    # setdefault stores the position of each token's first occurrence; ranking those positions gives
    # dense ids in order of first occurrence without a Python-level branch per token
    raw = np.fromiter(map(first_seen.setdefault, flat, itertools.count()), np.int64, len(flat))
    dense = np.zeros(len(flat), np.int64)
    dense[np.fromiter(first_seen.values(), np.int64, len(first_seen))] = np.arange(len(first_seen))
    return dense[raw], lengths, list(first_seen)


# Scripts written without spaces between words: every letter is a token (with the combining marks that
# follow it). Script_Extensions, so that a character shared by such scripts (the Katakana-Hiragana
# prolonged sound mark) counts with them.
_NO_SPACE = "".join(rf"\p{{scx={s}}}" for s in ("Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar",
                                                 "Tibetan"))
_UNICODE_TOKEN = regex.compile(
    rf"(?=[\p{{L}}\p{{N}}])[{_NO_SPACE}]\p{{M}}*"  # one letter of a script without spaces, its marks
    rf"|(?:(?![{_NO_SPACE}])[\p{{L}}\p{{N}}])(?:(?![{_NO_SPACE}])[\p{{L}}\p{{N}}\p{{M}}])*"  # a word
)


#: format characters (zero-width non-joiner and joiner, soft hyphen, word joiner, direction marks, BOM):
#: they shape or direct the rendering of a word and never end it (UAX #29, rule WB4)
_FORMAT = regex.compile(r"\p{Cf}+")
#: languages whose dotted and dotless i case-fold differently from the Unicode default (SpecialCasing.txt)
TURKIC = ("tr", "az")


def unicode_tokenize(sentence: str, lang: str | None = None) -> list[str]:
    """Tokens of any script: NFKC-normalised and case-folded (``str.casefold``: ``Straße`` -> ``strasse``,
    final sigma -> sigma), words as maximal runs of Unicode letters, digits and combining marks, and one
    token per letter of scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar,
    Tibetan). Punctuation, symbols and spaces separate tokens, as in :func:`tokenize`. Format characters
    (a zero-width non-joiner inside a Persian word, a soft hyphen) are removed, so that they never split a
    word: ``می‌خواهم`` and ``میخواهم`` are one token. With ``lang`` ``"tr"`` or ``"az"``, the dotted and
    dotless i fold as in Turkish (``İ`` -> ``i``, ``I`` -> ``ı``) instead of Unicode's default (``İ`` -> ``i̇``).

    Not ROUGE-1.5.5 (which keeps ASCII letters and digits only): opt in with ``tok:unicode``.

    Examples
    --------
    >>> unicode_tokenize("Η γάτα ΚΆΘΕΤΑΙ. Café naïve, 猫坐在垫子上。")
    ['η', 'γάτα', 'κάθεται', 'café', 'naïve', '猫', '坐', '在', '垫', '子', '上']
    >>> unicode_tokenize("می\u200cخواهم") == unicode_tokenize("میخواهم")
    True
    >>> unicode_tokenize("İSTANBUL ISPARTA", lang="tr")
    ['istanbul', 'ısparta']
    """
    text = _FORMAT.sub("", unicodedata.normalize("NFKC", sentence))
    if lang in TURKIC:
        text = text.replace("İ", "i").replace("I", "ı")
    folded = unicodedata.normalize("NFKC", text.casefold())
    return _UNICODE_TOKEN.findall(folded)


# ISO 639-1 codes of the Snowball stemmers (snowballstemmer, the Snowball project's pure-Python build)
SNOWBALL_LANGUAGES = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german", "el": "greek",
    "en": "english", "eo": "esperanto", "es": "spanish", "et": "estonian", "eu": "basque", "fa": "persian",
    "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi", "hu": "hungarian", "hy": "armenian",
    "id": "indonesian", "it": "italian", "lt": "lithuanian", "ne": "nepali", "nl": "dutch", "no": "norwegian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian", "st": "sesotho",
    "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}


@cache
def _snowball(lang: str):
    import snowballstemmer

    return snowballstemmer.stemmer(SNOWBALL_LANGUAGES[lang])


@lru_cache(maxsize=200_000)
def snowball_stem(token: str, lang: str) -> str:
    """The Snowball stemmer of ``lang`` (an ISO 639-1 code of :data:`SNOWBALL_LANGUAGES`) on one token.

    Examples
    --------
    >>> snowball_stem("γάτες", "el"), snowball_stem("кошки", "ru"), snowball_stem("résumés", "fr")
    ('γατ', 'кошк', 'résum')
    """
    if lang not in SNOWBALL_LANGUAGES:
        raise ValueError(f"lang: no Snowball stemmer for {lang!r}; use one of {sorted(SNOWBALL_LANGUAGES)}")
    return _snowball(lang).stemWord(token)


@cache
def stopwords() -> frozenset[str]:
    """The SMART common-word list that ROUGE's ``-s`` removes (598 lines as shipped with ROUGE-1.5.5)."""
    path = _rouge_data() / "smart_common_words.txt"
    _resources.verify_checksums([path])
    return frozenset(line.rstrip("\n") for line in path.read_text(encoding="latin-1").splitlines(True))


@cache
def exception_table(kind: str = "full") -> dict[str, str]:
    """WordNet-2.0 morphological exceptions as ROUGE's ``WordNet-2.0.exc.db`` holds them.

    Built from adj, adv, noun, verb ``.exc`` files in that order; the first value of each line is kept and
    later lines or files overwrite earlier keys. ``kind="empty"`` returns an empty table, reproducing the
    many installations whose exception database was built empty (Porter-only stemming).
    """
    if kind == "empty":
        return {}
    if kind != "full":
        raise ValueError(f"exceptions must be 'full' or 'empty', got {kind!r}")
    folder = _rouge_data() / "WordNet-2.0-Exceptions"
    files = [folder / f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")]
    _resources.verify_checksums(files)
    table: dict[str, str] = {}
    for path in files:
        for line in path.read_text(encoding="latin-1").splitlines():
            parts = line.split()
            if len(parts) >= 2:
                table[parts[0]] = parts[1]
    return table


# ---------------------------------------------------------------------------------------------------
# ROUGE-1.5.5's Porter stemmer (the Perl "Release 1" port with Lin's step-4 change of 02/14/2004)

_c = "[^aeiou]"
_v = "[aeiouy]"
_C = f"{_c}[^aeiouy]*"
_V = f"{_v}[aeiou]*"
_MGR0 = re.compile(f"^({_C})?{_V}{_C}")
_MEQ1 = re.compile(f"^({_C})?{_V}{_C}({_V})?$")
_MGR1 = re.compile(f"^({_C})?{_V}{_C}{_V}{_C}")
_HAS_V = re.compile(f"^({_C})?{_v}")
_CVC = re.compile(f"^{_C}{_v}[^aeiouwxy]$")
_STEP2 = {
    "ational": "ate", "tional": "tion", "enci": "ence", "anci": "ance", "izer": "ize", "bli": "ble",
    "alli": "al", "entli": "ent", "eli": "e", "ousli": "ous", "ization": "ize", "ation": "ate",
    "ator": "ate", "alism": "al", "iveness": "ive", "fulness": "ful", "ousness": "ous", "aliti": "al",
    "iviti": "ive", "biliti": "ble", "logi": "log",
}
_STEP3 = {"icate": "ic", "ative": "", "alize": "al", "iciti": "ic", "ical": "ic", "ful": "", "ness": ""}
_RE_1A1 = re.compile(r"(ss|i)es$")
_RE_1A2 = re.compile(r"([^s])s$")
_RE_EED = re.compile(r"eed$")
_RE_EDING = re.compile(r"(ed|ing)$")
_RE_ATBLIZ = re.compile(r"(at|bl|iz)$")
_RE_DOUBLE = re.compile(r"([^aeiouylsz])\1$")
_RE_Y = re.compile(r"(y)$")
_RE_2 = re.compile("(" + "|".join(_STEP2) + ")$")
_RE_3 = re.compile("(" + "|".join(_STEP3) + ")$")
_RE_4A = re.compile(r"(al|ance|ence|er|ic|able|ible|ant|ement|ou|ism|ate|iti|ous|ive|ize)$")
_RE_MENT = re.compile(r"ment$")
_RE_ENT = re.compile(r"ent$")
_RE_ION = re.compile(r"(?<=[st])ion$")  # Perl: /(s|t)(ion)$/, stem $` . $1
_RE_E = re.compile(r"e$")
_RE_LL = re.compile(r"ll$")


def _strip(w: str, suffix: re.Pattern, measure: re.Pattern, table: dict[str, str] | None = None) -> str:
    """``w`` with its ``suffix`` replaced by ``table[suffix]`` (or removed) when the stem before it matches
    ``measure``."""
    m = suffix.search(w)
    if m and measure.search(w[: m.start()]):
        return w[: m.start()] + (table[m.group(1)] if table else "")
    return w


def porter_stem(w: str) -> str:
    """ROUGE-1.5.5's Porter stemmer, a line-by-line port of the Perl ``stem`` subroutine.

    Perl's ``$``` (text before the match) is ``w[:m.start()]``; Perl and Python both take the leftmost
    match and the first alternative that matches there, so the suffix patterns agree.

    Examples
    --------
    >>> [porter_stem(w) for w in ["statement", "caresses", "relational", "hopping", "yelling"]]
    ['statem', 'caress', 'relat', 'hop', 'yell']
    """
    if len(w) < 3:
        return w
    firstch = w[0]
    if firstch == "y":
        w = "Y" + w[1:]
    # Step 1a
    w, found = _RE_1A1.subn(r"\1", w, count=1)
    if not found:
        w = _RE_1A2.sub(r"\1", w, count=1)
    # Step 1b
    m = _RE_EED.search(w)
    if m:
        if _MGR0.search(w[: m.start()]):
            w = w[:-1]
    else:
        m = _RE_EDING.search(w)
        if m:
            stem = w[: m.start()]
            if _HAS_V.search(stem):
                w = stem
                if _RE_ATBLIZ.search(w):
                    w += "e"
                elif _RE_DOUBLE.search(w):
                    w = w[:-1]
                elif _CVC.search(w):
                    w += "e"
    w = _strip(w, _RE_Y, _HAS_V, {"y": "i"})  # Step 1c
    w = _strip(w, _RE_2, _MGR0, _STEP2)  # Step 2
    w = _strip(w, _RE_3, _MGR0, _STEP3)  # Step 3
    # Step 4 (Lin, 02/14/2004: "-ement" words do not try "-ment" and "-ent" first; the three are tried in turn)
    w = _strip(_strip(w, _RE_4A, _MGR1), _RE_MENT, _MGR1)
    w = _strip(w, _RE_ENT, _MGR1) if _RE_ENT.search(w) else _strip(w, _RE_ION, _MGR1)
    # Step 5
    m = _RE_E.search(w)
    if m:
        stem = w[: m.start()]
        if _MGR1.search(stem) or (_MEQ1.search(stem) and not _CVC.search(stem)):
            w = stem
    if _RE_LL.search(w) and _MGR1.search(w):
        w = w[:-1]
    if firstch == "y":
        w = "y" + w[1:]
    return w


@lru_cache(maxsize=200_000)
def _stem_cached(token: str, exceptions: str) -> str:
    table = exception_table(exceptions)
    found = table.get(token)
    return found if found is not None else porter_stem(token)


def rouge_stem(token: str, *, exceptions: str = "full") -> str:
    """ROUGE's ``-m`` stemming of one token: tokens of 3 characters or fewer are kept; others go through
    the exception table, then the Porter variant.

    Examples
    --------
    >>> rouge_stem("went"), rouge_stem("statement"), rouge_stem("was")
    ('go', 'statem', 'was')
    """
    if len(token) <= 3:
        return token
    return _stem_cached(token, exceptions)


def process_tokens(tokens: list[str], *, stem: bool, stop: bool, exceptions: str = "full") -> list[str]:
    """Stopword removal (``stop=True``) then stemming (``stem=True``), as ROUGE-1.5.5 orders them."""
    if stop:
        sw = stopwords()
        tokens = [t for t in tokens if t not in sw]
    if stem:
        tokens = [t if len(t) <= 3 else _stem_cached(t, exceptions) for t in tokens]
    return tokens
