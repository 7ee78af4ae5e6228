"""The launches a CUDA unit's host code makes, evaluated for given arguments (issue 44 item 4).

`run_host(src, function, args)` interprets a host function of `src` (a torch wrapper
`torch::Tensor f(torch::Tensor x, float alpha)`, or a plain launcher taking pointers and
sizes) with concrete argument values: tensors with their shape and dtype (`HostTensor`),
pointers into them (`Ptr`), numbers. It follows the code statement by statement (declarations,
assignments, `if`/`switch` on the taken branch, loops up to a step budget, calls of the unit's
own host functions, lambdas and `AT_DISPATCH_*` bodies with `scalar_t` bound), tracks the tensors
the wrapper allocates (`torch::empty({B, C}, x.options())`, `empty_like`) and records each
`<<<...>>>` launch it reaches (`Launch`, built on `tsparse.launch_site`): template arguments
(host-local constants replaced by their values), grid, block, shared memory, argument values.
A launch in a branch whose condition is false or unknown is recorded too (`taken=False`),
evaluated with the values before that branch, so kernels for other shapes and dtypes get a
launch as well. What cannot be evaluated is `Unknown(why)`, an error only where a launch needs
it (`Launch.problem`). Nothing is compiled or run.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .tsparse import functions, launch_site, parse_cuda, text

# C/C++ element types -> dtype names (ptx.evaluate.config.DTYPES) and sizes in bytes
CTYPES = {"float": "float32", "double": "float64", "half": "float16", "__half": "float16", "Half": "float16",
          "BFloat16": "bfloat16", "__nv_bfloat16": "bfloat16", "nv_bfloat16": "bfloat16", "int": "int32",
          "int32_t": "int32", "unsigned": "uint32", "unsigned int": "uint32", "uint32_t": "uint32",
          "long": "int64", "long long": "int64", "int64_t": "int64", "size_t": "int64", "long int": "int64",
          "int8_t": "int8", "char": "int8", "signed char": "int8", "uint8_t": "uint8", "unsigned char": "uint8",
          "bool": "bool", "short": "int16", "int16_t": "int16", "unsigned long": "int64", "uint64_t": "int64",
          "unsigned long long": "int64"}
SIZES = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int32": 4, "uint32": 4, "int64": 8,
         "int8": 1, "uint8": 1, "bool": 1, "int16": 2}
_VEC = {"float2": 8, "float4": 16, "half2": 4, "__half2": 4, "int2": 8, "int4": 16, "double2": 16,
        "nv_bfloat162": 4, "__nv_bfloat162": 4, "uint4": 16, "uint2": 8, "char4": 4, "uchar4": 4}
_TORCH_DTYPES = {"kFloat": "float32", "kFloat32": "float32", "Float": "float32", "kDouble": "float64",
                 "kFloat64": "float64", "Double": "float64", "kHalf": "float16", "kFloat16": "float16",
                 "Half": "float16", "kBFloat16": "bfloat16", "BFloat16": "bfloat16", "kInt": "int32",
                 "kInt32": "int32", "Int": "int32", "kLong": "int64", "kInt64": "int64", "Long": "int64",
                 "kBool": "bool", "Bool": "bool", "kByte": "uint8", "kUInt8": "uint8", "Byte": "uint8",
                 "kChar": "int8", "kInt8": "int8", "Char": "int8", "kShort": "int16", "kInt16": "int16"}
_NOOPS = re.compile(r"(TORCH_CHECK\w*|CHECK_\w+|C10_CUDA\w*|AT_ASSERT\w*|cuda\w+|printf|fprintf|assert|"
                    r"CUDA_CHECK\w*|cudaCheck\w*|gpuErrchk|checkCuda\w*|TORCH_INTERNAL_ASSERT\w*)$")
_INT_TYPES = {"int", "unsigned", "long", "short", "size_t", "int64_t", "int32_t", "uint32_t", "uint64_t",
              "int16_t", "uint16_t", "int8_t", "uint8_t", "char", "bool", "unsigned int", "long long",
              "unsigned long", "long int", "ptrdiff_t", "index_t"}
_FLOAT_TYPES = {"float", "double"}
MAX_STEPS = 200_000


class HostEvalError(ValueError):
    """The host function cannot be interpreted at all (not found, too long)."""


@dataclass(frozen=True)
class Unknown:
    why: str


@dataclass(eq=False)
class HostTensor:
    shape: list[int]
    dtype: str
    origin: str = "input"   # input | empty | zero | computed (what a kernel reading it sees)
    name: str = ""
    item: float | None = None  # the value of a one-element tensor, where known

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


@dataclass
class Ptr:
    tensor: HostTensor | None
    ctype: str | None = None   # the C element type it points to, where known
    offset: int = 0            # bytes from the tensor's start

    @property
    def elem_size(self) -> int | None:
        if self.ctype is None:
            return 1
        return _VEC.get(self.ctype) or SIZES.get(CTYPES.get(self.ctype, ""))


@dataclass(frozen=True)
class DType:
    name: str


@dataclass
class Options:
    dtype: str | None = None


@dataclass
class Dim3:
    x: int = 1
    y: int = 1
    z: int = 1

    def as_list(self) -> list:
        return [self.x, self.y, self.z]


@dataclass
class Closure:
    node: object
    env: dict


class _Stream:
    pass


# what `cudaGetDeviceProperties` fills in, as an H200 reports it (the evaluator's GPU)
DEVICE_PROP = {"multiProcessorCount": 132, "maxThreadsPerBlock": 1024, "warpSize": 32,
               "sharedMemPerBlock": 48 << 10, "sharedMemPerBlockOptin": 227 << 10,
               "maxThreadsPerMultiProcessor": 2048, "major": 9, "minor": 0, "l2CacheSize": 60 << 20,
               "regsPerBlock": 65536, "sharedMemPerMultiprocessor": 228 << 10, "maxGridSize": [2147483647, 65535, 65535]}


STREAM = _Stream()


@dataclass
class Launch:
    kernel: str
    template_args: list[str]
    grid: list
    block: list
    shared_mem: object
    args: list
    taken: bool = True
    site: object = field(default=None, repr=False)   # the tsparse.LaunchSite

    def problem(self) -> str:
        """Why this launch's configuration is not usable ('' when it is)."""
        for what, v in (("grid", self.grid), ("block", self.block), ("shared memory", [self.shared_mem])):
            for x in v:
                if isinstance(x, Unknown):
                    return f"{what}: {x.why}"
                if not isinstance(x, int) or isinstance(x, bool) or x < (0 if what == "shared memory" else 1):
                    return f"{what} is {x!r}"
        for i, a in enumerate(self.args):
            if isinstance(a, Unknown):
                return f"argument {i + 1}: {a.why}"
        return ""


class _Return(Exception):
    def __init__(self, value):
        self.value = value


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


def _num(tok: str):
    t = tok.replace("'", "").lower()
    if t.startswith("0x"):
        return int(t.rstrip("ul"), 16)
    if re.fullmatch(r"[-+]?\d+[ul]*", t):
        return int(t.rstrip("ul"))
    return float(t.rstrip("fl"))


def _cdiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        if b == 0:
            return Unknown("division by zero")
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b if b else Unknown("division by zero")


_BIN = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": _cdiv,
        "%": lambda a, b: int(math.fmod(a, b)) if b else Unknown("modulo by zero"),
        "<<": lambda a, b: a << b, ">>": lambda a, b: a >> b, "&": lambda a, b: a & b, "|": lambda a, b: a | b,
        "^": lambda a, b: a ^ b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}


def _base_type(t: str) -> str:
    t = re.sub(r"\b(const|volatile|static|constexpr|inline|__restrict__|__restrict|unsigned(?= *$))\b", " ", t)
    t = re.sub(r"\b(std|at|c10|torch|cuda)::", "", t)
    return " ".join(t.replace("*", " ").replace("&", " ").split())


def _convert(v, type_text: str):
    """A value assigned to a variable of this declared type (C's conversions of numbers)."""
    if isinstance(v, Unknown) or "*" in type_text:
        return v
    base = _base_type(type_text)
    if base in _INT_TYPES and isinstance(v, (int, float)) and not isinstance(v, bool) or base == "bool":
        try:
            return int(v) if base != "bool" else bool(v)
        except (TypeError, ValueError):
            return v
    if base in _FLOAT_TYPES and isinstance(v, (int, float)):
        return float(v)
    return v


def _dtype_of_type(name: str, aliases: dict) -> str | None:
    name = aliases.get(name, name)
    base = _base_type(name)
    return CTYPES.get(base) or CTYPES.get(base.split("::")[-1])


class HostRun:
    """One unit's host code; `call` runs a function of it and appends to `launches`."""

    def __init__(self, src: str, explore: bool = True):
        self.src, self.explore = src, explore
        self.tree = parse_cuda(src)
        self.fns = {}
        for f in functions(src):
            head = f.text.split("{", 1)[0]
            if not f.is_kernel and ("__device__" not in head or "__host__" in head):
                self.fns.setdefault(f.name, f)
        self.globals = self._globals()
        self.launches: list[Launch] = []
        self.steps = 0
        self._seen: set = set()

    def _globals(self) -> dict:
        g: dict = {}
        for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+([^\n\\]+)$", self.src, re.M):
            g[m.group(1)] = ("expr", m.group(2).split("//")[0].strip())
        for m in re.finditer(r"^(?:static\s+)?(?:constexpr|const)\s+(?:static\s+)?([\w ]+?)\s+(\w+)\s*=\s*([^;{}]+);",
                             self.src, re.M):
            g.setdefault(m.group(2), ("expr", m.group(3).strip()))
        return g

    def _global(self, name: str):
        kind, val = self.globals[name]
        if kind == "value":
            return val
        self.globals[name] = ("value", Unknown(f"{name} is defined by itself"))
        tree = parse_cuda(f"auto __km = {val};")
        decl = tree.root_node.children[0] if tree.root_node.children else None
        node = decl.child_by_field_name("declarator") if decl is not None else None
        node = node.child_by_field_name("value") if node is not None else None
        v = self.eval(node, {}) if node is not None else Unknown(f"cannot read {name}")
        self.globals[name] = ("value", v)
        return v

    # --- functions -------------------------------------------------------------
    def _params(self, name: str):
        f = self.fns.get(name)
        if f is None:
            raise HostEvalError(f"no host function {name!r}")
        fn = f.node if f.node.type == "function_definition" else next(
            c for c in f.node.children if c.type == "function_definition")
        decl = fn.child_by_field_name("declarator")
        while decl is not None and decl.type != "function_declarator":
            decl = decl.child_by_field_name("declarator")
        return fn, [p for p in decl.child_by_field_name("parameters").named_children
                    if p.type in ("parameter_declaration", "optional_parameter_declaration")]

    def param_types(self, name: str) -> list[str]:
        """The declared types of a host function's parameters, as written."""
        return [text(p.child_by_field_name("type")) if p.child_by_field_name("type") is not None else ""
                for p in self._params(name)[1]]

    def call(self, name: str, args: list, aliases: dict | None = None):
        fn, params = self._params(name)
        env: dict = {"__types__": dict(aliases or {})}
        for i, p in enumerate(params):
            d = p.child_by_field_name("declarator")
            name_ = _ident(d)
            t = p.child_by_field_name("type")
            tt = (text(t) if t is not None else "") + (" *" if d is not None and "pointer" in d.type else "")
            if i < len(args):
                v = args[i]
            elif p.type == "optional_parameter_declaration":
                v = self.eval(p.child_by_field_name("default_value"), env)
            else:
                v = Unknown(f"parameter {name_} not passed")
            if isinstance(v, Ptr) and d is not None and "pointer" in d.type and t is not None:
                v = Ptr(v.tensor, _base_type(text(t)) if v.ctype is None else v.ctype, v.offset)
            if name_:
                env[name_] = _convert(v, tt)
        try:
            self.exec(fn.child_by_field_name("body"), env)
        except _Return as r:
            return r.value
        return None

    # --- statements ------------------------------------------------------------
    def exec(self, n, env: dict, taken: bool = True) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise HostEvalError("step budget exhausted (a long host loop)")
        t = n.type
        if t == "compound_statement" or t == "try_statement":
            for c in n.named_children:
                if c.type == "compound_statement" and t == "try_statement":
                    self.exec(c, env, taken)
                    break
                if t == "compound_statement":
                    self.exec(c, env, taken)
        elif t == "declaration":
            self._declare(n, env)
        elif t == "expression_statement":
            if n.named_children:
                self.eval(n.named_children[0], env, taken)
        elif t == "if_statement":
            cond = self.eval(n.child_by_field_name("condition"), env, taken)
            then, alt = n.child_by_field_name("consequence"), n.child_by_field_name("alternative")
            alt = alt.named_children[-1] if alt is not None and alt.named_children else None
            if isinstance(cond, Unknown):
                self._fork_merge(env, [then, alt], taken)
                return
            take, other = (then, alt) if cond else (alt, then)
            if other is not None and self._launches_in(other):
                self._side(other, env)
            if take is not None:
                self.exec(take, env, taken)
        elif t in ("for_statement", "while_statement", "do_statement"):
            self._loop(n, env, taken)
        elif t == "return_statement":
            raise _Return(self.eval(n.named_children[0], env, taken) if n.named_children else None)
        elif t == "break_statement":
            raise _Break()
        elif t == "continue_statement":
            raise _Continue()
        elif t == "switch_statement":
            self._switch(n, env, taken)
        elif t in ("labeled_statement",) and n.named_children:
            self.exec(n.named_children[-1], env, taken)

    def _declare(self, n, env: dict) -> None:
        t = n.child_by_field_name("type")
        tt = text(t) if t is not None else "auto"
        for d in n.children_by_field_name("declarator"):
            name = _ident(d)
            if not name:
                continue
            ptr = "pointer" in d.type or any(c.type == "pointer_declarator" for c in d.named_children)
            if d.type == "init_declarator":
                val = d.child_by_field_name("value")
                if val.type == "argument_list":
                    vals = [self.eval(a, env) for a in val.named_children]
                    if "vector" in tt and vals and isinstance(vals[0], int) and not isinstance(vals[0], bool):
                        v = [vals[1] if len(vals) > 1 else 0] * vals[0]
                    else:
                        v = Dim3(*vals) if _base_type(tt) == "dim3" else vals[0] if len(vals) == 1 else Unknown(
                            f"constructor of {tt}")
                elif val.type == "initializer_list":
                    vals = [self.eval(a, env) for a in val.named_children]
                    v = Dim3(*vals) if _base_type(tt) == "dim3" else vals
                else:
                    v = self.eval(val, env)
                if isinstance(v, Ptr) and ptr and v.ctype is None:
                    v = Ptr(v.tensor, _base_type(tt), v.offset)
                env[name] = _convert(v, tt + (" *" if ptr else ""))
            elif d.type == "function_declarator" and _base_type(tt) == "dim3":
                # `dim3 threads(BLOCK_X, BLOCK_Y);`: with the macros unexpanded the grammar reads a
                # function declaration (C++'s most vexing parse); in a function body it is dim3's
                # constructor, each "parameter" a name (cuda-l1's a100-L2-4 got a 1x1x1 block)
                params = d.child_by_field_name("parameters")
                env[name] = Dim3(*[self._named(text(q).strip(), env) for q in params.named_children])
            elif "vector" in tt or d.type == "array_declarator":
                env[name] = []
            elif _base_type(tt) == "cudaDeviceProp":
                env[name] = DEVICE_PROP
            else:
                env[name] = Dim3() if _base_type(tt) == "dim3" else Unknown(f"{name} is not initialised")

    def _named(self, name: str, env: dict):
        """The value of a bare name, as an identifier expression has it."""
        if name in env:
            return env[name]
        if name in self.globals:
            return self._global(name)
        return Unknown(f"unknown value {name!r}")

    def _loop(self, n, env: dict, taken: bool) -> None:
        init = n.child_by_field_name("initializer")
        if init is not None:
            self.exec(init, env) if init.type == "declaration" else self.eval(init, env)
        cond_n, body = n.child_by_field_name("condition"), n.child_by_field_name("body")
        update = n.child_by_field_name("update")
        first = n.type == "do_statement"
        while True:
            if not first:
                cond = self.eval(cond_n, env, taken) if cond_n is not None else True
                if isinstance(cond, Unknown):
                    self._fork_merge(env, [body], taken)
                    return
                if not cond:
                    if self._launches_in(body) and not any(s.site is not None and self._inside(s.site.node, body)
                                                           for s in self.launches):
                        self._side(body, env)
                    return
            first = False
            try:
                self.exec(body, env, taken)
            except _Break:
                return
            except _Continue:
                pass
            if update is not None:
                self.eval(update, env, taken)

    def _switch(self, n, env: dict, taken: bool) -> None:
        v = self.eval(n.child_by_field_name("condition"), env, taken)
        cases = [c for c in n.child_by_field_name("body").named_children if c.type == "case_statement"]
        start = None
        if not isinstance(v, Unknown):
            for i, c in enumerate(cases):
                val = c.child_by_field_name("value")
                if val is None and start is None:
                    start = i
                elif val is not None and self.eval(val, env) == v:
                    start = i
                    break
        for i, c in enumerate(cases):
            if i != start and self._launches_in(c):
                self._side(c, env, case=True)
        if start is None:
            return
        try:
            for c in cases[start:]:
                for s in c.named_children:
                    if s != c.child_by_field_name("value"):
                        self.exec(s, env, taken)
        except _Break:
            pass

    def _side(self, n, env: dict, case: bool = False) -> None:
        """Run a branch not taken in a copy of the values, recording its launches as not taken."""
        if not self.explore:
            return
        fork = _copy_env(env)
        try:
            for s in (n.named_children[1:] if case else [n]):
                self.exec(s, fork, False)
        except (_Return, _Break, _Continue):
            pass

    def _fork_merge(self, env: dict, branches: list, taken: bool) -> None:
        """A condition that cannot be evaluated: run each branch on a copy, not taken; values
        the branches leave different become unknown."""
        forks = []
        for b in branches:
            fork = _copy_env(env)
            if b is not None:
                try:
                    self.exec(b, fork, False)
                except (_Return, _Break, _Continue):
                    pass
            forks.append(fork)
        if len(forks) == 1:
            forks.append(env)
        for k in set(forks[0]) | set(forks[1]):
            a, b = forks[0].get(k, Unknown(k)), forks[1].get(k, Unknown(k))
            env[k] = a if _same(a, b) else Unknown(f"{k} depends on a condition that cannot be evaluated")

    def _launches_in(self, n) -> bool:  # noqa: D401
        if n is None:
            return False
        body = n.text
        return b"<<<" in body or any(name.encode() in body and b"<<<" in f.text.encode()
                                     for name, f in self.fns.items())

    @staticmethod
    def _inside(node, outer) -> bool:
        return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte

    # --- expressions ----------------------------------------------------------
    def eval(self, n, env: dict, taken: bool = True):
        if n is None:
            return Unknown("missing expression")
        self.steps += 1
        t = n.type
        if t == "number_literal":
            return _num(text(n))
        if t in ("true", "false"):
            return t == "true"
        if t in ("null", "nullptr"):
            return 0
        if t == "identifier":
            return self._named(text(n), env)
        if t == "qualified_identifier":
            last = text(n).split("::")[-1]
            if last in _TORCH_DTYPES:
                return DType(_TORCH_DTYPES[last])
            return env.get(last, self._global(last) if last in self.globals else Unknown(f"unknown {text(n)!r}"))
        if t in ("parenthesized_expression", "condition_clause"):
            inner = n.child_by_field_name("value") if t == "condition_clause" else None
            inner = inner or (n.named_children[-1] if n.named_children else None)
            if inner is not None and inner.type == "declaration":
                self._declare(inner, env)
                return env.get(_ident(inner.child_by_field_name("declarator")), Unknown("condition"))
            return self.eval(inner, env, taken)
        if t == "binary_expression":
            return self._binary(n, env, taken)
        if t == "unary_expression":
            v = self.eval(n.child_by_field_name("argument"), env, taken)
            op = text(n.child_by_field_name("operator"))
            if isinstance(v, Unknown):
                return v
            try:
                return {"-": lambda: -v, "+": lambda: v, "!": lambda: not v, "~": lambda: ~v}[op]()
            except (TypeError, KeyError):
                return Unknown(f"{op} of {type(v).__name__}")
        if t == "conditional_expression":
            c = self.eval(n.child_by_field_name("condition"), env, taken)
            if isinstance(c, Unknown):
                return c
            return self.eval(n.child_by_field_name("consequence" if c else "alternative"), env, taken)
        if t == "assignment_expression":
            return self._assign(n, env, taken)
        if t == "update_expression":
            arg = n.child_by_field_name("argument")
            old = self.eval(arg, env, taken)
            if isinstance(old, (int, float)):
                self._store(arg, old + (1 if "++" in text(n) else -1), env)
            return old
        if t == "cast_expression":
            tt = text(n.child_by_field_name("type"))
            return _cast(self.eval(n.child_by_field_name("value"), env, taken), tt, env)
        if t == "call_expression":
            return self._call(n, env, taken)
        if t == "field_expression":
            obj = self.eval(n.child_by_field_name("argument"), env, taken)
            f = text(n.child_by_field_name("field"))
            if isinstance(obj, Dim3) and f in "xyz":
                return getattr(obj, f)
            if isinstance(obj, dict) and f in obj:
                return obj[f]
            return obj if isinstance(obj, Unknown) else Unknown(f"field {f} of {type(obj).__name__}")
        if t == "subscript_expression":
            obj = self.eval(n.child_by_field_name("argument"), env, taken)
            idx_n = n.child_by_field_name("index") or (n.named_children[-1].named_children or [None])[0]
            idx = self.eval(idx_n, env, taken)
            if isinstance(obj, list) and isinstance(idx, int) and -len(obj) <= idx < len(obj):
                return obj[idx]
            return obj if isinstance(obj, Unknown) else Unknown(f"subscript of {type(obj).__name__}")
        if t == "sizeof_expression":
            tn = n.child_by_field_name("type")
            if tn is not None:
                name = _base_type(text(tn))
                size = _VEC.get(name) or SIZES.get(_dtype_of_type(name, env.get("__types__", {})) or "")
                return size or Unknown(f"sizeof({name})")
            vn = n.child_by_field_name("value")
            name = _base_type(text(vn).strip("() ")) if vn is not None else ""
            name = env.get("__types__", {}).get(name, name)
            size = _VEC.get(name) or SIZES.get(CTYPES.get(name, ""))
            if size:
                return size
            v = self.eval(vn, env, taken)
            return SIZES.get(v.tensor.dtype) if isinstance(v, Ptr) and v.tensor is not None and v.ctype is None \
                else Unknown(f"sizeof({text(vn)[:30]})")
        if t == "initializer_list":
            return [self.eval(c, env, taken) for c in n.named_children]
        if t == "lambda_expression":
            return Closure(n, env)
        if t == "string_literal":
            return text(n)[1:-1]
        if t == "char_literal":
            return ord(text(n)[1:-1][-1])
        if t == "comma_expression":
            self.eval(n.child_by_field_name("left"), env, taken)
            return self.eval(n.child_by_field_name("right"), env, taken)
        return Unknown(f"{t} {text(n)[:40]!r}")

    def _binary(self, n, env, taken):
        op = text(n.child_by_field_name("operator"))
        a = self.eval(n.child_by_field_name("left"), env, taken)
        if op in ("&&", "||"):
            if not isinstance(a, Unknown) and (not a if op == "&&" else a):
                return bool(a)
            b = self.eval(n.child_by_field_name("right"), env, taken)
            if isinstance(a, Unknown):
                return a if isinstance(b, Unknown) or (b if op == "&&" else not b) else bool(b)
            return b if isinstance(b, Unknown) else bool(b)
        b = self.eval(n.child_by_field_name("right"), env, taken)
        for v in (a, b):
            if isinstance(v, Unknown):
                return v
        if isinstance(a, Ptr) and isinstance(b, int) and op in "+-":
            size = a.elem_size
            return Ptr(a.tensor, a.ctype, a.offset + (b if op == "+" else -b) * size) if size else Unknown("pointer")
        if isinstance(a, DType) and isinstance(b, DType) and op in ("==", "!="):
            return (a == b) == (op == "==")
        if not all(isinstance(v, (int, float)) for v in (a, b)):
            return Unknown(f"{type(a).__name__} {op} {type(b).__name__}")
        try:
            return _BIN[op](a, b)
        except (KeyError, TypeError, ValueError, ZeroDivisionError):
            return Unknown(f"{a!r} {op} {b!r}")

    def _assign(self, n, env, taken):
        op = text(n.child_by_field_name("operator"))
        left = n.child_by_field_name("left")
        v = self.eval(n.child_by_field_name("right"), env, taken)
        if op != "=":
            old = self.eval(left, env, taken)
            if isinstance(old, Unknown) or isinstance(v, Unknown):
                v = old if isinstance(old, Unknown) else v
            elif isinstance(old, (int, float)) and isinstance(v, (int, float)):
                r = _BIN.get(op[:-1], lambda a, b: Unknown(op))(old, v)
                v = int(r) if isinstance(old, int) and isinstance(r, float) else r
            else:
                v = Unknown(f"{op} on {type(old).__name__}")
        elif isinstance(env.get(text(left)), int) and isinstance(v, float):
            v = int(v)
        self._store(left, v, env)
        return v

    def _store(self, left, v, env) -> None:
        if left.type == "identifier":
            env[text(left)] = v
        elif left.type == "field_expression":
            obj = self.eval(left.child_by_field_name("argument"), env)
            f = text(left.child_by_field_name("field"))
            if isinstance(obj, Dim3) and f in "xyz":
                setattr(obj, f, v)
        elif left.type == "subscript_expression":
            arr = left.child_by_field_name("argument")
            if arr.type == "identifier" and isinstance(env.get(text(arr)), list):
                idx = self.eval(left.child_by_field_name("index") or left.named_children[-1].named_children[0], env)
                if isinstance(idx, int) and 0 <= idx < len(env[text(arr)]):
                    env[text(arr)][idx] = v

    # --- calls ----------------------------------------------------------------
    def _call(self, n, env, taken):
        site = launch_site(n)
        if site is not None:
            return self._launch(n, site, env, taken)
        fn = n.child_by_field_name("function")
        argn = n.child_by_field_name("arguments")
        argnodes = argn.named_children if argn is not None else []
        if fn.type == "field_expression":
            obj = self.eval(fn.child_by_field_name("argument"), env, taken)
            field_ = fn.child_by_field_name("field")
            targ = None
            if field_.type == "template_method":
                targ = field_.child_by_field_name("arguments")
                field_ = field_.child_by_field_name("name")
            args = [self.eval(a, env, taken) for a in argnodes]
            tname = _base_type(text(targ)[1:-1]) if targ is not None else None
            return _method(obj, text(field_), args, tname, env.get("__types__", {}))
        name, targs = text(fn), None
        if fn.type == "template_function":
            name = text(fn.child_by_field_name("name"))
            targs = fn.child_by_field_name("arguments")
        short = name.split("::")[-1]
        if short.startswith("AT_DISPATCH") and argnodes:
            dt = self.eval(argnodes[0], env, taken)
            body = self.eval(argnodes[-1], env, taken)
            if not isinstance(body, Closure):
                return None
            from .device import _scalar_types
            aliases = dict(env.get("__types__", {}))
            actual = next((c for c, d in CTYPES.items() if isinstance(dt, DType) and d == dt.name), "float")
            for other in (_scalar_types(short) or ()) if self.explore else ():
                if other != actual:  # the instances device_unit compiles for the other dispatched types
                    self._closure(Closure(body.node, _copy_env(body.env)), [], False,
                                  {**aliases, "scalar_t": other})
            return self._closure(body, [], taken, {**aliases, "scalar_t": actual})
        if short in ("static_cast", "reinterpret_cast", "const_cast") and targs is not None and argnodes:
            return _cast(self.eval(argnodes[0], env, taken), text(targs)[1:-1], env)
        args = [self.eval(a, env, taken) for a in argnodes]
        fv = env.get(name)
        if isinstance(fv, Closure):
            return self._closure(fv, args, taken)
        if fn.type == "lambda_expression":
            return self._closure(Closure(fn, env), args, taken)
        if short in self.fns and short not in env:
            aliases = dict(env.get("__types__", {}))
            if targs is not None:
                f = self.fns[short]
                tparams = re.findall(r"(?:typename|class)\s+(\w+)", f.template or "")
                for p, a in zip(tparams, [x.strip() for x in text(targs)[1:-1].split(",")]):
                    aliases[p] = aliases.get(a, a)
            return self.call(short, args, aliases)
        return _builtin(short, name, args)

    def _closure(self, c: Closure, args: list, taken: bool, aliases: dict | None = None):
        env = c.env if aliases is None else {**c.env, "__types__": aliases}
        inner = dict(env) if aliases is not None or args else env
        decl = c.node.child_by_field_name("declarator")
        params = decl.child_by_field_name("parameters") if decl is not None else None
        for p, a in zip([p for p in (params.named_children if params is not None else [])], args):
            name = _ident(p.child_by_field_name("declarator"))
            if name:
                inner[name] = a
        try:
            self.exec(c.node.child_by_field_name("body"), inner, taken)
        except _Return as r:
            return r.value
        finally:
            if inner is not env:
                for k in env:
                    if k in inner and k != "__types__":
                        env[k] = inner[k]
        return None

    def _launch(self, n, site, env, taken):
        ks = next(c for c in n.children if c.type == "kernel_call_syntax")
        cfg = [self.eval(c, env, taken) for c in ks.named_children]
        args = [self.eval(a, env, taken) for a in n.child_by_field_name("arguments").named_children]
        fn = n.child_by_field_name("function")
        targs = []
        tl = fn.child_by_field_name("arguments") if fn.type == "template_function" else None
        for a in tl.named_children if tl is not None else []:
            ty = text(a)
            known = env.get(ty, self._global(ty) if ty in self.globals else None)
            if a.type == "type_descriptor" and not isinstance(known, (int, bool)):
                targs.append(env.get("__types__", {}).get(ty, ty))
            elif a.type == "type_descriptor":
                targs.append(str(int(known)))
            else:
                v = self.eval(a, env, taken)
                targs.append(text(a) if isinstance(v, Unknown) else str(int(v)) if isinstance(v, (int, bool))
                             else repr(v))
        dims = [_dims(v) for v in cfg[:2]]
        key = (n.start_byte, tuple(targs), taken)
        if key not in self._seen:
            self._seen.add(key)
            self.launches.append(Launch(site.kernel.split("::")[-1], targs, dims[0] if dims else [],
                                        dims[1] if len(dims) > 1 else [], cfg[2] if len(cfg) > 2 else 0,
                                        args, taken, site))
        return None


def _ident(d) -> str:
    while d is not None and d.type not in ("identifier", "field_identifier"):
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            nxt = next((c for c in d.named_children if c.type in ("identifier", "pointer_declarator",
                                                                    "reference_declarator", "array_declarator")), None)
        d = nxt
    return text(d) if d is not None else ""


def _copy_env(env: dict) -> dict:
    return {k: (Dim3(*v.as_list()) if isinstance(v, Dim3) else list(v) if isinstance(v, list)
                else dict(v) if isinstance(v, dict) else v) for k, v in env.items()}


def _same(a, b) -> bool:
    if isinstance(a, Dim3) and isinstance(b, Dim3):
        return a.as_list() == b.as_list()
    try:
        return a is b or bool(a == b)
    except Exception:  # noqa: BLE001 - values of any kind
        return False


def _dims(v) -> list:
    if isinstance(v, Dim3):
        return v.as_list()
    if isinstance(v, list):
        return (v + [1, 1, 1])[:3]
    return [v, 1, 1]


def _cast(v, type_text: str, env: dict):
    type_text = env.get("__types__", {}).get(type_text.strip(), type_text)
    if isinstance(v, Ptr) and "*" in type_text:
        base = _base_type(type_text)
        return Ptr(v.tensor, env.get("__types__", {}).get(base, base), v.offset)
    return _convert(v, type_text)


def _method(obj, name: str, args: list, tname: str | None, aliases: dict):
    if isinstance(obj, Unknown):
        return obj
    if isinstance(obj, HostTensor):
        return _tensor_method(obj, name, args, tname, aliases)
    if isinstance(obj, Options):
        if name == "dtype" and args and isinstance(args[0], DType):
            return Options(args[0].name)
        return obj
    if isinstance(obj, list) and name == "size":
        return len(obj)
    if isinstance(obj, list) and name in ("push_back", "emplace_back") and len(args) == 1:
        obj.append(args[0])
        return None
    if isinstance(obj, list) and name in ("data", "vec"):
        return obj
    if isinstance(obj, _Stream) or obj is None:
        return None
    return Unknown(f"method {name} of {type(obj).__name__}")


def _shape_arg(v) -> list | None:
    if isinstance(v, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return list(v)
    if isinstance(v, int) and not isinstance(v, bool):
        return [v]
    return None


def _tensor_method(t: HostTensor, name: str, args: list, tname: str | None, aliases: dict):
    nd = len(t.shape)
    if name == "size" and args and isinstance(args[0], int):
        return t.shape[args[0]] if -nd <= args[0] < nd else Unknown(f"size({args[0]}) of a {nd}-d tensor")
    if name in ("sizes", "shape"):
        return list(t.shape)
    if name == "numel":
        return t.numel
    if name in ("dim", "ndimension"):
        return nd
    if name == "stride" and args and isinstance(args[0], int) and -nd <= args[0] < nd:
        return math.prod(t.shape[args[0] % nd + 1:])
    if name == "strides":
        return [math.prod(t.shape[i + 1:]) for i in range(nd)]
    if name in ("data_ptr", "data", "mutable_data_ptr", "const_data_ptr"):
        return Ptr(t, aliases.get(tname, tname) if tname else None)
    if name in ("contiguous", "cuda", "detach", "requires_grad_", "cpu"):
        return t
    if name in ("options",):
        return Options(t.dtype)
    if name in ("scalar_type", "dtype"):
        return DType(t.dtype)
    if name in ("is_cuda", "is_contiguous", "defined"):
        return True
    if name == "element_size":
        return SIZES[t.dtype]
    if name in ("view", "reshape") and args:
        shape = _shape_arg(args[0] if len(args) == 1 else args)
        if shape is None:
            return Unknown("view of an unknown shape")
        if -1 in shape:
            rest = math.prod(x for x in shape if x != -1) or 1
            shape = [t.numel // rest if x == -1 else x for x in shape]
        return HostTensor(shape, t.dtype, t.origin, t.name)
    if name == "to" and args and isinstance(args[0], DType):
        return HostTensor(list(t.shape), args[0].name, "computed", t.name)
    if name in ("clone", "to", "float", "half", "double"):
        dt = {"float": "float32", "half": "float16", "double": "float64"}.get(name, t.dtype)
        return HostTensor(list(t.shape), dt, "computed", t.name)
    if name in ("flatten",) and not args:
        return HostTensor([t.numel], t.dtype, t.origin, t.name)
    if name in ("t",) and nd == 2:
        return HostTensor(t.shape[::-1], t.dtype, "computed", t.name)
    if name == "get_device":
        return 0
    return Unknown(f"tensor method {name}")


def _builtin(short: str, name: str, args: list):
    known = [a for a in args if not isinstance(a, Unknown)]
    if short in ("min", "max", "fmin", "fmax", "fminf", "fmaxf", "ceil", "floor", "sqrt", "ceilf", "floorf", "abs",
                 "sqrtf", "log2", "pow", "exp", "round", "llround", "lround", "ceil_div", "cdiv", "div_up", "DIV_UP",
                 "CEIL_DIV", "divUp", "iDivUp"):
        if len(known) != len(args) or not args:
            return next((a for a in args if isinstance(a, Unknown)), Unknown(f"{short}()"))
        if not all(isinstance(a, (int, float)) for a in args):
            return Unknown(f"{short} of {[type(a).__name__ for a in args]}")
        if short in ("min", "fmin", "fminf"):
            return min(args)
        if short in ("max", "fmax", "fmaxf"):
            return max(args)
        if short in ("ceil_div", "cdiv", "div_up", "DIV_UP", "CEIL_DIV", "divUp", "iDivUp") and len(args) == 2:
            return -(-args[0] // args[1])
        f = {"ceil": math.ceil, "ceilf": math.ceil, "floor": math.floor, "floorf": math.floor, "sqrt": math.sqrt,
             "sqrtf": math.sqrt, "abs": abs, "log2": math.log2, "exp": math.exp, "round": round,
             "llround": round, "lround": round}.get(short)
        if f is not None and len(args) == 1:
            r = f(args[0])
            return float(r) if short in ("ceil", "floor", "ceilf", "floorf") else r
        if short == "pow" and len(args) == 2:
            return float(args[0] ** args[1])
        return Unknown(f"{short}{tuple(args)}")
    if short == "dim3":
        return Dim3(*args)
    if short == "getCurrentDeviceProperties":
        return DEVICE_PROP
    if short in ("getCurrentCUDAStream", "getDefaultCUDAStream", "getStreamFromPool"):
        return STREAM
    if short in ("TensorOptions",):
        return Options()
    if short == "dtype" and args and isinstance(args[0], DType):
        return Options(args[0].name)
    if short in ("empty", "zeros", "ones", "full", "empty_strided", "rand", "randn", "zeros_like", "empty_like",
                 "ones_like", "full_like") and args:
        like = short.endswith("_like")
        if like and not isinstance(args[0], HostTensor):
            return Unknown(f"{short} of {type(args[0]).__name__}")
        shape = list(args[0].shape) if like else _shape_arg(args[0])
        if shape is None or any(isinstance(x, bool) or x < 0 for x in shape):
            return Unknown(f"{short} of an unknown shape")
        dtype = args[0].dtype if like else "float32"
        for a in args[1:]:
            if isinstance(a, Options) and a.dtype:
                dtype = a.dtype
            elif isinstance(a, DType):
                dtype = a.name
        origin = {"empty": "empty", "empty_like": "empty", "empty_strided": "empty", "zeros": "zero",
                  "zeros_like": "zero"}.get(short, "computed")
        return HostTensor(shape, dtype, origin)
    if _NOOPS.match(short) or short.startswith("AT_"):
        return None
    return Unknown(f"call of {name}")


def run_host(src: str, function: str, args: list, explore: bool = True) -> list[Launch]:
    """The launches `function` of `src` makes when called with `args`, in order (those in
    branches not taken follow with `taken=False` where `explore`)."""
    run = HostRun(src, explore)
    run.call(function, args)
    return run.launches
