"""Notebook parameters: their types (from the literals of the parameters cell) and their meanings (from the
comment after each literal).

A parameters cell holds only ``name = literal  # meaning`` lines. The literal's type is the parameter's type:
``n_trials = 1000`` takes integers, ``alpha = 0.05`` numbers, ``ks = [0.1, 0.5]`` lists of numbers,
``human = None`` anything (None means "from the dataset"). Overrides are checked against these types before
anything runs, and the command line reads ``-p NAME VALUE`` by the parameter's type, so ``-p dataset 2021``
is the string "2021" and ``-p n_trials 2.5`` is refused.
"""

from __future__ import annotations

import ast
import difflib
import io
import os
import re
import tokenize
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Parameter", "ParameterError", "check_choices", "choices", "parse_parameters_cell", "check_value",
           "parse_cli_value", "read_flag", "split_values", "type_name"]


class ParameterError(ValueError):
    """A parameter override of the wrong type, or a parameters cell that is not ``name = literal`` lines."""


@dataclass(frozen=True)
class Parameter:
    name: str
    default: Any
    help: str
    line: int

    @property
    def type(self) -> str:
        return type_name(self.default)

    @property
    def choices(self) -> tuple[str, ...] | None:
        """The values the comment lists as ``a | b | c`` (see :func:`choices`)."""
        return choices(self.name, self.default, self.help)


def type_name(default: Any) -> str:
    """The type a parameter takes, named from its default literal."""
    if default is None:
        return "any"
    if isinstance(default, bool):
        return "bool"
    if isinstance(default, int):
        return "int"
    if isinstance(default, float):
        return "float"
    if isinstance(default, str):
        return "str"
    if isinstance(default, (list, tuple)):
        inner = {type_name(v) for v in default}
        if inner == {"int", "float"}:
            inner = {"float"}
        return f"list[{inner.pop()}]" if len(inner) == 1 else "list"
    if isinstance(default, dict):
        return "dict"
    return type(default).__name__


def parse_parameters_cell(source: str, where: str = "notebook") -> list[Parameter]:
    """The parameters of a cell's source, in order, with their defaults and the comments after them."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ParameterError(f"{where}: the parameters cell is not valid Python (line {exc.lineno}: {exc.msg})"
                             ) from None
    comments: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                comments[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError):  # pragma: no cover - ast.parse accepted it
        pass
    params = []
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            raise ParameterError(f"{where}: the parameters cell may only hold `name = literal` lines "
                                 f"(line {node.lineno})")
        name = node.targets[0].id
        try:
            default = ast.literal_eval(node.value)
        except ValueError:
            raise ParameterError(f"{where}: parameter {name!r} (line {node.lineno}) is not a literal; the parameters "
                                 "cell holds literals only") from None
        end = node.end_lineno or node.lineno
        text = next((comments[n] for n in range(end, node.lineno - 1, -1) if n in comments), "")
        params.append(Parameter(name, default, text, node.lineno))
    return params


def _fits(value: Any, default: Any) -> bool:
    """``value`` has the type of the literal ``default`` (:func:`type_name`; an int is a float, a bool no int)."""
    if default is None or value is None:
        return True
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return False
        kinds = {type_name(v) for v in default}
        if not default or len(kinds) > 1 and kinds != {"int", "float"}:
            return True
        example = 0.0 if kinds == {"int", "float"} else default[0]
        return all(_fits(v, example) for v in value)
    return type_name(value) == type_name(default) or (type_name(default), type_name(value)) == ("float", "int")


def check_value(name: str, value: Any, default: Any, where: str = "") -> Any:
    """``value`` if it has the type of ``default`` (an int is accepted for a float); else ParameterError.

    None is accepted for every parameter: notebooks read None as "the default from the dataset", and for
    ``output_dir`` as "the canonical folder".
    """
    if _fits(value, default):
        if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            return float(value)
        return value
    prefix = f"{where}: " if where else ""
    raise ParameterError(
        f"{prefix}parameter {name!r} expects {type_name(default)} (default {default!r}), got {value!r} "
        f"({type_name(value)})"
    )


def split_values(text: str) -> list[str]:
    """A sweep's ``-p NAME V1,V2,...`` as its values: split at the commas outside brackets, braces and quotes,
    so that a list value stays one value.

    Examples
    --------
    >>> split_values("pearson,kendall")
    ['pearson', 'kendall']
    >>> split_values("[0.1,0.5],[0.2, 0.9]")
    ['[0.1,0.5]', '[0.2, 0.9]']
    >>> split_values("'a,b',{x: 1, y: 2}")
    ["'a,b'", '{x: 1, y: 2}']
    """
    values, depth, quote, start = [], 0, "", 0
    for k, ch in enumerate(text):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth = max(depth - 1, 0)
        elif ch == "," and depth == 0:
            values.append(text[start:k])
            start = k + 1
    values.append(text[start:])
    return values


def parse_cli_value(name: str, text: str, default: Any, where: str = "") -> Any:
    """Read ``-p NAME TEXT`` by the parameter's type: text for a string parameter, YAML otherwise."""
    import yaml

    textual = isinstance(default, str) or name in ("output_dir", "dataset")  # paths and names stay text
    if textual and text.strip().lower() not in ("null", "none", "~"):
        return text
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        prefix = f"{where}: " if where else ""
        raise ParameterError(f"{prefix}parameter {name!r}: cannot read {text!r} ({exc.__class__.__name__})") from None
    if isinstance(value, str) and value.strip().lower() == "none":
        value = None
    return check_value(name, value, default, where)


def read_flag(name: str, text: str, declared: Mapping[str, Any]) -> Any:
    """``-p NAME TEXT`` read by :func:`parse_cli_value` for a parameter in ``declared`` (the notebook's defaults),
    as YAML for a name the notebook does not declare (refused later by the runner or the sweep, naming it)."""
    if name in declared:
        return parse_cli_value(name, text, declared[name], where=f"-p {name}")
    import yaml

    return yaml.safe_load(text)


def check_parameters(declared: Mapping[str, Any], parameters: Mapping[str, Any], where: str = "") -> dict[str, Any]:
    """Every override checked against its declared default's type (unknown names are the caller's concern)."""
    return {k: check_value(k, v, declared[k], where) if k in declared else v for k, v in parameters.items()}


# Parameters whose value is a name or path the comment may illustrate with examples, never a closed list.
_OPEN = frozenset({"dataset", "scores", "output_dir", "human", "metric", "metrics", "metric_x", "metric_y",
                   "baselines", "embeddings"})
_CHOICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.*+-]*$")


def choices(name: str, default: Any, comment: str) -> tuple[str, ...] | None:
    """The closed list of values a parameter's comment gives as ``a | b | c``, else None.

    Parenthesised remarks are dropped (``williams (the paper) | perm-both``); the first choice is the last
    word before the first ``|``, the others the first word after each ``|``. A list is closed only if the
    default is one of its values (or None), so a comment that merely mentions ``|`` constrains nothing.

    Examples
    --------
    >>> choices("coefficient", "pearson", "pearson | spearman | kendall")
    ('pearson', 'spearman', 'kendall')
    >>> choices("test", "williams", "williams (the paper) | perm-both | boot-both (Deutsch et al. 2021)")
    ('williams', 'perm-both', 'boot-both')
    >>> choices("incomplete", "raise", "missing cells of `human`: raise | drop-inputs | keep-nan")
    ('raise', 'drop-inputs', 'keep-nan')
    >>> choices("dataset", "summeval", "summeval | realsumm") is None
    True
    """
    if name in _OPEN or "|" not in comment or not (default is None or isinstance(default, (str, list))):
        return None
    text = re.sub(r"\([^)]*\)", " ", comment)
    parts = [p.strip() for p in text.split("|")]
    words = [parts[0].split()[-1] if parts[0].split() else ""] + [p.split()[0] if p.split() else "" for p in parts[1:]]
    words = [w.strip("`'\",;:") for w in words]
    if not all(_CHOICE.match(w) for w in words):
        return None
    defaults = default if isinstance(default, list) else [default]
    if not all(d is None or d in words for d in defaults):
        return None
    return tuple(words)


def check_choices(params: Iterable[Parameter], values: Mapping[str, Any], where: str = "") -> None:
    """Every value of a parameter whose comment lists its choices must be one of them (before a kernel starts).

    Raises
    ------
    ParameterError
        Naming the parameter, the value, the choices and the closest one (``spearmann`` -> ``spearman``).

    Examples
    --------
    >>> p = Parameter("coefficient", "pearson", "pearson | spearman | kendall", 3)
    >>> check_choices([p], {"coefficient": "spearmann"})
    Traceback (most recent call last):
    ...
    metaeval.run.params.ParameterError: parameter 'coefficient' must be one of pearson | spearman | kendall, got \
'spearmann' (did you mean 'spearman'?)
    """
    prefix = f"{where}: " if where else ""
    for p in params:
        allowed = p.choices if p.name in values else None
        if allowed is None:
            continue
        value = values[p.name]
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if item is None or item in allowed:
                continue
            close = difflib.get_close_matches(str(item), allowed, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ParameterError(f"{prefix}parameter {p.name!r} must be one of {' | '.join(allowed)}, got "
                                 f"{item!r}{hint}")


# ----------------------------------------------------------------------------------------------------
# JupyterLab: the parameters cell of a notebook source is its defaults, not a scratch pad

_SOURCE_NAME = re.compile(r"^[0-9]{2}_[A-Za-z0-9_]+\.py$")
_PARAMS_BLOCK = re.compile(r'^# %% tags=\["parameters"\][^\n]*\n.*?(?=^# %%|\Z)', re.MULTILINE | re.DOTALL)


def _parameters_block(text: str) -> str | None:
    found = _PARAMS_BLOCK.search(text)
    return found.group(0) if found else None


def protect_parameters_cell(model: dict, path: str, contents_manager: Any = None, **kwargs: Any) -> None:
    """Jupyter server pre-save hook: saving a notebook source (``notebooks/NN_name.py``) from JupyterLab keeps
    its parameters cell as it is on disk.

    The parameters cell holds the defaults every run, test and result depends on; values typed into it to try
    something (and JupyterLab's autosave) would otherwise rewrite them. Every other cell is saved as edited;
    the typed values stay in the open notebook, and the server log says so. Installed by ``make setup``
    (``jupyter/jupyter_server_config.d/metaeval.json``): ``ContentsManager.pre_save_hook``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (root / "20_x.py").write_text('# %% tags=["parameters"]\\nn = 1  # size\\n\\n# %%\\nprint(n)\\n')
    >>> class CM:
    ...     root_dir = str(root)
    ...     class log:
    ...         warning = print
    >>> model = {"type": "file", "format": "text",
    ...          "content": '# %% tags=["parameters"]\\nn = 5  # size\\n\\n# %%\\nprint(n * 2)\\n'}
    >>> protect_parameters_cell(model, "20_x.py", CM())  # doctest: +ELLIPSIS
    20_x.py: the parameters cell was not saved ...
    >>> print(model["content"])
    # %% tags=["parameters"]
    n = 1  # size
    <BLANKLINE>
    # %%
    print(n * 2)
    <BLANKLINE>
    """
    if not _SOURCE_NAME.match(os.path.basename(path)) or model.get("content") is None:
        return
    root = getattr(contents_manager, "root_dir", "") or ""
    disk_path = os.path.join(root, path)
    if not os.path.isfile(disk_path):
        return  # a new file: nothing to protect
    with open(disk_path, encoding="utf-8") as fh:
        disk = _parameters_block(fh.read())
    if disk is None:
        return
    changed = False
    if model.get("type") == "file" and isinstance(model["content"], str):
        new = _parameters_block(model["content"])
        if new is not None and new != disk:
            model["content"] = model["content"].replace(new, disk, 1)
            changed = True
    elif model.get("type") == "notebook":
        body = disk.split("\n", 1)[1].rstrip("\n")
        for cell in model["content"].get("cells", []):
            if "parameters" in cell.get("metadata", {}).get("tags", []):
                if cell.get("source", "").rstrip("\n") != body:
                    cell["source"] = body
                    changed = True
                break
    if changed and contents_manager is not None:
        number = os.path.basename(path)[:2]
        contents_manager.log.warning(
            f"{path}: the parameters cell was not saved (it holds the notebook's defaults); the values you typed "
            f"stay in the open notebook. Other values without editing the source: metaeval run {number} -p NAME VALUE"
        )
