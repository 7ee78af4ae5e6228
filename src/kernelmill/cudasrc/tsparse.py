"""CUDA source structure via tree-sitter (the `tree-sitter-cuda` grammar).

What the PTX pair builder needs from a CUDA translation unit: its kernels and
device helpers, the same source with the host side (torch bindings, pybind
module) removed so nvcc can compile the kernels without torch headers, the
launch sites `k<<<grid, block>>>(args)`, and a variant with unrolling disabled.
"""

from __future__ import annotations

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
    return cuda_parser().parse(src.encode())


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


@dataclass
class LaunchSite:
    kernel: str
    config: list[str]            # grid, block[, shared mem[, stream]] as written
    args: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        keys = ("grid", "block", "shared_mem", "stream")
        d = {k: v for k, v in zip(keys, self.config)}
        d["args"] = self.args
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


def _top_nodes(root):
    """Top-level nodes, looking inside `extern "C" {...}` and namespaces."""
    for n in root.children:
        if n.type in ("linkage_specification", "namespace_definition"):
            body = n.child_by_field_name("body")
            if body is not None and body.type == "declaration_list":
                yield from _top_nodes(body)
            else:
                yield n
        else:
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
    for n in _top_nodes(parse_cuda(src).root_node):
        fn = _function_of(n)
        if fn is None:
            continue
        quals = {c.type for c in fn.children}
        head = src.encode()[fn.start_byte:fn.child_by_field_name("body").start_byte
                            if fn.child_by_field_name("body") else fn.end_byte].decode()
        out.append(CudaFunction(_declarator_name(fn), text(n), "__global__" in quals or "__global__" in head,
                                "__device__" in quals or "__device__" in head, n.start_byte, n.end_byte))
    return out


_HOST_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"](torch|ATen|c10|pybind11|Python)[/.]", re.M)
_HOST_WORDS = ("torch::", "at::", "PYBIND11", "TORCH_", "c10::", "AT_DISPATCH", "pybind11")


def strip_host(src: str) -> str:
    """Keep the device side: drop host functions, torch/pybind includes and any
    top-level declaration that mentions torch, so the kernels compile alone."""
    data = src.encode()
    drop: list[tuple[int, int]] = []
    for n in _top_nodes(parse_cuda(src).root_node):
        fn = _function_of(n)
        t = text(n)
        if fn is not None:
            head = data[fn.start_byte:(fn.child_by_field_name("body") or fn).start_byte].decode()
            if "__global__" not in head and "__device__" not in head:
                drop.append((n.start_byte, n.end_byte))
        elif n.type == "preproc_include" and _HOST_INCLUDE.match(t):
            drop.append((n.start_byte, n.end_byte))
        elif n.type != "preproc_include" and any(w in t for w in _HOST_WORDS):
            drop.append((n.start_byte, n.end_byte))
    out, pos = [], 0
    for a, b in sorted(drop):
        out.append(data[pos:a])
        pos = b
    out.append(data[pos:])
    return b"".join(out).decode()


def launch_sites(src: str) -> list[LaunchSite]:
    out = []

    def walk(n):
        if n.type == "call_expression":
            ks = [c for c in n.children if c.type == "kernel_call_syntax"]
            if ks:
                cfg = [text(c) for c in ks[0].children if c.type not in ("<<<", ">>>", ",")]
                args = n.child_by_field_name("arguments")
                argv = [text(c) for c in args.children if c.type not in ("(", ")", ",")] if args else []
                fn = n.child_by_field_name("function")
                out.append(LaunchSite(text(fn).split("<")[0] if fn else "", cfg, argv))
        for c in n.children:
            walk(c)

    walk(parse_cuda(src).root_node)
    return out


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
    defines = "".join(m.group(0) for m in re.finditer(r"^[ \t]*#[ \t]*define[^\n]*(?:\\\n[^\n]*)*\n", src, re.M))
    return defines + "\n".join(f.text for f in sorted(need, key=lambda f: f.start)) + "\n"
