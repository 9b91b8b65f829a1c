"""Sphinx configuration of the compendium's site (``make site``; sources assembled by ``site/build.py``).

Sphinx + myst-nb, not Jupyter Book 2 / mystmd: the MyST engine downloads its HTML theme at build time, which
cannot work on an offline machine, while Sphinx, myst-nb and the theme are ordinary PyPI packages whose assets
are installed with them. myst-nb reads the executed notebooks of ``results/`` as they are (never re-executing
them) and the library's numpydoc docstrings become the API reference through autodoc and napoleon.
"""

project = "metaeval"
author = "The metaeval authors"
copyright = "the metaeval authors; data under their own licences"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
]

# --- notebooks: shown as executed by the default run, never re-run
nb_execution_mode = "off"
nb_output_stderr = "remove"  # warnings and progress belong to the run's log, not to the page
nb_render_markdown_format = "myst"  # generated conclusions hold tables
nb_merge_streams = True
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# --- API reference from the docstrings
autosummary_generate = True
autosummary_imported_members = False
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False

# --- pages
exclude_patterns = ["**/_text/**", "**/.ipynb_checkpoints", "generated/*.tmp"]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
suppress_warnings = ["myst.header", "myst.xref_missing", "mystnb.unknown_mime_type", "misc.highlighting_failure",
                     "toc.not_included", "autosummary.import_cycle"]
html_theme = "furo"
html_title = "metaeval: the statistics of summarization-metric evaluation"
html_static_path = ["_static"]  # compendium.css: wide tables wrap, DataFrames formatted
html_css_files = ["compendium.css"]
html_last_updated_fmt = None  # no build date: the same results give the same pages
html_show_sphinx = False
html_copy_source = False
napoleon_use_ivar = True  # dataclass fields are documented once (by autodoc), not again as attributes
suppress_warnings += ["ref.python"]  # a bare `n` in a docstring matches several attributes


def _math_as_tex(app):
    """Formulas in docstrings stay TeX source: MathJax would come from a CDN, which an offline reader lacks."""
    from html import escape

    def inline(self, node):
        self.body.append(f'<code class="math">{escape(node.astext())}</code>')
        raise __import__("docutils").nodes.SkipNode

    def block(self, node):
        self.body.append(f'<pre class="math">{escape(node.astext())}</pre>')
        raise __import__("docutils").nodes.SkipNode

    app.add_html_math_renderer("tex", (inline, None), (block, None))


html_math_renderer = "tex"


def setup(app):
    _math_as_tex(app)
html_favicon = "favicon.svg"  # also keeps the browser from asking the server for /favicon.ico
