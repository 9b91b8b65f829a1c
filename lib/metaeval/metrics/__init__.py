"""Metrics: ROUGE-1.5.5 tokenization and scoring, variant signatures, BLEU, and the semantic metrics.

The bottom layer: imports nothing else of metaeval but the private helpers.
"""
