"""Text utilities: tokenisation, normalisation, sentence splitting, lexical similarity, BLEU."""

from parakit.text.bleu import corpus_bleu, sentence_bleu
from parakit.text.normalize import dedup_key, normalize
from parakit.text.sentences import split_sentences
from parakit.text.similarity import (
    CharNgramSimilarity,
    char_ngram_cosine,
    similarity_bins,
    word_overlap_rate,
    word_overlap_rates,
)
from parakit.text.tokenize import get_tokenizer, tokenize

__all__ = [
    "CharNgramSimilarity",
    "char_ngram_cosine",
    "corpus_bleu",
    "dedup_key",
    "get_tokenizer",
    "normalize",
    "sentence_bleu",
    "similarity_bins",
    "split_sentences",
    "tokenize",
    "word_overlap_rate",
    "word_overlap_rates",
]
