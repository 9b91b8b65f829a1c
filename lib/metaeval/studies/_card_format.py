"""Number formats shared by the card's text (:mod:`metaeval.studies.card`) and its one-page report
(:mod:`metaeval.studies.card_report`): one rule for a difference too small to show.

Private: both card modules import it.
"""

from __future__ import annotations

import math

NO_DIFFERENCE = "no difference at this precision"


def fmt_difference(value: float, *, digits: int = 3, signed: bool = True) -> str:
    """A difference in r at ``digits`` decimals; one that rounds to zero says so instead of ``-0.000``.

    Examples
    --------
    >>> fmt_difference(0.0123), fmt_difference(-0.0123, signed=False), fmt_difference(-0.0004)
    ('+0.012', '0.012', 'no difference at this precision (|Δr| < 0.0005)')
    >>> fmt_difference(float("nan"))
    'nan'
    """
    if math.isnan(value):
        return "nan"
    if round(abs(value), digits) == 0:
        return f"{NO_DIFFERENCE} (|Δr| < {0.5 * 10 ** -digits:g})"
    shown = value if signed else abs(value)
    return f"{shown:+.{digits}f}" if signed else f"{shown:.{digits}f}"


def rounds_to_zero(value: float, digits: int = 3) -> bool:
    """True when ``value`` shows as zero at ``digits`` decimals (the card then names no winner)."""
    return not math.isnan(value) and round(abs(value), digits) == 0
