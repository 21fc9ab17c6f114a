"""Evaluation: classification, retrieval, generation metrics and human evaluation."""
