"""The card's tests section as a baseline x level grid for its heatmap (:func:`significance_grid`).

Private to the studies layer: :mod:`metaeval.studies.card` re-exports it (notebook 61 draws the heatmap).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metaeval.studies._card_format import fmt_p as _fmt_p


@dataclass(frozen=True)
class SignificanceGrid:
    """The tests section as a baseline x level grid for a heatmap (:func:`significance_grid`)."""

    #: sign of the difference in r (+: the new metric correlates better) x -log10 of the adjusted two-sided p,
    #: clipped to ``limit``: strong evidence either way is a strong colour, its side the direction
    evidence: pd.DataFrame
    #: cell text: the difference in r and the adjusted p, followed by an asterisk (``*``) where the test is significant
    labels: pd.DataFrame
    #: adjusted two-sided p < alpha
    significant: pd.DataFrame
    #: -log10 of the smallest p the colour scale shows apart (p = 0.001)
    limit: float
    #: -log10(alpha): the colour scale's significance boundary
    boundary: float


def significance_grid(tests: pd.DataFrame, *, alpha: float, name: Callable[[str], str] = str,
                      limit: float = 3.0) -> SignificanceGrid:
    """The card's tests table as grids (rows: baselines by display name, columns: levels, both in the card's
    order) of signed evidence, cell labels and significance after the card's Bonferroni adjustment.

    Examples
    --------
    >>> t = pd.DataFrame({"level": ["system", "system"], "baseline": ["a", "b"], "difference": [0.05, -0.01],
    ...                   "p_two_sided_bonferroni": [0.028, 0.07]})
    >>> g = significance_grid(t, alpha=0.05)
    >>> g.labels["system"].tolist(), g.significant["system"].tolist()
    (['+0.050\\np = 0.028 *', '-0.010\\np = 0.07'], [True, False])
    >>> [round(v, 2) for v in g.evidence["system"]], round(g.boundary, 2)
    ([1.55, -1.15], 1.3)
    """
    limit = max(float(limit), float(-np.log10(alpha)) + 1)  # the alpha boundary always inside the scale
    p = tests["p_two_sided_bonferroni"].astype(float).clip(lower=10.0 ** -limit, upper=1.0)
    frame = tests.assign(
        row=[name(b) for b in tests["baseline"]],
        evidence=np.sign(tests["difference"].astype(float)) * -np.log10(p),
        significant=tests["p_two_sided_bonferroni"] < alpha,
        label=[f"{d:+.3f}\np {_fmt_p(q, equals=True)}{' *' if q < alpha else ''}"
               for d, q in zip(tests["difference"], tests["p_two_sided_bonferroni"])])
    rows, cols = list(dict.fromkeys(frame["row"])), list(dict.fromkeys(frame["level"]))

    def grid(column: str) -> pd.DataFrame:
        return frame.pivot(index="row", columns="level", values=column).reindex(index=rows, columns=cols)

    return SignificanceGrid(evidence=grid("evidence").astype(float), labels=grid("label"),
                            significant=grid("significant").astype(bool), limit=limit,
                            boundary=float(-np.log10(alpha)))
