"""Qualitative evaluation and corpus analysis: performance profiles, phenomena, corpus reports.

Submodules (import them directly; this package imports nothing heavy):
``stats`` (significance tests), ``phenomena`` (ETPC, Turku and automatic phenomena),
``patterns`` (the six systematic paraphrase patterns of T13), ``profile`` (performance
profiles), ``corpus`` (corpus statistics and comparison), ``report`` (HTML/JSON/Markdown).
"""
