"""The atlas registry's types (:class:`AtlasEntry`, :func:`register`), apart from :mod:`metaeval.data.atlas` so
that the dataset tables (``_atlas_embedded``, ``_atlas_download``) register themselves without an import cycle.
Private: use :mod:`metaeval.data.atlas`, which re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["AtlasEntry", "Distribution", "register"]

Distribution = Literal["embedded", "download", "user"]


@dataclass(frozen=True)
class AtlasEntry:
    """What the atlas records about one dataset.

    Attributes
    ----------
    name : str
        The name :func:`metaeval.datasets.load` takes (lower case, ``-`` between words).
    title : str
        Short human title, e.g. ``"DialSummEval (Gao & Wan, 2022)"``.
    citation : str
        The paper to cite (authors, year, title, venue).
    domain : str
        ``"news"``, ``"dialogue"``, ``"opinions"``, ``"stories"``, ``"long documents"``, ``"translation"``, ...
    language : str
        ISO 639-1 code(s) of the evaluated texts, comma-separated (``"en"``, ``"de"``, ``"en-de"`` for MT).
    task : str
        ``"summarization"``, ``"story generation"`` or ``"translation"``.
    judgment : str
        The kind of human score: ``"likert"``, ``"binary"``, ``"proportion"``, ``"direct assessment (z)"``,
        ``"MQM"``, ``"pyramid"``, ``"percent"``, ``"rank"``.
    human_scores : tuple of str
        The human scores (score names in the loaded dataset); the first is the default.
    annotators : int or None
        Annotators per item kept separately (``Dataset.ratings``); None where the source only has aggregates.
    systems, inputs : int
        The grid's shape as loaded.
    texts, references : bool
        Whether summaries (outputs) and references are included.
    source_metrics : tuple of str
        Metric scores shipped by the source, under their own names.
    licence : str
        The licence as read in the source repository (``"none found"`` when there is none).
    source : str
        ``owner/repo@commit: files``.
    distribution : {"embedded", "download", "user"}
        ``"user"``: a dataset of the user's (a folder or an imported name), described from its own files by
        :func:`metaeval.data.atlas.user_entry`.
    notes : str
        Caveats a user must know (e.g. "one rater per item", "reference summary included as a system").
    """

    name: str
    title: str
    citation: str
    domain: str
    language: str
    task: str
    judgment: str
    human_scores: tuple[str, ...]
    annotators: int | None
    systems: int
    inputs: int
    texts: bool
    references: bool
    licence: str
    source: str
    distribution: Distribution
    source_metrics: tuple[str, ...] = ()
    notes: str = ""
    folder: str = field(default="", compare=False)  # embedded: path under data/; download: "" (user folder)

    @property
    def default_human(self) -> str:
        """The default human score (the first of :attr:`human_scores`)."""
        return self.human_scores[0]


_REGISTRY: dict[str, AtlasEntry] = {}


def register(entry: AtlasEntry) -> AtlasEntry:
    """Add ``entry`` to the atlas (module-level tables call this once per dataset)."""
    if entry.name in _REGISTRY and _REGISTRY[entry.name] != entry:
        raise ValueError(f"atlas dataset {entry.name!r} registered twice with different facts")
    _REGISTRY[entry.name] = entry
    return entry
