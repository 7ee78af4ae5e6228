"""The device side of a CUDA translation unit, as nvcc should see it for PTX.

`device_unit(src)` keeps everything except what needs the torch/pybind headers:
those includes, and every top-level node that names torch (`torch::`, `at::`,
`c10::`, `TORCH_*`, `AT_DISPATCH_*`, ...) or a function, type or macro already
dropped, to a fixed point. Structs, macros, macro calls and plain host helpers
stay as written (a host function that compiles is harmless in a PTX build). Where
a torch header was removed, the standard headers it brought in are included
instead (`FLT_MAX`, `uintptr_t`, `half`, ...), with torch's `--expt-relaxed-constexpr`.

Template kernels are instantiated from their launch sites: the template
arguments written there, or deduced from pointer arguments (`x.data_ptr<float>()`,
casts), with `scalar_t` under `AT_DISPATCH_FLOATING_TYPES` standing for float and
double. Each instance is one `static void* const = (void*)&k<...>;` line at the end.
Kernels that are dropped or cannot be instantiated are listed with the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .tsparse import CudaFunction, functions, launch_sites, parse_cuda, text, top_nodes

HOST_NAMESPACES = frozenset({"torch", "at", "c10", "pybind11", "py"})
_HOST_MACRO = re.compile(r"(?:TORCH|AT|C10|PYBIND11)_[A-Z0-9_]+$")
_HOST_INCLUDE = re.compile(r"#\s*include\s*[<\"](?:torch|ATen|c10|pybind11|Python)[/.]")
_WORD = re.compile(r"([A-Za-z_]\w*)(\s*::)?")
PRELUDE = "".join(f"#include <{h}>\n" for h in (
    "cstdint", "cstddef", "cfloat", "climits", "cmath", "limits", "type_traits", "algorithm",
    "cuda_runtime.h", "cuda_fp16.h", "cuda_bf16.h"))
TORCH_FLAGS = ("--expt-relaxed-constexpr",)
# what `scalar_t` is under each dispatch macro (the types that exist without torch)
_DISPATCH = {"FLOATING_TYPES": ("float", "double"),
             "INTEGRAL_TYPES": ("uint8_t", "int8_t", "int16_t", "int", "int64_t"),
             "ALL_TYPES": ("uint8_t", "int8_t", "int16_t", "int", "int64_t", "float", "double")}


@dataclass
class DeviceUnit:
    source: str                       # what nvcc compiles
    flags: tuple[str, ...] = ()       # extra nvcc flags (torch's, where torch was removed)
    instances: list[str] = field(default_factory=list)   # `k<float, 4>` added at the end
    dropped: dict[str, str] = field(default_factory=dict)  # kernel -> why it is not compiled
    unresolved: dict[str, str] = field(default_factory=dict)  # template kernel -> why no instance
    kernels: list[CudaFunction] = field(default_factory=list)


def _refs(node) -> set[str]:
    """Names a node refers to; `ns::` for a namespace. Comments and strings are skipped."""
    out: set[str] = set()
    stack = [node]
    while stack:
        n = stack.pop()
        t = n.type
        if t in ("comment", "string_literal", "raw_string_literal", "char_literal", "system_lib_string"):
            continue
        if t == "namespace_identifier":
            out.add(text(n) + "::")
        elif t in ("identifier", "type_identifier"):
            out.add(text(n))
        elif t == "preproc_arg":  # a macro body is raw text
            for m in _WORD.finditer(text(n)):
                out.add(m.group(1) + "::" if m.group(2) else m.group(1))
            continue
        stack.extend(n.children)
    return out


def _is_host_name(r: str) -> bool:
    return r[:-2] in HOST_NAMESPACES if r.endswith("::") else bool(_HOST_MACRO.match(r))


def _declared(node) -> tuple[set[str], set[str]]:
    """(function names, type and macro names) a top-level node declares."""
    funcs, types = set(), set()
    n = node.children[-1] if node.type == "template_declaration" and node.children else node
    if n.type == "function_definition":
        from .tsparse import _declarator_name
        funcs.add(_declarator_name(n))
    elif n.type in ("preproc_def", "preproc_function_def"):
        name = n.child_by_field_name("name")
        if name is not None:
            types.add(text(name))
    elif n.type in ("type_definition", "declaration", "struct_specifier", "class_specifier",
                    "enum_specifier", "alias_declaration"):
        for x in _walk(n):
            if x.type == "type_identifier" and x.parent is not None and (
                    x.parent.type in ("type_definition", "alias_declaration")
                    or (x.parent.type in ("struct_specifier", "class_specifier", "enum_specifier")
                        and x.parent.child_by_field_name("body") is not None)):
                types.add(text(x))
    return funcs, types


def _walk(n):
    yield n
    for c in n.children:
        yield from _walk(c)


def _is_device_side(node) -> bool:
    n = node.children[-1] if node.type == "template_declaration" and node.children else node
    if n.type != "function_definition":
        return False
    body = n.child_by_field_name("body")
    head = n.text[:body.start_byte - n.start_byte] if body is not None else n.text
    return b"__global__" in head or b"__device__" in head


def _drop_ranges(src: str) -> tuple[list[tuple[int, int, object]], bool]:
    """Byte ranges of the nodes that need torch, and whether a torch header was included."""
    nodes = list(top_nodes(parse_cuda(src).root_node))
    info = [(n, _refs(n), _is_device_side(n)) for n, _ in nodes]
    torch_include = False
    dropped: dict[int, object] = {}
    for n, refs, _ in info:
        if n.type == "preproc_include":
            if _HOST_INCLUDE.match(text(n)):
                dropped[n.id], torch_include = n, True
        elif any(_is_host_name(r) for r in refs):
            dropped[n.id] = n
    while True:  # what refers to a dropped function, type or macro goes too
        funcs, types = set(), set()
        for n in dropped.values():
            f, t = _declared(n)
            funcs |= f
            types |= t
        more = [n for n, refs, dev in info if n.id not in dropped and n.type != "preproc_include"
                and refs & (types if dev else types | funcs)]
        if not more:
            break
        for n in more:
            dropped[n.id] = n
    ranges = [(n.start_byte, n.end_byte, n) for n in dropped.values()]
    return sorted(ranges + _dropped_gaps(src, nodes, types)), torch_include


def _dropped_gaps(src: str, nodes: list, gone: set[str]) -> list[tuple[int, int, None]]:
    """Text between top-level nodes that the parser placed in no node (a macro invoked at
    file scope without a semicolon: LeetCUDA's `TORCH_BINDING_RELU(f32, torch::kFloat32,
    float, 1)`), dropped when it names torch or a dropped macro: the invocation stayed
    while its #define went, and nvcc stopped there (issue 44: 13 files)."""
    data, out, pos = src.encode(), [], 0
    for n, _ in list(nodes) + [(None, None)]:
        end = n.start_byte if n is not None else len(data)
        gap = data[pos:end].decode(errors="replace")
        # a conditional block's own lines (#if, #endif) fall between its children: never cut those
        if gap.strip() and not re.search(r"^\s*#", gap, re.M):
            words = {m.group(1) + "::" if m.group(2) else m.group(1) for m in _WORD.finditer(gap)}
            if any(_is_host_name(w) for w in words) or words & gone:
                out.append((pos, end, None))
        if n is not None:
            pos = max(pos, n.end_byte)
    return out


_POINTER_ARG = [re.compile(r"\.\s*(?:data_ptr|data|mutable_data_ptr|const_data_ptr)\s*<\s*(?:const\s+)?"
                           r"([\w:]+)\s*>\s*\(\s*\)\s*$"),
                re.compile(r"^(?:static_cast|reinterpret_cast|const_cast)\s*<\s*(?:const\s+)?([\w:]+)"
                           r"\s*(?:const\s*)?\*\s*>"),
                re.compile(r"^\(\s*(?:const\s+)?([\w:]+)\s*(?:const\s*)?\*\s*\)")]


def _template_params(fn: CudaFunction) -> list[tuple[str, bool, bool]]:
    """(name, is a type parameter, has a default) per template parameter."""
    out = []
    node = fn.node.child_by_field_name("parameters")
    for p in node.children if node is not None else ():
        if not p.is_named:
            continue
        is_type = p.type in ("type_parameter_declaration", "optional_type_parameter_declaration",
                             "variadic_type_parameter_declaration")
        default = p.type.startswith("optional_")
        names = [text(c) for c in p.children if c.type in ("type_identifier", "identifier")]
        d = p.child_by_field_name("declarator") or p.child_by_field_name("name")
        out.append((text(d) if d is not None else (names[0] if names else ""), is_type, default))
    return out


def _pointer_params(fn: CudaFunction) -> list[str | None]:
    """Per kernel parameter: the pointee type name when it is a pointer, else None."""
    f = fn.node.children[-1]
    decl = f.child_by_field_name("declarator")
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    plist = decl.child_by_field_name("parameters") if decl is not None else None
    out = []
    for p in plist.children if plist is not None else ():
        if p.type != "parameter_declaration":
            continue
        d = p.child_by_field_name("declarator")
        t = p.child_by_field_name("type")
        out.append(text(t) if d is not None and d.type == "pointer_declarator" and t is not None else None)
    return out


def _scalar_types(dispatch: str | None) -> tuple[str, ...] | None:
    for key, types in _DISPATCH.items():
        if dispatch and key in dispatch:
            return types
    return None


def _with_constants(args: str, constants: dict[str, str]) -> str:
    """Template arguments with the launch's host-local constants replaced by their values
    (`k<n>` with `constexpr int n = 4` before it is `k<(4)>`: issue 44, 52 instances
    failed with the name); a few rounds, for constants defined by other constants."""
    for _ in range(4):
        new = re.sub(r"\b([A-Za-z_]\w*)\b", lambda m: f"({constants[m.group(1)]})" if m.group(1) in constants
                     else m.group(1), args)
        if new == args:
            break
        args = new
    return args


def _instances_at(fn: CudaFunction, site) -> tuple[list[str], str]:
    """Template argument lists for one launch of a template kernel, or ([], why)."""
    params = _template_params(fn)
    if site.template_args is not None:
        args = [_with_constants(site.template_args[1:-1].strip(), getattr(site, "constants", None) or {})]
    else:
        bound: dict[str, str] = {}
        for ptype, arg in zip(_pointer_params(fn), site.args):
            if ptype is None:
                continue
            for rx in _POINTER_ARG:
                m = rx.search(arg.strip())
                if m:
                    bound.setdefault(ptype, m.group(1))
                    break
        vals = []
        for name, is_type, default in params:
            if name in bound and is_type:
                vals.append(bound[name])
            elif default:
                break
            else:
                return [], f"launch `{site.kernel}<<<...>>>({', '.join(site.args)})`: cannot deduce {name}"
        args = [", ".join(vals)]
    if any(re.search(r"\bscalar_t\b", a) for a in args):
        types = _scalar_types(site.dispatch)
        if types is None:
            return [], f"launch of {site.kernel}: scalar_t outside a known AT_DISPATCH macro"
        args = [re.sub(r"\bscalar_t\b", t, a) for a in args for t in types]
    return args, ""


def device_unit(src: str, instantiate: bool = True) -> DeviceUnit:
    drops, torch_include = _drop_ranges(src)
    data = src.encode()
    out, pos = [], 0
    for a, b, _ in drops:
        if a >= pos:
            out.append(data[pos:a])
            pos = b
    out.append(data[pos:])
    kept = b"".join(out).decode()
    unit = DeviceUnit(((PRELUDE + "\n") if torch_include else "") + kept,
                      TORCH_FLAGS if torch_include else ())
    fns = functions(src)
    unit.kernels = [f for f in fns if f.is_kernel]
    inside = [(a, b) for a, b, _ in drops]
    for f in unit.kernels:
        if any(a <= f.start and f.end <= b for a, b in inside):
            names = sorted(r for r in _refs(f.node) if _is_host_name(r))
            unit.dropped[f.name] = ("needs the torch headers (" + ", ".join(names[:4]) + ")" if names
                                    else "uses a type or macro that needs the torch headers")
    templates = {f.name: f for f in unit.kernels if f.template is not None and f.name not in unit.dropped}
    why: dict[str, list[str]] = {}
    found: dict[str, list[str]] = {}
    for site in launch_sites(src) if instantiate else ():
        fn = templates.get(site.kernel.split("::")[-1])
        if fn is None:
            continue
        args, reason = _instances_at(fn, site)
        for a in args:
            inst = f"{fn.scope}{fn.name}<{a}>"
            if inst not in unit.instances:
                unit.instances.append(inst)
        found.setdefault(fn.name, []).extend(args)
        if reason:
            why.setdefault(fn.name, []).append(reason)
    for name in templates:
        if not found.get(name):
            unit.unresolved[name] = "; ".join(why.get(name, [])) or "no launch site with template arguments"
    unit.source = with_instances(unit.source, unit.instances)
    return unit


def with_instances(source: str, instances: list[str]) -> str:
    """`source` with one line per template instance that makes nvcc compile it."""
    if not instances:
        return source
    return source + "\n" + "".join(f"static void* const __kernelmill_instance_{k} = (void*)&{i};\n"
                                    for k, i in enumerate(instances))


def strip_host(src: str) -> str:
    """The source nvcc compiles for PTX: without what needs the torch headers, template
    kernels instantiated from their launch sites."""
    return device_unit(src).source
