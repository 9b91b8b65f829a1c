"""The downloaded atlas datasets' entries (``metaeval download NAME``): one :func:`metaeval.data.atlas.register`
call each, with the pinned files (sizes and sha256 read from the repositories' snapshots: ``git ls-tree -l``,
``git show <commit>:<path> | sha256sum``) and the converter (:mod:`metaeval.data._converters`); no copy is in the
repository (no licence lets the compendium redistribute them). Private: read through
:func:`metaeval.data.atlas.atlas_datasets` and :data:`SPECS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import quote

from metaeval.data import _converters
from metaeval.data._atlas_registry import AtlasEntry, register

__all__ = ["PinnedFile", "PinnedFolder", "DownloadSpec", "SPECS", "LICENCE_STATEMENT", "DEFAULT_BASE"]

#: Where the files are fetched from (``base_url`` / ``$METAEVAL_DOWNLOAD_BASE`` replace it, e.g. by a mirror).
DEFAULT_BASE = "https://raw.githubusercontent.com"
LICENCE_STATEMENT = ("no licence file found in the repository; the data are not redistributed by this project; "
                     "use them under the authors' terms")


@dataclass(frozen=True)
class PinnedFile:
    """One source file at a pinned commit."""

    repo: str
    commit: str
    path: str
    sha256: str
    size: int

    def url(self, base: str = DEFAULT_BASE) -> str:
        """The file's URL under ``base`` (``<base>/<owner>/<repo>/<commit>/<path>``)."""
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{quote(self.path)}"


@dataclass(frozen=True)
class PinnedFolder:
    """A folder of one small file per input (named by the input's id) at a pinned commit: too many files to pin
    one by one, so the pin is the sha256 of the folder's ``SHA256SUMS`` listing (``"<sha256>  <name>\\n"`` per
    file, sorted by name), computed from the repository's snapshot."""

    repo: str
    commit: str
    path: str
    sha256sums: str
    count: int

    def url(self, name: str, base: str = DEFAULT_BASE) -> str:
        """The URL of file ``name`` of the folder under ``base``."""
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{quote(self.path)}/{quote(name)}"


@dataclass(frozen=True)
class DownloadSpec:
    """What ``metaeval download NAME`` fetches and how it converts it."""

    name: str
    files: tuple[PinnedFile, ...]
    convert: Callable[[Mapping[str, bytes]], _converters.Converted]
    licence: str = LICENCE_STATEMENT
    terms_note: str = ""  # what else a user must know about the terms (e.g. the corpus's own licence)
    folders: tuple[PinnedFolder, ...] = ()
    #: the names of the folders' files, read from the pinned files (the inputs' ids)
    folder_names: Callable[[Mapping[str, bytes]], list[str]] | None = None


SPECS: dict[str, DownloadSpec] = {}

_DIALSUMMEVAL = "kite99520/DialSummEval", "667118e10ae69ef8cbc5cbddec0ce91b5c9c6187"
_OPINSUMMEVAL = "A-Chicharito-S/OpinSummEval", "01fc980f416766965ca9b04b4bdad4a6f926999c"
_KOH = "huankoh/How-Far-are-We-from-Robust-Long-Abstractive-Summarization", "2ac7b955529a9e88033cea3fa38751100f0a29a5"
_BARTSCORE = "neulab/BARTScore", "248f511cb34ae3753fc81f7d7a945de5bfe33458"
_MULTI = "fajri91/Multi_SummEval", "9ec087c9472248e3a3e2e9df4dbf76d43046fce4"


def _add(entry: AtlasEntry, files: tuple[PinnedFile, ...],
         convert: Callable[[Mapping[str, bytes]], _converters.Converted], **options: Any) -> None:
    register(entry)
    SPECS[entry.name] = DownloadSpec(entry.name, files, convert, **options)


def _source(repo_commit: tuple[str, str], files: tuple[PinnedFile, ...], shown: str | None = None) -> str:
    return f"{repo_commit[0]}@{repo_commit[1][:7]}: " + (shown or ", ".join(f.path for f in files))


#: DialSummEval's metric scores per model letter (reproduce/analysis/models_eval_new/<letter>/metrics.csv)
_DIALSUMMEVAL_METRIC_PINS = {
    "A": ("be2bf8193c769d68642f9a457f6dd50b82379fcca1c60e037adc18fd031868e8", 39467),
    "B": ("4726d6aae28561146b004b3c78315e9a8a2385538adb4c4af7d2f42946471f30", 52240),
    "C": ("f76c868d827799e85a858465253ae41790170794d1d68b2348b1168ae7ea42da", 52052),
    "D": ("96617e93a94edfa963ca9ce13d0964a0db6d2e1982909a22dfa115eb246356f6", 50715),
    "E": ("4e95577b1c6305fae8ddcf953688d0f4bbfb61d01d3a9f349f91add939869400", 50647),
    "F": ("fccd037a080e51aa6dbeeb0af15cf5c7265195b1288077845fbaee7ff08ef439", 52606),
    "G": ("f36396f6609d934b3aaf28e5219682702f858a7a4bc77dd2c49057f84900b05a", 52089),
    "H": ("88656f1a5a529ba5f39a011f969e201b82ff7628d633d9824d40143f1a93f60d", 52001),
    "I": ("90095b7e43ebbe47b00586bbb8d9ff734356881952bddf00c9e650f074411017", 52473),
    "J": ("cc1f6e471c0d1a7d3e599f10907f1e898859856ebdf05b022751412c608ca951", 52383),
    "K": ("ddd8a7966561624660bedd9eadbc7e828b9e2797f4070b0cc8648051a8ee298c", 52994),
    "L": ("2743440b504a31d0691bb290f6b076cfddc7da2a29f212ba3948a1873b82c52b", 52389),
    "M": ("4b2c4a40eef1435411bd85c6f01ae2c20656500cd6f7440da13b7ac0447ef459", 53091),
    "N": ("63c0eed499916b1db70db89cdd5316dcdcc5a9035fc8f9502a8b7d062809238f", 52351),
}
#: the 32 columns of those files (the authors' metric scores), in the files' order
_DIALSUMMEVAL_METRICS = (
    "rouge-1", "rouge-2", "rouge-3", "rouge-4", "rouge-l", "bertscore_p", "bertscore_r", "bertscore_f1", "moverscore",
    "sms", "bartscore_s_h", "bartscore_h", "bartscore_h_r", "bartscore_r_h", "blanc_help", "blanc_tune", "feqa_score",
    "questeval", "summaqa_prob", "summaqa_fscore", "ppl", "chrf", "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR",
    "EmbeddingAverageCosineSimilarity", "VectorExtremaCosineSimilarity", "GreedyMatchingScore", "factcc_cls", "dae",
)
_files: tuple[PinnedFile, ...] = (PinnedFile(*_DIALSUMMEVAL, "annotation_campus/human_judgment.jsonl",
                     "727e1983f625a3380a8dc964035e5119d2c24220fbc1628e66801939494c50c5", 1341024),
                                  PinnedFile(*_DIALSUMMEVAL, "reproduce/analysis/models_eval_new/dials.txt",
                     "15635a120d3e5fa3011bd94638cb4faa2d84c35d9ccd362b71295ff52e81b19a", 55208))
_files += tuple(PinnedFile(*_DIALSUMMEVAL, f"reproduce/analysis/models_eval_new/{letter}/metrics.csv", sha, size)
                for letter, (sha, size) in _DIALSUMMEVAL_METRIC_PINS.items())
_add(AtlasEntry(
    name="dialsummeval", title="DialSummEval (Gao & Wan, 2022)",
    citation="Gao & Wan (2022), DialSummEval: Revisiting Summarization Evaluation for Dialogues, NAACL",
    domain="dialogue", language="en", task="summarization", judgment="likert",
    human_scores=("human.relevance", "human.coherence", "human.consistency", "human.fluency"),
    annotators=3, systems=13, inputs=100, texts=True, references=True, source_metrics=_DIALSUMMEVAL_METRICS,
    licence="none found", source=_source(_DIALSUMMEVAL, _files, "annotation_campus/human_judgment.jsonl, "
                   "reproduce/analysis/models_eval_new/{dials.txt, A..N/metrics.csv}"), distribution="download",
    notes="SAMSum dialogues (test set); the reference summary (GOLD) was rated too: kept as the reference and "
          "skipped as a system by default (load(..., reference_records='as-systems') gives the authors' 14); "
          "dialogue texts not included",
), _files, _converters.dialsummeval, terms_note="the dialogues and references come from SAMSum (CC BY-NC-ND 4.0)")

#: the 64 metric scores of OpinSummEval's scores.jsonl, in the file's order
_OPINSUMMEVAL_METRICS = (
    'bart_score_hypo2ref', 'bart_score_ref2hypo', 'bart_score_arti2hypo', 'bert_score_precision',
    'bert_score_recall', 'bert_score_f1', 'blanc_score_help', 'blanc_score_tune', 'bleurt_score',
    'chatgpt_handcraft_14_unstru_Relevance', 'chatgpt_handcraft_14_unstru_Coherence',
    'chatgpt_handcraft_14_unstru_Consistency', 'chatgpt_handcraft_14_unstru_Readability', 'chrF',
    'geval_Aspect Relevance', 'geval_Self-Coherence', 'geval_Sentiment Consistency', 'geval_Readability',
    'geval_normalized_Aspect Relevance', 'geval_normalized_Self-Coherence', 'geval_normalized_Sentiment Consistency',
    'geval_normalized_Readability', 'chatgpt_CoT_Aspect Relevance', 'chatgpt_CoT_Readability',
    'chatgpt_CoT_Self-Coherence', 'chatgpt_CoT_Sentiment Consistency', 'baryscore_W', 'baryscore_SD_10',
    'baryscore_SD_1', 'baryscore_SD_5', 'baryscore_SD_0.1', 'baryscore_SD_0.5', 'baryscore_SD_0.01',
    'baryscore_SD_0.001', 'infoLM_score_ab', 'infoLM_score_r_ab', 'infoLM_score_sim_ab', 'mover_score', 'Bleu_1',
    'Bleu_2', 'Bleu_3', 'Bleu_4', 'METEOR', 'EmbeddingAverageCosineSimilarity', 'VectorExtremaCosineSimilarity',
    'GreedyMatchingScore', 'ppl_score_gpt2', 'ppl_score_pegasus', 'prism_score', 'qafacteval_score',
    'questeval_score', 'R1_F1', 'R2_F1', 'RL_F1', 's3_score_responsiveness', 's3_score_pyramid', 'sms_elmo',
    'sms_glove', 'summac_score_snt', 'summac_score_doc', 'summa_qa_score_avg_prob', 'summa_qa_score_avg_fscore',
    'supert_score', 'ter_score',
)

_files = (PinnedFile(*_OPINSUMMEVAL, "metric_evaluation/scores.jsonl",
                     "8acd8a70f03e160a777204fd931db2e3210c4cc8045fd46a2fa84d741f6b783f", 3816770),
          PinnedFile(*_OPINSUMMEVAL, "metric_evaluation/14model_outputs.jsonl",
                     "2e2f7366b2c3d3c97ac3649421c467e95d0f355a5d89e385dcb3114eb5ef81c5", 676051))
_add(AtlasEntry(
    name="opinsummeval", title="OpinSummEval (Shen & Wan, 2023)",
    citation="Shen & Wan (2023), OpinSummEval: Revisiting Automated Evaluation for Opinion Summarization, "
             "arXiv preprint",
    domain="opinions", language="en", task="summarization", judgment="likert",
    human_scores=("human.aspect_relevance", "human.self_coherence", "human.sentiment_consistency",
                  "human.readability"),
    annotators=2, systems=14, inputs=100, texts=True, references=True,
    source_metrics=_OPINSUMMEVAL_METRICS,
    licence="none found", source=_source(_OPINSUMMEVAL, _files), distribution="download",
    notes="Yelp entities (8 reviews each, not included); one human-written reference per entity",
), _files, _converters.opinsummeval, terms_note="the reviews and summaries derive from the Yelp dataset "
                                                "(Yelp's dataset terms)")

_files = (PinnedFile(*_KOH, "annotation_data.jsonl",
                     "6ef335edb6a7dd93f1a5283b2fc7dad606f3c4dcf6958a2ee2094d3a4dcea126", 2875662),)
for _subset, _name, _domain in (("arXiv", "koh2022-arxiv", "long documents (scientific papers)"),
                                ("GovReport", "koh2022-govreport", "long documents (government reports)")):
    _add(AtlasEntry(
        name=_name, title=f"Koh et al. (2022), {_subset}",
        citation="Koh, Ju, Zhang, Liu & Pan (2022), How Far are We from Robust Long Abstractive Summarization?, "
                 "EMNLP",
        domain=_domain, language="en", task="summarization", judgment="proportion",
        human_scores=("human.relevance", "human.factual_consistency"),
        annotators=3, systems=12, inputs=17, texts=True, references=False,
        licence="none found", source=_source(_KOH, _files), distribution="download",
        notes="relevance = share of the reference's main ideas covered, factual consistency = share of consistent "
              "sentences; references and source documents not included (ids of the original datasets)",
    ), _files, partial(_converters.koh2022, subset=_subset))

_files = (PinnedFile(*_BARTSCORE, "SUM/Newsroom/data.pkl",
                     "277795f19d17fef0077061708d468e020c90071854508e774f4addae8a4a0ed5", 419155),)
_add(AtlasEntry(
    name="newsroom", title="Newsroom human evaluation (Grusky et al., 2018)",
    citation="Grusky, Naaman & Artzi (2018), Newsroom: A Dataset of 1.3 Million Summaries with Diverse Extractive "
             "Strategies, NAACL",
    domain="news", language="en", task="summarization", judgment="likert",
    human_scores=("human.relevance", "human.informativeness", "human.coherence", "human.fluency"),
    annotators=None, systems=7, inputs=60, texts=True, references=True,
    licence="Apache-2.0 (BARTScore repository); texts under the Newsroom corpus's terms",
    source=_source(_BARTSCORE, _files), distribution="download",
    notes="means of 3 workers (the per-worker file is not reachable); read with a pickle reader that refuses "
          "every class and function; articles not included",
), _files, _converters.newsroom,
    licence="the BARTScore repository is Apache-2.0, but the article and summary texts come from the Newsroom "
            "corpus, which has its own terms; the data are not redistributed by this project; use them under "
            "the authors' and Newsroom's terms")

_MULTI_LANGS = {"de": "German", "en": "English", "es": "Spanish", "fr": "French", "id": "Indonesian",
                "ru": "Russian", "tr": "Turkish", "zh": "Chinese"}
_MULTI_SHA = {
    "DE": ("14b9746125edc54cb0ef8edf3ff799cd23134657faefc4de1698fe816ebd6351", 13021,
           "16c55740ac956653fc7631639a0a479f3b1e4874b1f9e9ac13a3b6c7f8a39641", 86999),
    "EN": ("14a65645d0cb96d6f2b8f42c52c6fe507444a12ee607c00af72e0571e9c90586", 12571, None, 0),
    "ES": ("b973b0ccd01dbb5945d5b126feedf385d11a79be421e926ca61e9b1328039d56", 13146,
           "9727985301800a3be0f67bd7994798556d6c6e207a803234a8fc69eecfdd6014", 87280),
    "FR": ("af00748604e14174ce78aaf262b21dbc89d48ec0e730f93d8cb069a8e7901884", 13181,
           "7e2286658e7bb5d24b07bf9a198698b4364d579981ad64cf518505e5fe53675f", 87518),
    "ID": ("4fa2dc46cbea1311932f4c9ceaa2b098d964d7c6981bf64e590836815abcb3c9", 13305,
           "3b5fbce34d79e7be95a9d1b76393c213f27b7ab191c17b7e5060bfca2c6deea1", 88597),
    "RU": ("ba1c9ceb92248378eb442a2be00443e530f9e81f904f57ecaa32250b43a24c54", 12848,
           "5d80019df7724085040f44cee50a37680cba43d99edb0abfc18a034e4403ab10", 85661),
    "TR": ("8daaeca5b4a7a121305a4cb44bf93a92eb23ed47c9bb966512f5639ed9aba634", 13110,
           "d28d573cd6cecedc2b78c9b3780d5fbdc9b87644501c2bec3d65249c7ee18e52", 87327),
    "ZH": ("2ca810ad5013f25f2015cc6639b4ff7bdc682b37b7dfb156a012774037e9862d", 12758,
           "4f374824665d7aa469bade936ae0e014cf351a397f9b65f4e7074a450fde7717", 90189),
}
#: sha256 of the SHA256SUMS listing of resulting_data/<LANG>/{gold, pred_BERT, pred_PG} (135 files each)
_MULTI_TEXTS = {
    "DE": ("0f9e2a3db6fc4bcb2a69d900d8507c4851e81d62a2f77f17d9b350131e3b273c",
           "9016f477d096ec07df9a7fa32674de93bdc5715da45e3475368341864d38ba47",
           "6bb6e5f2136fc97aa7ae09821dae590597c6d9c9516eee3be03c3468b0b04d77"),
    "EN": ("6ba6b1a9815924f8638a5f053ed2e3912da00326f5b7c9462d0ff6cc571779bd",
           "30bf0dbe17115ed31a9ece911e7b33c5fef4e7bc21933e4643a6e20055170df1",
           "a083ff967dd5806e7f82340bd823ed99c21d5f5f8c7b85cfc599e8cce9dcc35c"),
    "ES": ("827dbe4e5df44bdfed8b5cf8dca3ce7e6e21a0ccc66d26cae2c517321efad501",
           "6ae14cf0fe1dbd15b4070d4fcd5dddbe361942e92e700ef6ff0742a31e41ed1e",
           "6bcd8118e42e7c5c77fde730e096f4c8e5bce0887b7cc5d0b8ed46d26c1a4c18"),
    "FR": ("b036212220acdcbd055e0e46965425dcea2aba22a0baef68d1fe7b14d10c4d4d",
           "4a185e1da5150753021bf7108acc126b6d59e7935499399822021da8b2e2e22f",
           "dd66612a9390b152c73834709160b85bfb7b977474c19dabb6d33a3c5f252ae0"),
    "ID": ("9ffebbec799e4c95c1fd24e3f86524eb86406d2be92e1fd32e1257885c11161e",
           "c54e339d7f8f11b0a0903d2b5d2c42a50fbf2237fab2fef1b8fc30dcdb93e1be",
           "ae14de552d91d0c9dad330307c9f69c0b4ce21a03cf762b85b6d7188c302f592"),
    "RU": ("87363a666f9adf2fd3219f1d7e213d2b8c9f52088d8123bbf990f9668435ed4a",
           "ac9cd1ece65b10c115b3f2fa232d875c62279e639f608d6ad15dbe479941af90",
           "742bdf5983c16840d80cc8a5e28ce683be984831308a7e7267dfb1a3759e299b"),
    "TR": ("22a0de4c42889d1c456a8dce6bb80db518ba68c17e601c5b51c6bee2f66a6942",
           "0235726234ef5f88223efac02bcdd41bf16c28734870a194f361442f26980022",
           "819a74ad485c735010832e0868dfc06b1675095e63171eb0436ce82f5b9f6f35"),
    "ZH": ("7ba31a5a78e6a7e78923608afc5f74af756112f1298f0b41e357b1cd53211305",
           "27e991dbee5f6d4e42fb151485fafd53fded0634a8caafa53a8163ccdc58dd7e",
           "2cf8393610ad51ea1a5f80b27a00ec2630a71fc910ad33f7199c5a792bef832f"),
}
for _lang, _language in _MULTI_LANGS.items():
    _code = _lang.upper()
    _score_sha, _score_size, _ann_sha, _ann_size = _MULTI_SHA[_code]
    _files = (PinnedFile(*_MULTI, f"resulting_data/{_code}/score.csv", _score_sha, _score_size),)
    if _ann_sha is not None:
        _files += (PinnedFile(*_MULTI, f"mturk/annotation_result/{_code}/analysis_clean.csv", _ann_sha, _ann_size),)
    _add(AtlasEntry(
        name=f"multisummeval-{_lang}", title=f"Multi_SummEval, {_language} (Koto, Lau & Baldwin, 2021)",
        citation="Koto, Lau & Baldwin (2021), Evaluating the Efficacy of Summarization Evaluation across "
                 "Languages, Findings of ACL",
        domain="news", language=_lang, task="summarization", judgment="direct assessment (z)",
        human_scores=("human.focus", "human.coverage"),
        annotators=3 if _ann_sha is not None else None, systems=2, inputs=135, texts=True, references=True,
        licence="none found", source=_source(_MULTI, _files), distribution="download",
        notes="only 2 systems (BERT, PG): summary level only; z-scored DA; "
              + ("3 workers per summary, their position in the list is not a worker identity"
                 if _ann_sha is not None else "means of workers only (the English data come from FFCI)")
              + "; summaries and references one sentence per line (no source articles); 405 small text files "
                "are fetched",
    ), _files, partial(_converters.multisummeval, lang=_lang),
        folders=tuple(PinnedFolder(*_MULTI, f"resulting_data/{_code}/{kind}", digest, 135)
                      for kind, digest in zip(("gold", "pred_BERT", "pred_PG"), _MULTI_TEXTS[_code])),
        folder_names=partial(_converters.multisummeval_ids, lang=_lang))

_FFCI = "fajri91/ffci", "adbd5da112b1eac903508ad0daea1bc50d1cea69"
# the facts both FFCI datasets share
_FFCI_FACTS: dict[str, Any] = dict(
    citation="Koto, Baldwin & Lau, FFCI: A Framework for Interpretable Automatic Evaluation of Summarization, "
             "Journal of Artificial Intelligence Research (arXiv:2011.13662)",
    domain="news", language="en", task="summarization", judgment="direct assessment (z)", annotators=None,
    inputs=135, references=False, licence="none found", distribution="download")
_files = (PinnedFile(*_FFCI, "Data/Intersentential Coherence/published_data_ic_raw.csv",
                     "8dd707d1511e3f2c27cee8c9ea2fe9cdd86d32836679e359cd0f7a932e0614e5", 213999),
          PinnedFile(*_FFCI, "Data/Intersentential Coherence/published_data_ic_z.csv",
                     "062ce7ccab1f9c579ac229abb50e0a31b04ec03f5d6d93eb23db5d6b616391a3", 217215))
_add(AtlasEntry(
    name="ffci-coherence", title="FFCI inter-sentential coherence (Koto, Baldwin & Lau)",
    human_scores=("human.coherence_z", "human.coherence"), systems=4, texts=True, source=_source(_FFCI, _files),
    notes="CNN/DM; systems BERT, LEAD3, PROPHETNET, PG; means of workers (z-scores and raw 0-100); no references",
    **_FFCI_FACTS), _files, _converters.ffci_coherence)

_files = (PinnedFile(*_FFCI, "Data/Focus and Coverage/xsum/human_focus_final.csv",
                     "eedb42173138c341f241daca0d4b946df40ff17a06d0a827a23d7dadefb7d661", 8642),
          PinnedFile(*_FFCI, "Data/Focus and Coverage/xsum/human_coverage_final.csv",
                     "f151d7f919fa4f05f1245c2107b843f3f441c01e42f5a26207d9c1063a0e2b62", 8659))
_add(AtlasEntry(
    name="ffci-xsum", title="FFCI focus and coverage, XSum (Koto, Baldwin & Lau)",
    human_scores=("human.focus", "human.coverage"), systems=2, texts=False, source=_source(_FFCI, _files),
    notes="only 2 systems (BERT, PG): summary level only; mean z-scores of workers; texts not included",
    **_FFCI_FACTS), _files, _converters.ffci_xsum)
