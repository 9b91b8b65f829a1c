import sys; sys.path.insert(0, "tools")
from nb import build

build("notebooks/00_summeval_check.ipynb", [
("md", """
# 00 · SummEval end to end: the embedded data and its published system scores

This notebook proves the path from the embedded data to `results/`: it loads SummEval (16 systems × 100
CNN/DailyMail documents, 11 references each, 3 expert and 5 crowd ratings per summary), shows the system-level
mean of a human dimension for every system, and compares the expert relevance means with the values SummEval
published (Fabbri et al., 2021, Table 2): M23 4.26, M22 4.25, M17 4.23, M0 4.137, M11 3.147.

Parameters (next cell) follow the compendium's convention: literal values only; `dataset` is a name known to
`metaeval.datasets.load` or a path to your own data in the same form.
"""),
("code", """
dataset = "summeval"
dimension = "expert.relevance"
output_dir = "results/00_summeval_check"
seed = 0
"""),
("code", """
import pandas as pd

import metaeval
from metaeval.notebooks import output_path

out = output_path(output_dir)
ds = metaeval.datasets.load(dataset)
print(f"{ds.name}: {len(ds.systems)} systems x {len(ds.inputs)} inputs; scores: {', '.join(ds.score_names)}")
"""),
("md", """
## System-level scores

Each system's score is the mean over its 100 summaries of the per-summary mean of the three expert ratings.
"""),
("code", """
table = pd.DataFrame({name: ds.system_scores(name) for name in ds.score_names}).sort_values(dimension, ascending=False)
table.index.name = "system"
table.round(3)
"""),
("md", """
## Against SummEval's published values

The published table gives the expert relevance means to two or three decimals; `difference` is ours minus theirs
and must vanish up to that rounding.
"""),
("code", """
published = pd.Series({"M23": 4.26, "M22": 4.25, "M17": 4.23, "M0": 4.137, "M11": 3.147}, name="published")
check = pd.DataFrame({"ours": ds.system_scores("expert.relevance")[published.index], "published": published})
check["difference"] = check["ours"] - check["published"]
check["agrees"] = check["difference"].abs() <= 0.0051
table.to_csv(out / "system_scores.csv", float_format="%.6f")
check.to_csv(out / "published_check.csv", float_format="%.6f")
assert check["agrees"].all(), check
check.round(4)
"""),
("code", """
import matplotlib.pyplot as plt

from metaeval.plotting import save_figure, use_compendium_style

use_compendium_style()

fig, ax = plt.subplots(figsize=(7, 3.2))
table[dimension].plot.bar(ax=ax, color="#4C72B0")
ax.set_ylabel(f"mean {dimension}")
ax.set_xlabel("system")
ax.set_ylim(1, 5)
ax.set_title("SummEval: system-level expert relevance")
fig.tight_layout()
save_figure(fig, out, "system_scores")
plt.show()
"""),
], main_table="published_check.csv")
