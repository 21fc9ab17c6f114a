"""Paraphrase models: classifiers, their features and training recipes."""
