"""One host translation unit instead of two, where that provably keeps the meaning.

Why: every unit that includes ``torch/extension.h`` pays the same fixed cost,
precompiled header or not. GCC still emits the pybind11 runtime the header
defines (~120 KB of code at -O3) in every such unit: 11.4 s of an empty unit's
compile on 2 cores, 5.7 s of it before code generation. A split CUDA extension
(`cuda_split`) has two such units, the binding unit (``main.cpp``: the header,
``cpp_sources``, the generated ``PYBIND11_MODULE``) and the host unit. Compiled as
one they cost 14.2 s of CPU instead of 24.7 s (12.6 + 12.1) on the same machine
(docs/results/benchmarks_history.md, issue 14), which is what a batch of cold builds waits on.

The merged unit is the binding unit followed by the host unit, compiled with
the host unit's flags. It is used only when:

* the binding unit holds nothing but ``#include <torch/extension.h>`` lines,
  function declarations (no body, no initialiser) and ``PYBIND11_MODULE``
  blocks, so that what it adds before the host code is the header (which the
  host unit's precompiled header puts first already), declarations of
  functions, and a module definition whose names the host code never uses;
* every declared function the host code mentions is one the host code defines,
  and mentions nowhere before that definition (the declaration names the same
  function, or an overload the host never defines, which fails at import exactly
  as the two units did; and a use before the definition, which fails alone,
  cannot compile merged thanks to the binding unit's declaration);
* the two units' flags are the same but for the optimisation level and the
  ``-D__CUDA_NO_*`` macros (which only change the CUDA half-precision headers,
  which the binding unit does not include).

The binding unit is then compiled exactly as alone: the same text before it
(the header), with the host unit after it. Anything else, and any merged
compile that fails, goes back to the two units (`inline_build`).
"""

from __future__ import annotations

import re

from .cuda_split import code_only, top_items

_EXT_INCLUDE = re.compile(r"#\s*include\s*[<\"]torch/extension\.h[>\"]\s*$")
_MODULE = re.compile(r"\s*PYBIND11_MODULE\s*\(")
DECL = re.compile(r"^[\w:<>,\s\*&]+?\b(\w+)\s*\(")
NOT_PLAIN = re.compile(r"\b(using|typedef|namespace|template|extern|static|inline|constexpr|friend|operator)\b")
_MODULE_NAMES = re.compile(r"\b(PYBIND11_MODULE|PyInit_\w+|pybind11_init_\w+|pybind11_module_def_\w+)\b")


def _normal(flags: list[str]) -> list[str]:
    return [f for f in flags if not f.startswith(("-O", "-D__CUDA_NO_"))]


def flags_match(binding_flags: list[str], host_flags: list[str]) -> bool:
    """Whether the binding unit may be compiled with the host unit's flags."""
    return _normal(binding_flags) == _normal(host_flags)


def _definition_at(host_code: str, name: str) -> int | None:
    """Where `host_code` first defines a function `name` (its parameter list followed by a body), or None."""
    for m in re.finditer(rf"\b{re.escape(name)}\s*\(", host_code):
        depth, i = 1, m.end()
        while i < len(host_code) and depth:
            depth += {"(": 1, ")": -1}.get(host_code[i], 0)
            i += 1
        rest = host_code[i:].lstrip()
        rest = re.sub(r"^(const|noexcept|override)\b\s*", "", rest)
        if rest.startswith("{"):
            return m.start()
    return None


def merge(main_cpp: str, host_unit: str) -> str | None:
    """The merged unit's text, or None when the merge is not provably the same."""
    items = top_items(main_cpp)
    host_items = top_items(host_unit)
    if items is None or host_items is None:
        return None
    host_code = code_only("\n".join(t for k, t in host_items if k == "code"))
    if any(k == "code" and _MODULE.match(t) for k, t in items) and _MODULE_NAMES.search(host_code):
        return None  # two module definitions, or host code that names the binding's
    for kind, text in items:
        if kind == "pp":
            if not _EXT_INCLUDE.match(text):
                return None
            continue
        if _MODULE.match(text):
            if not text.rstrip().endswith("}"):
                return None
            continue
        if "{" in text or "=" in text or not text.endswith(";") or NOT_PLAIN.search(text):
            return None
        m = DECL.match(text)
        if m is None:
            return None
        name = m.group(1)
        if re.search(rf"\b{re.escape(name)}\b", host_code):
            # the host code must define it, and name it nowhere before that definition:
            # alone, a use before the definition does not compile; merged, the binding
            # unit's declaration would make it compile
            at = _definition_at(host_code, name)
            if at is None or re.search(rf"\b{re.escape(name)}\b", host_code[:at]):
                return None
    return main_cpp.rstrip("\n") + "\n" + host_unit
