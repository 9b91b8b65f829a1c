r"""GRouge (ShafieiBavani et al. 2017): ROUGE with a lexico-semantic match by personalized PageRank on WordNet,
computed as Pilehvar et al.'s ADW code computes text similarity.

Each step, with its source ("paper" = the GRouge report, arXiv:1710.07441, section 3; "ADW" = a file of
github.com/pilehvar/ADW, whose defaults are in ``config/adw.properties``). Where the paper's text and ADW's
code differ, the default follows the code and the option named below selects the paper's text.

1. **Tokens.** Counts use exactly ROUGE-1.5.5's tokens (:mod:`metaeval.metrics.rouge`: tokenization,
   stemming, stopword options; the paper: NIST's AESOP settings, stemming, stopwords kept), so with
   :math:`\lambda = 1` GRouge-N *is* ROUGE-N recall (unrounded). WordNet lookup uses the unstemmed token.
2. **Stopwords never enter a signature** (ADW ``discardStopWords=TRUE``, ``TextualSimilarity.fixTerms``):
   ROUGE's SMART stopword list is dropped before senses are looked up, for the model-gram and for the
   peer. A model-gram with no content word has no Sem: it contributes its lexical count only,
   :math:`hit(g) = \min(c_S(g), c_P(g))` (paper: stopwords are kept "for the lexical counts").
3. **Senses and OOV words.** A content word's senses are its WordNet 3.0 synsets, all parts of speech, in
   WordNet's frequency order (:mod:`metaeval.metrics.wordnet`). A content word with no synset is OOV: it
   gets its own dimension placed above every PPR value of its text's vector (paper section 3.3, after
   Pilehvar & Navigli 2015; several OOV words ordered by count, then alphabetically).
4. **Single-sense PPR vectors** (paper eq. 3.1, 30 iterations, restart 0.15) on the WordNet synset graph:
   :math:`v^{(t)} = (1 - \alpha) v^{(0)} + \alpha M v^{(t-1)}`, :math:`M` column-normalised, mass on an
   isolated synset restarting at :math:`v^{(0)}` (as ``networkx.pagerank``). Each vector keeps its
   ``topk`` largest dimensions (ADW's stored signatures ``ppvs.30g.5k``: **5000**; ``topk=None`` keeps all,
   exact but slow), raw values, not renormalised (ADW ``testedVectorSize=0`` reads the stored 5k as is).
5. **Alignment** (ADW ``TextualSimilarity.alignmentBasedDisambiguation``; paper section 3.2): each content
   word of the model-gram takes, if one of its senses is also a sense of a peer word, that sense (the
   last such, as ADW's loop leaves it); otherwise the sense with the highest similarity to any sense of
   any peer word (strict maximum: the earlier sense wins ties; all similarities 0: no sense, ADW's
   "null"). Each peer word likewise against the senses of the model-gram's words. The similarity is
   **cosine on the top 500 dimensions** (ADW ``alignmentSimMeasure=Cosine``, ``alignmentVecSize=500``;
   ADW renormalises the truncated vectors, which leaves a cosine unchanged): ``align="cosine"``,
   ``align_topk=500``. The paper's text says the PPR vectors are compared by Weighted Overlap:
   ``align="wo"``.
6. **Text vectors** (ADW ``SemSigUtils.averageSemSigs``; paper steps iii-iv): the mean of the single-sense
   vectors of the distinct chosen senses, **not truncated again**, summed in node order in float64 (the
   mean's 1/n does not change a rank). For the peer, the vector depends on the gram (its choices do).
7. **Sem** = Weighted Overlap of the two text vectors (ADW ``comparison/WeightedOverlap.java``, paper eq.
   3.2; :func:`weighted_overlap`), over the dimensions non-zero in both, ranks over each whole vector.
8. **GRouge-N** and **GRouge-SU4** (skip-bigrams at distance <= 4 plus unigrams, the grams of ROUGE-SU4;
   paper eq. 3.3): for every reference :math:`S` and model-gram :math:`g` with count :math:`c_S(g)`,

   .. math:: hit(g) = \lambda \min(c_S(g), c_P(g)) + (1 - \lambda)\, c_S(g)\, Sem(g, P), \qquad
      \mathrm{GRouge} = \frac{\sum_S \sum_g hit(g)}{\sum_S \sum_g c_S(g)},

   with :math:`hit(g) = \min(c_S(g), c_P(g))` for a stopword-only :math:`g` (step 2); recall pooled over
   references as ROUGE's ``-f A``; :math:`\lambda = 0.5` (the paper's value tuned on TAC 2010). When one
   stemmed gram stands for several surface forms, :math:`c_S(g)\,Sem(g, P)` is the sum of Sem over the
   gram's occurrences.

Every choice is in the signature, e.g.
``grouge-2|lam:0.5|restart:0.15|iter:30|topk:5000|align:cosine@500|sw:out|wn:3.0|stem:yes|stop:no|refs:A``;
the settings travel as one frozen :class:`GRougeOptions`.

Remaining differences from the paper's system (UKB + ADW):

* no gloss relations: UKB's ``wn30g`` graph (ADW's ``LKB.WordNetGloss``) adds edges from the disambiguated
  glosses of the Princeton WordNet Gloss Corpus, which are not in the WordNet database files
  (``data/wordnet30/PROVENANCE.md``); our graph is WordNet's own relations only;
* no POS tagger: ADW tags and lemmatises with Stanford CoreNLP and looks a word up under its tag (with
  fixes in ``fixTerms``); we look a word up under every part of speech by WordNet's morphology, so a word
  has more candidate senses and the alignment chooses among them;
* no multiword expressions (ADW joins WordNet compounds such as ``police_officer``);
* ADW's ``toBeTakens`` rule (a sense aligned with similarity exactly 1 is forced on the other side) is
  covered by the shared-sense rule except for two distinct synsets with identical top-500 vectors;
* ADW keys the chosen senses by (sense, aligned sense) pairs, so a sense chosen by two words aligned to
  different senses counts twice in its mean; we average distinct senses;
* our PPR is the 30-step power iteration in float32 (ADW reads UKB's precomputed vectors); cosine-tied
  senses are ordered by WordNet's sense order, equal vector values by node id.

``topk`` below 5000 is an approximation (faster); its effect on scores is measured in
``benchmarks/REPORT.md`` and ``tests/test_grouge.py``. Example: :func:`score`.
"""

from __future__ import annotations

from metaeval.metrics.grouge._options import (
    DEFAULT_ALIGN_TOPK,
    DEFAULT_TOPK,
    GRougeOptions,
    GRougeVariant,
    GRougeWarning,
    parse_variant,
)
from metaeval.metrics.grouge._overlap import cosine, weighted_overlap
from metaeval.metrics.grouge._ppr import ppr
from metaeval.metrics.grouge._scoring import align, score, score_parts, sense_nodes, similarity
from metaeval.metrics.grouge._store import SenseVectors, validate_shard

__all__ = [
    "DEFAULT_ALIGN_TOPK",
    "DEFAULT_TOPK",
    "GRougeOptions",
    "GRougeVariant",
    "GRougeWarning",
    "SenseVectors",
    "align",
    "cosine",
    "parse_variant",
    "ppr",
    "score",
    "score_parts",
    "sense_nodes",
    "similarity",
    "validate_shard",
    "weighted_overlap",
]
