"""The built-in correlation coefficients: one record each (:data:`REGISTRY`), from which the public names
(:data:`COEFFICIENTS`, :data:`FISHER_COEFFICIENTS`, the ``Coefficient`` Literal, checked by a test), the command
line's choices, the figures' labels and the resampling functions' memory estimates derive.

Adding a coefficient: its kernel (a function ``(x, z, w) -> r`` along the last axis of a batch, see
CONTRIBUTING.md) and one :class:`CoefficientInfo` here. This module imports nothing heavy, so that the command
line can build its choices from it without loading scipy.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["CoefficientInfo", "REGISTRY", "COEFFICIENTS", "FISHER_COEFFICIENTS", "coefficient_label"]


@dataclass(frozen=True)
class CoefficientInfo:
    """One built-in correlation coefficient.

    Attributes
    ----------
    name : str
        The ``coefficient=`` value.
    label : str
        How figures and text name it ("Kendall's τ").
    kernel : str
        ``"module:function"`` of its kernel ``(x, z, w) -> r``: the coefficient along the last axis of a batch,
        ``w`` an optional 0/1 validity mask, NaN where undefined (loaded on first use: :attr:`function`).
    rank_based : bool
        It depends on the order of the values only: system scores that are equal up to rounding (means summed in
        another order) are snapped before it is computed, so that they tie
        (:func:`~metaeval.stats.correlation.system_corr`).
    fisher : bool
        Bonett & Wright's Fisher-interval constants exist for it, so ``fisher_ci`` and Williams' test apply (and
        the report card, which runs Williams' test, offers it).
    memory : {"cells", "pairs", "short-pairs"}
        What its kernel builds per vector of n entries: O(n) ("cells"), all n (n - 1) / 2 pairs ("pairs"), or pairs
        below ``metaeval.stats._pairs.SORTED_FROM`` entries and O(n) by sorting beyond ("short-pairs"); the
        resampling functions size their chunks and refuse calls that would not fit from it.
    """

    name: str
    label: str
    kernel: str
    rank_based: bool
    fisher: bool
    memory: str = "cells"

    @property
    def function(self) -> Callable[..., Any]:
        return _load(self.kernel)


@functools.cache
def _load(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


REGISTRY: dict[str, CoefficientInfo] = {c.name: c for c in (
    CoefficientInfo("pearson", "Pearson's r", "metaeval.stats._kernels:pearson", rank_based=False, fisher=True),
    CoefficientInfo("spearman", "Spearman's ρ", "metaeval.stats._kernels:spearman", rank_based=True, fisher=True),
    CoefficientInfo("kendall", "Kendall's τ", "metaeval.stats._pairs:kendall", rank_based=True, fisher=True,
                    memory="short-pairs"),
    CoefficientInfo("kendall-c", "Kendall's τ-c", "metaeval.stats._pairs:kendall_c", rank_based=True, fisher=False,
                    memory="short-pairs"),
    CoefficientInfo("pairwise-accuracy", "pairwise accuracy", "metaeval.stats._pairs:pairwise_agreement",
                    rank_based=True, fisher=False, memory="pairs"),
)}
COEFFICIENTS = tuple(REGISTRY)
#: coefficients with Fisher-interval constants (Bonett & Wright) and Williams' test
FISHER_COEFFICIENTS = tuple(c.name for c in REGISTRY.values() if c.fisher)


def coefficient_label(coefficient) -> str:
    """How figures and text name a coefficient: its label, or a callable's ``__name__``.

    >>> coefficient_label("kendall")
    "Kendall's τ"
    """
    if callable(coefficient):
        return getattr(coefficient, "__name__", "callable")
    if not isinstance(coefficient, str) or coefficient not in REGISTRY:
        raise ValueError(f"coefficient must be one of {COEFFICIENTS}, got {coefficient!r}")
    return REGISTRY[coefficient].label
