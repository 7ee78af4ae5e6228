"""PTX toolkit: parser, lossless loop rerolling (Rolled-PTX), and CUDA/Triton -> PTX pairs."""

from .blocks import BasicBlock, basic_blocks, split_kernels, strip_debug
from .expand import ExpandError, expand_module, expand_stmts, expand_text
from .lexer import PtxSyntaxError, count_tokens, tokenize
from .nvcc import CompileFailed, NvccOptions, nvcc_ptx
from .pairs import PairConfig, build_pairs, pairs_for_cuda
from .parser import parse_module, parse_statements
from .reroll import RerollConfig, RerollStats, reroll_module, reroll_stmts, reroll_text
from .syntax import Function, Loop, Module, fmt_module, fmt_stmts

__all__ = [
    "BasicBlock", "basic_blocks", "split_kernels", "strip_debug", "ExpandError", "expand_module",
    "expand_stmts", "expand_text", "PtxSyntaxError", "count_tokens", "tokenize", "CompileFailed",
    "NvccOptions", "nvcc_ptx", "PairConfig", "build_pairs", "pairs_for_cuda", "parse_module",
    "parse_statements", "RerollConfig", "RerollStats", "reroll_module", "reroll_stmts",
    "reroll_text", "Function", "Loop", "Module", "fmt_module", "fmt_stmts",
]
