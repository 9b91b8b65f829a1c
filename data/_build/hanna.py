"""Convert HANNA's per-story scores (Chhun et al., 2022; 2024) into data/atlas/hanna/ (the dataset contract).

    python data/_build/hanna.py /work/.mirror/dig-team+hanna-benchmark-asg/repo

Source: dig-team/hanna-benchmark-asg @ 282f27536a5d05ad4ce14298abcd70c45668fed2, hanna_metric_scores_llm.csv:
11 rows (one per story generator, "Human" = the WritingPrompts human story), 255 columns, each cell a list of the
96 stories' values in prompt order (README: "Each list of that row contains the scores of stories 96 to 191").
"""

from __future__ import annotations

import ast
import csv
import io
import math

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "282f27536a5d05ad4ce14298abcd70c45668fed2"
FILE = "hanna_metric_scores_llm.csv"
SHA = "d0ce43f9b5cc12894f8b7bf3f7b4da06d19cdbea2c989dd3f173f2240dfee26d"
LICENSE_SHA = "bc03dc792290fc9ec16bd6772b1e5e88038541f323c63762c988cec07a017146"
CRITERIA = {"RE": "Relevance", "CH": "Coherence", "EM": "Empathy", "SU": "Surprise", "EG": "Engagement",
            "CX": "Complexity"}
# The automatic metrics' headers end with a two-character category marker (reference-based or not, string /
# embedding / model based) that reads as mojibake ("BLEU Ξ§"); the name is the header without it.
MARKERS = ("Ξ§", "Ξε", "ΞΔ", "¤§", "¤ε", "¤Δ")


def values(cell: str) -> list[float]:
    out = ast.literal_eval(cell)  # a Python list literal of numbers: literal_eval evaluates no code
    assert isinstance(out, list) and len(out) == 96 and all(isinstance(v, (int, float)) for v in out), cell[:80]
    return [float(v) for v in out]


def main() -> None:
    repo = main_args("data/_build/hanna.py")
    rows = list(csv.reader(io.StringIO(read_source(repo, COMMIT, FILE, SHA).decode("utf-8"), newline="")))
    header, rows = rows[0], rows[1:]
    assert len(rows) == 11 and len(header) == 255
    records = []
    for row in rows:
        system = row[0]
        cols = {h: values(c) for h, c in zip(header[1:], row[1:])}
        for k in range(96):
            human = {}
            for abbr, crit in CRITERIA.items():
                raters = [cols[f"Human {j} {abbr}"][k] for j in (1, 2, 3)]
                # the file's criterion column is the mean of the three raters' columns
                assert math.isclose(sum(raters) / 3, cols[crit][k], abs_tol=1e-9), (system, k, crit)
                human[crit.lower()] = raters
            metrics: dict[str, float] = {}
            for h, v in cols.items():
                if h in CRITERIA.values() or h.startswith("Human "):
                    continue  # the human criteria (kept per rater above) and "Human Avg j" (not documented)
                name = h[:-3] if h.endswith(MARKERS) else h
                assert name not in metrics, name
                metrics[name] = None if math.isnan(v[k]) else v[k]
            records.append({"instance_id": f"prompt{k:02d}", "summarizer_id": system,
                            "metrics": {"human": human, **metrics}})
    records.sort(key=lambda r: (r["instance_id"], r["summarizer_id"]))
    out = DATA / "atlas" / "hanna"
    write_jsonl(out / "hanna.jsonl", records)
    write_text(out / "LICENSE.HANNA", read_source(repo, COMMIT, "LICENSE", LICENSE_SHA).decode("utf-8"))


if __name__ == "__main__":
    main()
