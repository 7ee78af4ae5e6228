"""Common-subexpression extraction in value expressions (issue 44).

Compiler-written CUDA repeats whole value expressions, not only indices: TVM's
fast_exp spells `max(min(x[i], 8.837627e+01f), -8.837626e+01f)` fourteen times in one
statement. Per scope, the largest pure subexpression of the statements' right-hand
sides and initialisers that occurs at least twice becomes `const auto vN = ...;` just
before its first statement, when the name saves tokens (k uses of a t-token
expression: k*(t-1) > t+5, the cost of the declaration).

Pure: arithmetic, casts, conditionals, reads of memory, and calls of the CUDA math
functions in `cse.PURE_CALLS`; nothing is taken from a left-hand side. Names and
memory follow the index CSE's rules (`cse.py`): nothing the scope writes, nothing
`__shared__`, `volatile` or with its address taken, no write or impure call between
definition and last use of a read. A read of memory under a condition (`c ? a[i] : 0`,
`p && a[i]`) is not hoisted: it may not happen in the original. The PTX check decides
whether a step is kept.
"""

from __future__ import annotations

import re
from collections import Counter

from .cse import (_BUILTINS, _PREPROC, PURE_CALLS, _address_taken_or_shared, _declared_in, _identifiers, _key,
                  _memory_safe, _reads_memory, _span, _strip_parens, _walk, _writes_and_decls, apply_edits,
                  declaration, fresh_name, leaves, pays, pure_call)
from .tsparse import parse_cuda, text

_CANDIDATE = {"binary_expression", "call_expression", "subscript_expression", "cast_expression",
              "conditional_expression", "unary_expression", "pointer_expression"}
_IMPURE = {"assignment_expression", "update_expression", "comma_expression"}


def _sites(scope):
    """(value expression, its statement): right-hand sides and initialisers of the
    scope's own statements."""
    out = []
    for stmt in scope.named_children:
        if stmt.type == "expression_statement" and stmt.named_children:
            e = stmt.named_children[0]
            out.append((e.child_by_field_name("right") if e.type == "assignment_expression" else e, stmt))
        elif stmt.type == "declaration":
            for d in stmt.named_children:
                if d.type == "init_declarator" and d.child_by_field_name("value") is not None:
                    out.append((d.child_by_field_name("value"), stmt))
    return [(e, s) for e, s in out if e is not None]


def _pure(n) -> bool:
    for x in _walk(n):
        if x.type in _IMPURE or (x.type == "call_expression" and not pure_call(x)):
            return False
        if x.type == "pointer_expression" and x.children and x.children[0].type == "&":
            return False
    return True


def _conditional(n, stmt) -> bool:
    """Is `n` evaluated only on some path of its statement (a branch of `?:`, the right
    operand of `&&` / `||`)?"""
    x = n
    while x is not None and x != stmt:
        p = x.parent
        if p is None:
            break
        if p.type == "conditional_expression" and x != p.child_by_field_name("condition"):
            return True
        if p.type == "binary_expression" and text(p.child_by_field_name("operator")) in ("&&", "||") \
                and x == p.child_by_field_name("right"):
            return True
        x = p
    return False


def extract_value_cse(src: str, within: list[tuple[int, int]] | None = None,
                      rounds: int = 4) -> tuple[str, int]:
    """Return the refactored source and the number of variables introduced; `within`:
    byte ranges of the functions that may be changed. A definition may itself hold
    repeats (`v0 = f(a) - g(f(a))`): up to `rounds` passes, each on the last one's
    output, over the same functions (edits stay inside functions, so the k-th
    function is the same function in every pass)."""
    funcs = [x for x in _walk(parse_cuda(src).root_node) if x.type == "function_definition"]
    allowed = {i for i, fn in enumerate(funcs)
               if within is None or any(a <= fn.start_byte and fn.end_byte <= b for a, b in within)}
    total = 0
    for _ in range(rounds):
        src, n = _one_pass(src, allowed)
        total += n
        if n == 0:
            break
    return src, total


def _one_pass(src: str, allowed: set[int]) -> tuple[str, int]:
    tree = parse_cuda(src)
    data = src.encode()
    used_names = set(re.findall(r"\b\w+\b", src))
    edits: list[tuple[int, int, bytes]] = []
    counter = 0
    for i, fn in enumerate(x for x in _walk(tree.root_node) if x.type == "function_definition"):
        if i not in allowed:
            continue
        if any(x.type in _PREPROC for x in _walk(fn)):
            continue
        _, declared = _writes_and_decls(fn)
        unstable = _address_taken_or_shared(fn)
        for scope in (x for x in _walk(fn) if x.type == "compound_statement"):
            sites = _sites(scope)
            if not sites:
                continue
            written = _writes_and_decls(scope)[0] | unstable
            counts: Counter = Counter()
            for e, _ in sites:
                for x in _walk(e):
                    if x.type in _CANDIDATE:
                        counts[_key(x)] += 1
            occurrences: list = []

            def ok(n, stmt) -> bool:
                if counts[_key(n)] < 2 or not _pure(n):
                    return False
                return all(i in _BUILTINS or i in PURE_CALLS or i.isupper() and i not in declared
                           or (i in declared and declared[i] < stmt.start_byte and i not in written)
                           for i in _identifiers(n))

            def pick(n, stmt):
                n = _strip_parens(n)
                if n.type in _CANDIDATE and ok(n, stmt):
                    occurrences.append((n, _key(n), stmt))
                    return
                for c in n.named_children:
                    pick(c, stmt)

            for e, stmt in sites:
                pick(e, stmt)
            by_key: dict = {}
            for n, k, stmt in occurrences:
                by_key.setdefault(k, []).append((n, stmt))
            for k, occ in by_key.items():
                first, stmt = occ[0]
                stmts = [s for _, s in occ]
                if len(occ) < 2 or not pays(len(occ), leaves(first)):
                    continue
                if _reads_memory(first) and (not _memory_safe(scope, stmts)
                                             or any(_conditional(n, s) for n, s in occ)):
                    continue
                if _identifiers(first) & _declared_in(_span(scope, stmts)):
                    continue
                name, counter = fresh_name("v", used_names, counter)
                edits.append(declaration(data, stmt, name, first))
                edits += [(n.start_byte, n.end_byte, name.encode()) for n, _ in occ]
    return apply_edits(data, edits)
