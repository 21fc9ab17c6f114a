"""Evaluation of paraphrase models: classification metrics, generation metrics, human evaluation."""
