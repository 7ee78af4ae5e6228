"""Tiny local models for the DSL pipeline tests: a sentence-transformers
embedder and a causal LM, both from configs with random weights and a
tokenizer trained here (nothing is downloaded)."""

from __future__ import annotations

import pytest

CORPUS = [
    "import torch import torch.nn as nn class Model nn.Module def forward self x return torch.relu x",
    "torch.sigmoid torch.sum dim keepdim F.gelu F.leaky_relu negative_slope matmul softmax layer_norm",
    "operations patterns elementwise reduction gemm memory-bound compute-bound inputs outputs dtypes float32",
    "class ModelNew clamp_min exp tilelang T.Kernel T.Parallel T.copy T.gemm threads ceildiv prim_func",
    "Step 1 map the PyTorch operation to a kernel. Step 2 each thread reads one element and writes one.",
    "memory access parallelisation execution model block thread shared fragment global index bound",
]


def _tokenizer(vocab_size: int = 400):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(CORPUS * 4, trainer)
    return tok


@pytest.fixture(scope="session")
def tiny_embedder_path(tmp_path_factory) -> str:
    pytest.importorskip("sentence_transformers")
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny-embedder")
    tok = BertTokenizerFast(tokenizer_object=_tokenizer(), unk_token="[UNK]", pad_token="[PAD]",
                            cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=512)
    BertModel(cfg).save_pretrained(root / "bert")
    tok.save_pretrained(root / "bert")
    st = SentenceTransformer(modules=[models.Transformer(str(root / "bert"), max_seq_length=256),
                                      models.Pooling(32, "mean")], device="cpu")
    st.save(str(root / "st"))
    return str(root / "st")


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
