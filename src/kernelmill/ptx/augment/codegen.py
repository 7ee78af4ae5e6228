"""TVM's CUDA backend without a GPU: scheduled PrimFuncs -> CUDA C, kernel by kernel,
with what a host needs to launch each kernel.

Many PrimFuncs are lowered as one IRModule (TVM's per-call overhead dominates
small functions); each gets a unique symbol `NAME_vI` for the batch, and
`Kernel.rename` maps it back to `NAME`. This runs the same steps as
`tvm.tirx.build` (bind the target, the default TIR pipeline, host/device split, the
device finalization passes) and stops at the device code generator, so no host
compiler runs and nothing needs a GPU. Grid and block sizes are the extents
of the `launch_thread` bindings of each device kernel; parameters are the
kernel's pointer arguments, mapped back to the PrimFunc's buffers (shape, dtype)
and marked `out` when the kernel stores to them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LAUNCH = re.compile(r'T\.launch_thread\("(blockIdx|threadIdx)\.([xyz])",\s*(?:T\.int\d+\()?(\d+)\)?\)')
_DECL = re.compile(r"^\s*(\w+) = T\.decl_buffer\(\(([^)]*)\),(?:\s*\"(\w+)\",)?\s*data=(\w+)", re.M)
_STORE = r"^\s*{}\[[^\n]*\] = "
_KERNEL = re.compile(r'^extern "C" __global__ void (?:__launch_bounds__\(\d+\) )?(\w+)\(', re.M)


class LoweringFailed(RuntimeError):
    pass


@dataclass
class Kernel:
    name: str              # the kernel's name as generated for the batch (NAME_vI_kernel...)
    symbol: str            # the batch symbol of its PrimFunc (NAME_vI)
    base: str              # the PrimFunc's own name (NAME)
    index: int             # which PrimFunc of the batch
    grid: list[int]
    block: list[int]
    params: list[dict]     # [{"name", "dtype", "shape", "role": in|out}] in argument order
    dyn_shared: bool = False
    source: str = ""       # its CUDA definition

    def rename(self, text: str) -> str:
        """Text with the batch symbol replaced by the PrimFunc's own name."""
        return re.sub(rf"\b{re.escape(self.symbol)}(?=_kernel)", self.base, text)


@dataclass
class Lowered:
    prelude: str                       # what precedes the first kernel (headers, macros)
    source: str                        # the whole CUDA unit
    kernels: list[Kernel] = field(default_factory=list)


_PARAM = re.compile(r'(\w+): T\.Buffer\(\(((?:[^()]|\([^()]*\))*)\)(?:, "(\w+)")?\)')


def buffers(func) -> dict[str, dict]:
    """PrimFunc buffer parameters in order: name -> shape, dtype (read from its TVMScript
    signature: the Python binding has no buffer map)."""
    head = func.script().split("):\n", 1)[0]
    return {name: {"shape": [int(d) for d in re.findall(r"\d+", shape.replace("T.int64", ""))],
                   "dtype": dtype or "float32"}
            for name, shape, dtype in _PARAM.findall(head)}


def _kernel_info(dev_func, name: str, bufs: dict[str, dict]) -> tuple[list[int], list[int], list[dict], bool]:
    text = dev_func.script()
    grid, block = [1, 1, 1], [1, 1, 1]
    for kind, axis, ext in _LAUNCH.findall(text):
        (grid if kind == "blockIdx" else block)["xyz".index(axis)] = int(ext)
    decls = {data: (buf, [int(x) for x in shape.replace("T.int64(", "").replace(")", "").split(",") if x.strip()],
                    dt or "float32")
             for buf, shape, dt, data in _DECL.findall(text)}
    params = []
    for p in dev_func.params:
        pname = p.name
        if pname in decls:
            buf, flat, dt = decls[pname]
            base = bufs.get(buf) or bufs.get(buf.removesuffix("_1"))
            role = "out" if re.search(_STORE.format(re.escape(buf)), text, re.M) else "in"
            params.append({"name": pname, "buffer": buf, "dtype": base["dtype"] if base else dt,
                           "shape": base["shape"] if base else flat, "role": role})
        else:  # a scalar argument
            params.append({"name": pname, "dtype": str(p.dtype), "shape": [], "role": "scalar"})
    launch = dev_func.attrs.get("tirx.kernel_launch_params", []) if dev_func.attrs else []
    return grid, block, params, any("dyn_shmem" in str(x) for x in launch)


def lower(funcs: list[tuple[str, object]], max_chars: int | None = None) -> Lowered:
    """CUDA of the scheduled PrimFuncs `[(name, func)]`, lowered together. A kernel whose
    definition is longer than `max_chars` comes back with its source only (no launch
    configuration, no parameters): the caller drops it, and printing its device function
    as TVMScript (what `_kernel_info` reads) is the slowest step for an unrolled kernel."""
    import tvm
    from tvm.tirx.build import codegen_build, split_host_device_mods

    from .schedules import target

    tgt = target()
    symbols = [f"{name}_v{i}" for i, (name, _) in enumerate(funcs)]
    mod = tvm.IRModule({sym: f.with_attr("global_symbol", sym) for sym, (_, f) in zip(symbols, funcs)})
    try:
        mod = tvm.tirx.transform.BindTarget(tgt.with_host("c"))(mod)
        pipeline, _, finalize = tvm.tirx.get_default_tir_pipeline(tgt)
        mod = pipeline(mod)
        _, devs = split_host_device_mods(mod)
        if not devs:
            raise LoweringFailed("no device code (nothing bound to GPU threads)")
        dev_target, dev = next(iter(devs.items()))
        dev = finalize()(dev)
        source = codegen_build(dev, dev_target).inspect_source()
    except LoweringFailed:
        raise
    except Exception as exc:  # noqa: BLE001 - TVM raises many kinds; the caller retries one by one
        raise LoweringFailed(f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}") from exc
    first = _KERNEL.search(source)
    out = Lowered(source[:first.start()] if first else source, source)
    bufs: dict[int, dict] = {}
    defs = _definitions(source)
    for gv, f in sorted(dev.functions.items(), key=lambda kv: kv[0].name_hint):
        kname = gv.name_hint
        idx = next((i for i, s in enumerate(symbols) if kname.startswith(s + "_kernel")), None)
        if idx is None or kname not in defs:
            continue
        if max_chars is not None and len(defs[kname]) > max_chars:
            out.kernels.append(Kernel(kname, symbols[idx], funcs[idx][0], idx, [], [], [], False, defs[kname]))
            continue
        if idx not in bufs:
            bufs[idx] = buffers(funcs[idx][1])
        grid, block, params, dyn = _kernel_info(f, kname, bufs[idx])
        out.kernels.append(Kernel(kname, symbols[idx], funcs[idx][0], idx, grid, block, params, dyn, defs[kname]))
    return out


def _definitions(source: str) -> dict[str, str]:
    """Kernel name -> its definition text (TVM's kernels are `extern "C"` functions at top
    level whose bodies end at the first line that is just `}`)."""
    out = {}
    for m in _KERNEL.finditer(source):
        head_end = source.find("\n", m.start())
        if source[m.start():head_end].rstrip().endswith(";"):
            continue  # a forward declaration
        end = source.find("\n}\n", m.start())
        out[m.group(1)] = source[m.start():end + 3 if end >= 0 else len(source)]
    return out
