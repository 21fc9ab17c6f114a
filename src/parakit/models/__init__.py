"""Paraphrase models: identification classifiers, bi-encoders, generators."""
