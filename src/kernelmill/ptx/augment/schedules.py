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
Most tile configurations of a conv2d or matmul fail the postprocessors' thread-extent
check alone (threads per block between the warp size and 1024); it is made in Python
from the tile factors before the replay (`Space.threads_ok`; 4,646 replays before, 1,431
after on four profiled jobs). The enumerated configurations are the same as replaying
each; the random pipeline draws its tile factors itself, as meta-schedule draws them.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass
from typing import Callable, Iterator

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
        self.thread_groups = [_thread_groups(t) for t in self.sketches]
        self._tiles: dict[int, list | None] = {}

    def tiles(self, sketch: int, seed: int = 0) -> list[tuple[int, int, int]] | None:
        """(loop extent, parts, max innermost factor) of each `sample_perfect_tile` of the
        sketch, in trace order (the sketch replayed once with its own decisions); None if
        the sketch cannot be replayed at all."""
        if sketch not in self._tiles:
            tiles: list[tuple[int, int, int]] = []

            def probe(kind, sch, inputs, attrs, decision):
                if kind == "SamplePerfectTile":
                    loop = sch.get(inputs[0])
                    tiles.append((int(loop.extent), int(attrs[0]), int(attrs[1])))
                return decision

            ok = self.replay(sketch, seed, probe) is not None or bool(tiles)
            self._tiles[sketch] = tiles if ok else None
        return self._tiles[sketch]

    def threads_ok(self, sketch: int, combo) -> bool:
        """Whether a tile configuration (one factor list per `sample_perfect_tile`, in
        trace order) can pass meta-schedule's thread-extent check: each multi-level tiled
        block binds the product of its spatial tiles' third factors (`SSSRRSRS`: block,
        vthread, thread, ...) to threadIdx, and `VerifyGPUCode` rejects a product outside
        [warp size, max threads per block]. Checked in Python before the replay: most
        random tile draws of a conv2d or matmul fail just this, and a rejected replay costs
        the trace's application and the postprocessors' lowering (10 ms)."""
        lo, hi = TARGET["thread_warp_size"], TARGET["max_threads_per_block"]
        for group in self.thread_groups[sketch]:
            if any(i >= len(combo) or len(combo[i]) != 5 for i in group):
                continue  # not the structure this check knows: leave it to the postprocessors
            n = 1
            for i in group:
                n *= combo[i][2]
            if not lo <= n <= hi:
                return False
        return True

    def replay(self, sketch: int, seed: int, provider=None, fresh: bool = False) -> Variant | None:
        """The sketch with decisions from `provider(kind, sch, inputs, attrs, decision)` or
        drawn at random; `decision` is the sketch's own, or None (drawn at random) when there
        is no provider or `fresh`; None if a postprocessor rejects it."""
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

        todo = Trace(trace.insts, {}) if provider is None or fresh else trace
        try:
            todo.apply_to_schedule(sch, remove_postproc=True, decision_provider=decide)
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


def _thread_groups(trace) -> list[list[int]]:
    """Per multi-level tiled block of a sketch whose thread extent meta-schedule checks
    (`meta_schedule.thread_extent_low_inclusive` annotated): the ordinals (among the
    sketch's `sample_perfect_tile` instructions) of its 5-part spatial tiles. A block's
    tiles are sampled one after another and end at its `Reorder`."""
    if not any(i.kind.name == "Annotate" and "thread_extent_low_inclusive" in str(i.attrs[0])
               for i in trace.insts):
        return []
    groups, cur, k = [], [], 0
    for inst in trace.insts:
        if inst.kind.name == "SamplePerfectTile":
            if int(inst.attrs[0]) == 5:
                cur.append(k)
            k += 1
        elif inst.kind.name == "Reorder" and cur:
            groups.append(cur)
            cur = []
    if cur:
        groups.append(cur)
    return groups


def _fixed_tiles(combo):
    """A decision provider giving the tile factors of `combo` in order, the sketch's own
    (or, on a fresh trace, freshly drawn) decisions elsewhere."""
    it = iter(combo)

    def fixed(kind, sch, inputs, attrs, decision):
        if kind == "SamplePerfectTile":
            return list(next(it))
        return decision
    return fixed


def random_variants(space: Space, count: int, seed: int, tries: int = 8,
                    taken: Callable[[Variant], bool] | None = None) -> Iterator[Variant]:
    """Up to `count` distinct variants, a random sketch and random decisions each, from at
    most `count * tries` draws. The tile factors are drawn here (`_draw_tile`, as
    meta-schedule's `sample_perfect_tile` draws them) so that a draw failing the
    thread-extent check (`Space.threads_ok`), which the postprocessors would reject after a
    replay, costs no replay; the other decisions are drawn by the replay. Stops after
    `2 * count` draws that repeat a variant: the space of an elementwise operator holds a
    handful of schedules, and drawing on would only replay them again. `taken(v)`: True
    for a variant another job already took (runner.py's claims); it counts as a repeat and
    not towards `count`, so a subgraph met again gets new schedules where there are any."""
    if not space.sketches:
        return
    r = random.Random(seed)
    seen: set[str] = set()
    repeats = yielded = 0
    for _ in range(count * tries):
        if yielded >= count or repeats >= 2 * count:
            return
        sk = r.randrange(len(space.sketches))
        tiles = space.tiles(sk) or []
        combo = [_draw_tile(r, e, n, m) for e, n, m in tiles]
        if not space.threads_ok(sk, combo):
            continue
        v = space.replay(sk, r.getrandbits(31), _fixed_tiles(combo), fresh=True)
        if v is None:
            continue
        if v.key in seen:
            repeats += 1
            continue
        seen.add(v.key)
        if taken is not None and taken(v):
            repeats += 1
            continue
        yielded += 1
        yield v


def _primes(n: int) -> list[int]:
    out, f = [], 2
    while f * f <= n:
        while n % f == 0:
            out.append(f)
            n //= f
        f += 1
    return out + ([n] if n > 1 else [])


def _draw_tile(r: random.Random, extent: int, parts: int, max_inner: int) -> list[int]:
    """A random perfect tiling of `extent` into `parts` factors, innermost at most
    `max_inner` (<= 0: no bound), drawn as meta-schedule's `sample_perfect_tile` draws
    (s_tir/schedule/primitive/sampling.cc): the exponent of each prime factor split over
    the parts uniformly among its compositions; redrawn while the innermost is too large."""
    if parts == 1:
        return [extent]
    primes: dict[int, int] = {}
    for p in _primes(extent):
        primes[p] = primes.get(p, 0) + 1
    for _ in range(256):
        t = [1] * parts
        for p, e in primes.items():
            cuts = sorted(r.sample(range(e + parts - 1), parts - 1)) + [e + parts - 1]
            last = -1
            for i, c in enumerate(cuts):
                t[i] *= p ** (c - last - 1)
                last = c
        if max_inner <= 0 or t[-1] <= max_inner:
            return t
    return r.choice(_factorizations(extent, parts, max_inner if max_inner > 0 else extent))


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


def tile_variants(space: Space, limit: int, seed: int,
                  taken: Callable[[Variant], bool] | None = None) -> Iterator[Variant]:
    """Up to `limit` valid tile configurations per sketch, from `4 * limit` enumerated
    (in a seeded shuffled order when there are more). A configuration failing the
    thread-extent check (`Space.threads_ok`) is passed over without its replay (the
    postprocessors would reject it): the same variants as replaying every one. A variant
    `taken(v)` says another job already took is passed over and does not count towards
    `limit`: a subgraph met again gets its other configurations."""
    r = random.Random(seed)
    for sk in range(len(space.sketches)):
        tiles = space.tiles(sk, seed)
        if tiles is None:
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
            if not space.threads_ok(sk, combo):
                continue
            v = space.replay(sk, seed, _fixed_tiles(combo))
            if v is not None and not (taken is not None and taken(v)):
                kept += 1
                yield v
