"""torch's `load(name, sources=[file])` (LLM-written candidates write their source to a temporary
file and load it) is built by the fast builder as `load_inline` of the file's text with no
implicit headers, where that is the same build: cached, so the run process finds the build
process's extension instead of compiling it again (torch's path recompiled it in every process:
65-85 s twice per candidate on an H200, cuda-l1 L2-35 and L2-90)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelmill.verify.build.inline_build import load_as_inline

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def files(tmp_path):
    def write(name: str, text: str = "int f() { return 1; }\n") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)
    return write


def test_one_cpp_and_one_cuda_file_map_to_load_inline(files):
    got = load_as_inline("ext", [files("a.cpp", "// host\n"), files("k.cu", "// kernel\n")], extra_cflags=["-O2"])
    assert got["cpp_sources"] == "// host\n" and got["cuda_sources"] == "// kernel\n"
    assert got["no_implicit_headers"] and got["extra_cflags"] == ["-O2"] and got["name"] == "ext"
    only_cuda = load_as_inline("ext", files("k.cu", "// kernel\n"))  # a str, as torch takes it
    assert only_cuda["cpp_sources"] == "" and only_cuda["cuda_sources"] == "// kernel\n"
    assert load_as_inline("ext", [files("a.cc")])["cuda_sources"] is None


@pytest.mark.parametrize("case", ["two_cpp", "header", "quoted_include", "build_directory", "standalone",
                                  "unknown_argument", "missing_file", "not_python_module"])
def test_what_would_not_be_the_same_build_stays_with_torch(files, case):
    one = [files("a.cpp")]
    calls = {
        "two_cpp": lambda: load_as_inline("e", [files("a.cpp"), files("b.cpp")]),
        "header": lambda: load_as_inline("e", [files("a.h")]),
        "quoted_include": lambda: load_as_inline("e", [files("a.cpp", '#include "mine.h"\nint x;\n')]),
        "build_directory": lambda: load_as_inline("e", one, build_directory="/tmp/b"),
        "standalone": lambda: load_as_inline("e", one, is_standalone=True),
        "unknown_argument": lambda: load_as_inline("e", one, future_option=1),
        "missing_file": lambda: load_as_inline("e", ["/nonexistent/k.cu"]),
        "not_python_module": lambda: load_as_inline("e", one, is_python_module=False),
    }
    assert calls[case]() is None


SCRIPT = """
import json, sys
sys.path.insert(0, {guards!r})
from honest_corpus import CPP_RELU_TORCH_LOAD
from kernelmill.verify.build.inline_build import builder_log, install
install(sys.argv[1])
ns = {{}}
exec(CPP_RELU_TORCH_LOAD, ns)  # writes its source to a new temporary folder, then load()s it
import torch
x = torch.randn(64)
print(json.dumps({{"log": builder_log(), "right": bool(torch.equal(ns["ModelNew"]()(x), x.relu())),
                  "registered": "guards_honest_relu_load" in sys.modules}}))
"""


def test_a_load_built_in_one_process_is_found_by_the_next(tmp_path):
    script = tmp_path / "load_twice.py"
    script.write_text(SCRIPT.format(guards=str(ROOT / "tests" / "guards")))
    runs = [json.loads(subprocess.run([sys.executable, str(script), str(tmp_path / "cache")], check=True,
                                      capture_output=True, text=True).stdout.strip().splitlines()[-1])
            for _ in range(2)]
    first, second = runs
    assert first["log"]["load"] == "as load_inline" and first["log"]["compiles"] >= 1
    assert second["log"]["warm"] and "compiles" not in second["log"]  # found, not compiled again
    assert first["right"] and second["right"] and first["registered"] and second["registered"]


def test_a_cuda_file_alone_plans_as_a_module_the_candidate_wrote(files):
    """cuda-l1 L2-35's shape: one .cu file holding kernel, host code and PYBIND11_MODULE.
    Mapped, it is an empty main.cpp and that file as cuda.cu; the slim builder plans it as it
    plans such a module given to load_inline (the CUDA build itself needs a GPU machine's torch:
    not run on one yet)."""
    from kernelmill.verify.build.cuda_split import split_cuda_unit
    from kernelmill.verify.build.inline_build import assemble
    from kernelmill.verify.build.slim_units import plan

    cu = """#include <torch/extension.h>
__global__ void twice(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.f * x[i];
}
torch::Tensor twice_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &twice_cuda, "doubles x"); }
"""
    args = load_as_inline("fused_ops", files("fused_ops_cuda.cu", cu))
    main, cuda = assemble(args["name"], args["cpp_sources"], args["cuda_sources"], None, True,
                          args["no_implicit_headers"])
    assert main == "" and cuda == cu  # nothing added to either: what torch's load compiles
    split = split_cuda_unit(cuda)
    p = plan(main, "fused_ops", split.host_unit if split else None, True)
    assert split is not None and p is not None and p.merged  # the slim path, host code and binding as one
    assert '"forward", "doubles x"' in p.shim and "PyInit_fused_ops" in p.shim  # bound under its own names


def test_a_load_in_init_is_built_by_a_build_worker_then_run(tmp_path):
    """A `load()` the import does not reach (in `__init__`, as cuda-l1 L1-3 writes it): the run
    phase stops for it, a build worker builds it into the cache, the run starts again and is ok."""
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    from guard_tasks import RELU
    from honest_corpus import CPP_RELU_TORCH_LOAD

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    eager = 'ext = load(name="guards_honest_relu_load", sources=[os.path.join(folder, "relu.cpp")], verbose=False)\n'
    assert eager in CPP_RELU_TORCH_LOAD
    code = CPP_RELU_TORCH_LOAD.replace(eager, "").replace("class ModelNew(nn.Module):\n", (
        "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        global ext\n"
        "        " + eager + "\n"))
    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, cache_dir=str(tmp_path / "cache"),
                       guards="standard", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                              max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample("lazy_load", RELU.task_id, "cpp", code)], cfg)
    assert (v.status, v.flags) == ("ok", []), v.message
    assert v.phases.get("deferred_builds") == 1, v.phases


def test_a_candidate_of_any_language_that_names_the_extension_builder_builds_in_the_build_phase():
    from kernelmill.languages import get_language

    torch_lang = get_language("torch")
    assert torch_lang.builds_extension("from torch.utils.cpp_extension import load\next = load('e', ['k.cu'])\n")
    assert torch_lang.builds_extension("import torch.utils.cpp_extension as ce\n")
    assert torch_lang.builds_extension("from torch.utils.cpp_extension import load_inline\n")
    assert not torch_lang.builds_extension("import torch\ny = torch.relu(x)  # loads nothing\n")
    assert get_language("cuda").builds_extension("import torch\n")  # the language compiles whatever the text


def test_a_torch_labelled_candidate_that_loads_an_extension_at_import_is_built_before_its_run(tmp_path):
    """cuda-l1 L2-35 and L2-90, labelled `torch` (no `load_inline` in them): their import compiled
    in the run process, while the run held its share of the GPU's lock, and another run's timing on
    that GPU waited 70-74 s (session_2026-11-29i). Now the build phase builds it (a CPU process,
    the builder's cache) and the run imports what it made."""
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    from guard_tasks import RELU
    from honest_corpus import CPP_RELU_TORCH_LOAD

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, cache_dir=str(tmp_path / "cache"),
                       guards="standard", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                              max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample("torch_label_load", RELU.task_id, "torch",
                                                        CPP_RELU_TORCH_LOAD)], cfg)
    assert v.status == "ok", v.message
    timeline = v.measurement.get("timeline") or {}
    assert timeline.get("build"), timeline  # a build phase ran before the run
    built = v.measurement.get("build") or {}
    assert built.get("compiles", 0) >= 1 or built.get("warm"), built  # the builder made the extension there
    assert "build_s" not in v.phases or v.phases.get("load_s") is not None, v.phases


def test_a_candidate_that_catches_its_failed_build_says_so_in_its_verdict(tmp_path):
    """cuda-l1 L2-90 (session_2026-11-30): its extension did not compile under kernelmill's
    builder, the candidate caught the error and ran its PyTorch fallback, and the verdict read
    a plain ok. The verdict now carries the note `extension_build_failed` with the compiler's
    first error, and the run asks for no build again (the failure is kept)."""
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    from guard_tasks import RELU

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    code = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

try:
    ext = load_inline(name="km_breaks_then_falls_back", cpp_sources="torch::Tensor f(torch::Tensor x) { return undeclared_thing(x); }",
                      functions=["f"])
except Exception:
    ext = None


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.f(x) if ext is not None else torch.relu(x)
'''
    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, cache_dir=str(tmp_path / "cache"),
                       guards="standard", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                              max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample("falls_back", RELU.task_id, "torch", code)], cfg)
    # once: the build phase's builder noted it; the run meets the cached failure and adds nothing
    assert v.status == "ok" and v.flags.count("extension_build_failed") == 1, (v.status, v.flags, v.message)
    assert "undeclared_thing" in v.message and "error" in v.message, v.message
    assert "rebuild" not in (v.measurement.get("timeline") or {}), v.measurement.get("timeline")


def test_a_candidate_that_catches_a_failed_build_its_run_asked_for_says_so_too(tmp_path):
    """cuda-l1 l40 L1-31 (session_2026-11-30b): `load_inline` behind `torch.cuda.is_available()`
    (false in the CPU build process), so the run phase asks for the build; it fails (`functions=
    ["forward"]` names no function the source declares), the candidate catches it and runs F.elu.
    0.5.11 flagged it try_fallback/torch_fallback without the compiler's word: the deferred build's
    failure did not reach the verdict. It now carries `extension_build_failed` as the build phase's does."""
    sys.path.insert(0, str(ROOT / "tests" / "guards"))
    from guard_tasks import RELU

    from kernelmill.records import Sample
    from kernelmill.verify import TimingConfig, VerifyConfig, verify_samples

    code = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        try:
            # a source the build phase cannot work out ahead (lazy_builds leaves it to the run)
            src = "torch::Tensor g(torch::Tensor x) { return x.relu(); }" + chr(10) * len(type(self).__name__)
            self.ext = load_inline(name="km_run_asks_then_breaks", cpp_sources=src, functions=["forward"])
        except Exception:
            self.ext = None

    def forward(self, x):
        return self.ext.forward(x) if self.ext is not None else torch.relu(x)
'''
    cfg = VerifyConfig(device="cpu", trials=2, build_timeout=300, run_timeout=60, cache_dir=str(tmp_path / "cache"),
                       guards="standard", timing=TimingConfig(warmup_ms=5, round_ms=3, budget_ms=20, min_rounds=4,
                                                              max_rounds=6))
    (v,) = verify_samples({RELU.task_id: RELU}, [Sample("run_asks", RELU.task_id, "torch", code)], cfg)
    assert v.phases.get("deferred_builds") == 1, v.phases  # the run asked for it: the path under test
    assert v.status == "ok" and "extension_build_failed" in v.flags, (v.status, v.flags, v.message)
    assert "forward" in v.message and "error" in v.message, v.message
    assert "error" in (v.measurement.get("build") or {}).get("failed", ""), v.measurement.get("build")
