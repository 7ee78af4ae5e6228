"""Schedule variants of a subgraph, from TVM's schedule space.

The space is meta-schedule's post-order-apply design space for CUDA: its rules
(multi-level tiling with shared-memory reuse, cross-thread reduction, auto-bind,
inlining, parallel/vectorize/unroll annotation) produce a few *sketches* per
subgraph, each a trace of split / fuse / reorder / bind / annotate instructions
with sampling instructions (`sample_perfect_tile`, `sample_categorical`, ...)
whose decisions are the free parameters.

* scheduling-diverse pipeline (`random_variants`): a sketch is chosen, then every
  decision is drawn at random (the trace replayed without its decisions);
* subgraph-diverse pipeline (`tile_variants`): per sketch, every valid tile
  configuration is enumerated: each `sample_perfect_tile` takes each factorization
  of its loop's extent (innermost factor within the sketch's bound), the other
  decisions stay as the sketch drew them.

A variant is kept only if meta-schedule's CUDA postprocessors accept it (they
rewrite cooperative fetches and unroll annotations and verify the GPU limits:
threads per block, shared memory). Identical decision sets are yielded once.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from typing import Iterator

# what the CUDA rules need to know about the GPU (H100: 1024 threads, 48 KiB of
# static shared memory per block); also the target the kernels are generated for
TARGET = {"kind": "cuda", "arch": "sm_90", "max_threads_per_block": 1024,
          "max_shared_memory_per_block": 49152, "thread_warp_size": 32}


@dataclass
class Variant:
    sketch: int            # which design space of the subgraph
    decisions: list        # [[instruction kind, decision], ...] in trace order
    func: object           # the scheduled tvm.tirx.PrimFunc

    @property
    def key(self) -> str:
        return json.dumps([self.sketch, self.decisions], separators=(",", ":"))


def target():
    import tvm
    return tvm.target.Target(TARGET)


def _plain(value):
    """A decision as JSON: ints, lists of ints."""
    if hasattr(value, "__iter__") and not isinstance(value, str):
        return [_plain(v) for v in value]
    try:
        return int(value)
    except (TypeError, ValueError):
        return str(value)


def _skip_tensor_intrinsics() -> None:
    """TuneContext imports `tvm.s_tir.tensor_intrin`, which registers the tensor-core,
    ROCm and ARM intrinsics by parsing ~250 TVMScript functions: 12 s of CPU alone,
    over a minute once torch is loaded (the parser's `inspect.stack` walks every loaded
    module). The CUDA rules used here (`ScheduleRule.create("cuda")`, no tensor cores)
    tensorize nothing (`Space` asks for those rules by name), so an empty module stands in for it (unless it is loaded)."""
    import sys
    import types

    name = "tvm.s_tir.tensor_intrin"
    if name not in sys.modules:
        sys.modules[name] = types.ModuleType(name, "placeholder: kernelmill.ptx.augment needs no intrinsics")


class Space:
    """The design space of one subgraph (sketches and postprocessors)."""

    def __init__(self, func, seed: int = 0, max_unroll: int = 64):
        import tvm
        from tvm.s_tir import meta_schedule as ms

        _skip_tensor_intrinsics()

        self.mod = tvm.IRModule({"main": func})
        space = ms.space_generator.PostOrderApply(sch_rules=ms.ScheduleRule.create("cuda"),
                                                  postprocs=ms.Postproc.create("cuda"),
                                                  mutator_probs=ms.Mutator.create("cuda"))
        ctx = ms.TuneContext(mod=self.mod, target=target(), space_generator=space,
                             task_name="main", num_threads=1, rand_state=seed + 1)
        self.sketches = [s.trace for s in ctx.generate_design_space()]
        self.postprocs = ctx.space_generator.postprocs
        self.max_unroll = max_unroll
        self.unroll = [_unroll_samples(t) for t in self.sketches]

    def replay(self, sketch: int, seed: int, provider=None) -> Variant | None:
        """The sketch with decisions from `provider(kind, loop_extent, attrs, drawn)` or
        drawn at random; None if a postprocessor rejects it."""
        from tvm.s_tir import Schedule, ScheduleError, Trace

        sch = Schedule(self.mod, seed=seed & 0x7FFFFFFF or 1)
        trace = self.sketches[sketch]
        r = random.Random(seed)
        unroll = self.unroll[sketch]

        def decide(inst, inputs, attrs, decision):
            if any(inst.same_as(u) for u in unroll):
                # explicit unrolling capped: past 64 steps TVM unrolls whole tiles into
                # kernels of hundreds of KB, far beyond a training sample
                allowed = [i for i, c in enumerate(attrs[0]) if int(c) <= self.max_unroll]
                if decision is None or int(decision) not in allowed:
                    decision = r.choice(allowed)
                return decision
            return provider(inst.kind.name, sch, inputs, attrs, decision) if provider else None

        fresh = Trace(trace.insts, {}) if provider is None else trace
        try:
            fresh.apply_to_schedule(sch, remove_postproc=True, decision_provider=decide)
            # the decisions taken (drawn or given), in trace order, before the postprocessors
            made = sch.trace.decisions
            decisions = [[i.kind.name, _plain(made[i])] for i in sch.trace.insts if i in made]
            if not all(p.apply(sch) for p in self.postprocs):
                return None
        except (ScheduleError, RuntimeError, ValueError, TypeError):
            return None
        return Variant(sketch, decisions, sch.mod["main"])


def _unroll_samples(trace) -> list:
    """The SampleCategorical instructions of a sketch whose value becomes the
    `meta_schedule.unroll_explicit` annotation (the explicit unroll depth)."""
    notes = [i for i in trace.insts if i.kind.name == "Annotate"
             and str(i.attrs[0]).strip('"') == "meta_schedule.unroll_explicit"]
    return [i for i in trace.insts if i.kind.name == "SampleCategorical"
            and any(len(a.inputs) > 1 and a.inputs[1].same_as(i.outputs[0]) for a in notes)]


def random_variants(space: Space, count: int, seed: int, tries: int = 8) -> Iterator[Variant]:
    """Up to `count` distinct variants, a random sketch and random decisions each."""
    if not space.sketches:
        return
    r = random.Random(seed)
    seen: set[str] = set()
    for _ in range(count * tries):
        if len(seen) >= count:
            return
        v = space.replay(r.randrange(len(space.sketches)), r.getrandbits(31))
        if v is not None and v.key not in seen:
            seen.add(v.key)
            yield v


def _factorizations(extent: int, parts: int, max_inner: int) -> list[list[int]]:
    """Every way of writing `extent` as an ordered product of `parts` factors whose
    innermost is at most `max_inner` (sample_perfect_tile's space)."""
    if parts == 1:
        return [[extent]]
    out = []
    for f in range(1, min(extent, max_inner) + 1):  # f: the innermost factor
        if extent % f == 0:
            out += [[*rest, f] for rest in _factorizations(extent // f, parts - 1, extent // f)]
    return out


def tile_variants(space: Space, limit: int, seed: int) -> Iterator[Variant]:
    """Up to `limit` valid tile configurations per sketch, enumerated (in a seeded
    shuffled order when there are more than `limit`)."""
    r = random.Random(seed)
    for sk in range(len(space.sketches)):
        tiles: list[tuple[int, int, int]] = []  # (extent, parts, max innermost) per perfect tile

        def probe(kind, sch, inputs, attrs, decision):
            if kind == "SamplePerfectTile":
                loop = sch.get(inputs[0])
                tiles.append((int(loop.extent), int(attrs[0]), int(attrs[1])))
            return decision

        if space.replay(sk, seed, probe) is None and not tiles:
            continue
        choices = [_factorizations(e, n, m if m > 0 else e) for e, n, m in tiles]
        total = 1
        for c in choices:
            total *= len(c)
        if total <= limit * 4:
            combos = list(itertools.product(*choices))
            r.shuffle(combos)
        else:  # too many to list: draw without repeats
            picked: set = set()
            combos = []
            while len(combos) < limit * 4 and len(picked) < total:
                c = tuple(tuple(r.choice(x)) for x in choices)
                if c not in picked:
                    picked.add(c)
                    combos.append(c)
        kept = 0
        for combo in combos:
            if kept >= limit:
                break
            it = iter(combo)

            def fixed(kind, sch, inputs, attrs, decision, it=it):
                if kind == "SamplePerfectTile":
                    return list(next(it))
                return decision

            v = space.replay(sk, seed, fixed)
            if v is not None:
                kept += 1
                yield v
