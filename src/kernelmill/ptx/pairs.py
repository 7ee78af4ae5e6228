"""(CUDA or Triton source, PTX, Rolled-PTX) pairs, one per kernel and target.

Sources: `.cu`/`.cuh` files, KernelBench-style Python candidates (the CUDA
strings passed to `load_inline` are read statically), and Triton modules that
list their kernels in `TRITON_PTX_SPECS`. For a CUDA unit the host side is
stripped (tree-sitter) so the kernels compile without torch headers; launch
configurations are read from the `<<<grid, block>>>` sites of the full source.

Output is appended one compile unit at a time; a re-run skips units already
written (`meta.unit_id`), so an interrupted run resumes exactly. A compile
failure becomes a Pair with `meta.status == "failed"` and nvcc's stderr.
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
from .nvcc import CompileFailed, NvccOptions, demangle, nvcc_ptx
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


def cuda_units(path: Path) -> list[tuple[str, str]]:
    """(origin, CUDA source) units of one file."""
    text = path.read_text()
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
    out = []
    for entry, sub in kernels.items():
        plain = fmt_module(sub)
        meta = {"status": "ok", "unit_id": unit_id, "ptx_entry": entry,
                "ptx_tokens": count_tokens(plain)}
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


def pairs_for_cuda(src: str, origin: str, cfg: PairConfig,
                   skip: frozenset = frozenset()) -> Iterator[tuple[str, list[Pair] | None]]:
    from ..cudasrc.tsparse import kernel_source, launch_sites, strip_host
    device_src = strip_host(src)
    launches: dict[str, dict] = {}
    for site in launch_sites(src):
        launches.setdefault(site.kernel, site.as_dict())
    for arch, opt, unroll in itertools.product(cfg.archs, cfg.opt_levels, cfg.unroll):
        opts = NvccOptions(arch, opt, unroll)
        unit_id = _hash("cuda", origin, src, *opts.label(), str(cfg.strip_debug))
        if unit_id in skip:
            yield unit_id, None
            continue
        try:
            ptx = nvcc_ptx(device_src, opts)
            pairs = pairs_from_ptx(ptx, language="cuda", origin=origin, unit_id=unit_id,
                                   target=arch, options=opts.label(),
                                   source_of=lambda k: kernel_source(src, k),
                                   launch_of=launches.get, cfg=cfg)
        except (CompileFailed, PtxSyntaxError) as exc:
            pairs = [_failed(unit_id, "cuda", src, arch, opts.label(), origin, str(exc))]
        yield unit_id, pairs


def pairs_for_triton(path: Path, cfg: PairConfig,
                     skip: frozenset = frozenset()) -> Iterator[tuple[str, list[Pair] | None]]:
    from .triton_ptx import load_triton_specs, triton_ptx, triton_source
    for fn, spec in load_triton_specs(path):
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


def build_pairs(paths: list[Path], out: Path, cfg: PairConfig,
                on_unit: Callable[[str, list[Pair]], None] | None = None) -> PairSummary:
    done = frozenset(r.get("meta", {}).get("unit_id") for r in iter_jsonl(out)) if out.exists() else frozenset()
    summary = PairSummary()
    for path in paths:
        text = path.read_text()
        if path.suffix == ".py" and "TRITON_PTX_SPECS" in text and "load_inline" not in text:
            gens = [pairs_for_triton(path, cfg, done)]
        else:
            gens = [pairs_for_cuda(src, origin, cfg, done) for origin, src in cuda_units(path)]
        for unit_id, pairs in itertools.chain.from_iterable(gens):
            summary.units += 1
            if pairs is None:
                summary.skipped += 1
                continue
            append_jsonl(out, pairs)
            summary.pairs += sum(p.meta.get("status") == "ok" for p in pairs)
            summary.failed += sum(p.meta.get("status") == "failed" for p in pairs)
            if on_unit:
                on_unit(unit_id, pairs)
    return summary
