"""Vector index, nearest-neighbour mining, retrieval evaluation, tiles and dataset growth.

Heavy dependencies (faiss, torch, sentence-transformers, onnxruntime, dask) are imported inside
the modules that need them; importing :mod:`parakit.mine` stays light.
"""
