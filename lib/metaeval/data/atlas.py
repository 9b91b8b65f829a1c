"""The atlas: every human-judgment dataset the compendium can analyse, with what a researcher needs to know
before using it (domain, language, kind of judgment, annotators, licence, and where the data came from).

Each dataset is either **embedded** (its licence lets the compendium redistribute it: a folder under
``data/atlas/<name>/`` in the dataset contract, with ``PROVENANCE.md`` and its files in ``data/SHA256SUMS``) or
**downloaded** (no licence that allows redistribution was found: ``metaeval download NAME`` fetches the pinned
commit's files, checks their sha256 and converts them into the contract in the user's folder). Either way
:func:`metaeval.datasets.load` takes its name.

This module is the one table of those facts; the loader, ``metaeval datasets`` and the atlas notebook read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["AtlasEntry", "atlas_datasets", "register"]

Distribution = Literal["embedded", "download"]


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
    distribution : {"embedded", "download"}
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


register(AtlasEntry(
    name="summeval", title="SummEval (Fabbri et al., 2021)",
    citation="Fabbri, Kryscinski, McCann, Xiong, Socher & Radev (2021), SummEval: Re-evaluating Summarization "
             "Evaluation, TACL 9",
    domain="news", language="en", task="summarization", judgment="likert",
    human_scores=("expert.relevance", "expert.coherence", "expert.consistency", "expert.fluency",
                  "turker.relevance", "turker.coherence", "turker.consistency", "turker.fluency"),
    annotators=3, systems=16, inputs=100, texts=True, references=True,
    licence="MIT", source="Yale-LILY/SummEval; neulab/BARTScore (joined copy); see data/summeval/PROVENANCE.md",
    distribution="embedded", folder="summeval",
    notes="3 expert and 5 crowd annotators per summary; 11 references (1 original + 10 crowd-written)",
))
register(AtlasEntry(
    name="realsumm", title="REALSumm (Bhandari et al., 2020)",
    citation="Bhandari, Gour, Ashfaq, Liu & Neubig (2020), Re-evaluating Evaluation in Text Summarization, EMNLP",
    domain="news", language="en", task="summarization", judgment="pyramid",
    human_scores=("litepyramid.recall",), annotators=None, systems=24, inputs=100, texts=True, references=True,
    licence="CC BY 4.0", source="neulab/REALSumm; neulab/BARTScore (joined copy); see data/realsumm/PROVENANCE.md",
    distribution="embedded", folder="realsumm",
    notes="LitePyramid recall aggregated over crowd workers (no per-annotator scores)",
))


def atlas_datasets(distribution: Distribution | None = None) -> dict[str, AtlasEntry]:
    """Every atlas dataset by name (SummEval and REALSumm first), optionally only one distribution.

    Examples
    --------
    >>> atlas = atlas_datasets()
    >>> list(atlas)[:2], atlas["summeval"].default_human
    (['summeval', 'realsumm'], 'expert.relevance')
    """
    # the dataset tables register themselves on import; importing here keeps one entry point. A table may also
    # give its entries as ENTRIES, a list of AtlasEntry keyword dictionaries (so that it need not import this
    # module, which would be an import cycle)
    from metaeval.data import _atlas_embedded, _atlas_download

    for table in (_atlas_embedded, _atlas_download):
        for facts in getattr(table, "ENTRIES", ()):
            register(AtlasEntry(**facts))

    if distribution not in (None, "embedded", "download"):
        raise ValueError(f"distribution must be None, 'embedded' or 'download', got {distribution!r}")
    return {k: v for k, v in _REGISTRY.items() if distribution is None or v.distribution == distribution}
