"""Paraphrase models: identification, embeddings, mining support and generation."""
