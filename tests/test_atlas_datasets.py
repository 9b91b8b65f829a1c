"""The atlas registry (metaeval.data.atlas): every dataset's facts agree with what loads."""

import pytest

from metaeval.data import atlas
from metaeval.data.datasets import load


def test_registry_facts_match_the_loaded_embedded_datasets():
    for name, entry in atlas.atlas_datasets("embedded").items():
        ds = load(name)
        assert ds.shape == (entry.systems, entry.inputs), name
        assert set(entry.human_scores) <= set(ds.score_names), name


def test_a_name_registered_twice_with_other_facts_is_refused():
    entry = atlas.atlas_datasets()["summeval"]
    atlas.register(entry)  # the same facts again: fine
    from dataclasses import replace

    with pytest.raises(ValueError, match="registered twice"):
        atlas.register(replace(entry, systems=17))
