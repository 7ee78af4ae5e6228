"""A C++ extension's own code against ``torch/types.h``, its pybind11 binding made once per signature list.

Why: a unit that includes ``torch/extension.h`` costs ~7.5 CPU-s with the header
precompiled, an empty one too: the header holds internal-linkage roots (pybind11's
function-record type slots, the profiler's tables, ``static`` templates) that every
unit emits with the ~3,900 inline functions they reach. A unit with ``torch/types.h``
alone (precompiled) costs ~2 CPU-s (docs/results/benchmarks_history.md, issue 14). What needs the
full header in a ``load_inline(functions=[...])`` build is the binding torch generates,
and that depends only on the bound functions' types, not on the candidate.

So, for a ``load_inline`` call with ``functions=`` and C++ sources only, three units:

* ``slim``: ``torch/types.h``, the candidate's code (its ``torch/extension.h``
  includes taken out), and one forwarding function ``km_fn<i>`` per bound function
  (hidden, with the bound function's own parameter and return types);
* ``sigbind``: pybind11 with torch's casters (not the full header: `BINDING_HEADERS`), the module's init and exec functions
  binding ``km_fn<i>`` under names it reads from the third unit; the same text for
  every candidate with the same signature list, so the content-addressed build cache
  compiles it once (`InlineBuilder.compile_unit`);
* ``shim``: ``PyInit_<name>`` and the names, three lines with no header.

Used only when torch's generated module block is exactly what `inline_build.assemble`
writes, every bound function is declared or defined at the top level with one
signature whose types are in `_TYPES`, and the whole candidate compiles against
``torch/types.h``; anything else, and any unit that fails, goes back to the units
torch would compile (the builder's other paths), whose errors are the ones shown.
What it does not prove: the full header declares more than ``torch/types.h``, which
could in principle give a call in the candidate's code a better-matching overload.
`VerifyConfig.slim_units` turns it off.

A CUDA extension takes the same path: its kernel unit (nvcc: the whole ``cuda.cu``, or
the kernels alone where `cuda_split` splits it) compiles as before, the split's host unit
compiles against ``torch/types.h`` too (its own includes kept, ``ATen/cuda/...``
included), and the bindings are the same three units. Where ``main.cpp`` holds only
declarations (the usual ``cpp_sources``) and the two units' flags agree as
`unit_merge.flags_match` asks, those declarations and the forwarders go after the host
code in one unit compiled with the host unit's flags (declarations after the
definitions they declare change nothing; one that declares something else leaves the
signature unread and the path unused); otherwise ``main.cpp``'s code and the host unit
are two units. Code that names pybind11 or Python's API does not take the path.

A module the candidate wrote (``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)`` in either
source, no ``functions=``) takes it too when it does nothing but bind functions by name
(``m.def("name", &fn)``, a doc optional): its functions are bound bare, as it bound
them, under its names (`_written_module`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .cuda_split import code_only, top_items, top_split

# torch's generated module block at the end of main.cpp (inline_build.assemble) and its
# m.def lines: read here and by fail_fast.py
MODULE_BLOCK = re.compile(
    r"\nPYBIND11_MODULE\(TORCH_EXTENSION_NAME, m\) \{\n((?:m\.def\(.*\);\n)+)\}\Z")
DEF_LINE = re.compile(r'm\.def\("(\w+)", (?:torch::wrap_pybind_function\((\w+)\)|(\w+)), "([^"\\]*)"\);')
_EXT_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[<\"]torch/extension\.h[>\"][ \t]*$", re.M)
_SCALARS = r"(?:int|int64_t|long|float|double|bool)"
_TENSOR = r"(?:torch|at)::Tensor"
_ELEM = rf"(?:{_TENSOR}|{_SCALARS})"
# the types a bound function may take and return here: spelled the same in both units
_TYPES = re.compile(rf"^(?:const )?(?:{_ELEM}|std::vector<{_ELEM}>)(?: &)?$")
_RETURNS = re.compile(rf"^(?:void|{_ELEM}|std::vector<{_ELEM}>|std::tuple<{_ELEM}(?:,{_ELEM})*>)$")
# what only the full header (pybind11, Python's API) declares: such code keeps torch's units
_PYTHON_NAMES = re.compile(r"\b(?:pybind11|py)::|\bPYBIND11_\w*|\bPyInit_\w*|\bPy[A-Z]\w*|Python\.h")


@dataclass
class Plan:
    slim: str  # the candidate's code against torch/types.h, with the forwarders
    binding: str  # the signature list's binding unit (no module name in it)
    shim: str  # PyInit_<name> and the bound names
    host: str | None = None  # a split CUDA extension's host unit against torch/types.h, apart
    merged: bool = False  # `slim` holds the host unit's code: compiled with the host unit's flags


def _norm(t: str) -> str:
    """One spelling of a type: single spaces, none around <, > and commas, " &" for a reference."""
    t = re.sub(r"\s*([<>,])\s*", r"\1", " ".join(t.split()))
    t = re.sub(r"\bat::Tensor\b", "torch::Tensor", t)  # torch::Tensor is at::Tensor (one type)
    return re.sub(r"\s*&", " &", t)


def _signature(code_items: list[str], fn: str) -> tuple[str, list[str]] | None:
    """(return type, parameter types) of `fn` from its top-level declarations and
    definition; None when there is none, several disagree, or a type is not in `_TYPES`."""
    found = set()
    head_re = re.compile(rf"^((?:static |inline )*)([\w:<>,\s&]+?)\s*\b{re.escape(fn)}\s*\(([^()]*)\)\s*$")
    for text in code_items:
        head = text.split("{", 1)[0].rstrip().rstrip(";").rstrip()
        if not re.search(rf"\b{re.escape(fn)}\s*\(", head):
            continue
        m = head_re.match(" ".join(head.split()))
        if m is None:
            return None  # named in a way this does not read (a call at the top level, a template...)
        ret, params = _norm(m.group(2)), m.group(3).strip()
        types = []
        if params and params != "void":
            for p in top_split(params):
                if "=" in p or "..." in p:
                    return None
                words = p.replace("&", " & ").split()
                if len(words) >= 2 and re.fullmatch(r"\w+", words[-1]) and words[-2] != "::":
                    words = words[:-1]  # the parameter's name
                types.append(_norm(" ".join(words)))
        found.add((ret, tuple(types)))
    if len(found) != 1:
        return None
    ret, types = found.pop()
    if not _RETURNS.match(ret) or not all(_TYPES.match(t) for t in types):
        return None
    return ret, list(types)


def plan(main_cpp: str, name: str, host_unit: str | None = None, host_flags_agree: bool = False) -> Plan | None:
    """The units for `main_cpp` (as `inline_build.assemble` wrote it) of extension
    `name`, or None when this path does not apply. `host_unit`: a split CUDA
    extension's host unit (`cuda_split`); `host_flags_agree`: whether ``main.cpp``'s
    declarations may compile with the host unit's flags (`unit_merge.flags_match`)."""
    if not re.fullmatch(r"\w+", name):
        return None
    host = _EXT_INCLUDE.sub("", host_unit) if host_unit is not None else None
    block = MODULE_BLOCK.search(main_cpp)
    if block is not None:  # torch's generated block (`functions=`)
        bound = []
        for line in block.group(1).splitlines():
            m = DEF_LINE.fullmatch(line)
            if m is None or (m.group(2) or m.group(3)) != m.group(1):
                return None
            bound.append((m.group(1), m.group(1), f'"{m.group(4)}"', m.group(2) is not None))
        code = main_cpp[:block.start()]
    else:  # a module the candidate wrote, in main.cpp or the host unit
        found = _written_module(main_cpp, host)
        if found is None:
            return None
        bound, code, host = found
    items = top_items(_EXT_INCLUDE.sub("", code))
    host_items = top_items(host) if host is not None else []
    if items is None or host_items is None:
        return None
    code_items = [t for k, t in items + host_items if k == "code"]
    if any(_PYTHON_NAMES.search(code_only(t)) for t in code_items):
        return None
    sigs = []
    for _py, fn, _doc, _wrapped in bound:
        sig = _signature(code_items, fn)
        if sig is None or (host is not None and _internal(host_items, fn)):
            return None
        sigs.append(sig)
    binding, shim = _binding(bound, sigs), _shim(name, bound)
    if host is None:
        return Plan(slim=_slim(code, bound, sigs), binding=binding, shim=shim)
    decls = _declarations(items)
    if host_flags_agree and decls is not None:
        # the host code first, as it compiled alone; main.cpp's declarations after it
        return Plan(slim=_slim(host + "\n" + decls, bound, sigs), binding=binding, shim=shim, merged=True)
    return Plan(slim=_slim(code, bound, sigs), binding=binding, shim=shim, host=_TYPES_LINE + host)


_WRITTEN_HEAD = re.compile(r"PYBIND11_MODULE\s*\(\s*TORCH_EXTENSION_NAME\s*,\s*(\w+)\s*\)\s*\{")


def _written_module(main_cpp: str, host: str | None):
    """A ``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)`` block the candidate wrote (in
    ``cpp_sources`` or the host part of ``cuda_sources``) that binds functions by name
    and nothing else (``m.def("name", &fn)``, a doc string optional): its
    (python name, function, doc, False) list and the two texts without it, rebuilt from
    their top-level items (comments dropped); None for any other module."""
    texts = {"main": main_cpp, "host": host}
    found = []
    for where, text in texts.items():
        items = top_items(text) if text is not None else []
        if items is None:
            return None
        for i, (kind, t) in enumerate(items):
            if kind == "code" and "PYBIND11_MODULE" in t:
                found.append((where, items, i))
    if len(found) != 1:
        return None
    where, items, i = found[0]
    head = _WRITTEN_HEAD.match(items[i][1])
    if head is None or not items[i][1].endswith("}"):
        return None
    var, body = head.group(1), items[i][1][head.end():-1]
    bound = []
    for stmt in (x.strip() for x in body.split(";")):
        if not stmt:
            continue
        m = re.fullmatch(rf'{var}\s*\.\s*def\s*\(\s*"(\w+)"\s*,\s*&?\s*(\w+)\s*(?:,\s*("[^"\\]*")\s*)?\)', stmt)
        if m is None:
            return None  # py::arg, a lambda, a class, anything else: torch's units
        bound.append((m.group(1), m.group(2), m.group(3) or "nullptr", False))
    if not bound:
        return None
    rest = "\n".join(t for k, (_kind, t) in enumerate(items) if k != i) + "\n"
    return (bound, rest, host) if where == "main" else (bound, main_cpp, rest)


def _internal(host_items, fn: str) -> bool:
    """Whether the host unit gives `fn` internal linkage or makes it inline: torch's
    units then leave the binding unit's symbol undefined (an import error), which a
    forwarder in the same unit would not."""
    for kind, text in host_items:
        head = " ".join(text.split("{", 1)[0].split())
        if kind == "code" and re.search(rf"\b{re.escape(fn)}\s*\(", head) \
                and re.search(r"\b(static|inline|constexpr)\b", head.split(fn, 1)[0]):
            return True
    return False


def _declarations(items) -> str | None:
    """main.cpp's code when it is nothing but plain function declarations (its
    ``torch/extension.h`` includes taken out), else None."""
    from .unit_merge import DECL, NOT_PLAIN

    out = []
    for kind, text in items:
        if kind != "code" or "{" in text or "=" in text or not text.endswith(";") \
                or NOT_PLAIN.search(text) or DECL.match(text) is None:
            return None
        out.append(text)
    return "\n".join(out)


_TYPES_LINE = "#include <torch/types.h>\n"
# what the binding unit needs: pybind11 with torch's Tensor caster (and its STL casters), and
# `torch::wrap_pybind_function`. torch/extension.h (the whole C++ frontend and its Python
# bindings) cost 15.9 s to compile this unit on the 2-core VM against 5.0 s with these two;
# on the device the binding unit was a cold build's longest (25-28 s of 26-29 s, session_2026-11-30e)
BINDING_HEADERS = "#include <torch/csrc/utils/pybind.h>\n#include <torch/csrc/Exceptions.h>\n"
_AT = re.compile(r"\btorch::Tensor\b")


def _slim(code: str, bound, sigs) -> str:
    out = [_TYPES_LINE.strip(), _EXT_INCLUDE.sub("", code).rstrip("\n"), ""]
    for i, ((_py, fn, _doc, _w), (ret, types)) in enumerate(zip(bound, sigs)):
        params = ", ".join(f"{t} a{k}" for k, t in enumerate(types))
        args = ", ".join(f"a{k}" for k in range(len(types)))
        body = f"{fn}({args});" if ret == "void" else f"return {fn}({args});"
        out.append(f'__attribute__((visibility("hidden"))) {ret} km_fn{i}({params}) {{ {body} }}')
    return "\n".join(out) + "\n"


def _binding(bound, sigs) -> str:
    """The module's initialisation for `km_fn<i>`, each bound as the candidate's module
    binds its function (torch's generated lines: `wrap_pybind_function` or not; a module
    the candidate wrote: bare), under the names and docs the shim holds. pybind11's own
    macro makes it where the module takes its name from the import (pybind11 3:
    multi-phase initialisation; the macro's fixed name is not the module's); pybind11 2
    names the module at creation, so the name comes from the shim at run time."""
    # at::Tensor is torch::Tensor (torch's namespace imports at's): the same declarations
    # without torch/types.h, which this unit no longer includes
    decls = "\n".join(_AT.sub("at::Tensor", f'__attribute__((visibility("hidden"))) {ret} km_fn{i}({", ".join(types)});')
                      for i, (ret, types) in enumerate(sigs))
    targets = [f"torch::wrap_pybind_function(km_fn{i})" if wrapped else f"km_fn{i}"
               for i, (_py, _fn, _doc, wrapped) in enumerate(bound)]
    defs = "\n".join(f"  m.def(km_fn_names[{2 * i}], {t}, km_fn_names[{2 * i + 1}]);" for i, t in enumerate(targets))
    return f"""{BINDING_HEADERS}{decls}
extern "C" __attribute__((visibility("hidden"))) const char* const km_fn_names[];
static void km_defs(pybind11::module_& m) {{
{defs}
}}
#if PYBIND11_VERSION_MAJOR >= 3
PYBIND11_MODULE(km_sigbind, m) {{ km_defs(m); }}
extern "C" __attribute__((visibility("hidden"))) PyObject* km_module_init(const char*) {{
  return PyInit_km_sigbind();
}}
#else
extern "C" __attribute__((visibility("hidden"))) PyObject* km_module_init(const char* name) {{
  PYBIND11_CHECK_PYTHON_VERSION
  PYBIND11_ENSURE_INTERNALS_READY
  static pybind11::module_::module_def km_def;
  auto m = pybind11::module_::create_extension_module(name, nullptr, &km_def);
  try {{
    km_defs(m);
    return m.ptr();
  }}
  PYBIND11_CATCH_INIT_EXCEPTIONS
  return nullptr;
}}
#endif
"""


def _shim(name: str, bound) -> str:
    names = ", ".join(f'"{py}", {doc}' for py, _fn, doc, _w in bound)
    hidden = 'extern "C" __attribute__((visibility("hidden")))'
    return (f'struct _object;\n{hidden} struct _object* km_module_init(const char*);\n'
            f'{hidden} const char* const km_fn_names[] = {{{names}}};\n'
            f'extern "C" __attribute__((visibility("default"))) struct _object* PyInit_{name}() '
            f'{{ return km_module_init("{name}"); }}\n')
