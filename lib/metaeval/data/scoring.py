"""Score a dataset's summaries with ROUGE variants and BLEU, cached on disk.

The cache key is a sha256 over the texts actually scored, the variant signatures, the rounding and the
library version, so a cached table can never be served for other data or other settings. Tables are
written to a temporary file and renamed, so an interrupted run leaves no half-written cache entry.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Iterable, Literal

import numpy as np
import pandas as pd

from metaeval._io import cache_dir, load_cached, save_cached

from metaeval.data.datasets import Dataset
from metaeval.metrics.rouge import resolve_variants, score
from metaeval.metrics.text import split_ptb_sentences

__all__ = ["rouge_table", "rouge_matrices", "system_scores", "default_cache_dir", "scoring_signature"]


def default_cache_dir() -> Path:
    """``$METAEVAL_CACHE`` or the user cache folder (see :func:`metaeval._io.cache_dir`)."""
    return cache_dir()


def _texts(ds: Dataset, n_refs: int | None, sentences: str):
    if ds.texts is None:
        raise ValueError(f"dataset {ds.name!r} has no texts to score")
    if sentences not in ("lines", "ptb"):
        raise ValueError(f"sentences must be 'lines' or 'ptb', got {sentences!r}")
    summaries = ds.texts["summary"].tolist()
    references = [list(r) if n_refs is None else list(r)[:n_refs] for r in ds.texts["references"]]
    if n_refs is not None and (n_refs < 1 or any(len(r) < n_refs for r in references)):
        raise ValueError(f"n_refs={n_refs}: every summary needs at least that many references")
    if sentences == "ptb":
        summaries = [split_ptb_sentences(s) for s in summaries]
        references = [[split_ptb_sentences(r) for r in refs] for refs in references]
    return summaries, references


def _rouge_code_digest() -> str | None:
    """sha256 of the sources that compute a ROUGE table (tokens, variants, every module of the ``rouge``
    package, this module); None when the sources are not installed (no cache then: versions could not be
    told apart)."""
    from metaeval.metrics import rouge, text, variants

    if not rouge.__file__:
        return None
    sources = sorted(Path(rouge.__file__).parent.glob("*.py"))
    h = hashlib.sha256()
    try:
        for path in (*sources, Path(text.__file__ or ""), Path(variants.__file__ or ""), Path(__file__)):
            h.update(path.read_bytes())
    except OSError:
        return None
    return h.hexdigest()


def rouge_table(
    ds: Dataset,
    variants: Iterable | None = None,
    *,
    n_refs: int | None = None,
    sentences: Literal["lines", "ptb"] = "ptb",
    rounding: bool = True,
    cache: bool | str | Path = True,
) -> pd.DataFrame:
    """Summary-level ROUGE of every (system, input) cell of a texts dataset: one column per variant signature.

    Parameters
    ----------
    ds : Dataset
        A dataset with texts (e.g. ``load("summeval")``).
    variants : iterable, optional
        Summary-level variants (default: the 96 of ROUGE-1.5.5).
    n_refs : int, optional
        Use the first ``n_refs`` references of each summary (default: all).
    sentences : {"ptb", "lines"}
        How texts are split into sentences for ROUGE-L/W: after stand-alone ``.``/``!``/``?`` tokens
        (``"ptb"``, default) or at newlines only (``"lines"``: one sentence per text here).
    cache : bool or path
        Cache folder (``True``: :func:`default_cache_dir`; ``False``: no cache).
    """
    variants = resolve_variants(variants)
    summaries, references = _texts(ds, n_refs, sentences)
    index = ds.texts.index  # type: ignore[union-attr]  # _texts raised if None
    key = None
    if cache:
        folder = default_cache_dir() if cache is True else Path(cache)
        digest = hashlib.sha256()
        digest.update(json.dumps([summaries, references], ensure_ascii=False).encode())
        digest.update(json.dumps([v.signature for v in variants]).encode())
        from metaeval._version import __version__

        digest.update(f"rounding={rounding}|v={__version__}".encode())
        code = _rouge_code_digest()
        # a changed ROUGE implementation between releases must not be served its predecessor's tables
        key = None if code is None else folder / "rouge" / f"{digest.hexdigest()[:24]}-{code[:8]}.json"
        columns = [v.signature for v in variants]
        entry = None if key is None else load_cached(
            key, validate=lambda e: _invalid_table(e, index, columns), what="cached ROUGE table")
        if entry is not None:
            return entry.frames["scores"]
    frame = score(summaries, references, variants, rounding=rounding, columns="signature", warn=True)
    frame.index = index
    if key is not None:
        save_cached(key, frames={"scores": frame})
    return frame


def _invalid_table(entry, index: pd.Index, columns: list[str]) -> str | None:
    """Why a cached ROUGE table cannot be this call's table (None: it can)."""
    frame = entry.frames.get("scores")
    if frame is None or list(frame.columns) != columns:
        return "its columns are not the variants asked for"
    if not frame.index.equals(index):
        return "its rows are not the dataset's (system, input) cells"
    values = frame.to_numpy(dtype=float)
    if not np.isfinite(values).all() or (values < 0).any() or (values > 1).any():
        return "it holds values outside [0, 1] or NaN"
    return None


def rouge_matrices(ds: Dataset, variants=None, **kwargs) -> dict[str, np.ndarray]:
    """ROUGE variants as N x M matrices (systems x inputs), keyed by signature."""
    table = rouge_table(ds, variants, **kwargs)
    return {name: table[name].to_numpy(dtype=float).reshape(ds.shape) for name in table.columns}


def system_scores(matrix: np.ndarray, agg: Literal["mean", "median"] = "mean") -> np.ndarray:
    """A system-level score per row of an N x M matrix: mean or median over the system's summaries."""
    if agg == "mean":
        return np.mean(matrix, axis=1)
    if agg == "median":
        return np.median(matrix, axis=1)
    raise ValueError(f"agg must be 'mean' or 'median', got {agg!r}")


def scoring_signature(signature: str, *, n_refs: int, sentences: str) -> str:
    """The full signature of a ROUGE variant as scored on a dataset: the variant's signature, then the number
    of references per summary, the sentence unit of ROUGE-L/W and the version (last, as sacreBLEU keeps it), so
    one signature never labels two different values.

    Examples
    --------
    >>> scoring_signature("rouge-l|stem:yes|stop:no|stat:F|refs:A", n_refs=11, sentences="ptb")  # doctest: +ELLIPSIS
    'rouge-l|stem:yes|stop:no|stat:F|refs:A|nrefs:11|sent:ptb|version:1.5.5+metaeval-...'
    """
    from importlib.metadata import PackageNotFoundError, version

    if sentences not in ("lines", "ptb"):
        raise ValueError(f"sentences must be 'lines' or 'ptb', got {sentences!r}")
    if int(n_refs) < 1:
        raise ValueError(f"n_refs must be at least 1, got {n_refs!r}")
    try:
        ours = version("metaeval")
    except PackageNotFoundError:  # pragma: no cover - a tree that was never installed
        ours = "unknown"
    return f"{signature}|nrefs:{int(n_refs)}|sent:{sentences}|version:1.5.5+metaeval-{ours}"
