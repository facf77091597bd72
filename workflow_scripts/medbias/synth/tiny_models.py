"""Tiny models of the demo world, built locally and written as the real ones are distributed.

- a WordPiece tokenizer (uncased, BERT-style) and a byte-level BPE tokenizer (GPT-2/BART-style),
  trained on the synthetic notes and abstracts;
- a tiny BERT with MLM and NSP heads (stands in for SciBERT and the other encoders), a tiny GPT-2
  (causal) and a tiny BART (seq2seq), randomly initialised from the configured seed and written with
  ``save_pretrained`` together with their tokenizer, so ``medbias.core.models`` loads them exactly as it
  loads a hub id or a user's folder;
- word vectors (skip-gram) in word2vec binary format, standing in for GoogleNews and BioWordVec.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

BERT_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
BPE_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def wordpiece_vocabulary(word_counts: dict[str, int], vocab_size: int, special: Iterable[str] = ()) -> list[str]:
    """A WordPiece vocabulary learnt by byte-pair merges over ``word_counts``, deterministically.

    Symbols start as single characters, ``##``-prefixed inside a word; the most frequent adjacent
    pair (weighted by word count) is merged until the vocabulary holds ``vocab_size`` tokens; ties go
    to the alphabetically first pair. This is what the ``tokenizers`` WordPiece trainer learns, but
    that trainer numbers the ``##`` characters in hash-map order, which differs between processes, so
    the same texts gave a different vocabulary (and model) on every run.
    """
    import heapq

    words = sorted(word_counts)
    symbols = [[w[0]] + ["##" + c for c in w[1:]] for w in words]
    counts = [word_counts[w] for w in words]
    vocab = list(dict.fromkeys(special))
    vocab += sorted({s for word in symbols for s in word} - set(vocab))
    known = set(vocab)
    pair_counts: dict[tuple[str, str], int] = {}
    where: dict[tuple[str, str], set[int]] = {}
    for i, word in enumerate(symbols):
        for pair in zip(word, word[1:]):
            pair_counts[pair] = pair_counts.get(pair, 0) + counts[i]
            where.setdefault(pair, set()).add(i)
    heap = [(-c, pair) for pair, c in pair_counts.items()]
    heapq.heapify(heap)
    while len(vocab) < vocab_size and heap:
        negative, pair = heapq.heappop(heap)
        if pair_counts.get(pair, 0) != -negative or negative == 0:
            continue  # stale entry: the count changed after it was pushed
        merged = pair[0] + pair[1][2:]
        if merged not in known:
            vocab.append(merged)
            known.add(merged)
        changed: set[tuple[str, str]] = set()
        for i in sorted(where.pop(pair, ())):
            word, c = symbols[i], counts[i]
            for old in zip(word, word[1:]):
                pair_counts[old] -= c
                changed.add(old)
            k, rebuilt = 0, []
            while k < len(word):
                if k + 1 < len(word) and (word[k], word[k + 1]) == pair:
                    rebuilt.append(merged)
                    k += 2
                else:
                    rebuilt.append(word[k])
                    k += 1
            symbols[i] = rebuilt
            for new in zip(rebuilt, rebuilt[1:]):
                pair_counts[new] = pair_counts.get(new, 0) + c
                where.setdefault(new, set()).add(i)
                changed.add(new)
        for changed_pair in changed:
            if pair_counts.get(changed_pair, 0) > 0:
                heapq.heappush(heap, (-pair_counts[changed_pair], changed_pair))
    return vocab


def word_pre_tokenizer(keep_inner_punctuation: bool):
    """BERT's pre-tokenizer (split at spaces and around every punctuation mark), or, with
    ``keep_inner_punctuation``, one that keeps hyphens and apostrophes inside words ("twenty-first",
    "crohn's" stay whole, so multi-part terms are not longer sentences than one-part terms)."""
    from tokenizers import Regex, pre_tokenizers

    if not keep_inner_punctuation:
        return pre_tokenizers.BertPreTokenizer()
    return pre_tokenizers.Sequence(
        [
            pre_tokenizers.WhitespaceSplit(),
            pre_tokenizers.Split(Regex(r"[^\w'-]|(?<!\w)['-]|['-](?!\w)"), behavior="isolated"),
        ]
    )


def train_wordpiece(texts: Iterable[str], vocab_size: int, keep_inner_punctuation: bool = False):
    """An uncased BERT-style WordPiece tokenizer, as a transformers fast tokenizer; the same texts give
    the same vocabulary in every process (``wordpiece_vocabulary``)."""
    from collections import Counter

    from tokenizers import Tokenizer, decoders, models, normalizers, processors
    from transformers import PreTrainedTokenizerFast

    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre_tokenizer = word_pre_tokenizer(keep_inner_punctuation)
    word_counts: Counter[str] = Counter()
    for text in texts:
        word_counts.update(word for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text)))
    vocab = wordpiece_vocabulary(word_counts, vocab_size, BERT_SPECIAL)
    tok = Tokenizer(models.WordPiece({token: i for i, token in enumerate(vocab)}, unk_token="[UNK]"))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        do_lower_case=True,
    )


# GPT-2's split, except that hyphens and apostrophes inside a word keep it whole
_BYTE_LEVEL_WORDS = r" ?[\p{L}\p{N}]+(?:['-][\p{L}\p{N}]+)*| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"


def train_byte_bpe(texts: Iterable[str], vocab_size: int, add_bos_eos: bool, keep_inner_punctuation: bool = False):
    """A byte-level BPE tokenizer with leading-space tokens (GPT-2 and BART style).

    ``add_bos_eos`` wraps every sequence in <s> ... </s>, as BART's tokenizer does; GPT-2's does not.
    ``keep_inner_punctuation`` keeps "twenty-first" and "crohn's" one pre-token (as
    ``word_pre_tokenizer`` does for WordPiece).
    """
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    if keep_inner_punctuation:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_BYTE_LEVEL_WORDS), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    else:
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        texts,
        trainers.BpeTrainer(
            vocab_size=vocab_size, special_tokens=BPE_SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
        ),
    )
    if add_bos_eos:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>",
            pair="<s> $A </s> </s> $B </s>",
            special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],
        )
    else:
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
        pad_token="<pad>",
        mask_token="<mask>",
    )


def build_tiny_model(arch: str, tokenizer, params: dict[str, Any], seed: int, masked_only: bool = False):
    """A randomly initialised tiny model of ``arch`` (bert, gpt2 or bart) sized by ``params``; a
    BERT has MLM and NSP heads, or with ``masked_only`` the MLM head alone."""
    import torch
    import transformers as tf

    torch.manual_seed(seed)
    vocab = len(tokenizer)
    if arch == "bert":
        config = tf.BertConfig(vocab_size=vocab, pad_token_id=tokenizer.pad_token_id, **params)
        return tf.BertForMaskedLM(config) if masked_only else tf.BertForPreTraining(config)
    if arch == "gpt2":
        config = tf.GPT2Config(
            vocab_size=vocab,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id,
            **params,
        )
        return tf.GPT2LMHeadModel(config)
    if arch == "bart":
        config = tf.BartConfig(
            vocab_size=vocab,
            pad_token_id=tokenizer.pad_token_id,
            bos_token_id=tokenizer.bos_token_id,
            eos_token_id=tokenizer.eos_token_id,
            decoder_start_token_id=tokenizer.eos_token_id,
            forced_eos_token_id=tokenizer.eos_token_id,
            **params,
        )
        return tf.BartForConditionalGeneration(config)
    raise ValueError(f"unknown tiny architecture {arch!r} (expected bert, gpt2 or bart)")


def simple_tokens(texts: Iterable[str]) -> Iterator[list[str]]:
    """Lower-cased word tokens per text (gensim's simple tokenizer: letters only, 2-15 characters)."""
    from gensim.utils import simple_preprocess

    for text in texts:
        tokens = simple_preprocess(text, min_len=1, max_len=30)
        if tokens:
            yield tokens


def train_word_vectors(sentences: list[list[str]], params: dict[str, Any], seed: int):
    """Skip-gram word2vec on ``sentences``; one worker so that the same seed gives the same vectors."""
    from gensim.models import Word2Vec

    model = Word2Vec(sentences=sentences, sg=1, workers=1, seed=seed, **params)
    return model.wv
