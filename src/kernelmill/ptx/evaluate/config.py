"""The launch configuration a pair is evaluated with (`Pair.meta.config`).

The contract (docs/FORMATS.md, "Decompilation evaluation"): the kernel's
ordered parameters with their shapes, dtypes and roles, the grid, the block
and the dynamic shared memory in bytes. `kernelmill ptx augment` writes it for
generated kernels; for pairs from `ptx pairs` on hand-written CUDA a config is
derived where the kernel takes only pointers and integers and its launch site
can be evaluated (`derive_config`); otherwise the pair has no configuration
(counted, not an error).

Our extension of the contract, for derived configs: a parameter with role
``"scalar"`` is passed by value (`value`), and a pointer may say how its
buffer starts (`init`: ``"random"`` for inputs, ``"nan"`` or ``"zero"`` for
outputs; default random / nan) and the range of integer inputs (`range`).
"""

from __future__ import annotations

import ast
import math
import re
from dataclasses import dataclass, field
from typing import Any

# dtype name -> C type of an element (pointer casts need none: the harness
# converts to whatever pointer type the kernel declares), bytes per element
DTYPES: dict[str, tuple[str, int]] = {
    "float32": ("float", 4), "float64": ("double", 8), "float16": ("__half", 2),
    "bfloat16": ("__nv_bfloat16", 2), "int8": ("signed char", 1), "uint8": ("unsigned char", 1),
    "int16": ("short", 2), "int32": ("int", 4), "int64": ("long long", 8), "bool": ("bool", 1),
    "uint32": ("unsigned int", 4),
}
_ALIASES = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "long": "int64",
            "fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
ROLES = ("in", "out", "inout", "scalar")
INITS = ("random", "nan", "zero")
MAX_ELEMENTS = 1 << 28  # a buffer larger than this (1 GiB of float32) is refused


class ConfigError(ValueError):
    """A configuration that cannot be used; the message says what is wrong."""


@dataclass
class Param:
    name: str
    dtype: str
    role: str                      # in | out | inout | scalar
    shape: list[int] = field(default_factory=list)
    value: float | int | None = None   # scalars
    init: str = ""                 # random | nan | zero ("" = by role)
    range: list[float] | None = None   # [low, high) of integer inputs

    @property
    def numel(self) -> int:
        return math.prod(self.shape) if self.shape else 1

    @property
    def is_output(self) -> bool:
        return self.role in ("out", "inout")

    def init_kind(self) -> str:
        return self.init or ("nan" if self.role == "out" else "random")

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "shape": self.shape, "dtype": self.dtype, "role": self.role}
        if self.value is not None:
            d["value"] = self.value
        if self.init:
            d["init"] = self.init
        if self.range is not None:
            d["range"] = self.range
        return d


@dataclass
class KernelConfig:
    kernel: str                    # the __global__ function's name in the source
    params: list[Param]
    grid: list[int]
    block: list[int]
    shared_mem: int = 0
    derived: bool = False          # derived from a launch site, not stored by the producer
    prelude: str = ""              # key of a shared prelude (headers, macros) in PAIRS.preludes.json
    template_args: list[str] = field(default_factory=list)  # the instance of a template kernel

    @property
    def outputs(self) -> list[Param]:
        return [p for p in self.params if p.is_output]

    def to_dict(self) -> dict[str, Any]:
        d = {"kernel": self.kernel, "params": [p.to_dict() for p in self.params], "grid": self.grid,
             "block": self.block, "shared_mem": self.shared_mem, "derived": self.derived, "prelude": self.prelude}
        if self.template_args:
            d["template_args"] = self.template_args
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "KernelConfig":
        return cls(d["kernel"], [_param(p, f"params[{i}]") for i, p in enumerate(d["params"])],
                   _dim3(d["grid"], "grid"), _dim3(d["block"], "block"), int(d.get("shared_mem") or 0),
                   bool(d.get("derived")), str(d.get("prelude") or ""), _template_args(d))


def dtype_name(name: str) -> str:
    n = str(name).removeprefix("torch.")
    n = _ALIASES.get(n, n)
    if n not in DTYPES:
        raise ConfigError(f"unknown dtype {name!r} (one of {', '.join(DTYPES)})")
    return n


def _dim3(v: Any, what: str) -> list[int]:
    if isinstance(v, int) and not isinstance(v, bool):
        v = [v]
    if not isinstance(v, (list, tuple)) or not 1 <= len(v) <= 3 or not all(
            isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v):
        raise ConfigError(f"{what} must be 1 to 3 positive integers, got {v!r}")
    return [*v, *[1] * (3 - len(v))]


def _param(p: Any, where: str) -> Param:
    if not isinstance(p, dict):
        raise ConfigError(f"{where}: expected an object, got {type(p).__name__}")
    role = p.get("role", "in")
    if role not in ROLES:
        raise ConfigError(f"{where}: role must be one of {', '.join(ROLES)}, not {role!r}")
    shape = p.get("shape") or []
    if not isinstance(shape, (list, tuple)) or not all(isinstance(x, int) and x >= 0 for x in shape):
        raise ConfigError(f"{where}: shape must be a list of non-negative integers, got {shape!r}")
    init = p.get("init") or ""
    if init and init not in INITS:
        raise ConfigError(f"{where}: init must be one of {', '.join(INITS)}, not {init!r}")
    par = Param(str(p.get("name") or f"arg{where}"), dtype_name(p.get("dtype", "float32")), role, list(shape),
                p.get("value"), init, p.get("range"))
    if role == "scalar" and not isinstance(par.value, (int, float)):
        raise ConfigError(f"{where}: a scalar parameter needs a numeric value")
    if role != "scalar" and par.numel > MAX_ELEMENTS:
        raise ConfigError(f"{where}: {par.numel} elements is more than the {MAX_ELEMENTS} allowed")
    return par


def config_from_meta(meta_config: dict[str, Any], kernel: str) -> KernelConfig:
    """The stored `meta.config` of a pair (the contract); ConfigError names what is wrong."""
    if not isinstance(meta_config, dict):
        raise ConfigError(f"meta.config must be an object, got {type(meta_config).__name__}")
    params = meta_config.get("params")
    if params is None:
        # the contract's summary lists, in order: inputs first, then outputs
        params = ([{**p, "role": "in"} for p in meta_config.get("inputs") or []]
                  + [{**p, "role": "out"} for p in meta_config.get("outputs") or []])
    if not params:
        raise ConfigError("meta.config has no params (nor inputs/outputs)")
    if "grid" not in meta_config or "block" not in meta_config:
        raise ConfigError("meta.config needs grid and block")
    return KernelConfig(kernel, [_param(p, f"params[{i}]") for i, p in enumerate(params)],
                        _dim3(meta_config["grid"], "grid"), _dim3(meta_config["block"], "block"),
                        int(meta_config.get("shared_mem") or 0), bool(meta_config.get("derived")),
                        prelude=str(meta_config.get("prelude") or ""), template_args=_template_args(meta_config))


def _template_args(d: dict[str, Any]) -> list[str]:
    t = d.get("template_args") or []
    if not isinstance(t, list) or not all(isinstance(x, str) and x.strip() and not re.search(r"[;{}\n]", x)
                                          for x in t):
        raise ConfigError(f"template_args must be a list of C++ template arguments, got {t!r}")
    return t


# --- configs derived from a launch site ---------------------------------------

_INT_TYPES = {"int": "int32", "unsigned": "uint32", "unsigned int": "uint32", "int32_t": "int32",
              "uint32_t": "uint32", "long": "int64", "long long": "int64", "int64_t": "int64",
              "size_t": "int64", "unsigned long": "int64", "long int": "int64", "short": "int16"}
_PTR_TYPES = {"float": "float32", "double": "float64", "half": "float16", "__half": "float16",
              "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16", "int": "int32", "int32_t": "int32",
              "unsigned int": "uint32", "uint32_t": "uint32", "long long": "int64", "int64_t": "int64",
              "long": "int64", "char": "int8", "signed char": "int8", "int8_t": "int8",
              "unsigned char": "uint8", "uint8_t": "uint8", "bool": "bool", "short": "int16"}
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict)\b")
DERIVED_ELEMENTS = 1 << 22  # buffer size of a derived config: S ** (number of int params)


def kernel_params(source: str, kernel: str, template_args: list[str] | None = None
                  ) -> list[tuple[str, str, bool, bool]]:
    """(name, base type, is_pointer, is_const) of the kernel's parameters, by tree-sitter; the
    parameters of a template kernel with `template_args` substituted."""
    from ...cudasrc.tsparse import functions
    fns = [f for f in functions(source) if f.name == kernel and f.is_kernel]
    if not fns:
        raise ConfigError(f"no __global__ function {kernel!r} in the source")
    subst: dict[str, str] = {}
    if fns[0].template is not None:
        if not template_args:
            raise ConfigError(f"kernel {kernel!r} is a template")
        names = [re.findall(r"(\w+)\s*(?:=[^,]*)?$", p.strip()) for p in _split_top(fns[0].template[1:-1])]
        subst = {n[0]: a for n, a in zip(names, template_args) if n}
    fn = fns[0].node
    while fn is not None and fn.type != "function_definition":
        fn = next((c for c in fn.children if c.type == "function_definition"), None)
    decl = fn.child_by_field_name("declarator") if fn is not None else None
    while decl is not None and decl.type != "function_declarator":
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        raise ConfigError(f"cannot read the parameters of {kernel!r}")
    out = []
    for p in decl.child_by_field_name("parameters").named_children:
        if p.type == "comment":
            continue
        if p.type != "parameter_declaration":
            raise ConfigError(f"parameter {p.text.decode()!r} of {kernel!r} is not a plain declaration")
        txt = p.text.decode()
        d = p.child_by_field_name("declarator")
        ptr = d is not None and d.type == "pointer_declarator"
        if d is not None and d.type not in ("identifier", "pointer_declarator"):
            raise ConfigError(f"parameter {txt!r} of {kernel!r} is neither a pointer nor a scalar")
        name_node = d
        while name_node is not None and name_node.type != "identifier":
            name_node = name_node.child_by_field_name("declarator")
        if ptr and name_node is not None and "*" in txt[txt.index("*") + 1:]:
            raise ConfigError(f"parameter {txt!r} of {kernel!r} is a pointer to a pointer")
        head = txt.split("*")[0] if ptr else txt[: txt.rfind(name_node.text.decode())] if name_node else txt
        const = bool(re.search(r"\bconst\b", head))
        base = " ".join(_QUALIFIERS.sub(" ", head).split())
        base = subst.get(base, base)
        base = re.sub(r"^(?:at|c10|std)::", "", base)
        out.append((name_node.text.decode() if name_node else f"arg{len(out)}", base, ptr, const))
    return out


class _Eval(ast.NodeVisitor):
    """Integer arithmetic of a launch expression (C semantics for / and %)."""

    def __init__(self, names: dict[str, int]):
        self.names = names

    def visit_Expression(self, n):
        return self.visit(n.body)

    def visit_Constant(self, n):
        if isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            return n.value
        raise ConfigError(f"constant {n.value!r}")

    def visit_Name(self, n):
        if n.id not in self.names:
            raise ConfigError(f"unknown value {n.id!r}")
        return self.names[n.id]

    def visit_UnaryOp(self, n):
        v = self.visit(n.operand)
        if isinstance(n.op, ast.USub):
            return -v
        if isinstance(n.op, ast.UAdd):
            return v
        raise ConfigError("unsupported unary operator")

    def visit_BinOp(self, n):
        a, b = self.visit(n.left), self.visit(n.right)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b,
               ast.Div: lambda: int(a / b) if isinstance(a, int) and isinstance(b, int) else a / b,
               ast.FloorDiv: lambda: a // b, ast.Mod: lambda: int(math.fmod(a, b)),
               ast.LShift: lambda: a << b, ast.RShift: lambda: a >> b}
        f = ops.get(type(n.op))
        if f is None:
            raise ConfigError("unsupported operator")
        return f()

    def visit_IfExp(self, n):
        return self.visit(n.body) if self.visit(n.test) else self.visit(n.orelse)

    def visit_Compare(self, n):
        if len(n.ops) != 1:
            raise ConfigError("chained comparison")
        a, b = self.visit(n.left), self.visit(n.comparators[0])
        return {ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b, ast.GtE: a >= b, ast.Eq: a == b,
                ast.NotEq: a != b}[type(n.ops[0])]

    def visit_Call(self, n):
        f = n.func.id if isinstance(n.func, ast.Name) else ""
        args = [self.visit(a) for a in n.args]
        if f == "dim3":
            return [int(a) for a in args]
        if f in ("min", "max") and args:
            return (min if f == "min" else max)(args)
        if f in ("int", "unsigned", "size_t", "long", "int64_t", "uint32_t", "int32_t") and len(args) == 1:
            return int(args[0])
        if f in ("ceil_div", "cdiv", "div_up", "DIV_UP", "CEIL_DIV") and len(args) == 2:
            return -(-args[0] // args[1])
        raise ConfigError(f"unsupported call {f or ast.dump(n.func)!r}")

    def generic_visit(self, n):
        raise ConfigError(f"unsupported expression ({type(n).__name__})")


def eval_launch_expr(expr: str, names: dict[str, int]) -> int | list[int]:
    """Value of a grid/block/shared-memory expression as written at a launch site."""
    e = str(expr).strip()
    e = re.sub(r"\b(std|cuda)::", "", e)
    e = re.sub(r"\(\s*(?:unsigned\s+)?(?:int|long|size_t|int64_t|uint32_t|int32_t)\s*\)", "", e)  # C casts
    e = re.sub(r"(\d)[uUlL]+\b", r"\1", e)
    e = e.replace("&&", " and ").replace("||", " or ")
    e = re.sub(r"(?<![<>=!])!(?!=)", " not ", e)
    m = re.fullmatch(r"(.+?)\s*\?\s*(.+?)\s*:\s*(.+)", e)
    if m:
        e = f"({m.group(2)}) if ({m.group(1)}) else ({m.group(3)})"
    try:
        tree = ast.parse(e, mode="eval")
    except SyntaxError:
        raise ConfigError(f"cannot read {expr!r}") from None
    v = _Eval(names).visit(tree)
    return [int(x) for x in v] if isinstance(v, list) else int(v)


def derive_config(source: str, kernel: str, launch: dict[str, Any] | None) -> KernelConfig:
    """A config for a hand-written kernel from its first launch site: every
    parameter must be a pointer to a known element type or an integer scalar,
    and the grid, block (and shared memory) must be computable from the launch
    arguments. Each integer parameter gets the same size S, with S ** k <=
    DERIVED_ELEMENTS for k integer parameters, and every buffer holds S ** k
    elements; const pointers are inputs, the others outputs (zero-initialised,
    so kernels that accumulate into them start from the same state)."""
    if not launch or "grid" not in launch or "block" not in launch:
        raise ConfigError("no launch site")
    params = kernel_params(source, kernel)
    ints = [n for n, base, ptr, _ in params if not ptr]
    for name, base, ptr, _ in params:
        if ptr and base not in _PTR_TYPES:
            raise ConfigError(f"pointer parameter {name!r} has element type {base!r}")
        if not ptr and base not in _INT_TYPES:
            raise ConfigError(f"scalar parameter {name!r} has type {base!r}, not an integer")
    k = max(1, len(ints))
    size = max(16, int(DERIVED_ELEMENTS ** (1.0 / k)) // 16 * 16)
    while size ** k > DERIVED_ELEMENTS:
        size -= 16
    args = launch.get("args") or []
    if len(args) != len(params):
        raise ConfigError(f"the launch passes {len(args)} arguments to {len(params)} parameters")
    names: dict[str, int] = {}
    for (name, base, ptr, _), arg in zip(params, args):
        if not ptr:
            a = str(arg).strip()
            if not re.fullmatch(r"[A-Za-z_]\w*", a):
                raise ConfigError(f"integer argument {a!r} is an expression")
            names[a] = names[name] = size
    grid = eval_launch_expr(launch["grid"], names)
    block = eval_launch_expr(launch["block"], names)
    smem = eval_launch_expr(launch["shared_mem"], names) if launch.get("shared_mem") not in (None, "") else 0
    if isinstance(smem, list):
        raise ConfigError("shared memory is not a number")
    numel = size ** len(ints) if ints else DERIVED_ELEMENTS
    cparams = []
    for name, base, ptr, const in params:
        if ptr:
            cparams.append(Param(name, _PTR_TYPES[base], "in" if const else "out", [numel],
                                 init="" if const else "zero"))
        else:
            cparams.append(Param(name, _INT_TYPES[base], "scalar", [], value=size))
    return KernelConfig(kernel, cparams, _dim3(grid, "grid"), _dim3(block, "block"), int(smem), derived=True)


def _split_top(s: str) -> list[str]:
    """`s` split at the commas outside brackets."""
    out, depth, cur = [], 0, ""
    for ch in s:
        depth += ch in "<([{" and 1 or ch in ">)]}" and -1 or 0
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur] if cur.strip() else out


def config_from_launch(source: str, launch) -> KernelConfig:
    """The config of one evaluated launch (`cudasrc.host_eval.Launch`: the host code run with the
    task's tensors): every pointer argument a buffer of the tensor it points into (from the
    pointer on), every number a scalar; a const pointer is an input, another pointer an output
    where the host code allocated its tensor (zero-initialised where that was `zeros`), else
    read and written (`inout`)."""
    from ...cudasrc.host_eval import CTYPES, SIZES, HostTensor, Ptr
    problem = launch.problem()
    if problem:
        raise ConfigError(f"launch of {launch.kernel}: {problem}")
    params = kernel_params(source, launch.kernel, launch.template_args)
    if len(params) != len(launch.args):
        raise ConfigError(f"the launch passes {len(launch.args)} arguments to {len(params)} parameters")
    out = []
    for (name, base, ptr, const), a in zip(params, launch.args):
        if ptr and (a == 0 and not isinstance(a, bool) or isinstance(a, Ptr) and a.tensor is not None
                    and a.tensor.numel == 0):
            # a null pointer (an empty tensor's too): a buffer of no elements, which is nullptr
            out.append(Param(name, CTYPES.get(base, "float32"), "in", [0]))
            continue
        if isinstance(a, HostTensor):  # a tensor handed to a kernel launched from Python
            a = Ptr(a)
        if ptr:
            if not isinstance(a, Ptr) or a.tensor is None:
                raise ConfigError(f"pointer parameter {name!r} gets {a!r}, not a tensor's address")
            t = a.tensor
            scalar = CTYPES.get(a.ctype or "") or CTYPES.get(base)
            dtype = scalar if scalar in SIZES and (a.ctype is None or a.ctype in CTYPES) else t.dtype
            if a.ctype is None and scalar is None:
                dtype = t.dtype
            step = SIZES[dtype] if dtype == scalar and a.ctype in CTYPES else SIZES[t.dtype]
            numel = t.numel - a.offset // step
            if numel <= 0:
                raise ConfigError(f"pointer parameter {name!r} points past its tensor")
            shape = list(t.shape) if a.offset == 0 and dtype == t.dtype else [numel]
            role = "in" if const else ("out" if t.origin in ("empty", "zero") else "inout")
            out.append(Param(name, dtype_name(dtype), role, shape, init="zero" if t.origin == "zero" and role != "in"
                             else ""))
        else:
            kind = CTYPES.get(base)
            if isinstance(a, Ptr) and a.tensor is not None:
                a = a.tensor
            if isinstance(a, HostTensor) and a.item is not None:  # a one-element tensor passed by value
                a = a.item
            if kind is None or isinstance(a, bool) and kind != "bool" or not isinstance(a, (int, float)):
                raise ConfigError(f"parameter {name!r} of type {base!r} gets {a!r}")
            value = float(a) if kind.startswith("float") else int(a)
            out.append(Param(name, kind, "scalar", [], value=value))
    return KernelConfig(launch.kernel, out, _dim3(launch.grid, "grid"), _dim3(launch.block, "block"),
                        int(launch.shared_mem or 0), derived=True, template_args=list(launch.template_args))


def pair_config(pair) -> KernelConfig:
    """The pair's stored config, else one derived from its launch site (ConfigError: none)."""
    meta = pair.meta or {}
    if meta.get("config"):
        return config_from_meta(meta["config"], pair.kernel_name)
    if pair.source_language != "cuda":
        raise ConfigError(f"a {pair.source_language} pair needs a stored meta.config")
    try:
        return derive_config(pair.source, pair.kernel_name, pair.launch)
    except ImportError as exc:
        raise ConfigError(f"cannot parse CUDA: {exc}") from None
