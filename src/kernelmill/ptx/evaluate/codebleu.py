"""CodeBLEU for CUDA (Ren et al., 2020), with equal weights (0.25 each) on its
four parts, as PtxDec reports it:

* ``ngram``: BLEU-4 over code tokens (uniform weights, brevity penalty);
* ``weighted_ngram``: the same with unigrams weighted by kind: C/C++/CUDA
  keywords and CUDA built-ins count 1.0, other tokens 0.2 (CodeBLEU's choice);
* ``syntax``: the share of the reference's syntax subtrees (node types, no
  identifier text) that also occur in the candidate's tree;
* ``dataflow``: the share of the reference's data-flow edges (a variable is
  *computed from* the variables of the expression assigned to it, and a use
  *comes from* its last definition), with variables renamed by order of first
  appearance, that the candidate's edges match.

Why written here and not the `codebleu` package: it pins tree-sitter < 0.23,
and kernelmill parses CUDA with tree-sitter 0.26 and the tree-sitter-cuda
grammar (cudasrc/tsparse.py), which codebleu has no grammar for (it parses C
or C++ and fails on ``<<<>>>``, ``__global__`` qualifiers and CUDA built-ins).
The four parts follow the paper's definitions on that tree. Scores are per
sample (BLEU parts with add-epsilon smoothing of empty n-gram orders, as
sentence BLEU needs); a run reports their mean.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import asdict, dataclass

WEIGHTS = (0.25, 0.25, 0.25, 0.25)  # ngram, weighted_ngram, syntax, dataflow

KEYWORDS = frozenset("""
auto break case char const constexpr continue default do double else enum extern float for goto if inline int
long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while
bool true false template typename class namespace using new delete nullptr static_cast reinterpret_cast const_cast
__global__ __device__ __host__ __shared__ __constant__ __restrict__ __forceinline__ __noinline__ __launch_bounds__
__syncthreads __syncwarp __shfl_sync __shfl_down_sync __shfl_up_sync __shfl_xor_sync __ldg __threadfence
atomicAdd atomicMax atomicMin atomicExch atomicCAS threadIdx blockIdx blockDim gridDim warpSize
half __half __nv_bfloat16 half2 float2 float4 int2 int4 dim3 size_t int64_t int32_t uint32_t uint8_t
#include #define #pragma unroll
""".split())


@dataclass
class CodeBleu:
    codebleu: float
    ngram: float
    weighted_ngram: float
    syntax: float
    dataflow: float

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 6) for k, v in asdict(self).items()}


def _tree(src: str):
    from ...cudasrc.tsparse import cuda_parser
    return cuda_parser().parse(src.encode())


def tokens(src: str, tree=None) -> list[str]:
    """Code tokens: the leaves of the tree (string and char literals whole), no comments."""
    tree = tree or _tree(src)
    out: list[str] = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.child_count == 0 or n.type in ("string_literal", "char_literal", "system_lib_string"):
            t = n.text.decode(errors="replace").strip()
            if t:
                out.append(t)
            continue
        stack.extend(reversed(n.children))
    return out


def _ngrams(toks: list[str], n: int) -> Counter:
    return Counter(tuple(toks[i:i + n]) for i in range(len(toks) - n + 1))


def bleu(ref: list[str], cand: list[str], unigram_weight=None, max_n: int = 4) -> float:
    """Sentence BLEU with a brevity penalty; `unigram_weight(token)` weights
    unigram matches (weighted n-gram match)."""
    if not cand or not ref:
        return 1.0 if cand == ref else 0.0
    orders = min(max_n, len(ref), len(cand))
    logs = []
    for n in range(1, orders + 1):
        c, r = _ngrams(cand, n), _ngrams(ref, n)
        if n == 1 and unigram_weight is not None:
            num = sum(min(k, r[g]) * unigram_weight(g[0]) for g, k in c.items())
            den = sum(k * unigram_weight(g[0]) for g, k in c.items())
        else:
            num = sum(min(k, r[g]) for g, k in c.items())
            den = sum(c.values())
        p = num / den if num > 0 else 0.1 / max(den, 1)  # add-epsilon for an empty order
        logs.append(math.log(p))
    bp = 1.0 if len(cand) >= len(ref) else math.exp(1 - len(ref) / len(cand))
    return bp * math.exp(sum(logs) / len(logs))


def keyword_weight(tok: str) -> float:
    return 1.0 if tok in KEYWORDS else 0.2


def _sexp(node, memo: dict) -> str:
    key = node.id
    if key not in memo:
        kids = [c for c in node.named_children if c.type != "comment"]
        memo[key] = f"({node.type}{''.join(' ' + _sexp(c, memo) for c in kids)})" if kids else f"({node.type})"
    return memo[key]


def subtrees(tree) -> list[str]:
    """S-expressions (node types only) of every named node with named children."""
    memo: dict = {}
    out = []
    stack = [tree.root_node]
    while stack:
        n = stack.pop()
        kids = [c for c in n.named_children if c.type != "comment"]
        if kids:
            out.append(_sexp(n, memo))
            stack.extend(kids)
    return out


def syntax_match(ref_tree, cand_tree) -> float:
    ref = subtrees(ref_tree)
    if not ref:
        return 0.0
    cand = set(subtrees(cand_tree))
    return sum(s in cand for s in ref) / len(ref)


_DEF_PARENTS = ("init_declarator", "assignment_expression", "update_expression")


def _idents(node) -> list:
    """Variable identifiers under `node` in source order (not called functions,
    field names or types)."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "identifier":
            p = n.parent
            if p is not None and p.type == "call_expression" and p.child_by_field_name("function") == n:
                continue
            out.append(n)
            continue
        stack.extend(reversed(n.children))
    return out


def _target(node):
    """The variable an assignment's left side writes (`x`, `a[i]` -> a, `*p` -> p)."""
    while node is not None and node.type not in ("identifier",):
        if node.type in ("subscript_expression", "field_expression"):
            node = node.child_by_field_name("argument")
        elif node.type in ("pointer_expression", "parenthesized_expression"):
            node = node.child_by_field_name("argument") or (node.named_children[0] if node.named_children else None)
        elif node.type in ("pointer_declarator", "array_declarator", "init_declarator", "reference_declarator"):
            node = node.child_by_field_name("declarator")
        else:
            return None
    return node


def dataflow(tree) -> list[tuple[str, str, tuple[str, ...]]]:
    """Data-flow edges (variable, relation, source variables), names normalised."""
    edges: list[tuple[str, str, tuple[str, ...]]] = []
    defined: set[str] = set()

    def name(n) -> str:
        return n.text.decode(errors="replace")

    def visit(n) -> None:
        if n.type == "comment":
            return
        if n.type == "init_declarator":
            tgt, val = _target(n.child_by_field_name("declarator")), n.child_by_field_name("value")
            if val is not None:
                visit(val)
            if tgt is not None:
                srcs = tuple(name(i) for i in _idents(val)) if val is not None else ()
                edges.append((name(tgt), "computedFrom", srcs))
                defined.add(name(tgt))
            return
        if n.type == "assignment_expression":
            left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
            visit(right)
            tgt = _target(left)
            extra = [i for i in _idents(left) if i != tgt]  # index expressions are read
            for i in extra:
                visit(i)
            if tgt is not None:
                op = n.child_by_field_name("operator")
                compound = op is not None and op.type != "="
                srcs = tuple(name(i) for i in _idents(right)) + ((name(tgt),) if compound else ())
                edges.append((name(tgt), "computedFrom", srcs))
                defined.add(name(tgt))
            return
        if n.type == "update_expression":
            tgt = _target(n.child_by_field_name("argument"))
            if tgt is not None:
                edges.append((name(tgt), "computedFrom", (name(tgt),)))
                defined.add(name(tgt))
            return
        if n.type == "parameter_declaration":
            tgt = _target(n.child_by_field_name("declarator"))
            if tgt is not None:
                defined.add(name(tgt))
            return
        if n.type == "identifier":
            p = n.parent
            if p is not None and p.type == "call_expression" and p.child_by_field_name("function") == n:
                return
            if p is not None and p.type in ("function_declarator",):
                return
            v = name(n)
            if v in defined:
                edges.append((v, "comesFrom", (v,)))
            return
        for c in n.children:
            visit(c)

    visit(tree.root_node)
    rename: dict[str, str] = {}

    def norm(v: str) -> str:
        if v not in rename:
            rename[v] = f"var_{len(rename)}"
        return rename[v]

    out = []
    for v, rel, srcs in edges:
        nv = norm(v)
        out.append((nv, rel, tuple(sorted(norm(s) for s in srcs))))
    return out


def dataflow_match(ref_tree, cand_tree) -> float:
    ref = dataflow(ref_tree)
    if not ref:
        return 0.0
    left = Counter(ref)
    hit = 0
    for e in dataflow(cand_tree):
        if left[e] > 0:
            left[e] -= 1
            hit += 1
    return hit / len(ref)


def codebleu(reference: str, candidate: str, weights=WEIGHTS) -> CodeBleu:
    """CodeBLEU of a candidate against its reference (both CUDA source)."""
    rt, ct = _tree(reference), _tree(candidate)
    rtok, ctok = tokens(reference, rt), tokens(candidate, ct)
    parts = (bleu(rtok, ctok), bleu(rtok, ctok, keyword_weight), syntax_match(rt, ct), dataflow_match(rt, ct))
    total = sum(w * p for w, p in zip(weights, parts))
    return CodeBleu(total, *parts)
