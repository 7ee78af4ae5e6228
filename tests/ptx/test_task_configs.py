"""Launch configurations of external pairs from the host code and the KernelBench task (issue 44 item 4)."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("tree_sitter_cuda")

from kernelmill.cudasrc.host_eval import HostTensor, Ptr, run_host  # noqa: E402
from kernelmill.ptx.evaluate.config import ConfigError, config_from_launch, config_from_meta  # noqa: E402

WRAPPER = r"""
#include <torch/extension.h>
#define TPB 256
template <typename scalar_t, int VEC>
__global__ void scale_kernel(const scalar_t* __restrict__ x, scalar_t* __restrict__ y, int n, float alpha) {}
__global__ void rows_kernel(const float* x, float* out, int rows, int cols) {}

static int pick_threads(int cols) {
    int t = 32;
    while (t < cols && t < 1024) t *= 2;
    return t;
}

torch::Tensor scale(torch::Tensor x, float alpha) {
    TORCH_CHECK(x.is_cuda(), "x must be CUDA");
    auto y = torch::empty_like(x);
    const int n = x.numel();
    constexpr int kVec = 4;
    int blocks = (n / kVec + TPB - 1) / TPB;
    if (n % kVec == 0) {
        AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scale", ([&] {
            scale_kernel<scalar_t, kVec><<<blocks, TPB, 0, at::cuda::getCurrentCUDAStream()>>>(
                x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), n, alpha);
        }));
    } else {
        scale_kernel<float, 1><<<(n + TPB - 1) / TPB, TPB>>>(x.data_ptr<float>(), y.data_ptr<float>(), n, alpha);
    }
    return y;
}

torch::Tensor row_sums(torch::Tensor x) {
    const int rows = x.size(0), cols = x.size(-1);
    std::vector<int64_t> shape;
    shape.push_back(rows);
    shape.push_back(1);
    auto out = torch::zeros(shape, x.options());
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    dim3 grid(std::min(rows, prop.multiProcessorCount * 4));
    dim3 block;
    block.x = pick_threads(cols);
    rows_kernel<<<grid, block, block.x * sizeof(float)>>>(x.data_ptr<float>(), out.data_ptr<float>(), rows, cols);
    return out;
}
"""


def test_locals_from_tensor_sizes_branches_and_dispatch():
    x = HostTensor([16, 1000], "float32")
    launches = run_host(WRAPPER, "scale", [x, 0.5])
    taken = [la for la in launches if la.taken]
    assert [(la.kernel, la.template_args) for la in taken] == [("scale_kernel", ["float", "4"])]
    la = taken[0]
    assert la.grid == [16, 1, 1] and la.block == [256, 1, 1] and la.shared_mem == 0 and not la.problem()
    assert la.args[2:] == [16000, 0.5] and la.args[1].tensor.origin == "empty"
    # the other dispatched type and the other branch, evaluated with the values before them
    others = {(la.kernel, tuple(la.template_args)) for la in launches if not la.taken}
    assert others == {("scale_kernel", ("double", "4")), ("scale_kernel", ("float", "1"))}
    odd = run_host(WRAPPER, "scale", [HostTensor([3, 7], "float32"), 1.0])
    assert [(la.template_args, la.grid) for la in odd if la.taken] == [(["float", "1"], [1, 1, 1])]


def test_vectors_device_properties_helpers_and_dim3_fields():
    (la,) = run_host(WRAPPER, "row_sums", [HostTensor([4096, 300], "float32")])
    assert la.grid == [528, 1, 1] and la.block == [512, 1, 1] and la.shared_mem == 2048
    out = la.args[1].tensor
    assert out.shape == [4096, 1] and out.origin == "zero"


def test_a_dim3_of_macros_is_a_constructor_not_a_function_declaration():
    """`dim3 threads(BLOCK_X, BLOCK_Y)` parses as a function declaration while the macros are
    names: its block was 1x1x1 (cuda-l1's a100-L2-4: wrong outputs and an illegal address on the GPU)."""
    src = """#define BLOCK_X 32
#define BLOCK_Y 8
__global__ void k(float* x, int n) {}
void run(float* x, int n) {
    const dim3 threads(BLOCK_X, BLOCK_Y);
    dim3 one(BLOCK_X);
    const dim3 blocks((n + BLOCK_X - 1) / BLOCK_X, 2);
    k<<<blocks, threads>>>(x, n);
    k<<<blocks, one>>>(x, n);
}"""
    first, second = run_host(src, "run", [Ptr(HostTensor([64], "float32")), 64])
    assert first.block == [32, 8, 1] and first.grid == [2, 2, 1] and not first.problem()
    assert second.block == [32, 1, 1]
    unknown = src.replace("#define BLOCK_Y 8\n", "")
    assert "BLOCK_Y" in run_host(unknown, "run", [Ptr(HostTensor([64], "float32")), 64])[0].problem()


def test_unknown_values_are_named_where_a_launch_needs_them():
    src = "__global__ void k(float* x, int n) {}\nvoid run(float* x, int n) { k<<<grid_of(n), 128>>>(x, n); }"
    (la,) = run_host(src, "run", [Ptr(HostTensor([64], "float32")), 64])
    assert "grid_of" in la.problem()
    with pytest.raises(ConfigError, match="grid_of"):
        config_from_launch(src, la)


def test_config_roles_scalars_templates_and_null_pointers():
    launches = run_host(WRAPPER, "scale", [HostTensor([16, 1000], "float32"), 0.5])
    cfg = config_from_launch(WRAPPER, next(la for la in launches if la.taken))
    assert cfg.kernel == "scale_kernel" and cfg.template_args == ["float", "4"]
    assert [(p.name, p.role, p.dtype, p.shape) for p in cfg.params] == [
        ("x", "in", "float32", [16, 1000]), ("y", "out", "float32", [16, 1000]),
        ("n", "scalar", "int32", []), ("alpha", "scalar", "float32", [])]
    assert cfg.params[3].value == 0.5
    dbl = config_from_launch(WRAPPER, next(la for la in launches if la.template_args[0] == "double"))
    assert dbl.params[0].dtype == "float64" and dbl.params[0].numel == 16000
    # a stored config round-trips with its instance
    assert config_from_meta(cfg.to_dict(), "scale_kernel").template_args == ["float", "4"]
    src = ("__global__ void k(const float* x, const float* bias, float* y, int n) {}\n"
           "void run(float* x, float* y, int n) { k<<<(n + 63) / 64, 64>>>(x, nullptr, y + 8, n - 8); }")
    (la,) = run_host(src, "run", [Ptr(HostTensor([100], "float32")), Ptr(HostTensor([100], "float32")), 100])
    cfg = config_from_launch(src, la)
    assert [(p.role, p.shape) for p in cfg.params[:3]] == [("in", [100]), ("in", [0]), ("inout", [92])]
    assert cfg.grid == [2, 1, 1]


def test_the_harness_launches_the_instance_of_a_template_and_a_plain_candidate():
    from kernelmill.ptx.evaluate.harness import harness_source, launch_name
    launches = run_host(WRAPPER, "scale", [HostTensor([16, 1000], "float32"), 0.5])
    cfg = config_from_launch(WRAPPER, next(la for la in launches if la.taken))
    template = ("template <typename scalar_t, int VEC>\n__global__ void scale_kernel(const scalar_t* x, scalar_t* y,"
                " int n, float alpha) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = alpha * x[i]; }\n")
    plain = ("__global__ void scale_kernel(const float* x, float* y, int n, float alpha) {"
             " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = alpha * x[i]; }\n")
    assert launch_name(template, cfg) == "scale_kernel<float, 4>"
    assert launch_name(plain, cfg) == "scale_kernel"
    assert "scale_kernel<float, 4><<<dim3(16, 1, 1)" in harness_source(template, cfg)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc")
def test_both_harnesses_compile(tmp_path):
    from kernelmill.ptx.evaluate.harness import Builder, harness_source
    launches = run_host(WRAPPER, "scale", [HostTensor([16, 1000], "float32"), 0.5])
    cfg = config_from_launch(WRAPPER, next(la for la in launches if la.taken))
    body = "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = alpha * x[i]; }\n"
    b = Builder(tmp_path)
    for src in ("template <typename scalar_t, int VEC>\n__global__ void scale_kernel(const scalar_t* x, scalar_t* y, "
                "int n, float alpha) " + body,
                "__global__ void scale_kernel(const float* x, float* y, int n, float alpha) " + body):
        res = b.build(harness_source(src, cfg))
        assert res.ok, res.error


REF = """
import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha
    def forward(self, x):
        return x * self.alpha
def get_inputs():
    return [torch.randn(8, 100)]
def get_init_inputs():
    return [0.25]
"""

CAND = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
cuda_src = r"""
__global__ void scale_kernel(const float* x, float* y, int n, float alpha) {}
torch::Tensor scale(torch::Tensor x, float alpha) {
    auto y = torch::empty_like(x);
    int n = x.numel();
    int threads = 128;
    int blocks = (n + threads - 1) / threads;
    scale_kernel<<<blocks, threads>>>(x.data_ptr<float>(), y.data_ptr<float>(), n, alpha);
    return y;
}
"""
raw_src = r"""
extern "C" __global__ void add_one(const float* x, float* y, int n) {}
"""
ext = load_inline(name="scale_ext", cpp_sources="torch::Tensor scale(torch::Tensor x, float alpha);",
                  cuda_sources=cuda_src, functions=["scale"])
raw = load_inline(name="raw_ext", cpp_sources="", cuda_sources=raw_src, functions=["add_one"])
class ModelNew(nn.Module):
    def __init__(self, alpha):
        super().__init__()
        self.alpha = alpha
    def forward(self, x):
        if not x.is_cuda or not torch.cuda.is_available():
            return x * self.alpha
        y = ext.scale(x.contiguous(), self.alpha)
        out = torch.empty_like(y)
        n = y.numel()
        raw.add_one(y.data_ptr(), out.data_ptr(), n, grid=((n + 255) // 256,), block=(256,))
        return out
'''


def test_trace_runs_the_wrapper_with_the_tasks_inputs_on_the_cpu():
    pytest.importorskip("torch")
    from kernelmill.ptx.evaluate.torch_trace import trace
    out = trace(REF, CAND)
    assert out["error"] == "", out
    got = {la["kernel"]: la for la in out["launches"]}
    c = got["scale_kernel"]["config"]
    assert c["grid"] == [7, 1, 1] and c["block"] == [128, 1, 1]
    assert [p["value"] for p in c["params"] if p["role"] == "scalar"] == [800, 0.25]
    # the tensor the C++ wrapper returned reached the next, Python-launched, kernel
    r = got["add_one"]["config"]
    assert r["grid"] == [4, 1, 1] and r["block"] == [256, 1, 1]
    assert [(p["role"], p["shape"]) for p in r["params"][:2]] == [("in", [8, 100]), ("out", [8, 100])]


def test_attach_matches_the_instance_by_the_signature():
    from kernelmill.ptx.evaluate.task_configs import attach_configs, same_instance
    from kernelmill.records import Pair

    def pair(sig):
        return Pair("u:k", "scale_kernel", "cuda", "", "", None, "sm_90", [], None, "x",
                    {"status": "ok", "signature": sig})
    f, d = pair("void scale_kernel<float, 4>(float const*, float*, int, float)"), pair(
        "void scale_kernel<double, 4u>(double const*, double*, int, float)")
    assert same_instance(f, ["float", "4"]) and not same_instance(f, ["double", "4"])
    assert same_instance(d, ["double", "4"])
    trace = {"launches": [{"kernel": "scale_kernel", "template_args": ["double", "4"], "taken": False,
                           "config": {"grid": [1], "block": [1], "params": []}}]}
    assert attach_configs([f, d], trace) == 1
    assert "config" not in f.meta and d.meta["config"]["origin"] == "task, branch not taken"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc")
def test_ptx_pairs_configures_a_tables_candidates_from_their_tasks(tmp_path):
    # the user's path: `kernelmill ptx pairs kernels.jsonl -o pairs.jsonl` (rows id, ref_code,
    # custom_code, as cuda-l1's) gives each pair its launch configuration from its own task;
    # --task does the same for candidate files; a bad row names the table and line
    import json

    from typer.testing import CliRunner

    from kernelmill.cli import app
    body = "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = alpha * x[i]; }"
    cand = CAND.replace("float alpha) {}", "float alpha) " + body)
    table, out = tmp_path / "kernels.jsonl", tmp_path / "pairs.jsonl"
    table.write_text(json.dumps({"id": "L9-1", "ref_code": REF, "custom_code": cand}) + "\n")
    r = CliRunner().invoke(app, ["ptx", "pairs", str(table), "-o", str(out)])
    assert r.exit_code == 0, r.output
    rows = {d["kernel_name"]: d for d in map(json.loads, out.read_text().splitlines())}
    cfg = rows["scale_kernel"]["meta"]["config"]
    assert cfg["grid"] == [7, 1, 1] and cfg["origin"] == "task" and "with a launch configuration" in r.output
    assert rows["scale_kernel"]["origin"].startswith(str(tmp_path / "pairs.jsonl.sources" / "L9-1.py"))
    # --task for a file, into another output: the same configuration
    f = tmp_path / "cand.py"
    f.write_text(cand)
    ref = tmp_path / "ref.py"
    ref.write_text(REF)
    r = CliRunner().invoke(app, ["ptx", "pairs", str(f), "--task", str(ref), "-o", str(tmp_path / "p2.jsonl")])
    assert r.exit_code == 0, r.output
    rows2 = {d["kernel_name"]: d for d in map(json.loads, (tmp_path / "p2.jsonl").read_text().splitlines())}
    assert rows2["scale_kernel"]["meta"]["config"]["grid"] == [7, 1, 1]
    table.write_text(table.read_text() + '{"id": "L9-2"}\n')
    r = CliRunner().invoke(app, ["ptx", "pairs", str(table), "-o", str(tmp_path / "p3.jsonl")])
    assert r.exit_code != 0 and "kernels.jsonl:2" in r.output
