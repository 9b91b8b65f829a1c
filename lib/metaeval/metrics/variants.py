"""Metric variants as values with compact, stable signatures (in the style of sacreBLEU's).

A summary-level ROUGE variant is a :class:`RougeVariant`: a counting method (:class:`Measure`), stemming,
stopword removal, the statistic (P, R or F) and the reference mode (A: counts pooled over references,
ROUGE's ``-f A``; B: best reference, ``-f B``). Its signature reads::

    rouge-su4|stem:yes|stop:no|stat:F|refs:A

A system-level variant (:class:`SystemVariant`) adds how a system's summary scores are aggregated::

    rouge-su4|stem:yes|stop:no|stat:F|agg:mean|refs:A

Non-default settings are appended (``|exc:empty`` for an empty WordNet exception table, ``|alpha:0.8``,
``|tok:unicode|lang:el`` for the opt-in Unicode tokenizer and a language's Snowball stemmer).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "Measure",
    "RougeVariant",
    "SystemVariant",
    "parse_measure",
    "parse_variant",
    "unique_options",
    "graham_measures",
    "graham_variants",
    "lin_measures",
    "rouge155_variants",
]

#: the largest ROUGE-W weight: 10,000 ** 16 = 1e64, far within float64 for texts of any realistic length
MAX_W_WEIGHT = 16.0

_MEASURE = re.compile(
    r"^(?:r|rouge)-?(?:(?P<n>\d+)|(?P<l>l)|(?P<w>w)-?(?P<weight>\d+(?:\.\d+)?)?|(?P<s>su|s)(?P<skip>\d+|\*))$",
    re.IGNORECASE,
)


@dataclass(frozen=True, order=True)
class Measure:
    """A ROUGE counting method: ``kind`` is ``"n"`` (n-grams), ``"l"`` (LCS), ``"w"`` (weighted LCS),
    ``"s"`` (skip-bigrams) or ``"su"`` (skip-bigrams plus unigrams). ``skip=-1`` means unlimited (S*, SU*)."""

    kind: Literal["n", "l", "w", "s", "su"]
    n: int = 0
    weight: float = 0.0
    skip: int = 0

    def __post_init__(self):
        if self.kind not in ("n", "l", "w", "s", "su"):
            raise ValueError(f"kind must be one of n, l, w, s, su; got {self.kind!r}")
        if self.kind == "n" and (not isinstance(self.n, int) or self.n < 1):
            raise ValueError(f"n must be an integer >= 1 for ROUGE-N, got {self.n!r}")
        if self.kind == "w" and not 1 < self.weight <= MAX_W_WEIGHT:
            # k ** weight for a text of k words overflows float64 (and the score with it) beyond this
            raise ValueError(f"ROUGE-W weight must be in (1, {MAX_W_WEIGHT:g}] (ROUGE-1.5.5's is 1.2; with a larger "
                             f"one the weighted LCS of a long text overflows), got {self.weight!r}: e.g. R-W1.2")
        if self.kind in ("s", "su") and not (isinstance(self.skip, int) and (self.skip >= 0 or self.skip == -1)):
            raise ValueError(f"skip must be an integer >= 0, or -1 for unlimited, got {self.skip!r}")

    @property
    def name(self) -> str:
        """ROUGE-1.5.5's name: R-1, R-L, R-W1.2, R-S4, R-SU*."""
        if self.kind == "n":
            return f"R-{self.n}"
        if self.kind == "l":
            return "R-L"
        if self.kind == "w":
            return f"R-W{self.weight:g}"
        return f"R-{self.kind.upper()}{'*' if self.skip < 0 else self.skip}"

    @property
    def slug(self) -> str:
        """Signature form: rouge-1, rouge-l, rouge-w1.2, rouge-su4."""
        return "rouge-" + self.name[2:].lower()

    def __str__(self) -> str:
        return self.name


def parse_measure(text: str) -> Measure:
    """Parse ``R-1``, ``rouge-2``, ``R-L``, ``R-W1.2``, ``R-W-1.2``, ``rouge-w`` (weight 1.2), ``R-S4``, ``R-SU*``.

    Examples
    --------
    >>> parse_measure("R-SU4"), parse_measure("rouge-w-1.2").name
    (Measure(kind='su', n=0, weight=0.0, skip=4), 'R-W1.2')
    """
    if isinstance(text, Measure):
        return text
    m = _MEASURE.match(str(text).strip())
    if not m:
        raise ValueError(
            f"unknown ROUGE measure {text!r}; expected e.g. R-1, R-2, R-L, R-W1.2, R-S4, R-SU4, R-S*, R-SU*"
        )
    if m.group("n"):
        n = int(m.group("n"))
        if n < 1:
            raise ValueError(f"ROUGE-N needs n >= 1, got {text!r}")
        return Measure("n", n=n)
    if m.group("l"):
        return Measure("l")
    if m.group("w"):
        return Measure("w", weight=float(m.group("weight") or 1.2))
    skip = m.group("skip")
    return Measure(m.group("s").lower(), skip=-1 if skip == "*" else int(skip))  # type: ignore[arg-type]  # regex: s|su


_YES = {"yes": True, "no": False, "1": True, "0": False}


@dataclass(frozen=True)
class RougeVariant:
    """A summary-level ROUGE variant.

    Examples
    --------
    >>> v = RougeVariant(parse_measure("R-SU4"), stem=True, stop=False, stat="F")
    >>> v.signature, v.key
    ('rouge-su4|stem:yes|stop:no|stat:F|refs:A', 'R-SU4|stem=1|stop=0|F')
    """

    measure: Measure
    stem: bool = True
    stop: bool = False
    stat: Literal["P", "R", "F"] = "F"
    refs: Literal["A", "B"] = "A"
    exceptions: Literal["full", "empty"] = "full"
    alpha: float = 0.5
    tok: Literal["rouge", "unicode"] = "rouge"
    lang: str | None = None

    def __post_init__(self):
        if self.stat not in ("P", "R", "F"):
            raise ValueError(f"stat must be 'P', 'R' or 'F', got {self.stat!r}")
        if self.refs not in ("A", "B"):
            raise ValueError(f"refs must be 'A' (pooled) or 'B' (best reference), got {self.refs!r}")
        if self.exceptions not in ("full", "empty"):
            raise ValueError(f"exceptions must be 'full' or 'empty', got {self.exceptions!r}")
        if not (isinstance(self.alpha, (int, float)) and 0 <= self.alpha <= 1):
            raise ValueError(f"alpha must be in [0, 1], got {self.alpha!r}")
        if self.tok not in ("rouge", "unicode"):
            raise ValueError(f"tok must be 'rouge' (ROUGE-1.5.5's tokens) or 'unicode', got {self.tok!r}")
        if self.tok == "rouge":
            if self.lang is not None:
                raise ValueError(f"lang ({self.lang!r}) applies to tok:unicode only; ROUGE-1.5.5's tokens are English")
            return
        # tok:unicode is not ROUGE-1.5.5: its options that only make sense there are refused, not ignored
        from metaeval.metrics.text import SNOWBALL_LANGUAGES

        if self.exceptions != "full":
            raise ValueError("exc selects ROUGE-1.5.5's WordNet exception table (tok:rouge); tok:unicode has none")
        if self.stem and self.lang not in SNOWBALL_LANGUAGES:
            raise ValueError(
                f"stem with tok:unicode uses the Snowball stemmer of lang, got lang {self.lang!r}: give lang as one "
                f"of {', '.join(sorted(SNOWBALL_LANGUAGES))}, or stem:no"
            )
        if self.stop and self.lang != "en":
            raise ValueError("stop with tok:unicode removes the English SMART list: only with lang:en; else stop:no")

    @property
    def signature(self) -> str:
        yn = lambda b: "yes" if b else "no"  # noqa: E731
        sig = f"{self.measure.slug}|stem:{yn(self.stem)}|stop:{yn(self.stop)}|stat:{self.stat}|refs:{self.refs}"
        if self.exceptions != "full":
            sig += f"|exc:{self.exceptions}"
        if self.alpha != 0.5:
            sig += f"|alpha:{self.alpha:g}"
        if self.tok != "rouge":
            sig += f"|tok:{self.tok}" + (f"|lang:{self.lang}" if self.lang else "")
        return sig

    @property
    def key(self) -> str:
        """The key of the golden files and of ``metaeval rouge`` output: ``R-SU4|stem=1|stop=0|F[|f=B]``."""
        key = f"{self.measure.name}|stem={int(self.stem)}|stop={int(self.stop)}|{self.stat}"
        key += "|f=B" if self.refs == "B" else ""
        # a value of another tokenizer is never named like a ROUGE-1.5.5 value
        if self.tok != "rouge":
            key += f"|tok={self.tok}" + (f"|lang={self.lang}" if self.lang else "")
        return key

    @property
    def setting(self) -> tuple[bool, bool, str, str, str | None]:
        """What the text processing depends on: (stem, stop, exceptions, tok, lang)."""
        return self.stem, self.stop, self.exceptions, self.tok, self.lang

    def __str__(self) -> str:
        return self.signature


@dataclass(frozen=True)
class SystemVariant:
    """A system-level variant: a summary-level variant aggregated over a system's summaries (mean/median)."""

    rouge: RougeVariant
    agg: Literal["mean", "median"] = "mean"

    def __post_init__(self):
        if self.agg not in ("mean", "median"):
            raise ValueError(f"agg must be 'mean' or 'median', got {self.agg!r}")

    @property
    def signature(self) -> str:
        base, _, rest = self.rouge.signature.partition("|refs:")
        return f"{base}|agg:{self.agg}|refs:{rest}"

    def __str__(self) -> str:
        return self.signature


def parse_variant(text: str) -> RougeVariant | SystemVariant:
    """Parse a signature (``rouge-su4|stem:yes|stop:no|stat:F[|agg:mean]|refs:A``) or a golden key
    (``R-SU4|stem=1|stop=0|F[|f=B]``). An option given twice with different values (``stat:P|stat:R``,
    ``stem:yes|stem=0``, ``R-1|F|P``) is an error naming both.

    Examples
    --------
    >>> parse_variant("R-2|stem=1|stop=0|R").signature
    'rouge-2|stem:yes|stop:no|stat:R|refs:A'
    """
    if isinstance(text, (RougeVariant, SystemVariant)):
        return text
    parts = str(text).strip().split("|")
    measure = parse_measure(parts[0])
    fields: list[tuple[str, str, str]] = []
    for part in parts[1:]:
        if part.strip() in ("P", "R", "F"):
            fields.append(("stat", part.strip(), part))  # the golden keys' bare statistic
            continue
        sep = ":" if ":" in part else "="
        name, _, value = part.partition(sep)
        if not value:
            raise ValueError(f"cannot parse {part!r} in variant {text!r}")
        name = name.strip().lower()
        fields.append(("refs" if name == "f" else name, value.strip(), part))
    opts = unique_options(text, fields, same=_same_rouge_value)
    stat = opts.pop("stat", "F")
    tok = opts.pop("tok", "rouge").lower()
    lang = opts.pop("lang", None)
    try:
        # the Unicode tokenizer stems only when asked (and then with lang's Snowball stemmer)
        stem = _YES[opts.pop("stem", "yes" if tok == "rouge" else "no").lower()]
        stop = _YES[opts.pop("stop", "no").lower()]
    except KeyError:
        raise ValueError(f"stem and stop must be yes/no or 1/0 in variant {text!r}") from None
    refs = opts.pop("refs", "A")
    agg = opts.pop("agg", None)
    exceptions = opts.pop("exc", "full")
    alpha_text = opts.pop("alpha", "0.5")
    try:
        alpha = float(alpha_text)
    except ValueError:
        raise ValueError(f"variant {text!r}: option alpha:{alpha_text} is not a number; give the weight of "
                         "precision in the F-measure in [0, 1], e.g. alpha:0.5") from None
    if opts:
        raise ValueError(f"unknown option(s) {sorted(opts)} in variant {text!r}")
    # the option values are checked by RougeVariant / SystemVariant.__post_init__
    rv = RougeVariant(measure, stem, stop, stat.upper(), refs.upper(), exceptions, alpha,  # type: ignore[arg-type]
                      tok, lang.lower() if lang else None)  # type: ignore[arg-type]
    return SystemVariant(rv, agg) if agg else rv  # type: ignore[arg-type]


def _same_rouge_value(name: str, value: str) -> str:
    """The form in which two values of one option are compared: ``stem:yes`` = ``stem=1``, ``stat:f`` = ``F``."""
    if name in ("stem", "stop"):
        return str(_YES.get(value.lower(), value))
    if name in ("stat", "refs", "agg", "exc", "tok", "lang"):
        return value.upper() if name in ("stat", "refs") else value.lower()
    if name == "alpha":
        try:
            return repr(float(value))
        except ValueError:
            return value
    return value


def unique_options(text, fields, *, same=None) -> dict[str, str]:
    """The options of a signature as a dict, refusing one given twice with different values.

    Parameters
    ----------
    text : str
        The signature, named in the error.
    fields : iterable of (name, value, field)
        Each option's canonical name, its value and the field as written (for the error).
    same : callable, optional
        ``same(name, value)`` is the form in which two values are compared (default: the value itself); an
        option repeated with the same value is kept once.

    Examples
    --------
    >>> unique_options("rouge-1|stat:P|stat:R", [("stat", "P", "stat:P"), ("stat", "R", "stat:R")])
    Traceback (most recent call last):
    ...
    ValueError: variant 'rouge-1|stat:P|stat:R': conflicting options 'stat:P' and 'stat:R' (give each option once)
    """
    seen: dict[str, tuple[str, str, str]] = {}
    for name, value, field in fields:
        key = same(name, value) if same is not None else value
        if name in seen and seen[name][1] != key:
            raise ValueError(
                f"variant {text!r}: conflicting options {seen[name][2]!r} and {field!r} (give each option once)"
            )
        seen.setdefault(name, (value, key, field))
    return {name: value for name, (value, _key, _field) in seen.items()}


GRAHAM_MEASURES = ("R-1", "R-2", "R-3", "R-4", "R-L", "R-W1.2", "R-S4", "R-SU4")
LIN_MEASURES = (
    "R-1", "R-2", "R-3", "R-4", "R-5", "R-6", "R-7", "R-8", "R-9",
    "R-L", "R-S*", "R-S4", "R-S9", "R-SU*", "R-SU4", "R-SU9", "R-W1.2",
)


def graham_measures() -> list[Measure]:
    """The 8 counting methods of Graham (2015): R-1..4, R-L, R-W-1.2, R-S4, R-SU4."""
    return [parse_measure(m) for m in GRAHAM_MEASURES]


def lin_measures() -> list[Measure]:
    """Lin's (2004) 17 measures: R-1..9, R-L, R-S*, R-S4, R-S9, R-SU*, R-SU4, R-SU9, R-W-1.2."""
    return [parse_measure(m) for m in LIN_MEASURES]


def rouge155_variants(
    measures=GRAHAM_MEASURES, *, refs: str = "A", exceptions: str = "full"
) -> list[RougeVariant]:
    """Summary-level variants: every measure x stem (no, yes) x stop (no, yes) x stat (P, R, F).

    With Graham's 8 measures these are the 96 values ROUGE-1.5.5 prints per summary (the golden files).
    """
    return [
        RougeVariant(parse_measure(m), stem, stop, stat, refs, exceptions)  # type: ignore[arg-type]  # checked there
        for m, stem, stop, stat in itertools.product(measures, (False, True), (False, True), ("P", "R", "F"))
    ]


def graham_variants(*, refs: str = "A") -> list[SystemVariant]:
    """Graham's (2015) 192 system-level variants: 8 methods x stemming x stopwords x P/R/F x mean/median."""
    return [SystemVariant(v, agg) for v in rouge155_variants(refs=refs) for agg in ("mean", "median")]
