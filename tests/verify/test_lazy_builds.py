"""Lazy load_inline calls (in __init__, in forward, in try/except) are built in
the build phase, so the run phase compiles nothing (verify/build/lazy_builds.py)."""

from __future__ import annotations

import inspect
import textwrap
import types

from kernelmill.records import Sample
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.build.lazy_builds import call_arguments, lazy_calls

from verify_support import RELU_TASK

SRC = r'''
#include <torch/extension.h>
torch::Tensor relu_%s(torch::Tensor x) { return x.clamp_min(0); }
'''

# built in __init__ from a local string, inside try/except with a torch fallback
INIT_LAZY = textwrap.dedent('''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    PREFIX = "km_lazy"

    class ModelNew(nn.Module):
        def __init__(self):
            super().__init__()
            src = r"""%s"""
            name = PREFIX + "_init"
            try:
                self.ext = load_inline(name=name, cpp_sources=src, functions=["relu_init"], verbose=False)
            except Exception:
                self.ext = None

        def forward(self, x):
            if self.ext is None:
                return torch.relu(x)
            return self.ext.relu_init(x)
    ''') % (SRC % "init")

# built on the first forward, cached in a global, positional arguments
FORWARD_LAZY = textwrap.dedent('''
    import torch
    import torch.nn as nn
    import torch.utils.cpp_extension as ce

    SOURCE = r"""%s"""
    _ext = None

    def _get():
        global _ext
        if _ext is None:
            _ext = ce.load_inline("km_lazy_fwd", [SOURCE], None, None, ["relu_fwd"])
        return _ext

    class ModelNew(nn.Module):
        def forward(self, x):
            return _get().relu_fwd(x)
    ''') % (SRC % "fwd")


def test_lazy_calls_are_found_and_their_arguments_computed():
    for code, name in ((INIT_LAZY, "km_lazy_init"), (FORWARD_LAZY, "km_lazy_fwd")):
        calls = lazy_calls(code)
        assert len(calls) == 1
        mod = types.ModuleType("cand")
        exec(compile(code, "<cand>", "exec"), mod.__dict__)
        sig = inspect.signature(lambda name, cpp_sources, cuda_sources=None, sycl_sources=None, functions=None,
                                verbose=False: None)
        args = call_arguments(calls[0], vars(mod), sig)
        assert args["name"] == name and "torch::Tensor relu_" in "".join(args["cpp_sources"])


def test_module_level_calls_are_not_lazy_and_input_dependent_ones_are_reported():
    assert lazy_calls("from torch.utils.cpp_extension import load_inline\next = load_inline('a', 'src')\n") == []
    code = textwrap.dedent('''
        from torch.utils.cpp_extension import load_inline
        class ModelNew:
            def forward(self, x):
                src = "float f() { return %d; }" % x.shape[0]
                return load_inline("k", src)
        ''')
    calls = lazy_calls(code)
    mod = types.ModuleType("cand")
    exec(compile(code, "<cand>", "exec"), mod.__dict__)
    try:
        call_arguments(calls[0], vars(mod), inspect.signature(lambda name, cpp_sources: None))
        raise AssertionError("an input-dependent source cannot be computed ahead")
    except ValueError as exc:
        assert "argument 2" in str(exc)


def test_verify_builds_lazy_calls_before_the_run(tmp_path, shared_build_cache, torch_headers):
    samples = [Sample("init_lazy", RELU_TASK.task_id, "cpp", INIT_LAZY),
               Sample("forward_lazy", RELU_TASK.task_id, "cpp", FORWARD_LAZY)]
    stats: dict = {}
    cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=shared_build_cache, workers=2)
    verdicts = {v.sample_id: v for v in verify_samples([RELU_TASK], samples, cfg, stats=stats)}
    for name in ("init_lazy", "forward_lazy"):
        v = verdicts[name]
        assert v.status == "ok", (name, v.message)
        assert "lazy_build_s" in v.phases, v.phases  # built in the build phase ...
        assert not v.phases.get("run_compiles"), v.phases  # ... so the run phase compiled nothing
        # the verdict says how its extension was built (runner._build_facts)
        assert v.measurement["build"]["lazy_built"] == 1, v.measurement.get("build")
        assert v.measurement["build"].get("compiled") or v.measurement["build"].get("reused")
    assert stats["run_compiles"] == 0 and stats["lazy_prebuilt"] == 2


# the source depends on the input's size: nothing can compute it ahead, so the
# run stops at the call, a CPU build worker builds it, and the run starts again
INPUT_DEPENDENT = textwrap.dedent('''
    import torch
    import torch.nn as nn
    from torch.utils.cpp_extension import load_inline

    class ModelNew(nn.Module):
        def forward(self, x):
            if not hasattr(self, "ext"):
                n = x.numel()
                src = ("#include <torch/extension.h>\\n"
                       "torch::Tensor relu_n(torch::Tensor x) { TORCH_CHECK(x.numel() == %d); return x.clamp_min(0); }" % n)
                try:
                    self.ext = load_inline(name="km_lazy_n%d" % n, cpp_sources=src, functions=["relu_n"])
                except Exception:
                    self.ext = None
            return torch.relu(x) if self.ext is None else self.ext.relu_n(x)
    ''')


def test_an_uncomputable_call_is_built_by_a_build_worker_not_the_run(tmp_path, shared_build_cache, torch_headers):
    stats: dict = {}
    cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=shared_build_cache, workers=2)
    (v,) = verify_samples([RELU_TASK], [Sample("input_dependent", RELU_TASK.task_id, "cpp", INPUT_DEPENDENT)],
                          cfg, stats=stats)
    assert v.status == "ok", v.message
    assert v.phases.get("deferred_builds", 0) >= 1, v.phases  # the run stopped and handed the build over ...
    assert not v.phases.get("run_compiles"), v.phases  # ... and never compiled itself
    assert stats["run_compiles"] == 0
    assert "torch_fallback" not in v.flags  # the try/except fallback never ran
    # the timeline shows it: build, then runs that stopped, each followed by its rebuild,
    # then the run that gave the verdict
    tl = v.measurement["timeline"]
    assert len(tl["build"]) == 1 and len(tl["rebuild"]) >= 1 and len(tl["run"]) == len(tl["rebuild"]) + 1, tl
    order = [tl["build"][0]] + [s for pair in zip(tl["run"], tl["rebuild"]) for s in pair] + [tl["run"][-1]]
    assert all(0 <= s <= e for s, e in order), tl
    assert all(a[1] <= b[0] for a, b in zip(order, order[1:])), tl


# two extensions behind one helper that picks its sources from a table by a run-time key
TABLE_LAZY = textwrap.dedent('''
    from torch.utils.cpp_extension import load_inline

    STATS, APPLY = "float stats();", "float apply();"
    _EXTS = {}

    def _ext(which):
        if which not in _EXTS:
            table = {
                "stats": ("km_two_stats", STATS, ["stats"]),
                "apply": ("km_two_apply", APPLY, ["apply"]),
            }
            ext_name, cpp, fns = table[which]
            _EXTS[which] = load_inline(name=ext_name, cpp_sources=cpp, functions=fns)
        return _EXTS[which]
    ''')


def test_a_table_picked_by_a_run_time_key_gives_every_entrys_arguments():
    from kernelmill.verify.build.lazy_builds import call_argument_sets

    calls = lazy_calls(TABLE_LAZY)
    mod = types.ModuleType("cand")
    exec(compile(TABLE_LAZY, "<cand>", "exec"), mod.__dict__)
    sig = inspect.signature(lambda name, cpp_sources, functions=None: None)
    sets = call_argument_sets(calls[0], vars(mod), sig)
    assert [(s["name"], s["cpp_sources"], s["functions"]) for s in sets] == [
        ("km_two_stats", "float stats();", ["stats"]), ("km_two_apply", "float apply();", ["apply"])]


def test_distinct_lazy_calls_build_at_once(monkeypatch):
    # both of the table's extensions go to the builder, from two threads at the same time
    import threading

    from kernelmill.verify.build import inline_build, lazy_builds

    import functools

    seen, both = [], threading.Barrier(2, timeout=10)

    @functools.wraps(inline_build.build_only)  # the signature prebuild binds the arguments to
    def build_only(**kwargs):
        seen.append(kwargs["name"])
        both.wait()  # raises BrokenBarrierError (unresolved) if the two never overlap
        return None

    monkeypatch.setattr(inline_build, "build_only", build_only)
    mod = types.ModuleType("cand")
    exec(compile(TABLE_LAZY, "<cand>", "exec"), mod.__dict__)
    report = lazy_builds.prebuild(mod, TABLE_LAZY)
    assert report.found == 1 and report.built == 2 and not report.unresolved, report.to_dict()
    assert sorted(seen) == ["km_two_apply", "km_two_stats"]
