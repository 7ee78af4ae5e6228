"""Common-subexpression extraction in array index expressions.

Per scope (each `{...}` block of a function), index expressions are walked top
down; the largest arithmetic subexpression that occurs at least twice in the
scope's own index expressions (compared structurally, so `((i*4)+j)` equals
`(i*4+j)`) becomes `const auto idxN = ...;`, defined just before the statement
of its first use, and every occurrence is replaced by the name. `X + c` keeps
its constant offset: only `X` is shared. Nested scopes are handled on their own
(a variable is redefined at scope boundaries).

Safety: a candidate has no calls, assignments or increments, and every name in
it is never written in the function (with `loop_vars`: not written inside the scope,
so a loop variable counts as constant in its loop's body, whose header writes it),
has no address taken, is not
`__shared__` or `volatile`, is declared before the definition point and is not
declared again between the definition and the last use. A candidate that reads memory (`B[i]`, `*p`, `p->x`)
is shared only when nothing between its definition and its last use may write
memory or synchronise (an assignment or increment of anything but a plain
variable, any call): the value read must be the same. `const auto` keeps the
exact type of the expression. Functions with `#if` inside are left alone (a
branch may not be compiled, so no check would see the change), and with
`within` only functions inside the given byte ranges are changed.
"""

from __future__ import annotations

import re
from collections import Counter

from .tsparse import parse_cuda, text

_SIDE_EFFECTS = {"call_expression", "assignment_expression", "update_expression", "comma_expression"}
# CUDA math functions: no side effect, the same value for the same arguments
PURE_CALLS = set("""max min fmaxf fminf fmax fmin floorf ceilf roundf truncf rintf sqrtf rsqrtf __expf expf
 exp2f __logf logf log2f __log2f log10f __log10f __sinf __cosf sinf cosf tanf __tanf tanhf atanf atanhf asinf
 acosf asinhf acoshf fabsf abs __fdividef powf __powf erff erfcf expm1f log1pf""".split())


def pure_call(n) -> bool:
    f = n.child_by_field_name("function") if n.type == "call_expression" else None
    return f is not None and f.type == "identifier" and text(f) in PURE_CALLS
_BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}


def _key(n):
    """Structural key: parentheses do not matter, operators and leaves do."""
    if n.type == "parenthesized_expression":
        inner = [c for c in n.children if c.is_named]
        return _key(inner[0]) if len(inner) == 1 else text(n)
    if n.type == "binary_expression":
        return (n.child_by_field_name("operator").type, _key(n.child_by_field_name("left")),
                _key(n.child_by_field_name("right")))
    if n.named_child_count == 0:
        return text(n)
    return (n.type, *(_key(c) for c in n.children if c.is_named))


def _strip_parens(n):
    while n.type == "parenthesized_expression":
        inner = [c for c in n.children if c.is_named]
        if len(inner) != 1:
            break
        n = inner[0]
    return n


def _walk(n):
    """Every node under `n` (itself included), in pre-order. An explicit stack: a
    recursive generator costs a frame per level for every node it yields, and this walk
    runs over the same subtrees many times (a quarter of the CSE's time on TVM batches)."""
    stack = [n]
    while stack:
        x = stack.pop()
        yield x
        stack.extend(reversed(x.children))


def _identifiers(n) -> set[str]:
    return {text(x) for x in _walk(n) if x.type == "identifier"}


def _has_side_effects(n) -> bool:
    return any(x.type in _SIDE_EFFECTS for x in _walk(n))


def _index_exprs(scope):
    """Index expressions in `scope`, not descending into nested compound statements."""
    out = []

    def rec(n, top):
        if n.type == "compound_statement" and n is not scope:
            return
        if n.type == "subscript_expression":
            for c in n.children:
                if c.type == "subscript_argument_list":
                    out.extend((a, top) for a in c.children if a.is_named)
        for c in n.children:
            rec(c, top)

    for stmt in scope.children:
        if stmt.is_named:
            rec(stmt, stmt)
    return out


_MEMORY_READS = {"subscript_expression", "field_expression", "pointer_expression"}
_PREPROC = {"preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"}


def _reads_memory(n) -> bool:
    for x in _walk(n):
        if x.type == "subscript_expression":
            return True
        if x.type == "pointer_expression" and text(x.child_by_field_name("operator") or x)[:1] == "*":
            return True
        if x.type == "field_expression" and any(c.type == "->" for c in x.children):
            return True
    return False


def _clobbers(stmt, exempt=None) -> bool:
    """May `stmt` write memory or synchronise? `exempt`: its own top-level assignment
    (in the last statement the store comes after every read of the statement)."""
    for x in _walk(stmt):
        if x.type == "call_expression" and not pure_call(x):
            return True
        if x.type in ("assignment_expression", "update_expression") and x is not exempt:
            target = x.child_by_field_name("left") or x.child_by_field_name("argument")
            if target is None or target.type != "identifier":
                return True
    return False


def _writes_and_decls(fn):
    written, declared = set(), {}
    for x in _walk(fn):
        if x.type == "assignment_expression":
            left = x.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                written.add(text(left))
        elif x.type == "update_expression":
            written |= {text(c) for c in x.children if c.type == "identifier"}
        elif x.type == "pointer_expression" and x.children and x.children[0].type == "&":
            written |= {text(c) for c in x.children if c.type == "identifier"}  # &x: may be written
        elif x.type in ("init_declarator", "parameter_declaration", "declaration"):
            d = x.child_by_field_name("declarator")
            while d is not None and d.type not in ("identifier",):
                d = d.child_by_field_name("declarator")
            if d is not None:
                declared.setdefault(text(d), x.start_byte)
    return written, declared


def _address_taken_or_shared(fn) -> set[str]:
    """Names that may change behind the code's back: their address is taken (`&x`), or
    they are `__shared__` / `volatile` (other threads write them)."""
    out = set()
    for x in _walk(fn):
        if x.type == "pointer_expression" and x.children and x.children[0].type == "&":
            out |= {text(c) for c in x.children if c.type == "identifier"}
        elif x.type == "declaration" and re.search(r"\b(__shared__|volatile)\b", text(x)):
            out |= {text(d) for d in _walk(x) if d.type == "identifier"}
    return out


def _declared_in(stmts) -> set[str]:
    return {name for s in stmts for name in _writes_and_decls(s)[1]}


def _span(scope, occ_stmts) -> list:
    stmts = [c for c in scope.children if c.is_named]
    first, last = min(occ_stmts, key=lambda s: s.start_byte), max(occ_stmts, key=lambda s: s.start_byte)
    return [s for s in stmts if first.start_byte <= s.start_byte <= last.start_byte]


def leaves(n) -> int:
    """Tokens of an expression (tree-sitter leaves, comments aside)."""
    return sum(1 for x in _walk(n) if x.child_count == 0 and x.type != "comment")


def pays(uses: int, tokens: int) -> bool:
    """Does naming a `tokens`-token expression used `uses` times save tokens? Each use
    becomes one name; the declaration `const auto N = ...;` costs the expression and 5."""
    return uses * (tokens - 1) > tokens + 5


def fresh_name(prefix: str, used: set[str], counter: int) -> tuple[str, int]:
    """`prefix` + the first number from `counter` whose name the source does not use (added to `used`)."""
    while f"{prefix}{counter}" in used:
        counter += 1
    used.add(f"{prefix}{counter}")
    return f"{prefix}{counter}", counter


def declaration(data: bytes, stmt, name: str, expr) -> tuple[int, int, bytes]:
    """The edit inserting `const auto name = expr;` before `stmt`, at its indentation."""
    line_start = data.rfind(b"\n", 0, stmt.start_byte) + 1
    indent = re.match(rb"[ \t]*", data[line_start:stmt.start_byte]).group()
    return stmt.start_byte, stmt.start_byte, f"const auto {name} = {text(expr)};\n".encode() + indent


def apply_edits(data: bytes, edits: list[tuple[int, int, bytes]]) -> tuple[str, int]:
    """The source with `edits` (start, end, replacement) made, and how many were insertions
    (declarations). An edit overlapping an earlier one is skipped (should not happen)."""
    out, pos = bytearray(), 0
    for a, b, rep in sorted(edits, key=lambda e: (e[0], e[1])):
        if a < pos:
            continue
        out += data[pos:a] + rep
        pos = b
    out += data[pos:]
    return out.decode(), len({e[2] for e in edits if e[0] == e[1]})


def _memory_safe(scope, occ_stmts) -> bool:
    """No statement from the first to the last use may change what the reads read."""
    span = _span(scope, occ_stmts)
    last = span[-1]
    for s in span:
        top = s.named_children[0] if s.type == "expression_statement" and s.named_children else None
        exempt = top if (s is last and top is not None and top.type == "assignment_expression") else None
        if _clobbers(s, exempt):
            return False
    return True


def extract_index_cse(src: str, min_ops: int = 1, within: list[tuple[int, int]] | None = None,
                      loop_vars: bool = False, gain: bool = False) -> tuple[str, int]:
    """Return the refactored source and the number of variables introduced;
    `within`: byte ranges of the functions that may be changed. `loop_vars`: a name
    counts as constant where the scope does not write it (a loop variable inside its
    loop's body), not only where the function never writes it (the default, which
    `ptx augment` keeps). `gain`: name an expression only when that saves tokens
    (k uses of t tokens: k*(t-1) > t+5, the declaration's cost)."""
    tree = parse_cuda(src)
    data = src.encode()
    used_names = set(re.findall(r"\b\w+\b", src))
    edits: list[tuple[int, int, bytes]] = []
    counter = 0
    for fn in (x for x in _walk(tree.root_node) if x.type == "function_definition"):
        if within is not None and not any(a <= fn.start_byte and fn.end_byte <= b for a, b in within):
            continue
        if any(x.type in _PREPROC for x in _walk(fn)):
            continue
        fn_written, declared = _writes_and_decls(fn)
        unstable = _address_taken_or_shared(fn)
        for scope in (x for x in _walk(fn) if x.type == "compound_statement"):
            exprs = _index_exprs(scope)
            if not exprs:
                continue
            # a name no statement of this block writes is constant while the block runs:
            # the loop variable of the `for` around it is written only in the loop header
            written = (_writes_and_decls(scope)[0] if loop_vars else fn_written) | unstable
            counts: Counter = Counter()
            for e, _ in exprs:
                for x in _walk(e):
                    if _strip_parens(x).type == "binary_expression" and x.type != "parenthesized_expression":
                        counts[_key(x)] += 1
            chosen: dict = {}  # key -> (first node, statement)
            occurrences: list = []

            def pick(n, stmt):
                n = _strip_parens(n)
                if n.type == "binary_expression":
                    op = n.child_by_field_name("operator").type
                    right = _strip_parens(n.child_by_field_name("right"))
                    if op in ("+", "-") and right.type == "number_literal":
                        pick(n.child_by_field_name("left"), stmt)  # Index + Offset
                        return
                    k = _key(n)
                    ok = (counts[k] >= 2 and not _has_side_effects(n)
                          and sum(1 for x in _walk(n) if x.type == "binary_expression") >= min_ops)
                    if ok:
                        ids = _identifiers(n)
                        ok = not (ids & written) and all(
                            i in _BUILTINS or (i in declared and declared[i] < stmt.start_byte)
                            or (i not in declared and i.isupper()) for i in ids)
                    if ok:
                        if k not in chosen:
                            chosen[k] = (n, stmt)
                        occurrences.append((n, k, stmt))
                        return
                for c in n.children:
                    if c.is_named:
                        pick(c, stmt)

            for e, stmt in exprs:
                pick(e, stmt)
            uses = Counter(k for _, k, _ in occurrences)
            names = {}
            for k, (first, stmt) in chosen.items():
                if uses[k] < 2 or (gain and not pays(uses[k], leaves(first))):
                    continue
                occ = [s for _, kk, s in occurrences if kk == k]
                if _reads_memory(first) and not _memory_safe(scope, occ):
                    continue
                if _identifiers(first) & _declared_in(_span(scope, occ)):
                    continue  # a name declared between definition and use would be another variable
                names[k], counter = fresh_name("idx", used_names, counter)
                edits.append(declaration(data, stmt, names[k], first))
            for n, k, _ in occurrences:
                if k in names:
                    edits.append((n.start_byte, n.end_byte, names[k].encode()))
    return apply_edits(data, edits)
