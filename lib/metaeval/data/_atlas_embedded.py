"""The embedded atlas datasets' entries (data/atlas/<name>/): one :func:`metaeval.data.atlas.register` call each.

Private: read through :func:`metaeval.data.atlas.atlas_datasets`.
"""

from __future__ import annotations

from typing import Any

from metaeval.data._atlas_registry import AtlasEntry, register


def _add(**facts: Any) -> None:
    register(AtlasEntry(**facts))


# the ablation fields are the human labels with one error category flipped: derived from the humans, not metrics
_FRANK_HUMAN = ("human.Factuality", "human.Semantic_Frame_Errors", "human.Discourse_Errors",
                "human.Content_Verifiability_Errors", "human.RelE", "human.EntE", "human.CircE", "human.OutE",
                "human.GramE", "human.CorefE", "human.LinkE", "human.Other",
                *(f"ablation.Flip_{c}" for c in ("CircE", "Content_Verifiability_Errors", "CorefE", "Discourse_Errors",
                                                 "EntE", "GramE", "LinkE", "Other", "OutE", "RelE",
                                                 "Semantic_Frame_Errors")))

# Each folder's PROVENANCE.md gives the source files with their sha256, the licence, the conversion command and
# every transformation; the facts below are what loads (tests/test_atlas_datasets.py checks them).

_add(
    name="xsum-hallucinations", title="XSum hallucinations (Maynez et al., 2020)",
    citation="Maynez, Narayan, Bohnet & McDonald (2020), On Faithfulness and Factuality in Abstractive "
             "Summarization, ACL",
    domain="news", language="en", task="summarization", judgment="binary",
    human_scores=("human.faithful", "human.factual", "human.hallucinated_spans", "maynez.Faithful", "maynez.Factual"),
    annotators=3, systems=5, inputs=500, texts=True,
    references=True, licence="CC BY 4.0",
    source="google-research-datasets/xsum_hallucination_annotations@4abdbb2c807cb93c1df1188a1992d20a55cdcc34: "
           "hallucination_annotations_xsum_summaries.csv, factuality_annotations_xsum_summaries.csv, "
           "eval_scores_xsum_summaries.csv",
    distribution="embedded", folder="atlas/xsum-hallucinations",
    source_metrics=("maynez.R1", "maynez.R2", "maynez.RL", "maynez.BERTScore", "maynez.Entailment"),
    notes="the reference (Gold) is also annotated as a system; faithful = the worker marked no hallucinated span; "
          "factual only for the 1,858 non-Gold summaries the source judged; the source's metric scores cover "
          "4 systems x 498 inputs; maynez.Faithful and maynez.Factual are the source's aggregated human scores "
          "(no per-worker ratings), human.hallucinated_spans the workers' span counts; no articles",
)
# the facts both FRANK subsets share
_FRANK = dict(
    citation="Pagnoni, Balachandran & Tsvetkov (2021), Understanding Factuality in Abstractive Summarization with "
             "FRANK: A Benchmark for Factuality Metrics, NAACL",
    domain="news", language="en", task="summarization", judgment="proportion",
    human_scores=_FRANK_HUMAN, annotators=None, texts=False, references=False,
    licence="MIT", source="artidoro/frank@80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4: data/human_annotations.json, "
                          "data/baseline_factuality_metrics_outputs.json",
    distribution="embedded",
    source_metrics=("Rouge 1", "Rouge 2", "Rouge L", "Bleu", "Meteor", "BertScore P", "BertScore R",
                    "BertScore F1", "BertScore P Art", "BertScore R Art", "BertScore F1 Art", "FactCC", "FEQA",
                    "Dep Entail", "QAGS"),
)
_add(
    name="frank-cnndm", title="FRANK, CNN/DM (Pagnoni et al., 2021)", systems=5, inputs=250,
    folder="atlas/frank-cnndm", **_FRANK,
    notes="share of sentences judged factual (majority of 3 annotators; per-annotator file not reachable); "
          "texts only as article hashes; the repository evaluates with partial correlation controlling for system",
)
_add(
    name="frank-xsum", title="FRANK, XSum (Pagnoni et al., 2021)", systems=4, inputs=249,
    folder="atlas/frank-xsum", **_FRANK,
    notes="FRANK's 'bbc' subset (the XSum outputs of Maynez et al.); share of sentences judged factual; no texts",
)
_add(
    name="hanna", title="HANNA story generation (Chhun et al., 2022)",
    citation="Chhun, Colombo, Suchanek & Clavel (2022), Of Human Criteria and Automatic Metrics: A Benchmark of "
             "the Evaluation of Story Generation, COLING; Chhun, Suchanek & Clavel (2024), Do Language Models Enjoy "
             "Their Own Stories?, TACL",
    domain="stories", language="en", task="story generation", judgment="likert",
    human_scores=("human.relevance", "human.coherence", "human.empathy", "human.surprise", "human.engagement",
                  "human.complexity"),
    annotators=3, systems=11, inputs=96, texts=False, references=False, licence="MIT",
    source="dig-team/hanna-benchmark-asg@282f27536a5d05ad4ce14298abcd70c45668fed2: hanna_metric_scores_llm.csv",
    distribution="embedded", folder="atlas/hanna",
    source_metrics=("BLEU", "ROUGE-1 F-Score", "METEOR", "chrF", "BERTScore F1", "MoverScore", "BARTScore-SH",
                    "...72 automatic metrics and 4 LLMs x 4 prompts x 7 ratings, under the source's names"),
    notes="the 'Human' system is the WritingPrompts human story; the stories' texts are in a file not reachable "
          "here; the 3 rater columns per criterion average to the file's criterion column (checked)",
)
_add(
    name="squality", title="SQuALITY human evaluation (Wang et al., 2022)",
    citation="Wang, Pang, Chen, Phang & Bowman (2022), SQuALITY: Building a Long-Document Summarization Dataset "
             "the Hard Way, EMNLP",
    domain="long documents", language="en", task="summarization", judgment="likert",
    # rank.*: the same reviewers' rankings of the 3 responses (1 = best): human judgments, never metrics
    human_scores=("human.overall", "human.correctness", "human.selection", "rank.overall", "rank.correctness",
                  "rank.selection"), annotators=3, systems=3, inputs=100,
    texts=True, references=True, licence="CC BY 4.0",
    source="nyu-mll/SQuALITY@dc08d4f574639d773bc64ef3ab3527043108fb4e: data/human-eval/all-responses.jsonl, "
           "data/v1/test.jsonl",
    distribution="embedded", folder="atlas/squality",
    notes="query-focused summaries of Gutenberg stories (20 stories x 5 questions); ratings 1-100; 4 reviewers, "
          "3 per response; the 'human' system is one of the 4 human responses, the other 3 are the references; "
          "stories not included",
)
for _year, _pair, _sys, _n, _lang, _hum in ((2020, "ende", 10, 1418, "en-de", "3 human translations (Human-*)"),
                                            (2020, "zhen", 10, 2000, "zh-en", "2 human translations (Human-*)"),
                                            (2021, "ende", 17, 527, "en-de", "4 human translations (ref-*)"),
                                            (2021, "zhen", 15, 650, "zh-en", "2 human translations (ref-*)")):
    _add(
        name=f"wmt{_year % 100}-mqm-{_pair}", title=f"WMT {_year} newstest {_lang}, expert MQM (Freitag et al., 2021)",
        citation="Freitag, Foster, Grangier, Ratnakar, Tan & Macherey (2021), Experts, Errors, and Context: A "
                  "Large-Scale Study of Human Evaluation for Machine Translation, TACL 9",
        domain="news", language=_lang, task="translation", judgment="MQM",
        human_scores=("human.mqm",), annotators=None, systems=_sys, inputs=_n, texts=False, references=False,
        licence="Apache-2.0",
        source=f"google/wmt-mqm-human-evaluation@7fadea281aff8db61cc72fc3d469a4dca78b82a6: newstest{_year}/{_pair}/"
               f"mqm_newstest{_year}_{_pair}.avg_seg_scores.tsv",
        distribution="embedded", folder=f"atlas/wmt{_year % 100}-mqm-{_pair}",
        notes=f"segments, not documents; {_hum} are among the systems; MQM averaged over raters (0 = no error, "
              "more negative = worse); no texts" + ("; only the rated segments" if _year == 2021 else ""),
    )
# the facts the three Goyal et al. subsets share
_GOYAL = dict(
    citation="Goyal, Li & Durrett (2022), News Summarization and Evaluation in the Era of GPT-3, arXiv:2209.12356",
    domain="news", language="en", task="summarization", annotators=3, references=False, licence="CC BY 4.0",
    distribution="embedded")
for _sub, _what in (("cnn", "CNN"), ("bbc", "BBC")):
    _add(
        name=f"goyal2022-{_sub}", title=f"Goyal, Li & Durrett (2022), {_what}", judgment="rank",
        human_scores=("human.preference", "human.best", "human.worst"), systems=3, inputs=100, texts=True,
        source="tagoyal/tagoyal.github.io@dc77471d47737781c10886f4ac01cc06d5cf152f: "
               f"zero-shot-explorer/human_annotations.zip ({_sub}_human.json)",
        folder=f"atlas/goyal2022-{_sub}", **_GOYAL,
        notes="best/worst choices turned into a per-annotator score: +1 chosen best, -1 chosen worst, else 0 "
              "(an annotator may choose several); systems GPT-3 text-davinci-002 (gpt3), BRIO, T0; no references",
    )
_add(
    name="goyal2022-keyword", title="Goyal, Li & Durrett (2022), keyword-focused", judgment="binary",
    human_scores=("human.preferred",), systems=2, inputs=200, texts=False,
    source="tagoyal/tagoyal.github.io@dc77471d47737781c10886f4ac01cc06d5cf152f: "
           "zero-shot-explorer/human_annotations.zip (keyword_human.json)",
    folder="atlas/goyal2022-keyword", **_GOYAL,
    notes="keyword-focused summaries of 100 CNN articles x 2 keywords by GPT-3 (gpt3) and CTRLSum; per annotator "
          "1 if the system's summary was preferred (both may be); the summaries are not in the source file",
)
_add(
    name="faceval", title="FacEval (Wang et al., 2022)",
    citation="Wang, Zhang, Zhang, Chen, Li & Bing (2022), Analyzing and Evaluating Faithfulness in Dialogue "
             "Summarization, EMNLP",
    domain="dialogue", language="en", task="summarization", judgment="binary",
    human_scores=("human.factual", "human.SubObjE", "human.ProE", "human.NegE", "human.ParE", "human.HalE",
                  "human.OtherE"),
    annotators=None, systems=5, inputs=150, texts=True, references=True, licence="MIT",
    source="BinWang28/FacEval@548f7591836b5cb096462e07051927eaa6107eba: human_result/FacEval_human_result.csv",
    distribution="embedded", folder="atlas/faceval",
    notes="SAMSum dialogues; one aggregated label per summary; factual = 1 - 'w/ Error'; error types 1 = present; "
          "the SAMSum reference is both a system (human_ref) and the reference",
)
