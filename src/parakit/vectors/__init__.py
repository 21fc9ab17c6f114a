"""Sentence vectors, the layer below ``build``, ``mine`` and ``models``.

* :mod:`~parakit.vectors.encode` — sentence encoders: sentence-transformers (``torch``, bf16
  where the CPU has it), ONNX fp32 (``onnx``) and TF-IDF, one
  :func:`~parakit.vectors.encode.load_encoder`.
* :mod:`~parakit.vectors.precision` — fp32 or bf16: what the CPU/GPU runs natively.
* :mod:`~parakit.vectors.store` — an on-disk sentence store (texts, ids, sources) with its
  memory-mapped vectors.
* :mod:`~parakit.vectors.index` — FAISS indexes (flat, IVF, HNSW) and batched k-NN search.
* :mod:`~parakit.vectors.collection` — reading sentence collections (text, TSV, JSONL, corpora).

Every stage that needs vectors (``build knn``, ``mine``, ``models.biencoder``, the embedding
baselines) goes through this package; heavy dependencies are imported inside its functions.
"""
