"""Convert SQuALITY's human evaluation (Wang et al., 2022) into data/atlas/squality/ (the dataset contract).

    python data/_build/squality.py /work/.mirror/nyu-mll+SQuALITY/repo

Source: nyu-mll/SQuALITY @ dc08d4f574639d773bc64ef3ab3527043108fb4e: data/human-eval/all-responses.jsonl (20
passages x 5 questions x 3 responses (bart, bart-dpr, human) x 3 reviews) and data/v1/test.jsonl (the four
human-written responses to each question: the evaluated "human" response is one of them, the other three are
kept as the references).
"""

from __future__ import annotations

import json

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "dc08d4f574639d773bc64ef3ab3527043108fb4e"
EVAL = ("data/human-eval/all-responses.jsonl", "fdefc51dae186097b35d09af1e9e355c19e422d4291a9899d2e7adcc87024f02")
TEST = ("data/v1/test.jsonl", "9e89181ec717847dc8391c8e877ed3385ecf4fc8ceba6560f2e6e658b12b866d")
LICENSE_SHA = "7e7170e3cebf88a9f60c7b8421418323c09304da1af4d5e90f4da1dc1c8a2661"
SYSTEMS = ("bart", "bart-dpr", "human")
RATINGS = ("correctness", "selection", "overall")


def jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def main() -> None:
    repo = main_args("data/_build/squality.py")
    evals = jsonl(read_source(repo, COMMIT, *EVAL))
    stories = {s["metadata"]["passage_id"]: s for s in jsonl(read_source(repo, COMMIT, *TEST))}
    records = []
    for passage in evals:
        story = stories[passage["passage-id"]]
        for qkey, question in passage["questions"].items():
            human = question["human"]["response"]
            # the question whose four human responses include the evaluated one; the other three are references
            matches = [q for q in story["questions"] if any(r["response_text"] == human for r in q["responses"])]
            assert len(matches) == 1, (passage["passage-id"], qkey)
            refs = [r["response_text"] for r in matches[0]["responses"] if r["response_text"] != human]
            assert len(refs) == 3, (passage["passage-id"], qkey)
            for system in SYSTEMS:
                reviews = sorted(question[system]["reviews"], key=lambda r: r["worker_id"])
                assert len(reviews) == 3 and all(r["system"] == system for r in reviews)
                metrics = {"human": {k: [float(r[f"{k}-rating"]) for r in reviews] for k in RATINGS},
                           "rank": {k: [float(r[f"{k}-rank"]) for r in reviews] for k in RATINGS}}
                records.append({"instance_id": f"{passage['passage-id']}-q{matches[0]['question_number']}",
                                "summarizer_id": system, "summary": question[system]["response"],
                                "references": refs, "metrics": metrics})
    records.sort(key=lambda r: (r["instance_id"], r["summarizer_id"]))
    out = DATA / "atlas" / "squality"
    write_jsonl(out / "squality.jsonl", records)
    write_text(out / "LICENSE.SQuALITY", read_source(repo, COMMIT, "data/LICENSE", LICENSE_SHA).decode("utf-8"))


if __name__ == "__main__":
    main()
