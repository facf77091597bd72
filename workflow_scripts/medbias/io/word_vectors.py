"""Word-vector files as gensim KeyedVectors, in every format the registry's ``vectors`` entries name
(word2vec binary or text, fastText .bin, gensim's own KeyedVectors file).

``check_word_vector_file`` reads a word2vec file's header (cheap: one line and the file's size)
before any job starts; ``load_word_vectors`` turns what gensim raises on a file it cannot read into
one line naming the file and the format it was declared as.
"""

from __future__ import annotations

from pathlib import Path

from medbias.core.errors import MedbiasInputError

WORD2VEC_FORMATS = ("word2vec_binary", "word2vec_text")


def check_word_vector_file(path: str | Path, fmt: str) -> None:
    """The file is not empty; a word2vec file (binary or text) starts with ``<count> <dimension>``, both
    positive integers, and a binary one is large enough for ``count`` vectors of ``dimension`` 4-byte
    floats (each also needs at least a one-byte word and a separator)."""
    path = Path(path)
    size = path.stat().st_size
    if size == 0:
        raise MedbiasInputError(f"{path}: file is empty (expected {fmt} word vectors)")
    if fmt not in WORD2VEC_FORMATS:
        return
    with open(path, "rb") as handle:
        first = handle.readline(200)
    fields = first.split()
    if len(fields) != 2 or not all(field.isdigit() for field in fields) or 0 in (int(fields[0]), int(fields[1])):
        shown = first[:60].decode("utf-8", errors="replace").rstrip()
        hint = " (a text file without a header?)" if len(fields) > 2 else ""
        raise MedbiasInputError(
            f"{path}: the first line must be '<count> <dimension>' of a {fmt} file, got {shown!r}{hint}"
        )
    count, dimension = int(fields[0]), int(fields[1])
    if fmt == "word2vec_binary":
        smallest = len(first) + count * (dimension * 4 + 2)
        if size < smallest:
            raise MedbiasInputError(
                f"{path}: the header declares {count} vectors of dimension {dimension}, which need at least "
                f"{smallest} bytes; the file has {size} (truncated, or the header's count or dimension is wrong)"
            )


def _fasttext(path: str | Path):
    """The word vectors of a fastText binary model (Facebook's .bin: the words' vectors and the
    subword buckets gensim uses for words outside the vocabulary)."""
    from gensim.models.fasttext import load_facebook_vectors

    return load_facebook_vectors(str(path))


def load_word_vectors(path: str | Path, fmt: str):
    """Load a word-vector file as gensim KeyedVectors: word2vec binary or text, fastText .bin, or a
    gensim KeyedVectors file. A file gensim cannot read stops with one line naming it."""
    from gensim.models import KeyedVectors

    loaders = {
        "word2vec_binary": lambda: KeyedVectors.load_word2vec_format(str(path), binary=True),
        "word2vec_text": lambda: KeyedVectors.load_word2vec_format(str(path), binary=False),
        "fasttext_bin": lambda: _fasttext(path),
        "keyedvectors": lambda: KeyedVectors.load(str(path)),
    }
    if fmt not in loaders:
        raise MedbiasInputError(f"{path}: unknown word-vector format {fmt!r} (known: {', '.join(loaders)})")
    check_word_vector_file(path, fmt)
    try:
        vectors = loaders[fmt]()
    except (ValueError, EOFError, UnicodeDecodeError, IndexError, OSError, KeyError) as error:
        if isinstance(error, MedbiasInputError):
            raise
        detail = f"{type(error).__name__}: {error}".splitlines()[0][:160]
        raise MedbiasInputError(
            f"{path}: cannot read it as {fmt} word vectors ({detail}); check the file and the entry's format"
        ) from error
    if fmt in WORD2VEC_FORMATS:
        check_all_vectors_read(path, fmt, vectors)
    return vectors


def check_all_vectors_read(path: str | Path, fmt: str, vectors) -> None:
    """gensim reads the header's count of vectors and ignores what follows: a file holding more vectors
    than its header declares would lose the rest without a word. Binary: the vectors read take the word,
    a space and the 4-byte floats each, and either no line ends or one after every vector (the last one
    perhaps without); any other remainder is more data. Text: no non-empty line may follow the last
    vector read."""
    path = Path(path)
    count, dimension = len(vectors.index_to_key), vectors.vector_size
    if fmt == "word2vec_binary":
        with open(path, "rb") as handle:
            header = len(handle.readline())
        used = header + sum(len(word.encode("utf-8")) + 1 + 4 * dimension for word in vectors.index_to_key)
        remainder = path.stat().st_size - used
        extra = 0 if remainder in (0, count - 1, count) else remainder
        unit = "bytes"
    else:
        with open(path, encoding="utf-8", errors="replace") as handle:
            extra = sum(1 for line in handle if line.strip()) - 1 - count
        unit = "lines"
    if extra > 0:
        raise MedbiasInputError(
            f"{path}: the header declares {count} vectors but the file holds more "
            f"({extra} {unit} left unread); correct the header's count"
        )


def vector_spelling(vectors, word: str) -> str | None:
    """The spelling under which ``vectors`` hold a vector of ``word``: as written, else lower-cased
    (GloVe is lower-cased, GoogleNews is not); None when neither. A gensim KeyedVectors is looked up in
    its vocabulary (``key_to_index``), so a fastText model's subword guesses do not count as coverage;
    any other mapping by membership."""
    vocabulary = getattr(vectors, "key_to_index", vectors)
    for spelling in (word, word.lower()):
        if spelling in vocabulary:
            return spelling
    return None


def vector_spellings(vectors, words) -> tuple[list[str], list[str]]:
    """(each word as the vectors spell it, the words that have no vector in either spelling)."""
    spelled = [(word, vector_spelling(vectors, word)) for word in words]
    return [s for _, s in spelled if s is not None], [w for w, s in spelled if s is None]
