"""GRouge's settings (a frozen options dataclass), its variants and their signatures."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, fields, replace

import numpy as np

from metaeval.metrics.variants import Measure

__all__ = ["DEFAULT_ALIGN_TOPK", "DEFAULT_TOPK", "GRougeOptions", "GRougeVariant", "GRougeWarning", "parse_variant"]

DEFAULT_TOPK = 5000  # ADW: its single-sense signatures are stored truncated to their top 5000 dimensions
DEFAULT_ALIGN_TOPK = 500  # ADW's alignmentVecSize (config/adw.properties)
ALIGN_MEASURES = ("cosine", "wo")


class GRougeWarning(UserWarning):
    """A GRouge value is undefined (NaN) for a record, or a cache entry was rejected and recomputed."""


def _check_topk(topk, name: str = "topk") -> None:
    if topk is None:
        return
    if isinstance(topk, bool) or not isinstance(topk, (int, np.integer)) or topk < 1:
        raise ValueError(f"{name} must be a positive integer or None (all dimensions), got {topk!r}")


@dataclass(frozen=True)
class GRougeOptions:
    """Every GRouge setting but the n-gram kind and lam (as mt-metrics-eval's ``PermutationSigDiffParams``).

    Parameters
    ----------
    restart, iterations
        PPR restart probability (the paper: 0.15) and power iterations (the paper: 30).
    topk
        Dimensions kept per single-sense PPR vector (ADW: 5000); None keeps every non-zero dimension
        (exact, slow). Text vectors (means of single-sense vectors) are never truncated again.
    align
        Alignment measure between senses: ``"cosine"`` (ADW's code, ``alignmentSimMeasure=Cosine``) or
        ``"wo"`` (Weighted Overlap, as the GRouge paper's text describes the comparison of PPR vectors).
    align_topk
        Dimensions of each single-sense vector the alignment compares (ADW's ``alignmentVecSize``: 500).
    stem, stop
        ROUGE's stemming and stopword removal for the lexical counts (the paper: stemming, stopwords kept).

    Examples
    --------
    >>> GRougeOptions().tag
    'restart:0.15|iter:30|topk:5000|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no'
    """

    restart: float = 0.15
    iterations: int = 30
    topk: int | None = DEFAULT_TOPK
    align: str = "cosine"
    align_topk: int = DEFAULT_ALIGN_TOPK
    stem: bool = True
    stop: bool = False

    def __post_init__(self):
        if not 0.0 < float(self.restart) < 1.0:
            raise ValueError(f"restart must be in (0, 1), got {self.restart!r}")
        if isinstance(self.iterations, bool) or not isinstance(self.iterations, (int, np.integer)) \
                or self.iterations < 1:
            raise ValueError(f"iterations must be an integer >= 1, got {self.iterations!r}")
        _check_topk(self.topk)
        _check_topk(self.align_topk, "align_topk")
        if self.align not in ALIGN_MEASURES:
            raise ValueError(f"align must be one of {ALIGN_MEASURES}, got {self.align!r}")
        for name in ("stem", "stop"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")

    @property
    def vector_key(self) -> tuple[float, int, int | None]:
        """What the single-sense vectors depend on."""
        return (float(self.restart), int(self.iterations), self.topk)

    @property
    def tag(self) -> str:
        topk = "all" if self.topk is None else str(self.topk)
        return (f"restart:{self.restart:g}|iter:{self.iterations}|topk:{topk}|align:{self.align}@{self.align_topk}"
                f"|sw:out|wn:3.0|stem:{'yes' if self.stem else 'no'}|stop:{'yes' if self.stop else 'no'}")


_NAME = re.compile(r"^(?:g|grouge)-?(?:(?P<n>\d+)|su(?P<skip>\d+))$", re.IGNORECASE)
_OPTION_NAMES = tuple(f.name for f in fields(GRougeOptions))


@dataclass(frozen=True)
class GRougeVariant:
    """One GRouge configuration; ``signature`` names it in results.

    Examples
    --------
    >>> GRougeVariant(Measure("n", n=2)).signature
    'grouge-2|lam:0.5|restart:0.15|iter:30|topk:5000|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no|refs:A'
    """

    measure: Measure
    lam: float = 0.5
    options: GRougeOptions = field(default_factory=GRougeOptions)

    def __post_init__(self):
        if self.measure.kind not in ("n", "su"):
            raise ValueError(f"GRouge supports n-grams and SU (skip-bigrams + unigrams), got {self.measure}")
        if self.measure.kind == "su" and self.measure.skip < 0:
            raise ValueError("GRouge-SU needs a finite skip distance")
        if not 0.0 <= float(self.lam) <= 1.0:
            raise ValueError(f"lam must be in [0, 1], got {self.lam!r}")
        if not isinstance(self.options, GRougeOptions):
            raise TypeError(f"options must be a GRougeOptions, got {type(self.options).__name__}")

    def __getattr__(self, name):  # the options' fields read as the variant's own (v.topk, v.stem)
        if name in _OPTION_NAMES:
            return getattr(self.options, name)
        raise AttributeError(name)

    @property
    def slug(self) -> str:
        return f"grouge-{self.measure.n}" if self.measure.kind == "n" else f"grouge-su{self.measure.skip}"

    @property
    def signature(self) -> str:
        return f"{self.slug}|lam:{self.lam:g}|{self.options.tag}|refs:A"

    def __str__(self) -> str:
        return self.signature


def _field(text: str, key: str, value: str, kw: dict) -> None:
    try:
        if key == "lam":
            kw["lam"] = float(value)
        elif key == "restart":
            kw["restart"] = float(value)
        elif key == "iter":
            kw["iterations"] = int(value)
        elif key == "topk":
            kw["topk"] = None if value == "all" else int(value)
        elif key == "align":
            measure, _, k = value.partition("@")
            kw["align"] = measure
            if k:
                kw["align_topk"] = int(k)
        elif key in ("stem", "stop"):
            if value not in ("yes", "no"):
                raise ValueError(f"{key} must be yes or no")
            kw[key] = value == "yes"
        elif key in ("wn", "refs", "sw"):
            if (key, value) not in (("wn", "3.0"), ("refs", "A"), ("sw", "out")):
                raise ValueError(f"variant {text!r}: only wn:3.0, sw:out and refs:A are supported")
        else:
            raise ValueError(f"variant {text!r}: unknown field {key!r}")
    except ValueError as exc:
        if "variant" in str(exc):
            raise
        raise ValueError(f"variant {text!r}: bad value for {key!r}: {exc}") from None


def parse_variant(text, *, options: GRougeOptions | None = None, lam: float = 0.5, **settings) -> GRougeVariant:
    """A variant from a name (``grouge-2``, ``G-SU4``, ``gROUGE-1``) or a signature; ``options``/``settings``
    fill the rest (a signature's own fields win). A field given twice is an error.

    Examples
    --------
    >>> parse_variant("G-SU4", lam=0.3).signature
    'grouge-su4|lam:0.3|restart:0.15|iter:30|topk:5000|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no|refs:A'
    """
    if isinstance(text, GRougeVariant):
        return text
    if not isinstance(text, str):
        raise TypeError(f"variant must be a string or GRougeVariant, got {type(text).__name__}")
    head, *parts = text.strip().split("|")
    m = _NAME.match(head.strip())
    if not m:
        raise ValueError(f"variant {text!r}: expected grouge-N or grouge-SU<skip> (e.g. grouge-2, G-SU4)")
    measure = Measure("n", n=int(m["n"])) if m["n"] else Measure("su", skip=int(m["skip"]))
    kw: dict = {"lam": lam}
    seen: set[str] = set()
    for f in parts:
        key, _, value = f.strip().partition(":")
        if key in seen:
            raise ValueError(f"variant {text!r}: field {key!r} given twice (contradictory settings are refused)")
        seen.add(key)
        _field(text, key, value, kw)
    base = options if options is not None else GRougeOptions()
    if settings:
        base = replace(base, **settings)
    own = {k: v for k, v in kw.items() if k != "lam"}
    return GRougeVariant(measure, float(kw["lam"]), replace(base, **own) if own else base)
