"""Private: the warning class of degenerate results, importable from every layer.

Public as :class:`metaeval.DegenerateResultWarning`.
"""

from __future__ import annotations

import warnings

__all__ = ["DegenerateResultWarning", "warn_degenerate"]


class DegenerateResultWarning(RuntimeWarning):
    """A result is NaN or rests on less than was asked for: constant inputs, too few systems, resamples
    dropped because their statistic was undefined, an empty null distribution. The message says why."""


def warn_degenerate(message: str, stacklevel: int = 3) -> None:
    warnings.warn(message, DegenerateResultWarning, stacklevel=stacklevel)
