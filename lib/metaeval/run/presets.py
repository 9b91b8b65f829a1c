"""Parameter presets: named sets of notebook parameters kept in ``notebooks/<preset>_parameters.yml``.

``class`` (``notebooks/class_parameters.yml``) runs every notebook small enough for a live class, into
``results/runs/class/<notebook>`` (git-ignored, never over the committed results)::

    metaeval run 20 --preset class          # one notebook
    metaeval class                          # every notebook of the preset, with measured wall and CPU times
    make class                              # the same

The files are read strictly: a key given twice in one mapping is an error naming the line (YAML's usual
reading keeps the last value silently, which is how measured times were once lost).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from metaeval._io import atomic_write
from metaeval._resources import notebooks_root
from metaeval.run.pool import cpu_seconds

__all__ = ["PRESETS", "PresetError", "preset_parameters", "read_preset", "run_preset", "strict_yaml"]

PRESETS = {"class": "class_parameters.yml", "ci": "ci_parameters.yml"}


class PresetError(ValueError):
    """An unknown preset or notebook, or a preset file that is not a strict mapping."""


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses a key given twice in one mapping."""


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if key in seen:
            raise PresetError(f"{key_node.start_mark.name}, line {line}: key {key!r} is given twice in one mapping "
                              f"(first on line {seen[key]}); keep one")
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def strict_yaml(text: str, name: str = "<yaml>") -> Any:
    """Parse YAML safely, refusing duplicate keys.

    Examples
    --------
    >>> strict_yaml("a: 1\\nb: {x: 2}")
    {'a': 1, 'b': {'x': 2}}
    >>> strict_yaml("a: {s: 1, s: 2}", "f.yml")
    Traceback (most recent call last):
    ...
    metaeval.run.presets.PresetError: f.yml, line 1: key 's' is given twice in one mapping (first on line 1); keep one
    """
    loader = _StrictLoader(text)
    loader.name = name
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_preset(preset: str) -> dict[str, Any]:
    """The preset's table: notebook stem -> entry (for ``class``: ``{parameters, default_seconds}``)."""
    if preset not in PRESETS:
        raise PresetError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    path = notebooks_root() / PRESETS[preset]
    table = strict_yaml(path.read_text(encoding="utf-8"), str(path)) or {}
    if not isinstance(table, dict):
        raise PresetError(f"{path}: expected a mapping of notebook names, got {type(table).__name__}")
    return table


def preset_parameters(notebook: str, preset: str) -> dict[str, Any]:
    """The parameters ``preset`` gives ``notebook`` (a stem such as ``20_deutsch2021_ci_simulation`` or its
    number prefix ``20``), with ``output_dir`` set to the preset's scratch folder for ``class``."""
    table = read_preset(preset)
    stem = Path(str(notebook)).stem
    matches = [k for k in table if k == stem or k.split("_", 1)[0] == stem]
    if len(matches) != 1:
        raise PresetError(f"notebook {notebook!r} has no entry in {PRESETS[preset]} "
                          f"(entries: {', '.join(sorted(table))})")
    entry = table[matches[0]]
    if preset == "class":
        params = dict((entry or {}).get("parameters") or {})
        params.setdefault("output_dir", f"results/runs/class/{matches[0].split('_', 1)[0]}")
        return params
    if isinstance(entry, list):  # ci: one run per mapping; the first is the notebook's own
        entry = entry[0] if entry else {}
    return dict(entry or {})


@dataclass(frozen=True)
class Timing:
    notebook: str
    wall_seconds: float
    cpu_seconds: float
    output_dir: Path


#: The class preset's measured times (``metaeval class`` writes them beside its outputs; the site's Teaching
#: page reads them): the last run of each notebook, with when, on how many cores and at what load.
TIMES = "times.json"


def record_times(timings: Sequence[Timing]) -> Path:
    """Write ``timings`` into ``times.json`` of their outputs' folder (``results/runs/class/``), keeping the other
    notebooks' last times; returns the file."""
    folder = Path(timings[0].output_dir).parent
    path = folder / TIMES
    try:
        known = json.loads(path.read_text(encoding="utf-8")).get("runs", {}) if path.is_file() else {}
    except (OSError, ValueError):
        known = {}  # a file this function wrote, unreadable: its times are remeasured, not trusted
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    for t in timings:
        known[t.notebook] = {"wall_seconds": round(t.wall_seconds, 1), "cpu_seconds": round(t.cpu_seconds, 1),
                             "measured": when, "cores": os.cpu_count(), "load_average": round(load, 1)}
    atomic_write(path, lambda tmp: tmp.write_text(json.dumps({"runs": known}, indent=1) + "\n", encoding="utf-8"))
    return path


def run_preset(preset: str = "class", only: Sequence[str] | None = None) -> list[Timing]:
    """Run every notebook of ``preset`` (or ``only`` these) one after the other, printing wall and CPU seconds
    of each run and its kernel (the kernel is a child process, reaped before the run returns)."""
    from metaeval.run.notebooks import run_notebook

    names = list(read_preset(preset))
    if only:
        wanted = {str(o) for o in only}
        names = [n for n in names if n in wanted or n.split("_", 1)[0] in wanted]
    timings = []
    for name in names:
        params = preset_parameters(name, preset)
        wall0, cpu0 = time.perf_counter(), cpu_seconds()
        res = run_notebook(name, params)
        t = Timing(name, time.perf_counter() - wall0, cpu_seconds() - cpu0, res.output_dir)
        timings.append(t)
        print(f"{name}: {t.wall_seconds:.1f} s wall, {t.cpu_seconds:.1f} s CPU -> {t.output_dir}", file=sys.stderr)
    if timings:
        print(f"{len(timings)} runs of the {preset} preset: {sum(t.wall_seconds for t in timings):.0f} s wall, "
              f"{sum(t.cpu_seconds for t in timings):.0f} s CPU on {os.cpu_count()} cores", file=sys.stderr)
        if preset == "class":
            record_times(timings)
    return timings
