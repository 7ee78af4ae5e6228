"""A kernel's source that compiles on its own: `tsparse.kernel_source` plus the file-scope
context the kernel needs.

`kernel_source` keeps the kernel, the device helpers it calls and the file's `#define`s. The
evaluator compiles that text as the pair's reference (`ptx/evaluate/harness.py`, which adds
only the CUDA runtime, fp16/bf16 and stdint headers), so a kernel that uses WMMA
(`#include <mma.h>`, `using namespace nvcuda;`), `__pipeline_*` (`<cuda_pipeline.h>`),
`FLT_MAX` (`<cfloat>`) or a `__constant__` array declared at file scope did not compile
(14 of the 75 hand-written pairs of benchmarks/ptx_external, issue 44 session 16). Added here,
in the source's order:

- `#include <...>` of CUDA toolkit and C/C++ standard headers (never torch, ATen, c10 or
  pybind11: the kernels are compiled without them; never `"local.h"`: the harness is
  compiled in a folder of its own);
- `using namespace N;` and `namespace a = N;` at file scope, but for torch's namespaces;
- file-scope declarations (variables such as `__constant__` arrays and `constexpr`
  constants, typedefs, structs, enums, aliases) whose name the kernel's text, or an added
  declaration's, uses.
"""

from __future__ import annotations

import re

from .tsparse import DEFINE_LINE, kernel_source, parse_cuda

_STD_HEADER = re.compile(
    r"(cuda|cub/|cuda/|thrust/|cooperative_groups|mma\.h|sm_\d+|math_constants|device_|vector_|crt/|nv/|"
    r"curand)[\w./]*|c?(std\w*|float|limits|math|stdio|stdlib|string|assert|stddef|climits|cfloat|cmath|cstdio"
    r"|cstdlib|cstring|cassert|cstddef|cstdint|stdint)(\.h)?|type_traits|limits|utility|algorithm|array|"
    r"tuple|functional|numeric|initializer_list")
_HOST_NAMESPACES = {"torch", "at", "c10", "pybind11", "py"}
_DECLS = {"declaration", "type_definition", "struct_specifier", "class_specifier", "enum_specifier",
          "alias_declaration", "union_specifier"}


def _names(node) -> set[str]:
    """The names a file-scope declaration introduces (none for a function prototype)."""
    if node.type == "declaration":
        out = set()
        for d in node.children_by_field_name("declarator"):
            while d is not None and d.type not in ("identifier", "function_declarator"):
                d = d.child_by_field_name("declarator") or next(
                    (c for c in d.named_children if c.type in ("identifier", "array_declarator",
                                                               "pointer_declarator", "init_declarator")), None)
            if d is not None and d.type == "identifier":
                out.add(d.text.decode())
        return out
    if node.type == "type_definition":
        return {c.text.decode() for c in node.children_by_field_name("declarator") if c.type == "type_identifier"}
    name = node.child_by_field_name("name")
    return {name.text.decode()} if name is not None else set()


def standalone_kernel_source(src: str, kernel: str) -> str:
    """`kernel_source(src, kernel)` with the includes, using-directives and file-scope
    declarations it needs (module docstring); raises KeyError as kernel_source does."""
    body = kernel_source(src, kernel)
    defines = "".join(m.group(0) for m in DEFINE_LINE.finditer(src))
    funcs = body[len(defines):] if body.startswith(defines) else body
    data = src.encode()
    head, decls = [], []
    for node in parse_cuda(src).root_node.children:
        text = data[node.start_byte:node.end_byte].decode()
        if node.type == "preproc_include":
            m = re.match(r"\s*#\s*include\s*<\s*([^>\s]+)\s*>", text)
            if m and _STD_HEADER.fullmatch(m.group(1)):
                head.append(text.rstrip("\n"))
        elif node.type in ("using_declaration", "namespace_alias_definition"):
            words = set(re.findall(r"\w+", text.split("=")[-1] if "=" in text else text))
            if "namespace" in text and not words & _HOST_NAMESPACES:
                head.append(text)
        elif node.type in _DECLS:
            names = _names(node)
            if names:
                # a struct written `struct P {...};` ends at `}`: its `;` is a sibling
                decls.append((names, text if text.rstrip().endswith(";") else text + ";"))
    keep, seen, frontier = [], set(), funcs
    changed = True
    while changed:  # a kept declaration may use another (a constant's size, a typedef)
        changed = False
        for i, (names, text) in enumerate(decls):
            if i not in seen and any(re.search(rf"\b{re.escape(n)}\b", frontier) for n in names):
                seen.add(i)
                frontier += "\n" + text
                changed = True
    keep = [decls[i][1] for i in sorted(seen)]
    parts = ["\n".join(head), defines.rstrip("\n"), "\n".join(keep), funcs.strip("\n")]
    return "\n".join(p for p in parts if p) + "\n"
