"""The augmentation run: models -> subgraphs -> schedule variants -> CUDA -> PTX pairs.

A job is one model instance under one pipeline (`schedule`: fusion groups, random
schedules sampled from each sketch; `subgraph`: fusion groups and single operators,
enumerated tile configurations). Jobs run in worker processes (each keeps one TVM
and one warm schedule-space cache) and return their pairs; the parent appends them
to the output JSONL, one job at a time, with `meta.unit_id` = the job id, so a re-run
skips finished jobs and an interrupted run resumes where it stopped (a job cut off
by the deadline or a crash is simply done again). A job that yields no pair writes
one failed Pair with the reason, so it is not retried forever.

Kernels whose CUDA is longer than `max_source_chars` (12,000: ~4k LLM tokens) are dropped
before nvcc: a PtxDec training sample is 8,192 tokens for PTX and CUDA together, and the
PTX is several times longer than its CUDA; unrolled variants of large tiles reach hundreds
of KB and would cost most of the time.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing as mp
import platform
import time
from dataclasses import asdict, dataclass, field
from multiprocessing.managers import BaseManager
from pathlib import Path
from typing import Callable

from ...records import Pair, append_jsonl, iter_jsonl, to_dict
from .models import FAMILIES

PIPELINES = ("schedule", "subgraph")


class Claims:
    """Keys of the work already taken by some job of the run: a variant (subgraph name,
    subgraph id, schedule decisions) before it is lowered, a kernel (its prelude and its
    CUDA text, renamed to the PrimFunc's name) before nvcc. A job skips what another job
    (or an earlier run into the same file) already claimed: exact duplicates would only be
    compiled, refactored and rerolled for the dedup to drop them (21% of the pairs of the
    hour run were exact duplicates, most of them from two jobs: the same subgraph in two
    instances of a family, or in both pipelines). Shared by the worker processes through a
    manager (`_ClaimsManager`); one `claim` call per batch."""

    def __init__(self, initial=()):
        import threading
        self._keys: set[str] = set(initial)
        self._lock = threading.Lock()

    def claim(self, keys: list[str]) -> list[bool]:
        """For each key, True where it was new (it is claimed now), False where it was not."""
        out = []
        with self._lock:
            for k in keys:
                out.append(k not in self._keys)
                self._keys.add(k)
        return out

    def __len__(self) -> int:
        return len(self._keys)


_CLAIMS: Claims | None = None   # the run's claims in this process (a proxy in a worker)


def _set_claims(claims) -> None:
    global _CLAIMS
    _CLAIMS = claims


class _ClaimsManager(BaseManager):
    pass


_ClaimsManager.register("Claims", Claims)


def _claims_of(rows) -> set[str]:
    """The claim keys of the pairs already in an output file (a resumed run skips them)."""
    keys = set()
    for r in rows:
        m = r.get("meta", {})
        if m.get("status") != "ok":
            continue
        if m.get("kernel_key"):
            keys.add(m["kernel_key"])
        sch = m.get("schedule")
        if sch and m.get("subgraph_name") and m.get("subgraph"):
            key = json.dumps([sch["sketch"], sch["decisions"]], separators=(",", ":"))
            keys.add(variant_key(m["subgraph_name"], m["subgraph"], key))
    return keys


def variant_key(sg_name: str, sid: str, v_key: str) -> str:
    """The claim key of a schedule variant of a subgraph."""
    return f"v:{sg_name}:{sid}:{v_key}"


def kernel_key(prelude: str, source: str) -> str:
    """The claim key of a kernel: its CUDA text (renamed) after its prelude."""
    return "k:" + hashlib.sha1((prelude + "\0" + source).encode()).hexdigest()[:20]


@dataclass
class AugmentConfig:
    families: tuple[str, ...] = tuple(FAMILIES)
    models: int = 4                 # instances per family (batch, shapes, precision drawn per instance)
    variants: int = 8               # schedule pipeline: random schedules per subgraph
    tiles: int = 6                  # subgraph pipeline: tile configurations per subgraph (per sketch)
    pipelines: tuple[str, ...] = PIPELINES
    batch: int = 48                 # PrimFuncs lowered and compiled together
    max_source_chars: int = 12000
    refactor: bool = True
    reroll: bool = True
    workers: int = 2
    seed: int = 0

    def check(self) -> None:
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown:
            raise ValueError(f"unknown model families {unknown} (known: {', '.join(FAMILIES)})")
        bad = [p for p in self.pipelines if p not in PIPELINES]
        if bad:
            raise ValueError(f"unknown pipelines {bad} (schedule, subgraph)")
        if self.models < 1 or self.variants < 1 or self.tiles < 1 or self.batch < 1 or self.workers < 1:
            raise ValueError("models, variants, tiles, batch and workers must be >= 1")


@dataclass(frozen=True)
class Job:
    family: str
    index: int
    pipeline: str
    seed: int
    count: int            # variants or tiles per subgraph
    batch: int
    max_source_chars: int
    refactor: bool
    reroll: bool

    @property
    def job_id(self) -> str:
        return "aug-" + hashlib.sha1(json.dumps(asdict(self), sort_keys=True).encode()).hexdigest()[:16]


def jobs(cfg: AugmentConfig) -> list[Job]:
    """Instance-major order, so a run stopped early has touched every family."""
    return [Job(f, i, p, cfg.seed, cfg.variants if p == "schedule" else cfg.tiles, cfg.batch,
                cfg.max_source_chars, cfg.refactor, cfg.reroll)
            for i in range(cfg.models) for f in cfg.families for p in cfg.pipelines]


def provenance() -> dict:
    import subprocess

    import torch
    import tvm

    from ..nvcc import find_nvcc
    ver = subprocess.run([find_nvcc(), "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    return {"generator": "tvm", "tvm": tvm.__version__, "torch": torch.__version__,
            "nvcc": ver[-1] if ver else "", "python": platform.python_version()}


_PROV: dict | None = None
# the last model instance imported in this process and its Relax module: the two pipelines'
# jobs of an instance are adjacent in `jobs()` and go to one worker together (chunks of 2)
_MODELS: dict[tuple, tuple] = {}


def _failed(job: Job, origin: str, error: str) -> Pair:
    return Pair(f"{job.job_id}:failed", "", "cuda", "", "", None, "sm_90", [], None, origin,
                {"status": "failed", "unit_id": job.job_id, "error": error, "pipeline": job.pipeline,
                 "model_family": job.family})


def run_job(job: Job) -> tuple[str, list[dict], dict[str, str], dict]:
    """(job id, pairs as dicts, preludes by hash, counts) of one job."""
    global _PROV
    from ..nvcc import CompileFailed
    from .codegen import LoweringFailed, buffers, lower
    from .models import build_model
    from .pairs import batch_pairs, failing_kernels
    from .schedules import Space, random_variants, tile_variants
    from .subgraphs import relax_module, subgraphs

    _PROV = _PROV or provenance()
    origin = f"tvm:{job.family}#{job.index}:{job.pipeline}"
    stats = {"subgraphs": 0, "variants": 0, "too_long": 0, "lower_failed": 0, "nvcc_failed": 0,
             "duplicate_variants": 0, "duplicate_kernels": 0}
    claims = _CLAIMS if _CLAIMS is not None else Claims()
    preludes: dict[str, str] = {}
    try:
        key = (job.family, job.index, job.seed)
        if key not in _MODELS:  # the other pipeline's job of this instance ran here just before
            _MODELS.clear()
            model = build_model(job.family, job.index, job.seed)
            _MODELS[key] = (model, relax_module(model))
        model, mod = _MODELS[key]
        sgs = subgraphs(model, ("fused",) if job.pipeline == "schedule" else ("fused", "single"), mod)
    except Exception as exc:  # noqa: BLE001 - one model's failure never stops the run
        return job.job_id, [to_dict(_failed(job, origin, f"import failed: {type(exc).__name__}: {exc}"))], {}, stats
    pending: list[tuple[str, object, dict]] = []
    out: list[Pair] = []
    seen: set[str] = set()  # kernels of this job already paired (pair ids stay unique)
    mine: set[str] = set()  # kernel keys this job claimed and has not paired yet (a batch that nvcc
    # rejects is split and lowered again: its kernels keep their claim)

    def lower_good(group):
        """One lowering of every function of `group` that TVM accepts, with its group (None
        where none): a batch that fails is split only to find the functions TVM rejects, then
        the rest is lowered again as one batch, so it still goes to nvcc in one call."""
        try:
            return lower([(n, f) for n, f, _ in group], job.max_source_chars), group
        except LoweringFailed:
            if len(group) == 1:
                stats["lower_failed"] += 1
                return None, []
        good, parts = [], [group[:len(group) // 2], group[len(group) // 2:]]
        while parts:
            part = parts.pop()
            try:
                lower([(n, f) for n, f, _ in part], job.max_source_chars)
                good += part
            except LoweringFailed:
                if len(part) > 1:
                    parts += [part[:len(part) // 2], part[len(part) // 2:]]
                else:
                    stats["lower_failed"] += 1
        if not good:
            return None, []
        order = {id(x): i for i, x in enumerate(group)}
        good.sort(key=lambda x: order[id(x)])  # the batch's own order
        try:
            return lower([(n, f) for n, f, _ in good], job.max_source_chars), good
        except LoweringFailed:  # fine apart, not together (never seen): lowered one by one
            groups.extend([g] for g in good)
            return None, []

    groups: list[list] = []

    def flush():
        if not pending:
            return
        groups.append(pending[:])
        pending.clear()
        while groups:
            group = groups.pop()
            low, group = lower_good(group)
            if low is None:
                continue
            too_long = {k.index for k in low.kernels if len(k.source) > job.max_source_chars}
            # dynamic shared memory: its size is set by TVM's host code, which is not kept
            # here, so the config could not say it (TVM's CUDA pipeline uses static arrays)
            dynamic = {k.index for k in low.kernels if k.dyn_shared} - too_long
            stats["too_long"] += len(too_long)
            stats["dynamic_shared"] = stats.get("dynamic_shared", 0) + len(dynamic)
            low.kernels = [k for k in low.kernels if k.index not in too_long | dynamic]
            # exact duplicates of kernels another job (or this one) already took: skipped
            # before nvcc, the refactoring and the reroll
            keys = {k.name: kernel_key(low.prelude, k.rename(k.source)) for k in low.kernels}
            ask = sorted(set(keys.values()) - mine)
            new = {key for key, ok in zip(ask, claims.claim(ask)) if ok}
            mine.update(new)
            fresh, taken = [], set()
            for k in low.kernels:
                key = keys[k.name]
                if key in mine and key not in taken:
                    fresh.append(k)
                    taken.add(key)
                else:
                    stats["duplicate_kernels"] += 1
            low.kernels = fresh
            if not low.kernels:
                continue
            preludes[hashlib.sha1(low.prelude.encode()).hexdigest()[:16]] = low.prelude
            for attempt in range(4):
                try:
                    out.extend(batch_pairs(low, [m for _, _, m in group], origin, job.refactor, job.reroll,
                                           seen, keys))
                    mine.difference_update(taken)
                except CompileFailed as exc:
                    # the kernels nvcc's errors point at are dropped and the rest compiled
                    # again in one call; where the errors name no kernel (or a fourth call
                    # still fails), the batch is split
                    bad = failing_kernels(low, exc.stderr) if attempt < 3 else set()
                    if bad and len(bad) < len(low.kernels):
                        stats["nvcc_failed"] += len(bad)
                        low.kernels = [k for k in low.kernels if k.name not in bad]
                        continue
                    # split what is still in the batch (not what was dropped or counted already)
                    left = {k.index for k in low.kernels}
                    rest = [g for i, g in enumerate(group) if i in left]
                    if len(rest) > 1:  # find the one nvcc rejects
                        mid = len(rest) // 2
                        groups.extend([rest[:mid], rest[mid:]])
                    else:
                        stats["nvcc_failed"] += 1
                break

    for sg in sgs:
        try:
            space = Space(sg.func, job.seed)
        except Exception:  # noqa: BLE001 - a subgraph TVM cannot schedule is skipped
            continue
        stats["subgraphs"] += 1
        seed = int(hashlib.sha1(f"{job.job_id}:{sg.sid}".encode()).hexdigest()[:8], 16)

        def taken(v, sg=sg) -> bool:
            # the same schedule of the same subgraph (same CUDA) in another job, or earlier in
            # this one: passed over, and the sampler goes on to another schedule
            if claims.claim([variant_key(sg.name, sg.sid, v.key)])[0]:
                return False
            stats["duplicate_variants"] += 1
            return True

        gen = (random_variants(space, job.count, seed, taken=taken) if job.pipeline == "schedule"
               else tile_variants(space, job.count, seed, taken=taken))
        buf_list = [{"name": n, **b} for n, b in buffers(sg.func).items()]
        for v in gen:
            stats["variants"] += 1
            pending.append((sg.name, v.func, {
                "unit_id": job.job_id, "pipeline": job.pipeline, "model_family": job.family,
                "subgraph": sg.sid, "subgraph_name": sg.name, "partition": sg.partition,
                "schedule": {"sketch": v.sketch, "decisions": v.decisions},
                "model": {"index": job.index, **model.config}, "buffers": buf_list,
                "provenance": {**_PROV, "seed": job.seed}}))
            if len(pending) >= job.batch:
                flush()
    flush()
    if not out:
        out = [_failed(job, origin, f"no pair: {stats}")]
    return job.job_id, [to_dict(p) for p in out], preludes, stats


def _run_jobs(group: list[Job]) -> list[tuple]:
    return [run_job(j) for j in group]


@dataclass
class AugmentSummary:
    jobs: int = 0
    skipped: int = 0
    pairs: int = 0
    failed_jobs: int = 0
    stats: dict = field(default_factory=dict)
    seconds: float = 0.0
    stopped_early: bool = False


def _preludes_path(out: Path) -> Path:
    return out.with_name(out.name + ".preludes.json")


def augment(out: Path, cfg: AugmentConfig, deadline: float | None = None,
            on_job: Callable[[str, list[dict], int, int], None] | None = None) -> AugmentSummary:
    """Run every job of `cfg` not yet in `out`; stop taking results at `deadline`
    (time.monotonic()); `on_job(job_id, pairs, done, total)` after each job."""
    cfg.check()
    t0 = time.monotonic()
    old = list(iter_jsonl(out)) if out.exists() else []
    done = {r.get("meta", {}).get("unit_id") for r in old}
    initial = _claims_of(old)
    del old
    todo_all = jobs(cfg)
    todo = [j for j in todo_all if j.job_id not in done]
    summary = AugmentSummary(jobs=len(todo_all), skipped=len(todo_all) - len(todo))
    pre_path = _preludes_path(out)
    preludes = json.loads(pre_path.read_text()) if pre_path.exists() else {}
    finished = summary.skipped

    def take(result):
        nonlocal finished
        job_id, pairs, pre, stats = result
        new = {k: v for k, v in pre.items() if k not in preludes}
        if new:
            preludes.update(new)
            tmp = pre_path.with_name(pre_path.name + ".tmp")
            tmp.write_text(json.dumps(preludes))
            tmp.replace(pre_path)
        append_jsonl(out, [Pair(**p) for p in pairs])
        ok = sum(p["meta"].get("status") == "ok" for p in pairs)
        summary.pairs += ok
        summary.failed_jobs += ok == 0
        for k, v in stats.items():
            summary.stats[k] = summary.stats.get(k, 0) + v
        finished += 1
        if on_job:
            on_job(job_id, pairs, finished, len(todo_all))

    if cfg.workers == 1:
        saved = _CLAIMS
        _set_claims(Claims(initial))
        try:
            for j in todo:
                if deadline is not None and time.monotonic() > deadline:
                    summary.stopped_early = True
                    break
                take(run_job(j))
        finally:
            _set_claims(saved)
    else:
        ctx = mp.get_context("spawn")  # TVM and torch hold threads: no fork
        manager = _ClaimsManager(ctx=ctx)
        manager.start()
        claims = manager.Claims(initial)
        with manager, ctx.Pool(cfg.workers, maxtasksperchild=None, initializer=_set_claims,
                               initargs=(claims,)) as pool:
            # the jobs of one instance (both pipelines, adjacent in `jobs()`) to one worker:
            # one model import
            groups: list[list[Job]] = []
            for j in todo:
                if groups and (groups[-1][-1].family, groups[-1][-1].index) == (j.family, j.index):
                    groups[-1].append(j)
                else:
                    groups.append([j])
            it = pool.imap_unordered(_run_jobs, groups, chunksize=1)
            try:
                for _ in range(len(groups)):
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise mp.TimeoutError
                    for result in it.next(timeout=remaining):
                        take(result)
            except mp.TimeoutError:
                summary.stopped_early = True
                pool.terminate()
    summary.seconds = time.monotonic() - t0
    return summary


def write_distinct(pairs_path: Path, out: Path, threshold: float = 0.9, workers: int = 2) -> dict:
    """The ok pairs of `pairs_path` without exact or near duplicates (curate/dedup.py:
    MinHash + LSH over the CUDA side, every candidate confirmed by exact Jaccard,
    first occurrence kept) into `out`; returns the counts."""
    from ...curate.dedup import DedupConfig, dedup

    rows = [r for r in iter_jsonl(pairs_path) if r.get("meta", {}).get("status") == "ok"]
    res = dedup(({"pair_id": r["pair_id"], "code": r["source"], "_row": i} for i, r in enumerate(rows)),
                DedupConfig(threshold=threshold, scope="global", workers=workers), str(pairs_path))
    tmp = out.with_name(out.name + ".tmp")
    tmp.unlink(missing_ok=True)
    append_jsonl(tmp, [Pair(**rows[k["_row"]]) for k in res.kept])
    tmp.replace(out)
    return res.counts()
