"""Builds that will fail, known before (or while) they compile (issue 40).

In the CUDA-L1 corpus of LLM-written candidates (docs/results/issue40/build_fail_fast.md) most
``load_inline`` builds that fail do so in the binding unit torch generates for ``functions=``:
the list names a CUDA kernel, or a host function, that only ``cuda_sources`` declares, so
``main.cpp`` (``torch/extension.h``, ``cpp_sources``, then the ``PYBIND11_MODULE`` block with
``m.def("f", torch::wrap_pybind_function(f), "f")``) does not compile: ``'f' was not declared
in this scope``. Before, such a build compiled the kernel unit with nvcc and two or three host
units before the error was final (52 s median per candidate on an H100 host).

`unbound_names` finds these without compiling. It answers only when the compile surely
fails: a name in the generated block is an unqualified id-expression inside a function at
namespace scope, so ordinary lookup must find a declaration before it; argument-dependent
lookup does not apply to a name that is not called. A declaration spells the name in the
text the compiler parses, after preprocessing (a macro's expansion included). So when the
name is not an identifier anywhere in

* the torch header's preprocessed text with its macro definitions (``-E -dD``, once per flag
  set, kept in the build cache beside the precompiled header: `header_identifiers`), nor
* ``main.cpp``'s text before the block, preprocessed after that header (``-E -dD
  -fpch-preprocess`` with the precompiled header: the header's macros and include guards as
  the compile has them; its macro definitions kept, so a macro of that name counts as one),

nothing declares it and the compile fails with that error. Names the compiler may know
without a declaration in the text (reserved ones: ``__x``, ``_X``) and keywords are never
answered. The message is the compiler's, at the same file, line and column.

A second module: ``cpp_sources`` holding its own ``PYBIND11_MODULE(TORCH_EXTENSION_NAME, m)``
while ``functions=`` is given too (torch appends its own block): the preprocessed text before
the block already defines ``PyInit_<module>`` (`defines_module`), and the block defines it
again in the same unit. A preprocessing error of that text (a missing include) is the
compile's error too (the same preprocessor on the same text), and is answered as it is. The
same module written in ``cuda_sources`` (`cuda_module_line`) gives the extension two
definitions of ``PyInit_<module>``: the link fails (or, without pybind11 included there, the
CUDA unit does not compile).

What is not answered here fails while compiling, as fast as the units allow
(`inline_build.InlineBuilder._compile`: the first unit whose error is final stops the others).
`fail_fast_checks(False)` (inline_build) turns these checks off.
"""

from __future__ import annotations

import re

from .cuda_split import top_items
from .slim_units import DEF_LINE, MODULE_BLOCK

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEADER_LINE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*<torch/extension\.h>[ \t]*$", re.M)

_KEYWORDS = frozenset("""alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t
char32_t class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
decltype default delete do double dynamic_cast else enum explicit export extern false float for friend goto if inline
int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private protected public register
reinterpret_cast requires return short signed sizeof static static_assert static_cast struct switch template this
thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while xor
xor_eq""".split())


def identifiers(text: str) -> set[str]:
    """Every identifier-shaped word of `text` (strings and all: more is only more careful)."""
    return set(_IDENT.findall(text))


def binding_block(main_cpp: str):
    """(prefix, [(python name, C++ name, line, column)]) of torch's generated block at the
    end of `main_cpp`, or None when there is none (a module the candidate wrote)."""
    block = MODULE_BLOCK.search(main_cpp)
    if block is None:
        return None
    prefix = main_cpp[:block.start()]
    first_line = prefix.count("\n") + 3  # the block's "\n", its PYBIND11_MODULE line, then the m.def lines
    names = []
    for i, line in enumerate(block.group(1).splitlines()):
        m = DEF_LINE.fullmatch(line)
        if m is None:
            return None
        fn = m.group(2) or m.group(3)
        col = (m.start(2) if m.group(2) else m.start(3)) + 1
        names.append((m.group(1), fn, first_line + i, col))
    return prefix, names


def answerable(name: str) -> bool:
    """Whether a name's absence from the text proves it undeclared: not reserved (the
    compiler's own `__builtin_*`, `__func__` and the like need no declaration), not a keyword."""
    return (re.fullmatch(r"[A-Za-z_]\w*", name) is not None and not name.startswith("__")
            and not re.match(r"_[A-Z]", name) and name not in _KEYWORDS)


def needs_preprocessing(prefix: str) -> bool:
    """Whether main.cpp's text before the block holds more than the torch header's include
    (then it is preprocessed after the header: `InlineBuilder._prefix_identifiers`)."""
    rest = _HEADER_LINE.sub("", prefix)
    items = top_items(rest)
    return items is None or bool(items)


def unbound_names(names, known: set[str]) -> list[tuple[str, str, int, int]]:
    """The bound names that nothing declares: not among `known` (the identifiers of the
    header's and the prefix's preprocessed text) and answerable."""
    return [n for n in names if answerable(n[1]) and n[1] not in known]


def message(unbound, filename: str = "main.cpp") -> str:
    """The compiler's diagnostic for each unbound name (GCC's wording and place)."""
    lines = [f"{filename}: In function 'void pybind11_init_<module>(pybind11::module_&)':"]
    for _py, fn, line, col in unbound:
        lines.append(f"{filename}:{line}:{col}: error: '{fn}' was not declared in this scope")
    lines.append("(kernelmill: found before compiling: no declaration of this name precedes torch's generated "
                 "binding in main.cpp (cpp_sources); a function defined only in cuda_sources needs a declaration "
                 "in cpp_sources; verify/build/fail_fast.py)")
    return "\n".join(lines)


def module_name(cflags: list[str]) -> str | None:
    """The module's name as the flags define it (``-DTORCH_EXTENSION_NAME=``)."""
    found = [f.split("=", 1)[1] for f in cflags if f.startswith("-DTORCH_EXTENSION_NAME=")]
    return found[0] if len(found) == 1 and re.fullmatch(r"\w+", found[0]) else None


def defines_module(text: str, module: str) -> bool:
    """Whether preprocessed main.cpp text (``-dD``) before torch's generated block already
    defines the module's entry point (the candidate's own ``PYBIND11_MODULE(TORCH_EXTENSION_NAME,
    m)`` in ``cpp_sources``): then the generated block, the same macro with the same name,
    defines ``PyInit_<module>`` a second time in one unit, which no compiler accepts. Only
    where ``TORCH_EXTENSION_NAME`` keeps the flags' value throughout (never undefined or
    defined otherwise), so the block names the same module."""
    for m in re.finditer(r"^[ \t]*#[ \t]*(define|undef)[ \t]+TORCH_EXTENSION_NAME\b(.*)$", text, re.M):
        if m.group(1) == "undef" or m.group(2).strip() != module:
            return False
    return re.search(rf"\bPyInit_{re.escape(module)}\s*\(\s*\)\s*\{{", text) is not None


def module_message(prefix: str, module: str, filename: str = "main.cpp") -> str:
    """The compiler's diagnostic for the second module definition, at torch's block."""
    line = prefix.count("\n") + 2  # the block's PYBIND11_MODULE line
    return (f"{filename}:{line}:1: error: redefinition of 'PyObject* PyInit_{module}()'\n"
            "(kernelmill: found before compiling: cpp_sources defines the module with its own "
            "PYBIND11_MODULE(TORCH_EXTENSION_NAME, ...) and functions= makes torch generate another; "
            "verify/build/fail_fast.py)")


_CU_MODULE = re.compile(r"PYBIND11_MODULE\s*\(\s*TORCH_EXTENSION_NAME\s*,")
_CONDITIONAL = re.compile(r"#\s*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b")
_NAMES_MACROS = re.compile(r"#\s*(define|undef)\s+(TORCH_EXTENSION_NAME|PYBIND11_\w+)\b")


def _sure_module_line(source: str) -> int | None:
    """The line of a ``PYBIND11_MODULE(TORCH_EXTENSION_NAME, ...)`` that `source` surely
    compiles as written: a top-level item; no conditional directive anywhere in the text, no
    directive naming the module's macros, no ``#include "..."`` of the candidate's own that
    could. None when not sure."""
    items = top_items(source)
    if items is None:
        return None
    for kind, text in items:
        if kind == "pp" and (_CONDITIONAL.match(text) or _NAMES_MACROS.match(text)
                             or re.match(r'#\s*include\s*"', text)):
            return None
    if not any(kind == "code" and _CU_MODULE.match(text) for kind, text in items):
        return None
    m = re.search(r"^[ \t]*PYBIND11_MODULE\s*\(\s*TORCH_EXTENSION_NAME\s*,", source, re.M)
    return None if m is None else source.count("\n", 0, m.start()) + 1


def cuda_module_line(cuda_cu: str) -> int | None:
    """The line of a module that ``cuda.cu`` surely writes (`_sure_module_line`): with torch's
    generated block in main.cpp (``functions=``) the extension then has two definitions of
    ``PyInit_<module>``, which the link refuses; or pybind11 is not included there and the
    line does not compile. None when not sure."""
    return _sure_module_line(cuda_cu)


def prefix_writes_module(prefix: str) -> bool:
    """Whether main.cpp's text before torch's generated block (the header's include, then
    ``cpp_sources``) surely writes the module itself (`_sure_module_line`): the generated
    block then defines ``PyInit_<module>`` a second time in the same unit. Read from the
    text, without the preprocessor (`defines_module` reads the preprocessed text where this
    is not sure): an ``-E`` of the torch header took 3-6 s in a cold run on the device
    (7 of cuda-l1's 25 failing builds, session_2026-11-30b)."""
    return _sure_module_line(_HEADER_LINE.sub("", prefix)) is not None


def plain_prefix(prefix: str) -> bool:
    """Whether main.cpp's text before the block has no directive but the header's include,
    so TORCH_EXTENSION_NAME there is the flags' (a directive could redefine it)."""
    items = top_items(_HEADER_LINE.sub("", prefix))
    return items is not None and all(kind == "code" for kind, _t in items)


def cuda_module_message(line: int, module: str) -> str:
    return (f"cuda.cu:{line}:1: error: PYBIND11_MODULE(TORCH_EXTENSION_NAME, ...) defines PyInit_{module}, which "
            f"torch's generated binding in main.cpp (functions=) defines too: multiple definition of "
            f"`PyInit_{module}' (the link fails)\n"
            "(kernelmill: found before compiling: with a module written in cuda_sources, leave functions= out; "
            "verify/build/fail_fast.py)")
