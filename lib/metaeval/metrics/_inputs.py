"""Private: the input check shared by the text metrics (ROUGE, GRouge, embeddings)."""

from __future__ import annotations

from typing import Sequence


def check_records(summaries: Sequence, references: Sequence) -> tuple[list, list]:
    """``summaries`` and ``references`` as lists of equal length; a bare string for either is refused.

    A bare string would otherwise be read as a sequence of one-character texts.
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
    return summaries, references
