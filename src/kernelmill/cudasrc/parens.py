"""Redundant-parenthesis removal on the tree-sitter CUDA tree.

A pair of parentheses is dropped only when the expression parses to the same
tree without it: the inner operator binds tighter than the outer one, or binds
equally and sits on the side the operator associates to (`(a-b)-c`). Nothing is
ever re-associated (`a+(b+c)` keeps its parentheses: float addition is not
associative), parentheses that are syntax (`if (..)`, `sizeof(..)`, casts,
template and launch arguments) are kept, and a space is inserted where removal
would glue two tokens into a new one (`a-(-b)` -> `a- -b`, `x/(*p)`).

A call argument whose text holds a comma outside brackets (`f<a, b>(x)`,
`k<<<g, b>>>(x)`) keeps its parentheses: the call may be a macro, whose
arguments split at that comma. Parentheses inside an `#if` branch are kept
(the branch may not be compiled, so no check would see the change), and with
`within` only those inside the given byte ranges are considered.
"""

from __future__ import annotations

from .tsparse import parse_cuda

_PREC = {"*": 13, "/": 13, "%": 13, "+": 12, "-": 12, "<<": 11, ">>": 11, "<": 10, "<=": 10,
         ">": 10, ">=": 10, "==": 9, "!=": 9, "&": 8, "^": 7, "|": 6, "&&": 5, "||": 4}
_PRIMARY = {"identifier", "number_literal", "field_expression", "subscript_expression",
            "call_expression", "parenthesized_expression", "string_literal", "char_literal",
            "true", "false", "this", "null", "nullptr", "qualified_identifier"}
_UNARY = {"unary_expression", "pointer_expression", "cast_expression"}
_OPCHARS = set("+-*/%&|^!~<>=.?:")
_NO_TOUCH = {"template_argument_list", "kernel_call_syntax", "sizeof_expression",
             "alignof_expression", "decltype", "preproc_arg", "attribute_specifier", "ERROR"}


def _kind(e) -> str:
    if e.type in _PRIMARY:
        return "primary"
    if e.type in _UNARY:
        return "unary"
    if e.type == "binary_expression" and _op(e) in _PREC:
        return "bin"
    if e.type == "conditional_expression":
        return "cond"
    return "other"


def _op(e) -> str:
    o = e.child_by_field_name("operator")
    return o.type if o is not None else ""


def _bare_comma(e) -> bool:
    """A comma outside (), [] and {} (in template or launch arguments)."""
    stack = [e]
    while stack:
        n = stack.pop()
        if n.type == "," and n.parent is not None and n.parent.type in (
                "template_argument_list", "kernel_call_syntax", "comma_expression"):
            return True
        if n.type not in ("argument_list", "parenthesized_expression", "subscript_argument_list",
                          "initializer_list", "compound_statement"):
            stack.extend(n.children)
    return False


def _removable(e, ctx) -> bool:
    k = _kind(e)
    if ctx == "arg" and _bare_comma(e):
        return False
    if ctx in ("full", "arg"):
        return k in ("primary", "unary", "bin", "cond")
    if ctx in ("postfix", "unary"):
        return k == "primary"
    if ctx == "cond":
        return k in ("primary", "unary", "bin")
    if isinstance(ctx, tuple):  # ("bin", op, side)
        _, op, side = ctx
        if k in ("primary", "unary"):
            return True
        if k == "bin":
            pe, po = _PREC[_op(e)], _PREC[op]
            return pe > po or (pe == po and side == "L")
    return False


def _inner(p):
    named = [c for c in p.children if c.is_named and c.type != "comment"]
    return named[0] if len(named) == 1 else None


def _visit(node, ctx, drop: list) -> None:
    t = node.type
    if t in _NO_TOUCH:
        return
    if t == "parenthesized_expression":
        e = _inner(node)
        if e is None:
            return
        if _removable(e, ctx):
            drop.append(node)
            _visit(e, ctx, drop)
        else:
            _visit(e, "full", drop)
        return
    fields = {}
    for i, c in enumerate(node.children):
        name = node.field_name_for_child(i)
        if name:
            fields.setdefault(name, []).append(c)
    if t == "binary_expression" and _op(node) in _PREC:
        for c in fields.get("left", []):
            _visit(c, ("bin", _op(node), "L"), drop)
        for c in fields.get("right", []):
            _visit(c, ("bin", _op(node), "R"), drop)
        return
    if t in ("unary_expression", "pointer_expression", "update_expression"):
        for c in node.children:
            if c.is_named:
                _visit(c, "unary", drop)
        return
    if t == "cast_expression":
        for c in fields.get("value", []):
            _visit(c, "unary", drop)
        return
    if t == "subscript_expression":
        for c in fields.get("argument", []):
            _visit(c, "postfix", drop)
        for c in node.children:
            if c.type == "subscript_argument_list":
                for a in c.children:
                    if a.is_named:
                        _visit(a, "full", drop)
        return
    if t in ("call_expression", "field_expression"):
        for c in fields.get("function", []) + fields.get("argument", []):
            _visit(c, "postfix", drop)
        for c in fields.get("arguments", []):
            for a in c.children:
                if a.is_named:
                    _visit(a, "arg", drop)
        return
    if t == "assignment_expression":
        for c in fields.get("right", []):
            _visit(c, "full", drop)
        for c in fields.get("left", []):
            _visit(c, "keep", drop)
        return
    if t == "init_declarator":
        for c in fields.get("value", []):
            _visit(c, "full", drop)
        return
    if t in ("return_statement", "expression_statement"):
        for c in node.children:
            if c.is_named:
                _visit(c, "full", drop)
        return
    if t == "conditional_expression":
        for name, cx in (("condition", "cond"), ("consequence", "full"), ("alternative", "cond")):
            for c in fields.get(name, []):
                _visit(c, cx, drop)
        return
    for c in node.children:  # anything else: its direct parentheses are syntax
        if c.type == "parenthesized_expression":
            e = _inner(c)
            if e is not None:
                _visit(e, "full", drop)
        else:
            _visit(c, "keep", drop)


def _glue(a: str, b: str) -> bool:
    if not a or not b:
        return False
    ident = lambda ch: ch.isalnum() or ch == "_"  # noqa: E731
    return (ident(a) and ident(b)) or (a in _OPCHARS and b in _OPCHARS)


def _in_preproc_branch(n) -> bool:
    p = n.parent
    while p is not None:
        if p.type in ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"):
            return True
        p = p.parent
    return False


def remove_redundant_parens(src: str, within: list[tuple[int, int]] | None = None) -> tuple[str, int]:
    """Return the source without redundant parentheses and how many were removed;
    `within`: byte ranges outside which nothing is changed."""
    tree = parse_cuda(src)
    drop: list = []
    _visit(tree.root_node, "keep", drop)
    drop = [p for p in drop if not _in_preproc_branch(p)
            and (within is None or any(a <= p.start_byte and p.end_byte <= b for a, b in within))]
    data = src.encode()
    cuts = sorted({(p.start_byte, p.start_byte + 1) for p in drop}
                  | {(p.end_byte - 1, p.end_byte) for p in drop})
    out, pos = bytearray(), 0
    for a, b in cuts:
        out += data[pos:a]
        prev = chr(out[-1]) if out else ""
        nxt = chr(data[b]) if b < len(data) else ""
        if _glue(prev, nxt):
            out += b" "
        pos = b
    out += data[pos:]
    return out.decode(), len(drop)
