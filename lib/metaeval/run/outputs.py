"""Output folders of notebook runs: the runner only ever replaces what it wrote itself.

The rules and their one implementation live in the private module :mod:`metaeval._outputs`, shared by the
runner (this layer) and the report card (:mod:`metaeval.studies.card`, a layer below, which writes its folders
by the same rules); this module is their public face for the running layer. See :mod:`metaeval._outputs` for
the rules: run manifests (``.metaeval-run.<name>.json`` with the sha256 of every file written), protected
folders, staging and the atomic swap into place.
"""

from __future__ import annotations

from metaeval._outputs import (
    EDITOR_ARTEFACTS,
    MANIFEST,
    MANIFEST_PREFIX,
    RUNNER_FILES,
    RUNNER_MARKS,
    STAGING_MARK,
    OutputDirError,
    check_sweep_root,
    check_target,
    clean_stale,
    clean_stale_under,
    failed_dir,
    is_editor_artefact,
    keep_failed,
    manifest_name,
    read_manifest,
    read_manifests,
    remove_run_folder,
    staging_dir,
    swap_into_place,
    write_manifest,
)

__all__ = [
    "EDITOR_ARTEFACTS",
    "MANIFEST",
    "MANIFEST_PREFIX",
    "RUNNER_FILES",
    "RUNNER_MARKS",
    "STAGING_MARK",
    "OutputDirError",
    "check_target",
    "check_sweep_root",
    "write_manifest",
    "read_manifest",
    "read_manifests",
    "clean_stale",
    "clean_stale_under",
    "staging_dir",
    "keep_failed",
    "swap_into_place",
    "manifest_name",
    "failed_dir",
    "is_editor_artefact",
    "remove_run_folder",
]
