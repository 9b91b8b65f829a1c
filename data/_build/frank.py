"""Convert FRANK's human judgments and baseline metric scores (Pagnoni et al., 2021) into data/atlas/frank-cnndm/
and data/atlas/frank-xsum/ (the dataset contract).

    python data/_build/frank.py /work/.mirror/artidoro+frank/repo

Source: artidoro/frank @ 80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4, data/human_annotations.json (2,246 records, one
per article hash x model) and data/baseline_factuality_metrics_outputs.json (the same 2,246 keys).
"""

from __future__ import annotations

import json

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4"
HUMAN = ("data/human_annotations.json", "7be2dfd49ad2f2582ab28578cce1dbf256fd46415a0f902a472421bca6fe31d2")
METRICS = ("data/baseline_factuality_metrics_outputs.json",
           "b64e54b42212b5780e27cab72a5d895e4f32a300906dcfecb91345e1ab99443c")
LICENSE_SHA = "3ac303fd4e49e6c133cfc32d8d518fba224fd431872c7bc086e27d597e3e7df3"
SUBSETS = {"cnndm": "frank-cnndm", "bbc": "frank-xsum"}  # FRANK calls its XSum subset "bbc"
KEYS = ("hash", "model_name", "dataset", "split")


def main() -> None:
    repo = main_args("data/_build/frank.py")
    human = json.loads(read_source(repo, COMMIT, *HUMAN))
    metrics = {(r["hash"], r["model_name"]): r for r in json.loads(read_source(repo, COMMIT, *METRICS))}
    assert len(human) == len(metrics) == 2246
    licence = read_source(repo, COMMIT, "LICENSE", LICENSE_SHA).decode("utf-8")
    for subset, name in SUBSETS.items():
        records = []
        for h in sorted((r for r in human if r["dataset"] == subset), key=lambda r: (r["hash"], r["model_name"])):
            m = metrics[(h["hash"], h["model_name"])]
            assert m["dataset"] == subset and m["split"] == h["split"]
            scores = {k: v for k, v in h.items() if k not in KEYS and not k.startswith("Flip_")}
            flips = {k: v for k, v in h.items() if k.startswith("Flip_")}
            records.append({"instance_id": h["hash"], "summarizer_id": h["model_name"], "metrics": {
                "human": scores,          # Factuality and the error categories (1 = no error of the category)
                "ablation": flips,        # the same with one category's labels flipped (evaluate.py --mode ablations)
                **{k: v for k, v in m.items() if k not in KEYS},  # the baseline metrics, under their own names
            }})
        out = DATA / "atlas" / name
        write_jsonl(out / f"{name}.jsonl", records)
        write_text(out / "LICENSE.FRANK", licence)


if __name__ == "__main__":
    main()
