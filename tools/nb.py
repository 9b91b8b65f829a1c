"""Tiny helper to author notebooks as Python lists of cells (markdown / code), kept out of the package.

Usage: python tools/nb.py  -> regenerates the notebooks whose builders are registered below.
Notebooks are committed without outputs; the first code cell is tagged "parameters".
"""
import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook


def build(path, cells, main_table=None):
    """Write a notebook; ``main_table`` names the CSV (in output_dir) that sweeps collect."""
    nb = new_notebook()
    if main_table:
        nb.metadata["metaeval"] = {"main_table": main_table}
    nb.metadata["kernelspec"] = {"name": "metaeval", "display_name": "Python (metaeval)", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    first_code = True
    for kind, text in cells:
        if kind == "md":
            nb.cells.append(new_markdown_cell(text.strip("\n")))
        else:
            cell = new_code_cell(text.strip("\n"))
            if first_code:
                cell.metadata["tags"] = ["parameters"]
                first_code = False
            nb.cells.append(cell)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"
    nbformat.validate(nb)
    nbformat.write(nb, path)
