"""Tiny local models for the DSL pipeline tests: a sentence-transformers
embedder and a causal LM, both from configs with random weights and a
tokenizer trained here (nothing is downloaded)."""

from __future__ import annotations

import pytest


def _tokenizer(vocab_size: int = 400):
    from kernelmill.dsl.tiny import train_wordpiece

    return train_wordpiece(vocab_size)


@pytest.fixture(scope="session")
def tiny_embedder_path(tmp_path_factory) -> str:
    pytest.importorskip("sentence_transformers")
    from kernelmill.dsl.tiny import build_tiny_embedder

    return build_tiny_embedder(tmp_path_factory.mktemp("tiny-embedder"))


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory):
    """(model, tokenizer) of a 2-layer random GPT-2 with a tokenizer trained here."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    tok = PreTrainedTokenizerFast(tokenizer_object=_tokenizer(), unk_token="[UNK]", pad_token="[PAD]",
                                  bos_token="[CLS]", eos_token="[SEP]")
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=len(tok), n_embd=32, n_layer=2, n_head=2, n_positions=512,
                     bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    model = GPT2LMHeadModel(cfg).eval()
    return model, tok
