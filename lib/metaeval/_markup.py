"""The one escaping rule for user-derived text in every generated Markdown and HTML.

Private: shared by the layers that write Markdown (the report card's ``summary.md`` and its notebook's Markdown
outputs, generated conclusions) and by the static site, so that a name a user gave (a dataset, a score, a system,
a column of an imported table, a folder) reaches every page as the text it is, never as markup. The rule is
applied where a name enters generated Markdown (at the source), not on the finished text, whose own markup
(``**bold**``, lists) must survive.

* :func:`md_text`: a name inside Markdown. ``&``, ``<`` and ``>`` become HTML character references, which every
  Markdown renderer (CommonMark, MyST, markdown-it with or without raw HTML) shows as the characters; the
  characters of inline emphasis and code (backslash, backtick, ``*``, ``_``) are backslash-escaped, so a name is
  never bold or code; an underscore between two letters or digits (``bart_out``) is left as it is, since
  CommonMark never reads an intraword ``_`` as emphasis (names such as REALSumm's systems then read as before).
  Letters, digits, spaces and the punctuation of ordinary names and of the prose around them
  (``.-()',:/|#[]``) are unchanged, so generated texts read as before and a whole sentence that quotes names (a
  card's note) can be escaped at once. Brackets stay: a ``[text](url)`` name could at most make a link, which
  the renderers refuse for ``javascript:`` and ``data:`` addresses, and a note's ``'[NAME, NAME]'`` stays as
  written.
* :func:`md_code`: a name shown as code in Markdown (a code span shows its content literally, so it needs no
  entities; its fence is longer than any run of backticks in the name, so the name cannot end it). A name that
  holds ``<``, ``>`` or ``&`` is written as :func:`md_text` instead (not as code): entities are not decoded in a
  code span, and a raw tag, even one a renderer would show as code, is what a tool that scans or pre-processes
  the Markdown (an HTML sanitizer, a search for markup in notebook outputs) must never find.
* :func:`html_text`: a name inside HTML (``html.escape``, quotes included).

>>> md_text("<script>alert(1)</script>")
'&lt;script&gt;alert(1)&lt;/script&gt;'
>>> md_text("x<img src=x onerror=alert(2)>")
'x&lt;img src=x onerror=alert(2)&gt;'
>>> md_text("ROUGE-2 F1 (expert.relevance)"), md_text("a*b_`c`"), md_text("bart_out _x_")
('ROUGE-2 F1 (expert.relevance)', 'a\\\\*b\\\\_\\\\`c\\\\`', 'bart_out \\\\_x\\\\_')
"""

from __future__ import annotations

import html
import re

__all__ = ["md_text", "md_code", "html_text"]

# an intraword underscore (a letter or digit on both sides) cannot open or close emphasis in CommonMark
_MARKUP = re.compile(r"([\\`*]|(?<![^\W_])_|_(?![^\W_]))")


def md_text(text: object) -> str:
    """``text`` (a user-derived name, ``str()`` of any value) as literal text inside generated Markdown."""
    escaped = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKUP.sub(r"\\\1", escaped)


def md_code(text: object) -> str:
    """``text`` (a user-derived name) as a Markdown code span, whatever backticks it holds.

    >>> md_code("expert.relevance"), md_code("a`b"), md_code("<script>")
    ('`expert.relevance`', '``a`b``', '&lt;script&gt;')
    """
    text = str(text).replace("\n", " ")
    if any(c in text for c in "<>&"):
        return md_text(text)
    runs = [len(m) for m in re.findall(r"`+", text)]
    fence = "`" * (max(runs, default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def html_text(text: object) -> str:
    """``text`` (a user-derived name) as literal text inside HTML, attribute values included."""
    return html.escape(str(text), quote=True)
