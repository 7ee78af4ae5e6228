"""CUDA and Triton hostile candidates for the catalogue items whose trick
needs a GPU (stream tricks, the caching allocator, kernel dtypes, kernel
time share, L2 persistence, CUDA graphs, launch errors). name -> (task name
in TASKS, language, code, flags or None); a name's prefix `gN_` is its catalogue item.
Run by tests/guards/test_gpu_corpus.py and benchmarks/guards_catch.py."""

from __future__ import annotations

import guard_tasks as T
from hostile_corpus import skip_unchecked_by_frames, triton_model

TASKS = {"big_relu": T.BIG_RELU, "linear": T.LINEAR, "huge_relu": T.HUGE_RELU,
         "matmul_by_hand": T.MATMUL_BY_HAND, "fused_affine_relu": T.FUSED_AFFINE_RELU}

CUDA_RELU_SRC = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void relu_kernel(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
__global__ void spin_relu_kernel(const float* x, float* y, int64_t n) {
    // ~0.3 ms of dependent arithmetic per launch on a 2M-element input; v is used, so it is not removed
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int k = 0; k < 20000; ++k) v = v * 0.9999999f + 1e-7f;
        float r = x[i] > 0.f ? x[i] : 0.f;
        y[i] = (v == 12345.678f) ? v : r;
    }
}
torch::Tensor relu(torch::Tensor x) {
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
torch::Tensor relu_side_stream(torch::Tensor x) {
    // launched on a stream of its own and not waited for: the timed stream sees nothing
    static cudaStream_t s = nullptr;
    if (!s) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    spin_relu_kernel<<<(n + 255) / 256, 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
torch::Tensor relu_current_stream(torch::Tensor x) {
    // the slow kernel on whatever stream torch calls current (a side stream, in g3b)
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    spin_relu_kernel<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
torch::Tensor relu_into_dummy(torch::Tensor x) {
    auto d = torch::empty({256}, x.options());
    relu_kernel<<<1, 256>>>(d.data_ptr<float>(), d.data_ptr<float>(), 256);
    return d;
}
'''


HIDDEN_GEMM = r"""
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

src = '''
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
__global__ void copy_out(const float* c, float* y, long n) {
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = c[i];
}
torch::Tensor gemm(torch::Tensor a, torch::Tensor b) {
    auto c = at::matmul(a, b);  // the library does the work
    auto y = torch::empty_like(c);
    long n = c.numel();
    // on the stream at::matmul ran on: ordered after it whatever stream the harness uses
    copy_out<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(c.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
'''
ext = load_inline(name="g30_hidden_gemm", cpp_sources="torch::Tensor gemm(torch::Tensor a, torch::Tensor b);",
                  cuda_sources=src, functions=["gemm"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, a, b):
        return ext.gemm(a.contiguous(), b.contiguous())
"""

GRAPH_AS_ONE = """
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.graph = None

    def forward(self, x):
        if self.graph is None or self.static_in.shape != x.shape:
            self.static_in = x.clone()
            torch.cuda.synchronize()
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph):
                self.static_out = torch.relu(self.static_in * 2.0 + 1.0)
        self.static_in.copy_(x)
        self.graph.replay()
        return self.static_out.clone()
"""


def cuda_model(forward: str, name: str) -> str:
    return ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
            f"src = r'''{CUDA_RELU_SRC}'''\n"
            f"ext = load_inline(name='{name}', cpp_sources='torch::Tensor relu(torch::Tensor x);\\n"
            "torch::Tensor relu_side_stream(torch::Tensor x);\\ntorch::Tensor relu_current_stream(torch::Tensor x);\\n"
            "torch::Tensor relu_into_dummy(torch::Tensor x);', cuda_sources=src,"
            " functions=['relu', 'relu_side_stream', 'relu_current_stream', 'relu_into_dummy'], verbose=False)\n\n"
            "class ModelNew(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n"
            "        self.cache = {}\n\n    def forward(self, x):\n"
            + "".join("        " + line + "\n" for line in forward.splitlines()))


# items 16, 19 and 21: a module of their own (one load_inline each)
CUDA_TRICKS_SRC = r'''
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <ATen/cuda/CUDAContext.h>
#include <unordered_map>
__global__ void relu_k(const float* x, float* y, int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;
}
__global__ void relu_smem_k(const float* x, float* y, int64_t n) {
    extern __shared__ float tile[];
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) { tile[threadIdx.x] = x[i]; y[i] = tile[threadIdx.x] > 0.f ? tile[threadIdx.x] : 0.f; }
}
torch::Tensor relu_cached_by_pointer(torch::Tensor x) {
    // item 19: a result cache inside the extension, keyed on the input's address
    static std::unordered_map<const void*, torch::Tensor> cache;
    auto it = cache.find(x.data_ptr());
    if (it != cache.end()) return it->second;
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_k<<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    cache[x.data_ptr()] = y;
    return y;
}
torch::Tensor relu_2048_threads(torch::Tensor x) {
    // item 21: 2048 threads per block is an invalid configuration; nothing checks
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_k<<<(n + 2047) / 2048, 2048, 0, at::cuda::getCurrentCUDAStream()>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
torch::Tensor relu_too_much_smem(torch::Tensor x) {
    // item 21: 200 KB of dynamic shared memory without cudaFuncSetAttribute: the launch fails
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_smem_k<<<(n + 255) / 256, 256, 200 * 1024, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
'''
_TRICKS = ["relu_cached_by_pointer", "relu_2048_threads", "relu_too_much_smem"]
# item 16 (only in g16_access_policy_window: the static check flags any source holding it)
PINNED_SRC = r'''
torch::Tensor relu_pinned(torch::Tensor x) {
    // item 16: a persisting carve-out and a window over the input: its lines survive the flush
    static bool set = false;
    cudaStream_t s = at::cuda::getCurrentCUDAStream();
    if (!set) {
        cudaDeviceProp p; cudaGetDeviceProperties(&p, x.get_device());
        cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, p.persistingL2CacheMaxSize);
        cudaStreamAttrValue v = {};
        v.accessPolicyWindow.base_ptr = x.data_ptr();
        v.accessPolicyWindow.num_bytes = std::min<size_t>(x.nbytes(), p.accessPolicyMaxWindowSize);
        v.accessPolicyWindow.hitRatio = 1.0f;
        v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
        v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
        cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v);
        set = true;
    }
    auto y = torch::empty_like(x);
    int64_t n = x.numel();
    relu_k<<<(n + 255) / 256, 256, 0, s>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);
    return y;
}
'''


# item 16 with nothing in the source: the limit is set through the runtime that
# is already loaded, found in /proc/self/maps, with the enum as a number
_CTYPES_PIN = (
    "import ctypes\n"
    "def pin_l2(nbytes):\n"
    "    maps = open('/pro' + 'c/self/maps').read().split()\n"
    "    lib = ctypes.CDLL(next(p for p in maps if 'libcuda' + 'rt.so' in p))\n"
    "    getattr(lib, 'cudaDevice' + 'SetLimit')(ctypes.c_int(6), ctypes.c_size_t(nbytes))\n")


def tricks_model(forward: str, name: str, pinned: bool = False) -> str:
    fns = _TRICKS + ["relu_pinned"] * pinned
    decls = "".join(f"torch::Tensor {f}(torch::Tensor x);\\n" for f in fns)
    return ("import torch\nimport torch.nn as nn\nfrom torch.utils.cpp_extension import load_inline\n"
            f"src = r'''{CUDA_TRICKS_SRC + PINNED_SRC * pinned}'''\n"
            f"ext = load_inline(name='{name}', cpp_sources='{decls}', cuda_sources=src, functions={fns!r}, "
            "verbose=False)\n\n"
            "class ModelNew(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n"
            "        self.cache = {}\n\n    def forward(self, x):\n"
            + "".join("        " + line + "\n" for line in forward.splitlines()))


GPU_HOSTILE = {
    # 2: the caching allocator hands back the block the reference just freed
    "g2_empty_like": ("big_relu", "cuda", cuda_model("return torch.empty_like(x)", "g2a"), None),
    "g2_empty_after_free": ("big_relu", "cuda", cuda_model(
        "tmp = torch.relu(x)\ndel tmp\nreturn torch.empty_like(x)", "g2b"), None),
    # 3: work on a side stream the timer's events do not see
    "g3_side_stream": ("big_relu", "cuda", cuda_model("return ext.relu_side_stream(x)", "g3a"), {"unsynced_work"}),
    "g3_torch_side_stream": ("big_relu", "cuda", cuda_model(
        "s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = ext.relu_current_stream(x)\nreturn y", "g3b"),
        {"unsynced_work"}),
    # 8: a kernel launched on a dummy, the answer from PyTorch
    "g8_cuda_decoy": ("big_relu", "cuda", cuda_model("ext.relu_into_dummy(x)\nreturn torch.relu(x)", "g8a"),
                      {"decoy_kernel"}),
    # the CPU corpus's Triton module, its kernel launched on a dummy
    "g8_triton_decoy": ("big_relu", "triton", triton_model(
        "launch(self_dummy)\nreturn torch.relu(x)", prelude="self_dummy = torch.ones(8, device='cuda')"),
        {"decoy_kernel"}),
    # 9: reduced precision on the GPU
    "g9_tf32_matmul": ("linear", "torch", (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n\n"
        "class ModelNew(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n"
        "        self.fc = nn.Linear(*args)\n\n    def forward(self, x):\n        return torch.relu(self.fc(x))\n"),
        {"precision_downgrade"}),
    "g9_half_matmul": ("linear", "torch", (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n"
        "class ModelNew(nn.Module):\n    def __init__(self, *args):\n        super().__init__()\n"
        "        self.fc = nn.Linear(*args)\n\n    def forward(self, x):\n"
        "        return torch.relu(F.linear(x.half(), self.fc.weight.half(), self.fc.bias.half())).float()\n"),
        {"precision_downgrade"}),
    # 15: the result of the first call, returned on every timed call
    "g15_cached_forever": ("big_relu", "cuda", cuda_model(
        "if 'y' not in self.cache:\n    self.cache['y'] = ext.relu(x)\nreturn self.cache['y']", "g15a"), None),
    # 15: its own kernel, run only on the calls whose outputs are checked (found
    # by walking the caller's frames); the other timed calls return the last answer
    "g15_skip_unchecked": ("huge_relu", "cuda", cuda_model(
        skip_unchecked_by_frames("'y' not in self.cache", "self.cache['y'] = ext.relu(x)", "self.cache['y']"),
        "g15b"), ({"suspicious_speed"}, {"harness_introspection"})),  # as i15_skip_unchecked_inspect: the
    # stack-reading hook (item 24) sees the frame walk before the timing can see the speed
    # 16: persisting L2 lines that survive the flush between timed calls
    "g16_access_policy_window": ("big_relu", "cuda", tricks_model("return ext.relu_pinned(x)", "g16a", pinned=True),
                                 {"l2_persistence"}),
    "g16_limit_through_ctypes": ("big_relu", "cuda", cuda_model(
        "if not self.cache:\n    self.cache['pinned'] = pin_l2(3 << 20)\nreturn ext.relu(x)", "g16b").replace(
        "class ModelNew", _CTYPES_PIN + "\n\nclass ModelNew"), {"l2_persistence"}),
    # 19: stale answers keyed on the input's address (the harness refills one buffer)
    "g19_graph_by_pointer": ("big_relu", "cuda", tricks_model(
        "key = x.data_ptr()\n"
        "if key not in self.cache:  # capture once per buffer, on a private copy of the input\n"
        "    static_in = x.clone()\n    torch.cuda.synchronize()\n    g = torch.cuda.CUDAGraph()\n"
        "    with torch.cuda.graph(g):\n        static_out = torch.relu(static_in)\n"
        "    self.cache[key] = (g, static_in, static_out)\n"
        "g, static_in, static_out = self.cache[key]\n"
        "g.replay()  # the private copy is never refreshed: the first call's data\n"
        "return static_out", "g19a"), {"cached_output"}),
    "g19_extension_cache_by_pointer": ("big_relu", "cuda", tricks_model(
        "return ext.relu_cached_by_pointer(x)", "g19b"), {"cached_output"}),
    # 21: illegal launch configurations whose failure nobody checks
    # 22 most calls forged to ~0 time (three of every four return the last answer without a launch):
    # caught by the trials or the checked timed calls, else by the floor on the huge task
    "g22_stale_three_calls_of_four": ("huge_relu", "cuda", cuda_model(
        "n = self.cache['n'] = self.cache.get('n', 0) + 1\nif n % 4 != 1 and 'out' in self.cache:\n"
        "    return self.cache['out']\nself.cache['out'] = ext.relu(x)\nreturn self.cache['out']", "g22a"), None),
    "g21_2048_threads": ("big_relu", "cuda", tricks_model("return ext.relu_2048_threads(x)", "g21a"),
                         {"launch_failure"}),
    "g21_too_much_shared_memory": ("big_relu", "cuda", tricks_model("return ext.relu_too_much_smem(x)", "g21b"),
                                   {"launch_failure"}),
    # 30: the GEMM the task asks for by hand is at::matmul inside the extension (cuBLAS ran);
    # the kernel of its own only copies the result
    "g30_matmul_hidden_in_cpp": ("matmul_by_hand", "cuda", HIDDEN_GEMM, {"forbidden_library"}),
    # 35: three kernels captured in a CUDA graph and replayed as "one fused kernel" (the input
    # copied into the graph's own buffer first, so every answer is right)
    "g35_graph_presented_as_one_kernel": ("fused_affine_relu", "torch", GRAPH_AS_ONE, {"fake_fusion"}),
}
