"""Launch files: the host launcher a person writes beside a kernel file that has none.

`benchmarks/ptx_external/hand/*.cu` are kernels with no host code and no task, so neither the
launch site (`config.derive_config`) nor a KernelBench trace (`task_configs`) can configure
them. A launch file `NAME.launch.json` beside `NAME.cu` says, per kernel (and per template
instance), what its launcher would: named sizes, the grid, the block, the dynamic shared
memory, and for each parameter in order either the element count and dtype of its buffer or
the value passed. It is data, read here and checked against the source before a config is
made:

- the parameters' names, order and kind (pointer / number) are the kernel's own (tree-sitter);
- a buffer's dtype has the width and kind of the element type the kernel declares, and a
  vector element type (`float4`, `char4`, `half2`) gets a multiple of its lanes;
- every `requires` condition (the preconditions of the launch's bound argument, e.g.
  `N % 128 == 0`) holds for the sizes, so changing a size cannot silently break the argument;
- grid and block are within the device's limits; each buffer is within `MAX_ELEMENTS`;
- `bounds` (the argument that every global index stays inside its buffer) is present and
  not empty: a launch nobody argued for is refused.

The bound argument itself is written by a person, not proved here; the device command in
docs/results/issue44/session16_configs/README.md runs each such launch under
compute-sanitizer's memcheck to check it on the GPU.

Format (one object per file):

    {"launches": [{"kernel": "k", "template_args": ["4"], "sizes": {"n": 1048576},
                   "requires": ["n % 1024 == 0"], "grid": ["n / 1024"], "block": [256],
                   "shared_mem": 0,
                   "params": [{"name": "x", "dtype": "float32", "role": "in", "elements": "n"},
                              {"name": "n", "value": "n"}],
                   "bounds": "i = (blockIdx.x * 256 + threadIdx.x) * 4 + k < n"}]}

`elements`, `value`, `grid`, `block`, `shared_mem` and `requires` are integer expressions of the
sizes (`config.eval_launch_expr`: + - * / % << >>, min, max, ceil_div, comparisons); a float
`value` is written as a number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ...records import Pair
from .config import (DTYPES, MAX_ELEMENTS, ConfigError, KernelConfig, Param, _INT_TYPES, _PTR_TYPES, dtype_name,
                     eval_launch_expr, kernel_params)

SUFFIX = ".launch.json"
ORIGIN = "launch file"
MAX_SHARED = 227 * 1024  # an H100/H200 block's opt-in maximum

# element types the kernels declare that `config` does not know: (scalar dtype, lanes)
_VECTORS = {"float2": ("float32", 2), "float4": ("float32", 4), "double2": ("float64", 2),
            "half2": ("float16", 2), "__half2": ("float16", 2), "int2": ("int32", 2), "int4": ("int32", 4),
            "uint2": ("uint32", 2), "uint4": ("uint32", 4), "char4": ("int8", 4), "uchar4": ("uint8", 4),
            "__nv_bfloat162": ("bfloat16", 2), "nv_bfloat162": ("bfloat16", 2),
            "unsigned": ("uint32", 1), "unsigned short": ("int16", 1), "uint16_t": ("int16", 1)}
_FLOAT_SCALARS = {"float": "float32", "double": "float64"}


def _kind(dtype: str) -> str:
    """'f' floating, 'b' bool, 'i' integer: a buffer may change signedness, not kind."""
    return "f" if dtype.startswith(("float", "bfloat")) else "b" if dtype == "bool" else "i"


def element_type(base: str) -> tuple[str, int] | None:
    """(scalar dtype, lanes) of a pointer's declared element type; None when unknown."""
    if base in _VECTORS:
        return _VECTORS[base]
    return (_PTR_TYPES[base], 1) if base in _PTR_TYPES else None


@dataclass
class LaunchSpec:
    kernel: str
    template_args: list[str]
    sizes: dict[str, int]
    grid: Any
    block: Any
    params: list[dict[str, Any]]
    bounds: str
    shared_mem: Any = 0
    requires: list[str] = field(default_factory=list)
    where: str = ""               # file and index, for messages

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str) -> "LaunchSpec":
        if not isinstance(d, dict):
            raise ConfigError(f"{where}: a launch must be an object")
        missing = [k for k in ("kernel", "grid", "block", "params") if k not in d]
        if missing:
            raise ConfigError(f"{where}: missing {', '.join(missing)}")
        sizes = d.get("sizes") or {}
        if not isinstance(sizes, dict) or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0
                                                  for v in sizes.values()):
            raise ConfigError(f"{where}: sizes must map names to positive integers")
        targs = d.get("template_args") or []
        if not isinstance(targs, list) or not all(isinstance(a, str) for a in targs):
            raise ConfigError(f"{where}: template_args must be a list of strings")
        if not isinstance(d["params"], list):
            raise ConfigError(f"{where}: params must be a list")
        return cls(str(d["kernel"]), targs, sizes, d["grid"], d["block"], d["params"],
                   str(d.get("bounds") or ""), d.get("shared_mem", 0), list(d.get("requires") or []), where)


def read_launch_file(path: Path) -> list[LaunchSpec]:
    """The launches of one launch file (ConfigError names what is wrong)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the launch file: {exc}") from None
    launches = data.get("launches") if isinstance(data, dict) else None
    if not isinstance(launches, list):
        raise ConfigError(f"{path}: expected an object with a list 'launches'")
    return [LaunchSpec.from_dict(d, f"{Path(path).name} launches[{i}]") for i, d in enumerate(launches)]


def _int(expr: Any, sizes: dict[str, int], what: str) -> int:
    v = eval_launch_expr(str(expr), sizes)
    if isinstance(v, list):
        raise ConfigError(f"{what} is not a number")
    return v


def _dims(v: Any, sizes: dict[str, int], what: str) -> list[int]:
    items = v if isinstance(v, list) else [v]
    if not 1 <= len(items) <= 3:
        raise ConfigError(f"{what}: 1 to 3 dimensions")
    dims = [_int(x, sizes, what) for x in items]
    dims += [1] * (3 - len(dims))
    if any(x < 1 for x in dims):
        raise ConfigError(f"{what} {dims} has a dimension below 1")
    return dims


def template_values(source: str, kernel: str, template_args: list[str]) -> dict[str, int]:
    """{name: value} of the kernel's integer template parameters in this instance."""
    import re

    from ...cudasrc.tsparse import functions
    from .config import _split_top
    fn = next((f for f in functions(source) if f.name == kernel and f.is_kernel), None)
    if fn is None or fn.template is None or not template_args:
        return {}
    out = {}
    for decl, arg in zip(_split_top(fn.template[1:-1]), template_args):
        m = re.fullmatch(r"(?:const\s+)?(?:int|unsigned|size_t|long)\s+(\w+)\s*(?:=.*)?", decl.strip(), re.S)
        if m and re.fullmatch(r"-?\d+", arg.strip()):
            out[m.group(1)] = int(arg)
    return out


def spec_config(source: str, spec: LaunchSpec) -> KernelConfig:
    """The evaluator's config of one launch, after every check of the module docstring."""
    w = spec.where or spec.kernel
    if not spec.bounds.strip():
        raise ConfigError(f"{w}: no 'bounds' argument: why every global index is inside its buffer")
    sizes = {**spec.sizes}
    for name, value in template_values(source, spec.kernel, spec.template_args).items():
        # a size named as a template parameter is that parameter: it cannot disagree with the instance
        if sizes.setdefault(name, value) != value:
            raise ConfigError(f"{w}: size {name} = {sizes[name]} but the instance has {name} = {value}")
    spec = replace(spec, sizes=sizes)
    for cond in spec.requires:
        if not eval_launch_expr(str(cond), spec.sizes):
            raise ConfigError(f"{w}: requirement {cond!r} does not hold for sizes {spec.sizes}")
    declared = kernel_params(source, spec.kernel, spec.template_args or None)
    if [p[0] for p in declared] != [str(p.get("name")) for p in spec.params]:
        raise ConfigError(f"{w}: parameters {[p.get('name') for p in spec.params]} are not the kernel's "
                          f"{[p[0] for p in declared]}")
    grid, block = _dims(spec.grid, spec.sizes, f"{w}: grid"), _dims(spec.block, spec.sizes, f"{w}: block")
    if block[0] * block[1] * block[2] > 1024 or block[2] > 64:
        raise ConfigError(f"{w}: block {block} is more than a block can hold")
    if grid[1] > 65535 or grid[2] > 65535 or grid[0] > 2 ** 31 - 1:
        raise ConfigError(f"{w}: grid {grid} is beyond the device's limits")
    smem = _int(spec.shared_mem or 0, spec.sizes, f"{w}: shared_mem")
    if not 0 <= smem <= MAX_SHARED:
        raise ConfigError(f"{w}: {smem} bytes of dynamic shared memory")
    params = [_param(p, d, spec.sizes, w) for p, d in zip(spec.params, declared)]
    return KernelConfig(spec.kernel, params, grid, block, smem, derived=False, template_args=list(spec.template_args))


def _param(p: dict[str, Any], declared: tuple[str, str, bool, bool], sizes: dict[str, int], w: str) -> Param:
    name, base, ptr, const = declared
    where = f"{w}: parameter {name!r}"
    if not ptr:
        if "value" not in p or "elements" in p:
            raise ConfigError(f"{where} is a {base}: it needs a value, not a buffer")
        if base in _FLOAT_SCALARS:
            if not isinstance(p["value"], (int, float)) or isinstance(p["value"], bool):
                raise ConfigError(f"{where}: a {base} value must be a number")
            return Param(name, _FLOAT_SCALARS[base], "scalar", [], value=float(p["value"]))
        if base not in _INT_TYPES:
            raise ConfigError(f"{where} has type {base!r}, neither an integer nor a float")
        return Param(name, _INT_TYPES[base], "scalar", [], value=_int(p["value"], sizes, where))
    if "elements" not in p or "value" in p:
        raise ConfigError(f"{where} is a pointer: it needs elements, not a value")
    elem = element_type(base)
    if elem is None:
        raise ConfigError(f"{where} points to {base!r}, an element type the evaluator cannot fill")
    dtype = dtype_name(p.get("dtype") or elem[0])
    if DTYPES[dtype][1] != DTYPES[elem[0]][1] or _kind(dtype) != _kind(elem[0]):
        raise ConfigError(f"{where}: dtype {dtype} is not the width and kind of {base}")
    n = _int(p["elements"], sizes, where)
    if n < 1 or n > MAX_ELEMENTS or n % elem[1]:
        raise ConfigError(f"{where}: {n} elements (1 to {MAX_ELEMENTS}, a multiple of {elem[1]} for {base})")
    role = p.get("role") or ("in" if const else "inout")
    if const and role != "in":
        raise ConfigError(f"{where} is const: it can only be an input")
    rng = p.get("range")
    if rng is not None:  # integer inputs drawn from [low, high): an index buffer's range is its bound
        if not (isinstance(rng, list) and len(rng) == 2):
            raise ConfigError(f"{where}: range must be [low, high)")
        rng = [x if isinstance(x, (int, float)) else _int(x, sizes, where) for x in rng]
        if not rng[0] < rng[1]:
            raise ConfigError(f"{where}: range {rng} is empty")
    from .config import _param as check  # the contract's own checks (role, init, size)
    return check({"name": name, "dtype": dtype, "role": role, "shape": [n], "init": p.get("init") or "",
                  "range": rng}, where)


def launch_file_of(source_path: Path) -> Path:
    return Path(source_path).with_suffix(SUFFIX)


def attach_launch_file(path: Path, pairs: list[Pair]) -> int:
    """Store `meta.config` on the ok pairs without one that a launch of the file's launch file
    configures (same kernel, same template instance). A launch that fails its checks is
    recorded as `meta.config_error` on its pairs, never turned into a config. Returns how many
    pairs got a config; does nothing when the file has no launch file."""
    from .task_configs import same_instance
    lf = launch_file_of(Path(path))
    if not lf.exists():
        return 0
    try:
        specs = read_launch_file(lf)
    except ConfigError as exc:
        for p in pairs:
            if (p.meta or {}).get("status") == "ok" and not (p.meta or {}).get("config"):
                p.meta = {**p.meta, "config_error": str(exc)}
        return 0
    n = 0
    for p in pairs:
        meta = p.meta or {}
        if meta.get("status") != "ok" or meta.get("config"):
            continue
        spec = next((s for s in specs if s.kernel == p.kernel_name and same_instance(p, s.template_args)), None)
        if spec is None:
            continue
        try:
            cfg = spec_config(p.source, spec)
        except ConfigError as exc:
            p.meta = {**meta, "config_error": str(exc)}
            continue
        p.meta = {**meta, "config": {**cfg.to_dict(), "origin": f"{ORIGIN} {lf.name}"}}
        n += 1
    return n
