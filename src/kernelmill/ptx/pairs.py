"""(CUDA or Triton source, PTX, Rolled-PTX) pairs, one per kernel and target.

Sources: `.cu`/`.cuh` files, KernelBench-style Python candidates (the CUDA
strings passed to `load_inline` are read statically), and Triton modules that
list their kernels in `TRITON_PTX_SPECS`. For a CUDA unit what needs the torch
headers is removed and template kernels are instantiated from their launch
sites (cudasrc/device.py); launch configurations are read from the
`<<<grid, block>>>` sites of the full source; the source's directory is on the
include path.

Output is appended one compile unit at a time; a re-run skips units already
written (`meta.unit_id`), so an interrupted run resumes exactly. Whatever fails
becomes a Pair with `meta.status == "failed"` and the reason, and the run goes on:
a unit nvcc rejects (its stderr), a file whose CUDA cannot be read, a kernel that
needs torch, a template kernel that was not instantiated, an internal error.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from ..records import Pair, append_jsonl, iter_jsonl
from .blocks import split_kernels, strip_debug
from .lexer import PtxSyntaxError, count_tokens
from .nvcc import CompileFailed, NvccOptions, demangle, demangle_full, nvcc_ptx
from .parser import parse_module
from .reroll import RerollStats, reroll_module
from .syntax import fmt_module


@dataclass
class PairConfig:
    archs: tuple[str, ...] = ("sm_90",)
    opt_levels: tuple[int, ...] = (3,)
    unroll: tuple[bool, ...] = (True,)
    strip_debug: bool = True   # drop .loc/.file/debug sections and debug labels
    reroll: bool = True


def _hash(*parts: str) -> str:
    h = hashlib.sha1()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def cuda_units(path: Path, text: str | None = None) -> list[tuple[str, str]]:
    """(origin, CUDA source) units of one file (raises CudaExtractError, OSError)."""
    text = path.read_text() if text is None else text
    if path.suffix == ".py":
        from ..cudasrc.python_src import cuda_sources_from_python
        srcs = cuda_sources_from_python(text, str(path))
        return [(f"{path}#cuda_sources[{i}]", s) for i, s in enumerate(srcs)]
    return [(str(path), text)]


def pairs_from_ptx(ptx: str, *, language: str, origin: str, unit_id: str, target: str,
                   options: list[str], source_of: Callable[[str], str],
                   launch_of: Callable[[str], dict | None], cfg: PairConfig) -> list[Pair]:
    module = parse_module(ptx, origin)
    if cfg.strip_debug:
        module = strip_debug(module)
    kernels = split_kernels(module)
    names = demangle(list(kernels))
    full = demangle_full(list(kernels))
    out = []
    for entry, sub in kernels.items():
        plain = fmt_module(sub)
        meta = {"status": "ok", "unit_id": unit_id, "ptx_entry": entry,
                "ptx_tokens": count_tokens(plain)}
        if full[entry] != entry:
            meta["signature"] = full[entry]
        rolled = None
        if cfg.reroll:
            st = RerollStats()
            rolled = fmt_module(reroll_module(sub, stats=st))
            meta.update(rolled_tokens=count_tokens(rolled), loops=st.loops,
                        roundtrip_ok=st.failed == 0)
        name = names[entry]
        try:
            src = source_of(name)
        except KeyError:
            src, meta["source_note"] = "", f"kernel {name!r} not found in the source"
        out.append(Pair(f"{unit_id}:{entry}", name, language, src, plain, rolled, target,
                        options, launch_of(name), origin, meta))
    return out


def pairs_for_cuda(src: str, origin: str, cfg: PairConfig, skip: frozenset = frozenset(),
                   include: tuple[str, ...] = ()) -> Iterator[tuple[str, list[Pair] | None]]:
    from ..cudasrc.device import device_unit
    from ..cudasrc.standalone import standalone_kernel_source
    from ..cudasrc.tsparse import launch_sites
    launches: dict[str, dict] = {}
    unit = None
    for arch, opt, unroll in itertools.product(cfg.archs, cfg.opt_levels, cfg.unroll):
        label = NvccOptions(arch, opt, unroll).label()
        unit_id = _hash("cuda", origin, src, *label, str(cfg.strip_debug))
        if unit_id in skip:
            yield unit_id, None
            continue
        try:
            if unit is None:
                unit = device_unit(src)
                for site in launch_sites(src):
                    launches.setdefault(site.kernel.split("::")[-1], site.as_dict())
            opts = NvccOptions(arch, opt, unroll, unit.flags, include)
            ptx, lost = _compile(src, unit, opts)
            pairs = pairs_from_ptx(ptx, language="cuda", origin=origin, unit_id=unit_id,
                                   target=arch, options=opts.label(),
                                   source_of=lambda k: standalone_kernel_source(src, k),
                                   launch_of=launches.get, cfg=cfg)
            for p in pairs if lost else ():
                p.meta["instances_lost"] = lost  # the unit's other instances, and why
            pairs += _missing_kernels(unit, pairs, lost, unit_id, src, arch, opts.label(), origin)
        except (CompileFailed, PtxSyntaxError) as exc:
            pairs = [_failed(unit_id, "cuda", src, arch, label, origin, str(exc))]
        except Exception as exc:  # noqa: BLE001 - one unit's failure never stops the run
            pairs = [_failed(unit_id, "cuda", src, arch, label, origin,
                             f"internal error ({type(exc).__name__}): {exc}")]
        yield unit_id, pairs


def _compile(src: str, unit, opts: NvccOptions) -> tuple[str, str]:
    """PTX of the unit; if the added instances break the build, PTX with those of them that
    compile together (added one at a time: `k<float>` and `k<double>` of a kernel declaring
    `extern __shared__ scalar_t smem[]` conflict, while each alone compiles) and why the
    others are missing."""
    try:
        return nvcc_ptx(unit.source, opts), ""
    except CompileFailed as exc:
        if not unit.instances:
            raise
        from ..cudasrc.device import device_unit, with_instances
        bare = device_unit(src, instantiate=False).source
        first = next((ln for ln in exc.stderr.splitlines() if "error" in ln), str(exc).splitlines()[0])
        kept: list[str] = []
        ptx = None
        for inst in unit.instances:
            try:
                ptx = nvcc_ptx(with_instances(bare, [*kept, inst]), opts)
                kept.append(inst)
            except CompileFailed:
                continue
        lost = [i for i in unit.instances if i not in kept]
        if ptx is None:
            ptx = nvcc_ptx(bare, opts)
        return ptx, f"its instances {', '.join(lost)} do not compile: {first}" if lost else ""


def _missing_kernels(unit, pairs, lost, unit_id, src, arch, options, origin) -> list[Pair]:
    """A failed Pair for every kernel of the source that has no PTX entry, with the reason."""
    have = {p.kernel_name for p in pairs}
    out = []
    for f in unit.kernels:
        if f.name in have or any(p.meta.get("kernel") == f.name for p in out):
            continue
        if f.name in unit.dropped:
            why = f"kernel {f.name} {unit.dropped[f.name]}"
        elif f.template is not None:
            why = f"template kernel {f.name} not instantiated: " + (lost or unit.unresolved.get(f.name, "no instance"))
        else:
            why = f"kernel {f.name} has no entry in the PTX"
        p = _failed(unit_id, "cuda", f.text, arch, options, origin, why)
        p.pair_id, p.kernel_name = f"{unit_id}:failed:{f.name}", f.name
        p.meta["kernel"] = f.name
        out.append(p)
    return out


def pairs_for_triton(path: Path, cfg: PairConfig,
                     skip: frozenset = frozenset()) -> Iterator[tuple[str, list[Pair] | None]]:
    from .triton_ptx import load_triton_specs, triton_ptx, triton_source
    try:
        specs = load_triton_specs(path)
    except Exception as exc:  # noqa: BLE001 - the module is user code
        yield from _file_failed(path, "", f"cannot load the Triton specs: {type(exc).__name__}: {exc}",
                                cfg, skip)
        return
    for fn, spec in specs:
        src = triton_source(fn)
        for arch in cfg.archs:
            opts = [f"-arch={arch}", f"num_warps={spec.num_warps}", f"num_stages={spec.num_stages}",
                    *(f"{k}={v}" for k, v in sorted(spec.constexprs.items()))]
            origin = f"{path}#{spec.kernel}"
            unit_id = _hash("triton", origin, src, *opts, str(cfg.strip_debug))
            if unit_id in skip:
                yield unit_id, None
                continue
            try:
                ptx = triton_ptx(fn, spec, arch)
                pairs = pairs_from_ptx(ptx, language="triton", origin=origin, unit_id=unit_id,
                                       target=arch, options=opts, source_of=lambda k: src,
                                       launch_of=lambda k: spec.launch, cfg=cfg)
            except (CompileFailed, PtxSyntaxError) as exc:
                pairs = [_failed(unit_id, "triton", src, arch, opts, origin, str(exc))]
            except Exception as exc:  # noqa: BLE001 - one unit's failure never stops the run
                pairs = [_failed(unit_id, "triton", src, arch, opts, origin,
                                 f"internal error ({type(exc).__name__}): {exc}")]
            yield unit_id, pairs


def _failed(unit_id, lang, src, arch, options, origin, error) -> Pair:
    return Pair(f"{unit_id}:failed", "", lang, src, "", None, arch, options, None, origin,
                {"status": "failed", "unit_id": unit_id, "error": error})


@dataclass
class PairSummary:
    units: int = 0
    skipped: int = 0   # already in the output (resume)
    pairs: int = 0
    failed: int = 0
    configured: int = 0  # pairs given a launch configuration by `configure`


def _file_failed(path: Path, text: str, error: str, cfg: PairConfig,
                 done: frozenset) -> Iterator[tuple[str, list[Pair] | None]]:
    unit_id = _hash("file", str(path), text, str(cfg.strip_debug))
    if unit_id in done:
        yield unit_id, None
    else:
        yield unit_id, [_failed(unit_id, "cuda", text, ",".join(cfg.archs), [], str(path), error)]


def _units_of(path: Path, cfg: PairConfig, done: frozenset, include: tuple[str, ...]):
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        return [_file_failed(path, "", f"cannot read {path}: {exc}", cfg, done)]
    if path.suffix == ".py" and "TRITON_PTX_SPECS" in text and "load_inline" not in text:
        return [pairs_for_triton(path, cfg, done)]
    from ..cudasrc.python_src import CudaExtractError
    try:
        units = cuda_units(path, text)
    except CudaExtractError as exc:
        return [_file_failed(path, text, str(exc), cfg, done)]
    inc = (str(path.resolve().parent), *include)
    return [pairs_for_cuda(src, origin, cfg, done, inc) for origin, src in units]


def build_pairs(paths: list[Path], out: Path, cfg: PairConfig,
                on_unit: Callable[[str, list[Pair]], None] | None = None,
                include: tuple[str, ...] = (),
                configure: Callable[[Path, list[Pair]], None] | None = None) -> PairSummary:
    """Pairs of every file into `out`; `include`: -I directories besides each file's own;
    `configure(path, pairs)`: called on a unit's pairs before they are written (launch
    configurations from the file's task, `evaluate/task_configs.py`). A file with a launch file
    beside it (`NAME.launch.json`, `evaluate/launch_files.py`) gets its launches as configs."""
    from .evaluate.launch_files import attach_launch_file
    done = frozenset(r.get("meta", {}).get("unit_id") for r in iter_jsonl(out)) if out.exists() else frozenset()
    summary = PairSummary()
    for path in paths:
        gens = _units_of(path, cfg, done, include)
        for unit_id, pairs in itertools.chain.from_iterable(gens):
            summary.units += 1
            if pairs is None:
                summary.skipped += 1
                continue
            # a launcher written beside a source with no host code (`NAME.launch.json`) configures first
            launched = attach_launch_file(path, pairs)
            if configure is not None:
                configure(path, pairs)
            if launched or configure is not None:
                summary.configured += sum(bool((p.meta or {}).get("config")) for p in pairs)
            append_jsonl(out, pairs)
            summary.pairs += sum(p.meta.get("status") == "ok" for p in pairs)
            summary.failed += sum(p.meta.get("status") == "failed" for p in pairs)
            if on_unit:
                on_unit(unit_id, pairs)
    return summary
