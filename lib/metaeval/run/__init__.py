"""Running: the notebook runner, parameter sweeps and the ``metaeval`` command line."""
