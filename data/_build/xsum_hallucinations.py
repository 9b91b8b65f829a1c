"""Convert the XSum hallucination annotations (Maynez et al., 2020) into data/atlas/xsum-hallucinations/ (the
dataset contract).

    python data/_build/xsum_hallucinations.py /work/.mirror/google-research-datasets+xsum_hallucination_annotations/repo

Source: google-research-datasets/xsum_hallucination_annotations @ 4abdbb2c807cb93c1df1188a1992d20a55cdcc34:
hallucination_annotations_xsum_summaries.csv (one row per hallucinated span a worker marked, or one row with
hallucination_type NULL where the worker marked none; 500 BBC ids x 5 systems x 3 workers),
factuality_annotations_xsum_summaries.csv (yes/no per worker, 4 systems, only some summaries) and
eval_scores_xsum_summaries.csv (the authors' per-summary metric and aggregated human scores, 4 systems x 498).
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "4abdbb2c807cb93c1df1188a1992d20a55cdcc34"
HALL = ("hallucination_annotations_xsum_summaries.csv",
        "fa7fb66a36cc0f32ede4135985d0d65591dc2a8d21103a0bacd0583d77d4c8ea")
FACT = ("factuality_annotations_xsum_summaries.csv", "f0ace0a9b52cacaa632ded3d07a355b7991383ce28fdd9fcbbf08a8523695ecb")
EVAL = ("eval_scores_xsum_summaries.csv", "f7b3d571173ca0dc47a8d72314ce402fb3db7cb54dc84439d35eb766d393fbe3")
README_SHA = "2daee1c7d2845c1b7002a869703be44baf311e9707dc31398eca66a0134c65fd"
# eval_scores names systems by checkpoint; matched to the annotation files' names by its Faithful column, which
# the per-worker spans reproduce for the same summaries only under this mapping (checked when this was built)
EVAL_SYSTEMS = {"bert_withckpt": "BERTS2S", "bert_nockpt": "TranS2S", "ptgen": "PtGen", "tconvs2s": "TConvS2S"}
EVAL_COLUMNS = ("R1", "R2", "RL", "BERTScore", "Entailment", "Faithful", "Factual")


def rows(repo, spec) -> list[dict]:
    return list(csv.DictReader(io.StringIO(read_source(repo, COMMIT, *spec).decode("utf-8"), newline="")))


def main() -> None:
    repo = main_args("data/_build/xsum_hallucinations.py")
    summary: dict[tuple[str, str], str] = {}
    spans: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)  # key -> worker -> number of spans marked
    for r in rows(repo, HALL):
        key = (r["bbcid"], r["system"])
        assert summary.setdefault(key, r["summary"]) == r["summary"]
        marked = r["hallucination_type"] != "NULL"
        spans[key][r["worker_id"]] = spans[key].get(r["worker_id"], 0) + int(marked)
    factual: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
    for r in rows(repo, FACT):
        if r["is_factual"] in ("yes", "no"):  # 33 rows say NULL: no judgment, left out
            factual[(r["bbcid"], r["system"])][r["worker_id"]] = int(r["is_factual"] == "yes")
    source: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows(repo, EVAL):
        system, bbcid = r["system_bbcid"].rsplit("_", 1)
        source[(bbcid, EVAL_SYSTEMS[system])] = {c: float(r[c]) for c in EVAL_COLUMNS}
    assert len(summary) == 2500 and set(factual) <= set(summary) and set(source) <= set(summary)
    records = []
    for key in sorted(summary):
        workers = sorted(spans[key])
        human = {"faithful": [1 - min(spans[key][w], 1) for w in workers]}  # 1 = the worker marked no span
        if factual.get(key):
            human["factual"] = [factual[key][w] for w in sorted(factual[key])]
        human["hallucinated_spans"] = [spans[key][w] for w in workers]
        # the reference is the XSum gold summary, which was also annotated as the system "Gold"
        rec = {"instance_id": key[0], "summarizer_id": key[1], "summary": summary[key],
               "references": [summary[(key[0], "Gold")]], "metrics": {"human": human}}
        if key in source:
            rec["metrics"]["maynez"] = source[key]
        records.append(rec)
    out = DATA / "atlas" / "xsum-hallucinations"
    write_jsonl(out / "xsum-hallucinations.jsonl", records)
    readme = read_source(repo, COMMIT, "README.md", README_SHA).decode("utf-8")
    licence = readme[readme.index("## License"):readme.index("## Contact")].strip()
    write_text(out / "LICENSE.xsum-hallucinations",
               f"Quoted from the README of google-research-datasets/xsum_hallucination_annotations @ {COMMIT}\n"
               f"(the repository has no LICENSE file):\n\n{licence}\n\n"
               "Full licence text: https://creativecommons.org/licenses/by/4.0/legalcode\n")


if __name__ == "__main__":
    main()
