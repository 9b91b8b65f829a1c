"""Convert the WMT 2020 and 2021 expert MQM segment scores (Freitag et al., 2021) into data/atlas/wmt20-mqm-ende/,
wmt20-mqm-zhen/, wmt21-mqm-ende/ and wmt21-mqm-zhen/ (the dataset contract).

    python data/_build/wmt_mqm.py /work/.mirror/google+wmt-mqm-human-evaluation/repo

Source: google/wmt-mqm-human-evaluation @ 7fadea281aff8db61cc72fc3d469a4dca78b82a6,
newstest{2020,2021}/{ende,zhen}/mqm_newstest{2020,2021}_{ende,zhen}.avg_seg_scores.tsv: lines
``system mqm_avg_score seg_id`` (separated by a space or a tab), the MQM score of each system's translation of
each segment averaged over its raters (0 = no error; more negative = worse). In the 2021 files a segment that was
not rated is ``None`` for every system (475 of 1,002 en-de segments, 1,298 of 1,948 zh-en): those segments are
left out, so the grid holds the rated ones.
"""

from __future__ import annotations

from _common import DATA, main_args, read_source, write_jsonl, write_text

COMMIT = "7fadea281aff8db61cc72fc3d469a4dca78b82a6"
FILES = {
    "wmt20-mqm-ende": ("newstest2020/ende/mqm_newstest2020_ende.avg_seg_scores.tsv",
                       "729f515bd0d5cf77845e9516a13472ddc9773001b2275e04a0ad4ab7639559ff", 10, 1418),
    "wmt20-mqm-zhen": ("newstest2020/zhen/mqm_newstest2020_zhen.avg_seg_scores.tsv",
                       "0a58ae9f2b24600367499f31d2df12491ca992277b4a1f2a8b62523c416383a6", 10, 2000),
    "wmt21-mqm-ende": ("newstest2021/ende/mqm_newstest2021_ende.avg_seg_scores.tsv",
                       "a31b7f00f185d8749d5195516b8e8ee71e6b8b2ef15fb58406ea96d20c255102", 17, 527),
    "wmt21-mqm-zhen": ("newstest2021/zhen/mqm_newstest2021_zhen.avg_seg_scores.tsv",
                       "d0754405d037ac7f0d565283853b17f111de45610da0f66ccdbaa7f76bd2b17b", 15, 650),
}
LICENSE_SHA = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def main() -> None:
    repo = main_args("data/_build/wmt_mqm.py")
    licence = read_source(repo, COMMIT, "LICENSE", LICENSE_SHA).decode("utf-8")
    for name, (path, sha, n_sys, n_seg) in FILES.items():
        lines = read_source(repo, COMMIT, path, sha).decode("utf-8").splitlines()
        assert lines[0].split() == ["system", "mqm_avg_score", "seg_id"], lines[0]
        fields = [line.split() for line in lines[1:]]
        # segments no system has a score for (not rated) are left out; any other "None" would stay missing
        rated = {seg for _, score, seg in fields if score != "None"}
        records = []
        for system, score, seg in fields:
            if seg not in rated:
                continue
            mqm = None if score == "None" else float(score) + 0.0  # + 0.0 writes the file's "-0.000000" as 0.0
            records.append({"instance_id": f"seg{int(seg):04d}", "summarizer_id": system,
                            "metrics": {"human": {"mqm": mqm}}})
        assert len(records) == n_sys * n_seg == len({(r["instance_id"], r["summarizer_id"]) for r in records})
        assert all(r["metrics"]["human"]["mqm"] is not None for r in records)  # complete grids
        records.sort(key=lambda r: (r["instance_id"], r["summarizer_id"]))
        out = DATA / "atlas" / name
        write_jsonl(out / f"{name}.jsonl", records)
        write_text(out / "LICENSE.wmt-mqm", licence)


if __name__ == "__main__":
    main()
