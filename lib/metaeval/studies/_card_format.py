"""Number formats shared by the card's text (:mod:`metaeval.studies.card`) and its one-page report
(:mod:`metaeval.studies.card_report`): one rule for a difference too small to show, one for a p-value.

Private: both card modules import it.
"""

from __future__ import annotations

import math

NO_DIFFERENCE = "no difference at this precision"


def fmt_difference(value: float, *, digits: int = 3, signed: bool = True, short: bool = False) -> str:
    """A difference in r at ``digits`` decimals; one that rounds to zero says so instead of ``-0.000``
    (``short``: as a bound alone, for a narrow table cell).

    Examples
    --------
    >>> fmt_difference(0.0123), fmt_difference(-0.0123, signed=False), fmt_difference(-0.0004)
    ('+0.012', '0.012', 'no difference at this precision (|Δr| < 0.0005)')
    >>> fmt_difference(float("nan")), fmt_difference(0.0004, short=True)
    ('nan', '< 0.0005')
    """
    if math.isnan(value):
        return "nan"
    if round(abs(value), digits) == 0:
        bound = f"< {0.5 * 10 ** -digits:g}"
        return bound if short else f"{NO_DIFFERENCE} (|Δr| {bound})"
    return f"{value:+.{digits}f}" if signed else f"{abs(value):.{digits}f}"


def planner_case(difference: float, reached: bool) -> str:
    """What the planner says of one undecided comparison, the one rule for the card's summary and its report:
    ``"no difference"`` (it rounds to zero: no winner to plan a study for), ``"reached"`` (a size within the sizes
    tried has the target power) or ``"not reached"``.

    Examples
    --------
    >>> planner_case(0.0004, False), planner_case(0.02, True), planner_case(0.02, False)
    ('no difference', 'reached', 'not reached')
    """
    if not math.isnan(difference) and round(abs(difference), 3) == 0:  # shown as zero: no winner
        return "no difference"
    return "reached" if reached else "not reached"


def fmt_p(p: float, *, equals: bool = False) -> str:
    """A p-value to 3 significant digits (``< 0.001`` below); ``equals=True`` prefixes ``= `` where needed.

    >>> fmt_p(0.04567), fmt_p(0.0002), fmt_p(0.5, equals=True), fmt_p(0.0002, equals=True)
    ('0.0457', '< 0.001', '= 0.5', '< 0.001')
    """
    text = "nan" if not math.isfinite(p) else f"{p:.3g}" if p >= 0.001 else "< 0.001"
    return text if not equals or text.startswith("<") else "= " + text
