"""Convert FacEval's human labels (Wang et al., 2022) into data/atlas/faceval/ (the dataset contract).

    python data/_build/faceval.py /work/.mirror/BinWang28+FacEval/repo

Source: BinWang28/FacEval @ 548f7591836b5cb096462e07051927eaa6107eba, human_result/FacEval_human_result.csv
(750 rows = 5 models x 150 SAMSum dialogues, one aggregated yes/no label per error type and row).
"""

from __future__ import annotations

import csv
import io

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "548f7591836b5cb096462e07051927eaa6107eba"
FILE = "human_result/FacEval_human_result.csv"
SHA = "812029b3af4e683937163a4b5b36145aae1ff642b1f3ddc843b6a2d0df1908a3"
LICENSE_SHA = "c763734e5566dabeda9bb6a07c3c56eae2a9df9d5e017df9adb5ba3cb7b0192f"
ERRORS = ("SubObjE", "ProE", "NegE", "ParE", "HalE", "OtherE")
YES_NO = {"yes": 1, "no": 0}


def main() -> None:
    repo = main_args("data/_build/faceval.py")
    rows = list(csv.DictReader(io.StringIO(read_source(repo, COMMIT, FILE, SHA).decode("utf-8"), newline="")))
    assert len(rows) == 750, len(rows)
    refs = {r["DocID"]: r["Summary"] for r in rows if r["Model"] == "human_ref"}
    records = []
    for r in sorted(rows, key=lambda r: (r["DocID"], r["Model"])):
        human = {"factual": 1 - YES_NO[r["w/ Error"]]}  # 1 = no factual error: higher is better, as elsewhere
        human.update({e: YES_NO[r[e]] for e in ERRORS})  # 1 = this error type present
        records.append({"instance_id": r["DocID"], "summarizer_id": r["Model"], "summary": r["Summary"],
                        "references": [refs[r["DocID"]]], "metrics": {"human": human}})
    out = DATA / "atlas" / "faceval"
    write_jsonl(out / "faceval.jsonl", records)
    write_text(out / "LICENSE.FacEval", read_source(repo, COMMIT, "LICENSE", LICENSE_SHA).decode("utf-8"))


if __name__ == "__main__":
    main()
