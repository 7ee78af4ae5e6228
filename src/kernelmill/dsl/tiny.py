"""A tiny sentence-transformers embedder built locally (no downloads).

For tests and the device dry run of the loop (benchmarks/tilelang_loop_device.sh):
a WordPiece tokenizer trained here on a few lines of kernel vocabulary, a
1-layer random BERT and mean pooling, saved as a sentence-transformers folder
that `Embedder(path)` loads. Its similarities mean little; it exercises the
retrieval path exactly as a real code embedding model does.

    python -m kernelmill.dsl.tiny OUT_DIR     # prints the folder to pass as --embedder
"""

from __future__ import annotations

import sys
from pathlib import Path

VOCAB_TEXT = [
    "import torch import torch.nn as nn class Model nn.Module def forward self x return torch.relu x",
    "torch.sigmoid torch.sum dim keepdim F.gelu F.leaky_relu negative_slope matmul softmax layer_norm",
    "operations patterns elementwise reduction gemm memory-bound compute-bound inputs outputs dtypes float32",
    "class ModelNew clamp_min exp tilelang T.Kernel T.Parallel T.copy T.gemm threads ceildiv prim_func",
    "Step 1 map the PyTorch operation to a kernel. Step 2 each thread reads one element and writes one.",
    "memory access parallelisation execution model block thread shared fragment global index bound",
]


def train_wordpiece(vocab_size: int = 400, texts=VOCAB_TEXT):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(list(texts) * 4, trainer)
    return tok


def build_tiny_embedder(out_dir: str | Path, hidden: int = 32, max_seq_length: int = 256, seed: int = 0) -> str:
    """Write the embedder to `out_dir/st` (the BERT it wraps to `out_dir/bert`)
    and return the sentence-transformers folder. Deterministic under `seed`."""
    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    tok = BertTokenizerFast(tokenizer_object=train_wordpiece(), unk_token="[UNK]", pad_token="[PAD]",
                            cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=len(tok), hidden_size=hidden, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=2 * hidden, max_position_embeddings=max(512, max_seq_length))
    BertModel(cfg).save_pretrained(root / "bert")
    tok.save_pretrained(root / "bert")
    try:  # sentence-transformers >= 5.2 moved the modules
        from sentence_transformers.sentence_transformer import modules as models
    except ImportError:
        from sentence_transformers import models
    st = SentenceTransformer(modules=[models.Transformer(str(root / "bert"), max_seq_length=max_seq_length),
                                      models.Pooling(hidden, "mean")], device="cpu")
    st.save(str(root / "st"))
    return str(root / "st")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0].startswith("-"):
        sys.exit("usage: python -m kernelmill.dsl.tiny OUT_DIR")
    print(build_tiny_embedder(args[0]))


if __name__ == "__main__":
    main()
