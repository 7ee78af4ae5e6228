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
