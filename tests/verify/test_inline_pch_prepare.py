"""Eager precompiled headers: built once per flag set before candidates need them,
never waited for while another process builds them, and only for large runs.

The compiler is replaced by a stand-in that writes the header file, so these
tests check the cache protocol without a 40 s header build."""

from __future__ import annotations

import os
import shlex
import time

from kernelmill.verify.build import build_prepare, inline_build


def test_default_flag_sets_are_the_binding_units_flags():
    (cxx, flags), = build_prepare.default_flag_sets(with_cuda=False)
    torch_cflags = inline_build.torch_flags("other_name", False, None, None, None, None)["cflags"]
    strip = [f for f in torch_cflags if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    assert [f for f in flags if not f.startswith("-DTORCH_EXTENSION_NAME=")] == strip
    assert shlex.split(cxx)


def test_prepare_builds_once_and_the_lazy_path_then_uses_it(tmp_path, fake_compiler):
    first = build_prepare.prepare_pch(tmp_path, [(False, (), ())])
    # a C++ flag set: torch/extension.h, and torch/types.h for the slim units (slim_units.py)
    assert [s["ready"] for s in first["sets"]] == [True, True]
    assert len(fake_compiler) == 2 and all("c++-header" in c for c in fake_compiler)
    # and the link's stubs of torch's libraries (link_stubs.py), so no build makes them
    assert {p.name for p in tmp_path.glob("stub/*/*/*.so")} >= {"libc10.so", "libtorch_cpu.so", "libtorch_python.so"}
    again = build_prepare.prepare_pch(tmp_path, [(False, (), ()), (False, (), ())])
    assert again["sets"][0]["ready"] and len(fake_compiler) == 2  # cached: no second build
    assert len(build_prepare.prepare_pch(tmp_path / "apart", [(False, (), ())], slim=False)["sets"]) == 1
    # a candidate's first unit (use count 0) finds the eager header at once
    cxx, flags = build_prepare.default_flag_sets(False)[0]
    pch = inline_build.InlineBuilder(tmp_path)._pch(cxx, ["-DTORCH_EXTENSION_NAME=cand", *flags])
    assert pch is not None and pch.with_suffix(".h.gch").read_bytes() == b"obj"


def test_a_header_being_built_elsewhere_is_not_waited_for(tmp_path, fake_compiler):
    builder = inline_build.InlineBuilder(tmp_path)
    cxx, flags = build_prepare.default_flag_sets(False)[0]
    named = [f for f in flags if not f.startswith("-DTORCH_EXTENSION_NAME=")]
    key = inline_build.content_key("pch", inline_build._env_id(), inline_build.tool_id(cxx), *named)
    lock = builder.cache.try_lock("pch", key)
    with lock:  # another process is building it
        assert builder._pch(cxx, flags, eager=True) is None
    assert fake_compiler == []


CANDIDATE = """
import torch
from torch.utils.cpp_extension import load_inline
FLAGS = ["-O3"]
a = load_inline(name="a", cpp_sources=src, functions=["f"], extra_cflags=FLAGS)
b = torch.utils.cpp_extension.load_inline("b", src, cuda_sources=cu, extra_cuda_cflags=["-O3", "--use_fast_math"])
c = load_inline(name="c", cpp_sources=src, extra_cflags=compute_flags())   # not a literal: lazy path
d = load_inline(name="d", cpp_sources=src, extra_include_paths=["inc"])    # include folders: lazy path
"""


def test_flag_specs_are_read_from_the_source_without_running_it():
    assert build_prepare.flag_specs(CANDIDATE) == [(False, ("-O3",), ()), (True, (), ("-O3", "--use_fast_math"))]
    assert build_prepare.flag_specs("def broken(:") == []


LAZY = '''
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
src = "torch::Tensor f(torch::Tensor x);"
FLAGS = ["-O1"]

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        flags = ["-O3"]                      # a local string: read (LLM candidates build in __init__)
        self.a = load_inline(name="a", cpp_sources=src, functions=["f"], extra_cflags=flags)

    def forward(self, x, FLAGS=None):        # a parameter hides the module's FLAGS: not read
        return load_inline(name="b", cpp_sources=src, functions=["f"], extra_cflags=FLAGS)

def twice():
    opts = ["-O2"]
    opts = opts + ["-g"]                     # bound twice: which value the call sees is not read
    return load_inline(name="c", cpp_sources=src, functions=["f"], extra_cflags=opts)

def outer():
    opts = ["-O0"]
    def inner():                             # the enclosing function's name, not a module one
        return load_inline(name="d", cpp_sources=src, functions=["f"], extra_cflags=opts)
    return inner
'''


def test_flag_sets_are_read_where_the_call_is():
    assert build_prepare.flag_specs(LAZY) == [(False, ("-O3",), ()), (False, ("-O0",), ())]
    assert [s for s, _b in build_prepare.binding_specs(LAZY)] == [(False, ("-O3",), ()), (False, ("-O0",), ())]


TABLE = '''
from torch.utils.cpp_extension import load_inline
a_cpp = "torch::Tensor fa(torch::Tensor x);"
a_src = "torch::Tensor fa(torch::Tensor x) { return x; }"
b_cpp = "torch::Tensor fb(torch::Tensor x, double s);"
b_src = "torch::Tensor fb(torch::Tensor x, double s) { return x * s; }"
_EXTS = {}

def _ext(which):                             # LLM style: several extensions, built lazily by key
    if which not in _EXTS:
        table = {
            "a": ("ext_a", a_cpp, a_src, ["fa"]),
            "b": ("ext_b", b_cpp, b_src, ["fb"]),
        }
        ext_name, cpp, cuda, fns = table[which]
        _EXTS[which] = load_inline(name=ext_name, cpp_sources=cpp, cuda_sources=cuda, functions=fns)
    return _EXTS[which]

def mixed(i, j):                             # rows of two tables in one call: its sources not read
    t1 = {"x": (a_cpp,), "y": (b_cpp,)}
    t2 = {"x": (["fa"],), "y": (["fb"],)}
    (cpp,) = t1[i]
    (fns,) = t2[j]
    return load_inline(name="m", cpp_sources=cpp, functions=fns)
'''
WRITTEN_OUT = '''
from torch.utils.cpp_extension import load_inline
ea = load_inline(name="ext_a", cpp_sources="torch::Tensor fa(torch::Tensor x);",
                 cuda_sources="torch::Tensor fa(torch::Tensor x) { return x; }", functions=["fa"])
eb = load_inline(name="ext_b", cpp_sources="torch::Tensor fb(torch::Tensor x, double s);",
                 cuda_sources="torch::Tensor fb(torch::Tensor x, double s) { return x * s; }", functions=["fb"])
'''


def test_a_table_of_extensions_gives_every_row(monkeypatch):
    # each row read as the call it would be; its binding objects are those of the calls written out
    assert build_prepare.binding_specs(TABLE) == build_prepare.binding_specs(WRITTEN_OUT)
    assert len(build_prepare.binding_specs(TABLE)) == 2
    # (the mixed call's flags are literal: read, as before)
    # one spec a call, or a row of its table (in source order; only the set is used)
    assert sorted(build_prepare.flag_specs(TABLE)) == [(False, (), ()), (True, (), ()), (True, (), ())]


def test_only_flag_sets_used_often_enough_are_prepared(monkeypatch, tmp_path):
    from types import SimpleNamespace

    from kernelmill.verify.config import VerifyConfig
    from kernelmill.verify.runner import Verifier

    started, idents, own_idents = [], [], []

    def background(root, specs, env, nice=0, merged=True, slim=True, bindings=None, identifiers=True):
        started.append(specs)
        own_idents.append(identifiers)

    monkeypatch.setattr(build_prepare, "start_background", background)
    def identifiers(root, specs, env, nice=0, jobs=None):
        idents.append(specs)
        # worked out in the runner, with the builds' arch: the process imports no torch (0.5.14)
        assert jobs and [j["key"] for j in jobs] == [j["key"] for j in build_prepare.identifier_jobs(
            specs, env.get("TORCH_CUDA_ARCH_LIST", ""))]
        return object()

    monkeypatch.setattr(build_prepare, "start_identifiers", identifiers)
    verifier = Verifier(VerifyConfig(device="cpu", cache_dir=str(tmp_path)), None)
    job = lambda lang, code: SimpleNamespace(sample=SimpleNamespace(language=lang, code=code))  # noqa: E731
    n = build_prepare.EAGER_MIN_CANDIDATES
    plain = 'load_inline(name="x", cpp_sources="", functions=["f"])'
    verifier.prepare_builds([job("cpp", plain)] * (n - 1) + [job("torch", "y = torch.relu(x)")] * 10)
    assert started == []
    # the fail-fast check's identifiers are made for every flag set in use, however few use it
    assert idents == [[(False, (), ())]]
    verifier.prepare_builds([job("cpp", plain)] * n + [job("cpp", CANDIDATE)])
    assert started == [[(False, (), ())]]
    # the identifiers process started: the idle-priority background leaves them to it, so no
    # process a build would wait for runs on idle CPU time (session_2026-11-30c)
    assert own_idents == [False]
    # a candidate labelled torch whose source calls load_inline builds an extension too (0.5.10)
    verifier.prepare_builds([job("torch", plain)] * n)
    assert started == [[(False, (), ())]] * 2


def test_cuda_flag_sets_leave_out_the_binding_units_own_when_units_merge(monkeypatch):
    # the binding unit of a merged build compiles with the host unit's flags (unit_merge),
    # so its own header would be built for nothing
    def flags(name, with_cuda, cflags, cuda_cflags, ldflags, include_paths):
        return {"cxx": "c++", "cflags": ["-DTORCH_EXTENSION_NAME=" + name, "-std=c++17", *cflags],
                "cuda_cflags": ["-DTORCH_EXTENSION_NAME=" + name, "-std=c++17", "-D__CUDA_NO_HALF_OPERATORS__",
                                *cuda_cflags]}

    monkeypatch.setattr(build_prepare, "torch_flags", flags)
    merged = build_prepare.flag_sets((True, ("-O3",), ("-O3",)))
    apart = build_prepare.flag_sets((True, ("-O3",), ("-O3",)), merged=False)
    assert len(merged) == 1 and "-D__CUDA_NO_HALF_OPERATORS__" in merged[0][1]
    assert len(apart) == 2 and apart[1] == merged[0]
    # a binding unit that may not take the host unit's flags keeps its own header
    assert len(build_prepare.flag_sets((True, ("-g",), ("-O3",)))) == 2


def test_a_flag_set_seen_often_gets_its_header_built_in_the_background_not_by_the_build(tmp_path):
    """The build that crosses the use count compiles without the header and at once; a
    process of its own builds the header (under the header's lock, so one process
    however many builds ask); the builds after it use it."""
    import time

    from kernelmill.verify.build import inline_build

    fake = tmp_path / "fakecxx"
    log = tmp_path / "cxx_calls.txt"
    # a compiler stand-in: says its version, takes 5 s per header, writes its -o output (a call
    # that waited for it takes 5 s; one that did not, well under 2.5 s on a loaded machine too)
    fake.write_text("#!/bin/sh\n"
                    "[ \"$1\" = --version ] && { echo fakecxx 1; exit 0; }\n"
                    f"echo \"$@\" >> {log}\n"
                    "sleep 5\n"
                    "while [ $# -gt 1 ]; do [ \"$1\" = -o ] && echo gch > \"$2\"; shift; done\n")
    fake.chmod(0o755)
    cache = tmp_path / "cache"
    flags = ["-O3", "-DTORCH_EXTENSION_NAME=x"]
    got = []
    for _ in range(inline_build._PCH_AFTER_USES + 2):
        t0 = time.monotonic()
        b = inline_build.InlineBuilder(cache)
        got.append((b._pch(str(fake), flags), time.monotonic() - t0, b.log.get("pch_background")))
    assert all(pch is None for pch, _, _ in got)  # none waited for the header ...
    assert all(s < 2.5 for _, s, _ in got), got  # ... nor built it
    assert [bg for _, _, bg in got].count(True) == 1  # one background build; the next found it locked
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        pch = inline_build.InlineBuilder(cache)._pch(str(fake), flags)
        if pch is not None:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the background header build never published")
    assert pch.name == "torch_ext.h" and (pch.parent / "torch_ext.h.gch").read_text().strip() == "gch"
    calls = [c for c in log.read_text().splitlines() if "c++-header" in c]
    assert len(calls) == 1 and "-DTORCH_EXTENSION_NAME" not in calls[0], calls


def test_headers_prepared_by_hand_are_keyed_as_a_runs_builds_find_them(tmp_path, fake_compiler, monkeypatch):
    # a run's build environment names the GPUs' architectures (TORCH_CUDA_ARCH_LIST) and
    # the header key includes it: `build_prepare` by hand names them the same way
    from kernelmill.verify import devices

    monkeypatch.setattr(devices, "cuda_devices", lambda: ({"index": 0, "capability": "9.0"},))
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    monkeypatch.setattr(build_prepare, "prepare_pch", lambda root, specs, merged=True, slim=True: {"sets": []})
    build_prepare.main([str(tmp_path), "--specs", "[[false, [], []]]"])
    assert "TORCH_CUDA_ARCH_LIST" not in os.environ  # no CUDA flag set: nothing to name
    build_prepare.main([str(tmp_path), "--cuda"])
    assert os.environ["TORCH_CUDA_ARCH_LIST"] == "9.0"
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0")  # set by the caller (a run's background start): kept
    build_prepare.main([str(tmp_path), "--cuda"])
    assert os.environ["TORCH_CUDA_ARCH_LIST"] == "8.0"


def test_prepared_and_run_builds_name_the_same_architectures(tmp_path, monkeypatch):
    # a machine whose environment names the architectures (the GPU machine sets "9.0a"): a
    # run's builds keep the user's list, as torch's load_inline does, and prepare-builds
    # keys its headers by the same list (seventeenth session: runs had overridden it with
    # the probe's "9.0" and found none of the prepared headers and binding objects)
    from kernelmill.languages import get_language
    from kernelmill.verify import devices

    monkeypatch.setattr(devices, "cuda_devices", lambda: ({"index": 0, "capability": "9.0"},))
    monkeypatch.setattr(build_prepare, "prepare_pch", lambda root, specs, merged=True, slim=True: {"sets": []})
    cuda = get_language("cuda")
    for user_list, expected in ((None, "9.0"), ("9.0a", "9.0a")):
        if user_list is None:
            monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
        else:
            monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", user_list)
        run_env = cuda.env("cuda", tmp_path, tmp_path / "ext", "9.0", build_jobs=1)  # the probe's capability
        build_prepare.main([str(tmp_path), "--cuda"])
        assert run_env["TORCH_CUDA_ARCH_LIST"] == os.environ["TORCH_CUDA_ARCH_LIST"] == expected
    # TileLang's target stays the probe's (sm_90a from "9.0")
    assert "sm_90a" in get_language("tilelang").env("cuda", tmp_path, tmp_path / "ext", "9.0", 1)["TILELANG_DEFAULT_TARGET"]


def test_the_identifiers_process_makes_what_a_build_then_finds(tmp_path):
    """`start_identifiers` (a cold run's first step, issue 40): its process makes the torch
    header's identifiers for the run's flag sets, under the key a build of those flags looks up,
    so the build's fail-fast check needs no -E of its own."""
    import subprocess
    import sys

    from kernelmill.verify.build.inline_build import InlineBuilder, torch_flags

    root = tmp_path / "build"
    out = subprocess.run([sys.executable, "-m", "kernelmill.verify.build.build_prepare", str(root),
                          "--specs", '[[false, [], []], [false, ["-O3"], []]]', "--identifiers-only"],
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert '"made": 2' in out.stdout, out.stdout
    assert not (root / "pch").exists() or not any((root / "pch").iterdir())  # nothing but the identifiers
    builder = InlineBuilder(root)
    flags = torch_flags("some_candidates_ext", False, ["-O3"], [], None, None)
    known = builder.header_identifiers(flags["cxx"], flags["cflags"], make=False)
    assert known is not None and {"Tensor", "at", "torch"} <= known


def test_builds_leave_the_identifiers_to_the_runs_process_while_it_lives(tmp_path):
    """`start_identifiers` hands its process the `maker` lock: a build that starts before that
    process has imported torch waits for its copy (it runs at the run's priority; builds made
    their own at nice 10 beside a cold run's starting processes: 5-13 s, session_2026-11-30c),
    and the lock goes with the process."""
    from kernelmill.verify.build.inline_build import InlineBuilder, torch_flags

    root = tmp_path / "build"
    proc = build_prepare.start_identifiers(root, [(False, (), ())])
    assert proc is not None
    waiter = InlineBuilder(root)
    assert waiter.identifiers_maker_busy()  # held from the start, before the process imported anything
    flags = torch_flags("a_candidates_ext", False, [], [], None, None)
    known = waiter.header_identifiers(flags["cxx"], flags["cflags"])
    assert proc.wait(timeout=300) == 0
    assert known is not None and {"Tensor", "at"} <= known
    assert not waiter.log.get("idents_made"), "the build made its own copy beside the run's process"
    assert waiter.log["idents_s"] > 0  # it waited
    assert not waiter.identifiers_maker_busy()  # released with the process


def test_the_runners_jobs_make_the_identifiers_in_a_process_without_torch(tmp_path, monkeypatch):
    """`identifier_jobs` works the flags and key out in the runner (torch imported there), so the
    identifiers process imports none (its cold import was most of the 10 s its builds waited on
    a cold machine, session_2026-11-30d); a build keyed with the builds' arch finds the entry."""
    import json
    import subprocess
    import sys

    from kernelmill.verify.build.inline_build import InlineBuilder, torch_flags

    root = tmp_path / "build"
    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)  # the runner's own: none
    jobs = build_prepare.identifier_jobs([(False, (), ()), (False, ("-O3",), ())], "9.0")
    assert len(jobs) == 2 and len({j["key"] for j in jobs}) == 2
    code = ("import sys; from kernelmill.verify.build import build_prepare as bp; "
            f"bp.main([{str(root)!r}, '--jobs', {json.dumps(jobs)!r}, '--since', '0', '--identifiers-only']); "
            "assert 'torch' not in sys.modules, 'the identifiers process imported torch'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert '"made": 2' in out.stdout, out.stdout
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")  # a build's environment
    flags = torch_flags("a_candidates_ext", False, ["-O3"], [], None, None)
    known = InlineBuilder(root).header_identifiers(flags["cxx"], flags["cflags"], make=False)
    assert known is not None and {"Tensor", "at", "torch"} <= known
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "8.0")  # the key holds the arch: another build's is not this
    assert InlineBuilder(root).header_identifiers(flags["cxx"], flags["cflags"], make=False) is None


def test_a_build_that_waited_shows_what_the_identifiers_process_took(tmp_path, monkeypatch):
    """The maker's own timings travel with the entry to the build that waited for it
    (`measurement.build.idents_maker`): when it started after the runner asked, how long its -E took."""
    from kernelmill.verify.build.inline_build import InlineBuilder, torch_flags

    root = tmp_path / "build"
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    jobs = build_prepare.identifier_jobs([(False, (), ())], "9.0")
    proc = build_prepare.start_identifiers(root, [(False, (), ())], jobs=jobs)
    assert proc is not None
    waiter = InlineBuilder(root)
    flags = torch_flags("a_candidates_ext", False, [], [], None, None)
    known = waiter.header_identifiers(flags["cxx"], flags["cflags"])
    assert proc.wait(timeout=300) == 0
    assert known is not None and "Tensor" in known
    assert not waiter.log.get("idents_made"), "the build made its own copy beside the run's process"
    maker = waiter.log.get("idents_maker")
    assert maker is not None, waiter.log
    assert 0 <= maker["started_after_s"] < 60 and maker["make_s"] > 0 and maker["queued_s"] >= 0
    from kernelmill.verify.runner import _build_facts

    assert _build_facts(waiter.log)["idents_maker"] == maker  # and the verdict's measurement.build keeps them


def test_the_identifiers_process_makes_its_flag_sets_side_by_side(tmp_path, monkeypatch):
    """Each flag set's `-E` starts without waiting for the others' (one after another, the set a
    cold run's failing builds needed waited 3.9 s behind the rest, session_2026-11-30e): a
    stand-in compiler notes when each -E starts and ends; all start before any ends."""
    import threading

    from kernelmill.verify.build import inline_build

    spans, lock = [], threading.Lock()

    def run(cmd, cwd):
        with lock:
            spans.append(("start", time.monotonic()))
        time.sleep(0.5)
        (cwd / cmd[cmd.index("-o") + 1]).write_text("#define KM_X 1\nnamespace at { struct Tensor {}; }\n")
        with lock:
            spans.append(("end", time.monotonic()))
        return 0, ""

    monkeypatch.setattr(inline_build, "_run", run)
    monkeypatch.setattr(build_prepare.os, "cpu_count", lambda: 4)
    jobs = build_prepare.identifier_jobs([(False, (), ()), (False, ("-O3",), ()), (False, ("-O1",), ())], "9.0")
    out = build_prepare.make_identifier_jobs(tmp_path / "build", jobs + jobs[:1], since=time.time())
    assert out["made"] == 3  # the repeated job made once
    starts = [t for kind, t in spans if kind == "start"]
    ends = [t for kind, t in spans if kind == "end"]
    assert len(starts) == 3 and max(starts) < min(ends)
