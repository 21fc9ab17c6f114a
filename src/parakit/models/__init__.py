"""Paraphrase models: classifiers and their features, embeddings, generators, training recipes."""
