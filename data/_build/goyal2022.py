"""Convert the human judgments of Goyal, Li & Durrett (2022) into data/atlas/goyal2022-cnn/, goyal2022-bbc/
and goyal2022-keyword/ (the dataset contract).

    python data/_build/goyal2022.py /work/.mirror/tagoyal+tagoyal.github.io/repo

Source: tagoyal/tagoyal.github.io @ dc77471d47737781c10886f4ac01cc06d5cf152f, zero-shot-explorer/human_annotations.zip
(human_annotations/{cnn,bbc}_human.json and LICENSE.txt; the zip's copies are used, since the licence is in the
zip): per article, three annotators' ``best_summary`` and ``worst_summary`` lists over the systems gpt3
(text-davinci-002), brio and t0, and the three summaries; and human_annotations/keyword_human.json: per article,
two keywords, each with three annotators' list of the preferred keyword-focused summaries among gpt3 and ctrlsum
(the summaries themselves are not in the file).
"""

from __future__ import annotations

import io
import json
import zipfile

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "dc77471d47737781c10886f4ac01cc06d5cf152f"
ZIP = ("zero-shot-explorer/human_annotations.zip", "0139228dd09f652865015495551685caf886e540f816f06d4fc7961b82124cf6")
SYSTEMS = ("brio", "gpt3", "t0")
SUBSETS = {"cnn": "goyal2022-cnn", "bbc": "goyal2022-bbc"}


def main() -> None:
    repo = main_args("data/_build/goyal2022.py")
    with zipfile.ZipFile(io.BytesIO(read_source(repo, COMMIT, *ZIP))) as z:
        licence = z.read("human_annotations/LICENSE.txt").decode("utf-8")
        for subset, name in SUBSETS.items():
            data = json.loads(z.read(f"human_annotations/{subset}_human.json"))
            assert len(data) == 100
            records = []
            for key in sorted(data, key=int):
                item = data[key]
                annotators = item["annotators"]
                assert len(annotators) == 3
                for system in SYSTEMS:
                    # per annotator: +1 if the system is among those chosen best, -1 if among those chosen worst
                    # (an annotator may name several; one naming a system both best and worst gives 0)
                    score = [int(system in a["best_summary"]) - int(system in a["worst_summary"])
                             for a in annotators]
                    records.append({"instance_id": f"{subset}{int(key):03d}", "summarizer_id": system,
                                    "summary": item[system]["text"], "metrics": {"human": {
                                        "preference": score,
                                        "best": [int(system in a["best_summary"]) for a in annotators],
                                        "worst": [int(system in a["worst_summary"]) for a in annotators]}}})
            out = DATA / "atlas" / name
            write_jsonl(out / f"{name}.jsonl", records)
            write_text(out / "LICENSE.goyal2022", licence)
        data = json.loads(z.read("human_annotations/keyword_human.json"))
        assert len(data) == 100
        records = []
        for key in sorted(data, key=int):
            for k in ("1", "2"):
                item = data[key][k]
                assert len(item["annotators"]) == 3
                for system in ("ctrlsum", "gpt3"):
                    # per annotator: 1 if the system's summary is among those preferred (both may be)
                    preferred = [int(system in a) for a in item["annotators"]]
                    records.append({"instance_id": f"kw{int(key):03d}-{k}", "summarizer_id": system,
                                    "metrics": {"human": {"preferred": preferred}}})
        out = DATA / "atlas" / "goyal2022-keyword"
        write_jsonl(out / "goyal2022-keyword.jsonl", records)
        write_text(out / "LICENSE.goyal2022", licence)


if __name__ == "__main__":
    main()
