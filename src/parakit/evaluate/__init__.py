"""Evaluation of paraphrase models: classification metrics and reports."""
