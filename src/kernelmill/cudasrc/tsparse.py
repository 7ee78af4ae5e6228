"""CUDA source structure via tree-sitter (the `tree-sitter-cuda` grammar).

What the PTX pair builder needs from a CUDA translation unit: its kernels and
device helpers, the same source with the host side (torch bindings, pybind
module) removed so nvcc can compile the kernels without torch headers, the
launch sites `k<<<grid, block>>>(args)`, and a variant with unrolling disabled.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache


class TreeSitterMissing(ImportError):
    pass


@lru_cache(maxsize=1)
def cuda_parser():
    try:
        import tree_sitter_cuda
        from tree_sitter import Language, Parser
    except ImportError as exc:  # optional extra
        raise TreeSitterMissing(
            "CUDA parsing needs tree-sitter: pip install 'kernelmill[ptx]'") from exc
    return Parser(Language(tree_sitter_cuda.language()))


def parse_cuda(src: str):
    """The tree of `src`; byte offsets are those of `src` (see `parse_view`)."""
    return cuda_parser().parse(parse_view(src).encode())


_SKIP = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|[{}]|\n', re.S)
_MACRO_CALL = re.compile(r"[ \t]*([A-Za-z_]\w*)[ \t]*\((?:[^()\n]|\([^()\n]*\))*\)[ \t]*(?://[^\n]*)?(?=\n|\Z)")
_FN_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)\(", re.M)


@lru_cache(maxsize=64)
def parse_view(src: str) -> str:
    """`src` with top-level macro calls that stand alone on their line (`DEFINE_KERNEL(float)`,
    no `;`) blanked to spaces, for parsing only: tree-sitter would glue such a line to the
    next definition. Same length in bytes, so every node's position is the source's."""
    if "(" not in src:
        return src
    macros = set(_FN_MACRO.findall(src))
    cuts, depth = [], 0
    for m in itertools.chain([None], _SKIP.finditer(src)):
        t = "\n" if m is None else m.group()
        if t == "{":
            depth += 1
        elif t == "}":
            depth = max(0, depth - 1)
        if t != "\n" or depth:
            continue
        c = _MACRO_CALL.match(src, 0 if m is None else m.end())
        if c is None or not (c.group(1) in macros or c.group(1).isupper()):
            continue
        rest = src[c.end():].lstrip()
        if not rest.startswith("{") and not rest.startswith(";"):
            cuts.append((c.start(), c.end()))
    if not cuts:
        return src
    out, pos = [], 0
    for a, b in cuts:
        out += [src[pos:a], "".join(" " if ch.isascii() else " " * len(ch.encode()) for ch in src[a:b])]
        pos = b
    return "".join(out) + src[pos:]


def text(node) -> str:
    return node.text.decode()


@dataclass
class CudaFunction:
    name: str
    text: str        # the definition, with its `template <...>` if any
    is_kernel: bool  # __global__
    is_device: bool  # __device__ (helpers)
    start: int
    end: int
    template: str | None = None  # the parameter list `<typename T, int N>` of a template
    scope: str = ""              # enclosing named namespaces, `a::b::`
    node: object = field(default=None, repr=False, compare=False)  # the tree-sitter node


@dataclass
class LaunchSite:
    kernel: str
    config: list[str]            # grid, block[, shared mem[, stream]] as written
    args: list[str] = field(default_factory=list)
    template_args: str | None = None  # `<float, 4>` as written at the launch, if any
    dispatch: str | None = None       # the enclosing AT_DISPATCH_* macro, if any
    # `constexpr` / `const` scalars of the enclosing function written before the launch
    # (name -> initialiser): a template argument naming one is replaced by its value
    constants: dict[str, str] = field(default_factory=dict)
    function: str = ""                # the host function the launch is written in
    node: object = field(default=None, repr=False, compare=False)  # its call_expression

    def as_dict(self) -> dict:
        keys = ("grid", "block", "shared_mem", "stream")
        d = {k: v for k, v in zip(keys, self.config)}
        d["args"] = self.args
        if self.template_args:
            d["template_args"] = self.template_args
        return d


def _declarator_name(fn_node) -> str:
    d = fn_node.child_by_field_name("declarator")
    while d is not None and d.type not in ("identifier", "field_identifier",
                                           "qualified_identifier", "destructor_name"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            break
        d = nxt
    return text(d).split("::")[-1] if d is not None else ""


_PREPROC_COND = ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef")


def top_nodes(root, scope: str = ""):
    """(node, namespace scope) of the top-level nodes, looking inside `extern "C" {...}`,
    namespaces and `#if`/`#ifdef` blocks (include guards)."""
    yield from _nodes_in(root.children, scope)


def _nodes_in(children, scope: str):
    for n in children:
        if n.type in ("linkage_specification", "namespace_definition"):
            body = n.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                name = n.child_by_field_name("name") if n.type == "namespace_definition" else None
                yield from _nodes_in(body.children, scope + (text(name) + "::" if name is not None else ""))
            else:
                yield n, scope
        elif n.type in _PREPROC_COND:
            cond = {x.id for x in (n.child_by_field_name("name"), n.child_by_field_name("condition"))
                    if x is not None}
            yield from _nodes_in([c for c in n.children if c.is_named and c.id not in cond], scope)
        else:
            yield n, scope


def _top_nodes(root):
    for n, _ in top_nodes(root):
        yield n


def _function_of(n):
    if n.type == "function_definition":
        return n
    if n.type in ("template_declaration", "linkage_specification"):
        for c in n.children:
            if c.type == "function_definition":
                return c
    return None


def functions(src: str) -> list[CudaFunction]:
    out = []
    data = src.encode()
    for n, scope in top_nodes(parse_cuda(src).root_node):
        fn = _function_of(n)
        if fn is None:
            continue
        quals = {c.type for c in fn.children}
        body = fn.child_by_field_name("body")
        head = data[fn.start_byte:body.start_byte if body else fn.end_byte].decode()
        params = n.child_by_field_name("parameters") if n.type == "template_declaration" else None
        out.append(CudaFunction(_declarator_name(fn), text(n), "__global__" in quals or "__global__" in head,
                                "__device__" in quals or "__device__" in head, n.start_byte, n.end_byte,
                                text(params) if params is not None else None, scope, n))
    return out


def launch_site(n) -> LaunchSite | None:
    """The launch a `call_expression` node is, or None when it is no `<<<...>>>` launch."""
    ks = [c for c in n.children if c.type == "kernel_call_syntax"]
    if n.type != "call_expression" or not ks:
        return None
    cfg = [text(c) for c in ks[0].children if c.type not in ("<<<", ">>>", ",")]
    args = n.child_by_field_name("arguments")
    argv = [text(c) for c in args.children if c.type not in ("(", ")", ",")] if args else []
    fn = n.child_by_field_name("function")
    targs = fn.child_by_field_name("arguments") if fn is not None else None
    host = n.parent
    while host is not None and host.type != "function_definition":
        host = host.parent
    return LaunchSite(text(fn).split("<")[0] if fn else "", cfg, argv,
                      text(targs) if targs is not None else None, _dispatch_of(n),
                      _constants_before(n), _declarator_name(host) if host is not None else "", n)


def launch_sites(src: str) -> list[LaunchSite]:
    out = []

    def walk(n):
        if n.type == "call_expression":
            site = launch_site(n)
            if site is not None:
                out.append(site)
        for c in n.children:
            walk(c)

    walk(parse_cuda(src).root_node)
    return out


_CONSTANT = re.compile(r"\b(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+|signed\s+)?"
                       r"(?:int|long|short|char|bool|size_t|int\d+_t|uint\d+_t|auto)\s+(\w+)\s*=\s*([^;{}]+);")


def _constants_before(n) -> dict[str, str]:
    """The scalar constants of the function around a launch, declared before it."""
    p = n.parent
    while p is not None and p.type != "function_definition":
        p = p.parent
    if p is None:
        return {}
    before = p.text[: n.start_byte - p.start_byte].decode(errors="replace")
    return {m.group(1): m.group(2).strip() for m in _CONSTANT.finditer(before)}


def _dispatch_of(n) -> str | None:
    """The `AT_DISPATCH_*` macro call around a launch (its `scalar_t` is the dispatched type)."""
    p = n.parent
    while p is not None:
        if p.type == "call_expression":
            f = p.child_by_field_name("function")
            if f is not None and f.type == "identifier" and text(f).startswith("AT_DISPATCH"):
                return text(f)
        p = p.parent
    return None


_PRAGMA_UNROLL = re.compile(r"^[ \t]*#[ \t]*pragma[ \t]+unroll\b[^\n]*\n?", re.M)


def disable_unrolling(src: str) -> str:
    """Put `#pragma unroll 1` before every `for` (and drop other unroll pragmas)."""
    src = _PRAGMA_UNROLL.sub("", src)
    data = src.encode()
    starts = []

    def walk(n):
        if n.type == "for_statement":
            starts.append(n.start_byte)
        for c in n.children:
            walk(c)

    walk(parse_cuda(src).root_node)
    out, pos = [], 0
    for s in sorted(starts):
        out += [data[pos:s], b"\n#pragma unroll 1\n"]
        pos = s
    out.append(data[pos:])
    return b"".join(out).decode()


# a `#define` with its continuation lines: a line ending in `\` goes on (a greedy `[^\n]*` took
# the backslash and kept only the first line of a multi-line macro)
DEFINE_LINE = re.compile(r"^[ \t]*#[ \t]*define(?:[^\n\\]|\\[^\n])*(?:\\\n(?:[^\n\\]|\\[^\n])*)*\n", re.M)


def kernel_source(src: str, kernel: str) -> str:
    """The kernel's definition with the device helpers it (transitively) uses."""
    fns = functions(src)
    by_name: dict[str, list[CudaFunction]] = {}
    for f in fns:
        by_name.setdefault(f.name, []).append(f)
    if kernel not in by_name:
        raise KeyError(kernel)
    need, todo = [], [f for f in by_name[kernel] if f.is_kernel] or by_name[kernel]
    seen = set()
    while todo:
        f = todo.pop()
        if f.start in seen:
            continue
        seen.add(f.start)
        need.append(f)
        for name in set(re.findall(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;]*>)?\s*\(", f.text)):
            for g in by_name.get(name, []):
                if g.is_device and not g.is_kernel:
                    todo.append(g)
    defines = "".join(m.group(0) for m in DEFINE_LINE.finditer(src))
    return defines + "\n".join(f.text for f in sorted(need, key=lambda f: f.start)) + "\n"
