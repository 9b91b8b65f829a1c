"""Private: embedding-metric variant names, their options and signatures (``parse_variant``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

DEFAULT_VARIANTS = (
    "cent-c", "cent-e",
    "rwmd-l-e", "rwmd-r-e", "rwmd-m-e", "rwmd-l-c", "rwmd-r-c", "rwmd-m-c",
    "wmd",
    "rouge-we-1", "rouge-we-2", "rouge-we-su4",
)
#: SummEval's ROUGE-WE similarity threshold (``THRESHOLD`` in ``s3_utils._soft_overlap``).
DEFAULT_THRESHOLD = 0.8


_YES = {"yes": True, "no": False, "1": True, "0": False}
_WE = re.compile(r"^rouge-we(?P<pos>pos)?-(?:(?P<n>\d)|su(?P<skip>\d))$")
_TOKENIZERS = ("rouge155", "summeval")


@dataclass(frozen=True)
class EmbeddingVariant:
    """One embedding metric configuration; :meth:`signature` names it with the embedding used.

    Examples
    --------
    >>> parse_variant("rouge-we-2|stem:yes|stat:R").signature("glove-6b-50d", 50)
    'rouge-we-2|emb:glove-6b-50d|dim:50|rule:summeval|sim:cos|thr:0.8|tok:rouge155|stem:yes|stop:no|stat:R|refs:A'
    >>> parse_variant("rouge-wepos-su4|stat:R").signature("glove-6b-50d", 50)
    'rouge-wepos-su4|emb:glove-6b-50d|dim:50|rule:positional|sim:cos|thr:0.8|tok:rouge155|stem:no|stop:no|stat:R|refs:A'
    >>> parse_variant("rwmd-m-c").signature("glove-6b-50d", 50)
    'rwmd-m-c|emb:glove-6b-50d|dim:50|stop:yes|val:-dist|refs:mean'
    """

    name: str  # "cent-c", "rwmd-m-e", "wmd", "rouge-we-2", ...
    family: Literal["cent", "wmd", "rouge-we"]
    stem: bool = False
    stop: bool = True
    stat: Literal["P", "R", "F"] = "F"
    threshold: float = DEFAULT_THRESHOLD
    rule: Literal["summeval", "positional"] = "summeval"
    tok: Literal["rouge155", "summeval"] = "rouge155"

    @property
    def gram(self) -> tuple[int, int]:
        """ROUGE-WE grams: (n, 0) for n-grams, (0, skip) for skip-bigrams plus unigrams (SU)."""
        m = _WE.match(self.name)
        assert m is not None
        return (int(m.group("n")), 0) if m.group("n") else (0, int(m.group("skip")))

    def signature(self, emb_name: str, dim: int) -> str:
        def yn(b: bool) -> str:
            return "yes" if b else "no"

        head = f"{self.name}|emb:{emb_name}|dim:{dim}"
        if self.family == "cent":
            return f"{head}|stop:{yn(self.stop)}|idf:texts|refs:mean"
        if self.family == "wmd":
            return f"{head}|stop:{yn(self.stop)}|val:-dist|refs:mean"
        return (f"{head}|rule:{self.rule}|sim:cos|thr:{self.threshold:g}|tok:{self.tok}|stem:{yn(self.stem)}"
                f"|stop:{yn(self.stop)}|stat:{self.stat}|refs:A")


_WMD_NAMES = ("rwmd-l-e", "rwmd-r-e", "rwmd-m-e", "rwmd-l-c", "rwmd-r-c", "rwmd-m-c", "wmd")


def parse_variant(text: str | EmbeddingVariant, *, threshold: float = DEFAULT_THRESHOLD) -> EmbeddingVariant:
    """Parse a variant name with optional options, or a signature (the ``emb``/``dim`` parts are ignored).

    Examples
    --------
    >>> parse_variant("rouge-we-1|stop:yes|stat:P")  # doctest: +NORMALIZE_WHITESPACE
    EmbeddingVariant(name='rouge-we-1', family='rouge-we', stem=False, stop=True, stat='P', threshold=0.8,
                     rule='summeval', tok='rouge155')
    """
    if isinstance(text, EmbeddingVariant):
        return text
    if not isinstance(text, str):
        raise TypeError(f"variants: expected variant names (str), got {type(text).__name__}")
    parts = text.strip().lower().split("|")
    name = parts[0]
    opts: dict[str, str] = {}
    for part in parts[1:]:
        key, sep, value = part.partition(":")
        if not sep or not value:
            raise ValueError(f"variants: cannot parse option {part!r} in {text!r} (expected key:value)")
        opts[key] = value
    for ignored in ("emb", "dim", "refs", "val", "idf", "sim", "rule"):
        opts.pop(ignored, None)
    try:
        stem = _YES[opts.pop("stem", "no")]
        stop_default = "no" if name.startswith("rouge-we") else "yes"
        stop = _YES[opts.pop("stop", stop_default)]
    except KeyError:
        raise ValueError(f"variants: stem and stop must be yes/no in {text!r}") from None
    if name in ("cent-c", "cent-e") or name in _WMD_NAMES:
        if stem:
            raise ValueError(f"variants: {name} has no stemming option (stems have no vectors)")
        if opts:
            raise ValueError(f"variants: unknown option(s) {sorted(opts)} for {name} in {text!r}")
        return EmbeddingVariant(name, "cent" if name.startswith("cent") else "wmd", False, stop)
    if _WE.match(name):
        stat = opts.pop("stat", "f").upper()
        if stat not in ("P", "R", "F"):
            raise ValueError(f"variants: stat must be P, R or F in {text!r}")
        thr_text = opts.pop("thr", threshold)
        try:
            thr = float(thr_text)
        except ValueError:
            raise ValueError(f"variants: option thr:{thr_text} in {text!r} is not a number; give the similarity "
                             "threshold in (0, 1], e.g. thr:0.8") from None
        if not 0 < thr <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {thr!r}")
        tok = opts.pop("tok", "rouge155")
        if tok not in _TOKENIZERS:
            raise ValueError(f"variants: tok must be one of {_TOKENIZERS} in {text!r}")
        if tok == "summeval" and (stem or stop):
            raise ValueError(f"variants: tok:summeval is SummEval's tokenization, which neither stems nor removes "
                             f"stopwords; use tok:rouge155 with stem/stop in {text!r}")
        if opts:
            raise ValueError(f"variants: unknown option(s) {sorted(opts)} for {name} in {text!r}")
        m = _WE.match(name)
        assert m is not None
        if m.group("n") and int(m.group("n")) < 1:
            raise ValueError(f"variants: ROUGE-WE-N needs n >= 1, got {text!r}")
        rule = "positional" if m.group("pos") else "summeval"
        return EmbeddingVariant(name, "rouge-we", stem, stop, stat, thr, rule, tok)  # type: ignore[arg-type]
    known = ", ".join(DEFAULT_VARIANTS)
    raise ValueError(f"variants: unknown embedding metric {name!r}; known: {known} (rouge-we-N, rouge-we-suK, "
                     "rouge-wepos-N, rouge-wepos-suK)")
