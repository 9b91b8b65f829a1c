"""Data: the dataset contract and loaders, synthetic data, cached scoring of datasets."""
