"""torch's `load(name, sources=[file.cu])` candidates on a GPU (cuda-l1 L2-35's style): built once
by the fast builder (the run process finds the build, compiles nothing), ok, their own kernel in
the provenance and no `torch_fallback`; the same candidate given a `build_directory` goes through
torch's own path and is not a fallback either (the tenth session's false flag on an H200)."""

from __future__ import annotations

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples

pytestmark = pytest.mark.gpu

TASK = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * 2.0

def get_inputs():
    return [torch.randn(4096, 1024)]

def get_init_inputs():
    return []
'''

CANDIDATE = r'''
import os
import tempfile

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load

SRC = r"""
#include <torch/extension.h>
__global__ void twice_from_load(const float* x, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.f * x[i];
}
torch::Tensor twice(torch::Tensor x) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    long n = xc.numel();
    twice_from_load<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &twice, "2x"); }
"""
folder = tempfile.mkdtemp()
with open(os.path.join(folder, "twice_cuda.cu"), "w") as f:
    f.write(SRC)
ext = load(name="km_twice_load", sources=[os.path.join(folder, "twice_cuda.cu")]BUILD_DIR)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.forward(x)
'''


PATHS = {"fast_builder": "", "torch_path": ", build_directory=folder"}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_cuda_load_candidate_is_its_own(tmp_path, path):
    # fast_builder: built once by kernelmill's builder (its first device run found the split
    # host unit lacking cuda_runtime.h: a false compile_error); torch_path: `build_directory`
    # keeps torch's own `load`, whose module is not in sys.modules (the tenth session's false
    # torch_fallback)
    task = Task(task_id="t/twice", code=TASK, name="twice", level=1)
    samples = [Sample(path, "t/twice", "cuda", CANDIDATE.replace("BUILD_DIR", PATHS[path]))]
    config = VerifyConfig(device="cuda", trials=2, cache_dir=str(tmp_path / "cache"))
    (v,) = verify_samples({task.task_id: task}, samples, config)
    print(v.sample_id, v.status, v.flags, v.phases.get("build_s"), v.phases.get("load_s"), v.provenance)
    assert v.status == "ok", (v.sample_id, v.message)
    assert "torch_fallback" not in v.flags, v.sample_id
    own = [k for k in v.provenance["candidate"]["kernels"] if k["origin"] == "own"]
    assert own and "twice_from_load" in own[0]["symbol"], v.provenance
    if path == "fast_builder":
        # the build process compiled it; the run process loaded that build (torch's path compiles
        # it again there: 65-85 s per extension on an H200, cuda-l1 L2-35 and L2-90)
        assert v.phases["build_s"] > 1.0 and v.phases["load_s"] < 1.0, v.phases


PLAIN_TASK = '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x + 1.0

def get_inputs():
    return [torch.randn(4096, 1024)]

def get_init_inputs():
    return []
'''

PLAIN = '''
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return 1.0 + x
'''


def test_a_torch_labelled_load_builds_before_its_run_and_no_timing_waits_for_it(tmp_path):
    """cuda-l1 L2-35 and L2-90 (a .cu written to a file and `load`ed at import, labelled `torch`):
    on 0.5.9 the import compiled in the run process, which holds a share of the GPU's lock, and a
    timing of another run on that GPU waited for the whole compile (70-74 s on an H200,
    session_2026-11-29i). 0.5.10 gives such a candidate a build phase: its run imports the built
    extension, and the other run's timing does not wait for a compile."""
    tasks = {"t/twice": Task(task_id="t/twice", code=TASK, name="twice", level=1),
             "t/plus": Task(task_id="t/plus", code=PLAIN_TASK, name="plus", level=1)}
    samples = [Sample("torch_load", "t/twice", "torch", CANDIDATE.replace("BUILD_DIR", "")),
               Sample("plain", "t/plus", "torch", PLAIN)]
    config = VerifyConfig(device="cuda", trials=2, cache_dir=str(tmp_path / "cache"), runs_per_gpu=2, gpus=[0])
    verdicts = {v.sample_id: v for v in verify_samples(tasks, samples, config)}
    built, plain = verdicts["torch_load"], verdicts["plain"]
    print({k: (v.status, v.phases.get("build_s"), v.phases.get("timing_lock_wait_s"), v.measurement.get("timeline"))
           for k, v in verdicts.items()})
    assert built.status == "ok" and plain.status == "ok", (built.message, plain.message)
    assert (built.measurement.get("timeline") or {}).get("build"), built.measurement.get("timeline")
    assert built.measurement.get("build"), "the build phase's facts"
    assert (plain.phases.get("timing_lock_wait_s") or 0.0) < 10.0, plain.phases


TWO_FILES = r'''
import os

import torch
import torch.nn as nn
import torch.utils.cpp_extension

os.makedirs("cuda_code", exist_ok=True)
with open("cuda_code/twice_kernel.cu", "w") as f:
    f.write("""
#include <torch/extension.h>
#include <cuda_runtime.h>
__global__ void twice_two_files(const float* x, float* y, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = 2.f * x[i];
}
torch::Tensor twice_cuda(torch::Tensor x) {
    auto y = torch::empty_like(x);
    const int n = x.numel();
    const int blocks = min(65535, (n + 255) / 256);
    twice_two_files<<<blocks, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
""")
with open("cuda_code/twice.cpp", "w") as f:
    f.write("""
#include <torch/extension.h>
torch::Tensor twice_cuda(torch::Tensor x);
torch::Tensor twice(torch::Tensor x) { return twice_cuda(x.contiguous()); }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("forward", &twice, "2x"); }
""")
try:
    ext = torch.utils.cpp_extension.load(name="km_twice_two_files", sources=["cuda_code/twice.cpp", "cuda_code/twice_kernel.cu"],
                                         verbose=True, extra_cuda_cflags=["-O3"])
except Exception as exc:
    print("falling back:", exc)
    ext = None


class ModelNew(nn.Module):
    def forward(self, x):
        if ext is not None:
            return ext.forward(x)
        return x * 2.0
'''


def test_a_load_whose_host_code_calls_min_runs_its_own_kernel(tmp_path):
    """cuda-l1 L2-90's shape (a .cpp and a .cu written at import, `load`ed inside try/except,
    labelled torch; the .cu's host wrapper calls CUDA's `min(65535, blocks)`): on 0.5.10 the
    split host unit did not compile under the host compiler, the candidate caught the error and
    its PyTorch fallback was timed (ok, where torch's own build runs the CUDA kernel;
    session_2026-11-30). Its own kernel must run, and the run must not ask for a build again."""
    task = Task(task_id="t/twice", code=TASK, name="twice", level=1)
    config = VerifyConfig(device="cuda", trials=2, cache_dir=str(tmp_path / "cache"))
    (v,) = verify_samples({task.task_id: task}, [Sample("two_files", "t/twice", "torch", TWO_FILES)], config)
    print(v.status, v.flags, v.measurement.get("build"), v.measurement.get("timeline"), v.provenance)
    assert v.status == "ok", v.message
    own = [k for k in v.provenance["candidate"]["kernels"] if "twice_two_files" in k["symbol"]]
    assert own, v.provenance
    assert "rebuild" not in (v.measurement.get("timeline") or {}), v.measurement.get("timeline")
