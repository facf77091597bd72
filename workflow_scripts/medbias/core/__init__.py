"""Shared machinery every study uses: the one door to transformers (registry, loading, device), batching
and pooling, fill-in-the-blank, template slots, sentence likelihoods, language-model and skip-gram
training, note text, seeds, figure style, errors, logs and code fingerprints."""
