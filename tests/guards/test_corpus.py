"""The hostile corpus is caught with the right flags; the honest corpus (ours
plus the builtin suite's correct CPU candidates) gets no flag even in strict.
Each corpus runs through one shared verify_samples call."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import guard_tasks as T  # noqa: E402
from honest_corpus import HONEST  # noqa: E402
from hostile_corpus import HOSTILE  # noqa: E402

from kernelmill.records import Sample  # noqa: E402
from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples  # noqa: E402
from kernelmill.verify.guards import FLAGS  # noqa: E402

pytestmark = pytest.mark.slow  # the module's fixture verifies dozens of candidates

CPU_LANGUAGES = ("torch", "cpp", "triton")


def _config(cache: str, guards: str, resident: str = "auto") -> VerifyConfig:
    # cache: the session's build cache (tests/conftest.py): the C++ candidates (ours and the
    # builtin suite's) are built once for both hostile runs, the honest run and the demo
    return VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, workers=2, memory_limit_gb=4,
                        max_procs=64, cache_dir=cache, guards=guards, resident=resident,
                        timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4, max_rounds=6))


def _samples(corpus: dict) -> list[Sample]:
    return [Sample(sample_id=name, task_id=entry[0].task_id, language=entry[1], code=entry[2])
            for name, entry in corpus.items()]


# the tricks that act on processes, memory, files, threads or the call stack, where a
# supervisor of its own and a candidate process started fresh (`--resident off`) differ
# from a resident's forked one; the others (what a call computes, its precision, its
# kernels) are judged by the same code either way and run once, with resident supervisors
FRESH_TOO = {"i2_empty_like", "i2_empty_shape", "i3_filled_next_call", "i3_thread_fills_later", "i3_timer_thread",
             "i4_cache_by_pointer", "i6_allclose", "i6_obfuscated_timer", "i6_sync", "i14_caller_frames",
             "i14_gc_walk", "i14_reads_files", "i15_skip_unchecked", "i15_skip_unchecked_inspect",
             "i17_batch_of_four_by_pointer", "i17_pipelined_one_behind", "i18_counts_calls",
             "i18_timing_on_the_stack", "i20_detached_rewriter", "i20_forges_every_channel"}
CASES = [("resident", name) for name in sorted(HOSTILE)] + [("fresh", name) for name in sorted(FRESH_TOO)]


def _hostile(cache: str, resident: str, names) -> dict:
    cfg = _config(cache, "standard", resident=resident)
    return {v.sample_id: v for v in verify_samples(T.ALL, _samples({n: HOSTILE[n] for n in names}), cfg)}


@pytest.fixture(scope="module")
def hostile_resident(shared_build_cache, torch_headers):
    """Resident supervisors, each taking job after job (the default with guards on:
    verify/pools/resident.py), over the whole hostile corpus."""
    return _hostile(shared_build_cache, "on", HOSTILE)


@pytest.fixture(scope="module")
def hostile_fresh(shared_build_cache, torch_headers):
    """A new supervisor per candidate (`--resident off`), over FRESH_TOO: on a CPU as on a
    GPU, a spare forked from the run zygote (pools/standby.py; `--standby 0` or
    `--no-fork-workers` start each one fresh: tests/verify/test_standby.py)."""
    return _hostile(shared_build_cache, "off", FRESH_TOO)


@pytest.fixture
def hostile(request):
    mode = request.param if hasattr(request, "param") else "resident"
    return request.getfixturevalue(f"hostile_{mode}")


@pytest.fixture(scope="module")
def honest(shared_build_cache, torch_headers):
    builtin = [s for s in builtin_samples() if s.meta.get("expect") == "ok" and s.language in CPU_LANGUAGES]
    tasks = {t.task_id: t for t in T.ALL}
    tasks.update(load_tasks("builtin").by_id())
    out = verify_samples(tasks, _samples(HONEST) + builtin, _config(shared_build_cache, "strict"))
    return {v.sample_id: v for v in out}


@pytest.fixture(scope="module")
def unguarded(shared_build_cache, torch_headers):
    """A few tricks with the guards off: they pass, so the guards are what catches them."""
    names = ["i10_zeros", "i14_caller_frames", "i12_reads_seed", "i6_allclose"]
    out = verify_samples(T.ALL, _samples({n: HOSTILE[n] for n in names}), _config(shared_build_cache, "off"))
    return {v.sample_id: v for v in out}


GPU_ONLY_ITEMS = {16, 19, 21}  # persisting L2, CUDA graphs, launch configurations


def test_corpus_covers_every_catalogue_item_twice():
    """Two hostile candidates of ours per catalogue item: every item that exists
    on a CPU here, and the GPU corpus (run on the device) for all 21."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent / "gpu_corpus"))
    from gpu_hostile import GPU_HOSTILE

    def count(names):
        items = {}
        for name in names:
            item = int(name.split("_")[0][1:])
            items[item] = items.get(item, 0) + 1
        return items

    cpu, gpu = count(HOSTILE), count(GPU_HOSTILE)
    assert all(cpu.get(i, 0) >= 2 for i in set(range(1, 22)) - GPU_ONLY_ITEMS), cpu
    assert all(cpu.get(i, 0) + gpu.get(i, 0) >= 2 for i in range(1, 22)), (cpu, gpu)
    assert all(gpu.get(i, 0) >= 2 for i in GPU_ONLY_ITEMS), gpu


def test_the_fresh_subset_names_hostile_candidates():
    assert FRESH_TOO <= set(HOSTILE)


@pytest.mark.parametrize("hostile, name", CASES, ids=[f"{m}-{n}" for m, n in CASES], indirect=["hostile"])
def test_hostile_candidate_is_caught(hostile, name):
    v = hostile[name]
    expected = HOSTILE[name][3]
    assert v.status != "ok", f"{name} passed: {v.flags} {v.message[:300]}"
    if expected is not None:
        # a set of flags, or a tuple of such sets (either way of catching the trick is right)
        options = expected if isinstance(expected, tuple) else (expected,)
        hit = [e for e in options if e <= set(v.flags)]
        assert hit, f"{name}: {v.status} {v.flags} {v.message[:300]}"
        # a flag decides the status: a rejection flag gives 'rejected', a correctness flag at least 'incorrect'
        wanted = {FLAGS[f][0] for f in hit[0]}
        assert v.status in wanted | {"rejected"}, (v.status, v.flags)
    else:
        assert v.status in ("incorrect", "rejected", "runtime_error"), (v.status, v.message[:300])


def test_flags_are_explained_in_the_message(hostile):
    v = hostile["i1_zero_input"]
    assert v.status == "rejected" and "input_mutation" in v.message


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_candidate_has_no_flag(honest, name):
    v = honest[name]
    # timing_skipped is the harness's note for Triton's CPU interpreter, not a guard flag
    assert v.status == "ok" and not set(v.flags) - {"timing_skipped"}, f"{name}: {v.status} {v.flags} {v.message[:400]}"


def test_builtin_correct_candidates_have_no_flag(honest):
    builtin = [v for k, v in honest.items() if k.startswith("builtin/")]
    assert len(builtin) >= 10
    bad = [(v.sample_id, v.status, v.flags, v.message[:200]) for v in builtin
           if v.status != "ok" or set(v.flags) - {"timing_skipped"}]
    assert not bad


def test_honest_fast_candidates_are_timed(honest):
    v = honest["big_relu_fast"]
    assert v.speedup and v.speedup > 0 and v.phases.get("guard_min_ms", 0) > 0


def test_tricks_pass_without_guards(unguarded):
    # the holes are real: with guards off these get 'ok'
    assert unguarded["i10_zeros"].status == "ok"
    assert unguarded["i14_caller_frames"].status == "ok"
    assert unguarded["i12_reads_seed"].status == "ok"
