"""Private: the input checks shared by the text metrics (ROUGE, GRouge, embeddings)."""

from __future__ import annotations

from typing import Sequence


def check_records(summaries: Sequence, references: Sequence) -> tuple[list, list]:
    """``summaries`` and ``references`` as lists of equal length, each record's references a list; a bare
    string for either is refused (it would otherwise be read as a sequence of one-character texts).
    """
    if isinstance(summaries, (str, bytes)):
        raise TypeError("summaries must be a sequence of texts, not a single string")
    if isinstance(references, (str, bytes)):
        raise TypeError("references must be a sequence of reference lists, not a single string")
    summaries, references = list(summaries), list(references)
    if len(summaries) != len(references):
        raise ValueError(
            f"summaries and references must have the same length, got {len(summaries)} and {len(references)}"
        )
    for r, refs in enumerate(references):
        if not isinstance(refs, (list, tuple)):
            raise TypeError(f"references[{r}] must be a list of reference texts, got {type(refs).__name__}")
    return summaries, references


def as_sentences(text, where: str) -> tuple[str, ...]:
    """One text as ROUGE lines: a string is split at newlines (empty lines skipped), a list of strings is one
    or more lines per item (newlines inside are line breaks too), None is the empty text; anything else is
    refused, naming ``where``.

    Examples
    --------
    >>> as_sentences(["One.", "Two.\\nThree."], "summaries[0]")
    ('One.', 'Two.', 'Three.')
    >>> as_sentences(None, "summaries[0]")
    ()
    """
    from metaeval.metrics.text import split_sentences

    if text is None:
        return ()
    if isinstance(text, str):
        return tuple(split_sentences(text))
    if isinstance(text, (list, tuple)):
        for k, s in enumerate(text):
            if not isinstance(s, str):
                raise TypeError(f"{where}[{k}] is {type(s).__name__ if s is not None else 'None'}, not a sentence "
                                f"string: remove it from the list, or pass '' for an empty sentence")
        return tuple(line for s in text for line in split_sentences(s))
    raise TypeError(f"{where} must be a string or a list of sentence strings, got {type(text).__name__}")
