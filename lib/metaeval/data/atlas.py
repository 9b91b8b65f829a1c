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

from metaeval.data._atlas_registry import _REGISTRY, AtlasEntry, Distribution, register

__all__ = ["AtlasEntry", "PAPER_DATASETS", "atlas_datasets", "names_text", "register", "user_entry"]

#: The embedded datasets the papers' notebooks run on by default (``make results``), first in every listing.
PAPER_DATASETS = ("summeval", "realsumm")

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
    from metaeval.data import _atlas_download, _atlas_embedded  # noqa: F401 - the tables register on import

    if distribution not in (None, "embedded", "download"):
        raise ValueError(f"distribution must be None, 'embedded' or 'download', got {distribution!r}")
    # the tables may be imported before this module (they import only _atlas_registry): the order is fixed here,
    # SummEval and REALSumm first, then the embedded and the downloaded datasets, each in the order registered
    entries = sorted(_REGISTRY.values(), key=lambda e: (e.name not in PAPER_DATASETS,
                                                         e.distribution != "embedded"))
    return {e.name: e for e in entries if distribution is None or e.distribution == distribution}


def names_text(distribution: Distribution | None = None) -> str:
    """The atlas's dataset names as one line, for help texts and documentation: a family of three or more names
    with one stem is written once.

    >>> names_text("download")
    'dialsummeval, opinsummeval, koh2022-arxiv, koh2022-govreport, newsroom, multisummeval-{de,en,es,fr,id,ru,tr,zh}, \
ffci-coherence, ffci-xsum'
    """
    names = list(atlas_datasets(distribution))
    stems: dict[str, list[str]] = {}
    for name in names:
        stems.setdefault(name.rpartition("-")[0] or name, []).append(name)
    out = []
    for stem, family in stems.items():
        if len(family) >= 3 and stem != family[0]:
            out.append(f"{stem}-{{{','.join(n[len(stem) + 1:] for n in family)}}}")
        else:
            out += family
    return ", ".join(out)


def user_entry(ds, source: str) -> AtlasEntry:
    """The atlas facts of a dataset of the user's (``source``: the folder or name it was loaded from), read from
    the dataset itself: its human scores, its shape, texts, references and per-annotator ratings. What the files
    do not say is stated as such; the language is taken as English (its ROUGE tokenization), as the note says.

    Examples
    --------
    >>> import pandas as pd
    >>> from metaeval.data.datasets import from_frame
    >>> ds = from_frame(pd.DataFrame({"doc": ["d1", "d1"], "system": ["A", "B"], "relevance": [1, 2],
    ...                               "my_metric": [.3, .4]}), name="study")
    >>> e = user_entry(ds, "study")
    >>> e.name, e.distribution, e.human_scores, e.source_metrics, (e.systems, e.inputs), e.annotators
    ('study', 'user', ('relevance',), ('my_metric',), (2, 1), None)
    """
    humans = list(ds.human_scores)
    if not humans:
        raise ValueError(f"{source}: the dataset has no human score (mark one with metaeval import --human or "
                         "human_scores in its dataset.yml)")
    ordered = [ds.default_human] + [h for h in humans if h != ds.default_human]
    per_cell = [r.shape[-1] for name, r in ds.ratings_table.items() if name in humans and r.ndim == 3]
    return AtlasEntry(
        name=ds.name, title=f"{ds.name} (your dataset)", citation="your own study", domain="not stated",
        language="en", task="summarization", judgment="not stated", human_scores=tuple(ordered),
        annotators=max(per_cell) if per_cell else None, systems=ds.shape[0], inputs=ds.shape[1],
        texts=ds.has_texts, references=ds.n_references > 0, licence="yours", source=str(source),
        distribution="user", source_metrics=tuple(n for n in ds.score_names if n not in humans),
        notes="language not stated: taken as English")
