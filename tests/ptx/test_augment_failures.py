"""`ptx augment`: a batch with a kernel nvcc rejects or a function TVM rejects still goes to
nvcc in one call without it (runner.flush, pairs.failing_kernels). Real nvcc for the error
lines; the lowering and the compile around it are stand-ins, so no TVM is needed."""

from __future__ import annotations

import shutil

import pytest

from kernelmill.ptx.augment import pairs as pairs_mod
from kernelmill.ptx.augment.codegen import Kernel, Lowered
from kernelmill.ptx.nvcc import CompileFailed, NvccOptions, nvcc_ptx

PRELUDE = '#include <cuda_fp16.h>\n#define KM_ONE 1\n\n'


def kernel(i: int, body: str) -> Kernel:
    src = (f'extern "C" __global__ void k_v{i}_kernel(float* __restrict__ a) {{\n'
           f'  int t = threadIdx.x;\n  {body}\n}}\n')
    return Kernel(f"k_v{i}_kernel", f"k_v{i}", "k", i, [1, 1, 1], [32, 1, 1],
                  [{"name": "a", "dtype": "float32", "shape": [32], "role": "out"}], False, src)


def low_of(kernels: list[Kernel]) -> Lowered:
    return Lowered(PRELUDE, PRELUDE + "\n\n".join(k.source for k in kernels), kernels)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvcc_errors_point_at_the_kernels_that_have_them():
    ks = [kernel(0, "a[t] = 1.0f;"), kernel(1, "a[t] = undefined_name;"), kernel(2, "a[t] = 2.0f * KM_ONE;"),
          kernel(3, "a[t] = also_undefined(t);")]
    low = low_of(ks)
    with pytest.raises(CompileFailed) as exc:
        nvcc_ptx(low.prelude + "\n\n".join(k.source for k in low.kernels), NvccOptions())
    assert pairs_mod.failing_kernels(low, exc.value.stderr) == {"k_v1_kernel", "k_v3_kernel"}
    # without them the rest compiles
    low.kernels = [ks[0], ks[2]]
    assert ".entry k_v2_kernel" in nvcc_ptx(low.prelude + "\n\n".join(k.source for k in low.kernels))


def test_an_error_outside_every_kernel_names_none():
    low = low_of([kernel(0, "a[t] = 1.0f;")])
    assert pairs_mod.failing_kernels(low, "/tmp/x/kernel.cu(2): error: bad macro") == set()  # the prelude
    assert pairs_mod.failing_kernels(low, "nvcc fatal: something") == set()


class FakeFunc:
    def __init__(self, name, lowers=True, compiles=True):
        self.name, self.lowers, self.compiles = name, lowers, compiles


@pytest.fixture
def fake_pipeline(monkeypatch):
    """A job whose one subgraph yields the given functions: `lower` fails for a batch holding a
    function that does not lower; `batch_pairs` fails, naming the kernel's lines, for one that
    does not compile. Records every lowering and every compile."""
    from kernelmill.ptx.augment import codegen, runner, schedules, subgraphs
    from kernelmill.ptx.augment import models as models_mod

    calls = {"lower": [], "compile": [], "errors_shown": None}  # None: nvcc names every bad kernel
    funcs: list[FakeFunc] = []

    def fake_lower(named, max_chars=None):
        calls["lower"].append([f.name for _, f in named])
        if not all(f.lowers for _, f in named):
            raise codegen.LoweringFailed("no")
        return low_of([kernel(i, f"a[t] = {'1.0f' if f.compiles else 'nope'}; // {f.name}")
                       for i, (_, f) in enumerate(named)])

    def fake_batch_pairs(low, metas, origin, refactor, reroll, seen, keys):
        calls["compile"].append([k.source.split("// ")[1].split("\n")[0] for k in low.kernels])
        bad = [k for k in low.kernels if "nope" in k.source][:calls["errors_shown"]]
        if bad:
            line = low.prelude.count("\n") + 1
            errs = []
            for k in low.kernels:
                if k in bad:
                    errs.append(f"/tmp/d/kernel.cu({line + 2}): error: identifier \"nope\" is undefined")
                line += k.source.count("\n") + 2
            raise CompileFailed("nvcc failed (exit 1)", "\n".join(errs))
        return [object() for _ in low.kernels]

    class Sg:
        name, sid, partition, func = "sg", "sg0", "fused", None

    class Variant:
        def __init__(self, f):
            self.func, self.key, self.sketch, self.decisions = f, f.name, "s", []

    monkeypatch.setattr(codegen, "lower", fake_lower)
    monkeypatch.setattr(codegen, "buffers", lambda func: {})
    monkeypatch.setattr(pairs_mod, "batch_pairs", fake_batch_pairs)
    monkeypatch.setattr(models_mod, "build_model", lambda *a: type("M", (), {"config": {}})())
    monkeypatch.setattr(subgraphs, "relax_module", lambda model: None)
    monkeypatch.setattr(subgraphs, "subgraphs", lambda model, kinds, mod: [Sg()])
    monkeypatch.setattr(schedules, "Space", lambda func, seed: None)
    monkeypatch.setattr(schedules, "random_variants",
                        lambda space, count, seed, taken=None: (Variant(f) for f in funcs if not taken(Variant(f))))
    monkeypatch.setattr(runner, "_PROV", {"generator": "test"})
    monkeypatch.setattr(runner, "to_dict", lambda p: p if isinstance(p, dict) else {"meta": {"status": "ok"}})
    runner._MODELS.clear()
    return runner, funcs, calls


def run(runner, batch=8):
    job = runner.Job("mixer", 0, "schedule", 0, 8, batch, 12000, False, False)
    runner._set_claims(runner.Claims())
    try:
        return runner.run_job(job)
    finally:
        runner._set_claims(None)


def test_a_rejected_function_or_kernel_leaves_one_compile_of_the_rest(fake_pipeline):
    runner, funcs, calls = fake_pipeline
    funcs += [FakeFunc(f"f{i}") for i in range(8)]
    funcs[2].lowers = False
    funcs[5].compiles = False
    _, out, _, stats = run(runner)
    assert stats["lower_failed"] == 1 and stats["nvcc_failed"] == 1
    assert len([p for p in out if p["meta"]["status"] == "ok"]) == 6
    # the lowering was split to find f2; the compile: the 7 good ones, then the 6 without f5
    assert calls["compile"] == [[f"f{i}" for i in (0, 1, 3, 4, 5, 6, 7)], [f"f{i}" for i in (0, 1, 3, 4, 6, 7)]]
    assert calls["lower"][0] == [f"f{i}" for i in range(8)] and calls["lower"][-1] == calls["compile"][0]


def test_clean_batches_lower_and_compile_once(fake_pipeline):
    runner, funcs, calls = fake_pipeline
    funcs += [FakeFunc(f"f{i}") for i in range(8)]
    _, out, _, stats = run(runner)
    assert len(calls["lower"]) == 1 and len(calls["compile"]) == 1 and len(out) == 8
    assert stats["lower_failed"] == stats["nvcc_failed"] == 0


def test_a_batch_whose_errors_keep_coming_is_split_and_loses_nothing(fake_pipeline):
    """nvcc names one bad kernel per call here: after three drops the batch is split, and every
    good kernel still gets its pair, every bad one its count."""
    runner, funcs, calls = fake_pipeline
    calls["errors_shown"] = 1
    funcs += [FakeFunc(f"f{i}", compiles=i in (0, 4, 7)) for i in range(8)]
    _, out, _, stats = run(runner)
    assert stats["nvcc_failed"] == 5
    assert len([p for p in out if p["meta"]["status"] == "ok"]) == 3
    assert [len(c) for c in calls["compile"][:4]] == [8, 7, 6, 5]  # three drops, then the split
