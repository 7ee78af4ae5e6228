"""PTX toolkit: parser, lossless loop rerolling (Rolled-PTX), and CUDA/Triton -> PTX pairs.

The names below are imported on first use (PEP 562, kernelmill/lazy.py): a worker that
rerolls (ptx/batch.py) imports the parser and the reroll, not the pairs' task and record
machinery (~45 ms of `kernelmill ptx stats`' start, issue 44)."""

from __future__ import annotations

from ..lazy import lazy_face

_WHERE = {
    "BasicBlock": "blocks", "basic_blocks": "blocks", "split_kernels": "blocks", "strip_debug": "blocks",
    "ExpandError": "expand", "expand_module": "expand", "expand_stmts": "expand", "expand_text": "expand",
    "PtxSyntaxError": "lexer", "count_tokens": "lexer", "tokenize": "lexer",
    "CompileFailed": "nvcc", "NvccOptions": "nvcc", "nvcc_ptx": "nvcc",
    "PairConfig": "pairs", "build_pairs": "pairs", "pairs_for_cuda": "pairs",
    "parse_module": "parser", "parse_statements": "parser",
    "RerollConfig": "reroll", "RerollStats": "reroll", "reroll_module": "reroll", "reroll_stmts": "reroll",
    "reroll_text": "reroll",
    "Function": "syntax", "Loop": "syntax", "Module": "syntax", "fmt_module": "syntax", "fmt_stmts": "syntax",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
