"""Statistics: correlations at three levels, bootstrap resampling, significance tests, planning.

Imports only :mod:`metaeval.metrics` and the private helpers.
"""
