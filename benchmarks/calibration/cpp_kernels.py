"""C++ candidates of the calibration suite: CPU loops through torch's ``load_inline``
(``cpp_sources`` only), the style of an LLM's first CPU kernel. Each runs on a CPU."""

from __future__ import annotations

from families import Kernel

_MODULE = '''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <torch/extension.h>
#include <cmath>
#include <vector>
{src}
"""

ext = load_inline(name="cal_cpp_{ident}", cpp_sources=cpp_source, functions=["{fn}"], extra_cflags=["-O2"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, {args}):
        return ext.{fn}({call})
'''

# row-wise ops: float* x (rows x cols) -> float* y; ROW_OUT: one value per row
_ROW = '''
torch::Tensor {fn}(torch::Tensor x) {{
    auto xc = x.contiguous();
    const int64_t cols = xc.size(-1), rows = xc.numel() / cols;
    auto y = {alloc};
    const float* X = xc.data_ptr<float>();
    float* Y = y.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {{
        const float* row = X + r * cols;
        {body}
    }}
    return y;
}}
'''


def _row(task: str, name: str, kind: str, style: str, why: str, body: str, per_row: bool) -> Kernel:
    fn = f"{task}_{name}"
    alloc = ("torch::empty({rows}, xc.options())" if per_row else "torch::empty_like(xc)")
    src = _ROW.format(fn=fn, alloc=alloc, body=body if per_row else "float* out = Y + r * cols;\n        " + body)
    return Kernel(task, name, kind, "cpp", style, why,
                  _MODULE.format(src=src, ident=fn, fn=fn, args="x", call="x"), devices=("cpu",))


def kernels() -> list[Kernel]:
    out = [
        _row("rowmax", "unroll16_tail_missed", "wrong", "missed_tail",
             "the max loop unrolled by 16 with no remainder loop: columns 992-999 never read",
             "float m = -INFINITY;\n        for (int64_t j = 0; j + 16 <= cols; j += 16)\n"
             "            for (int u = 0; u < 16; ++u) m = std::max(m, row[j + u]);\n        Y[r] = m;", True),
        _row("rowmax", "scalar", "control", "other_formula", "a plain scalar max loop",
             "float m = -INFINITY;\n        for (int64_t j = 0; j < cols; ++j) m = std::max(m, row[j]);\n        Y[r] = m;", True),
        _row("rowsum", "uninitialised_accumulator", "wrong", "uninitialised_memory",
             "accumulates into the output allocated with torch::empty, never zeroed (right only where the memory was 0)",
             "for (int64_t j = 0; j < cols; ++j) Y[r] += row[j];", True),
        _row("rowsum", "kahan", "control", "kahan", "Kahan-compensated float sum",
             "float s = 0.f, c = 0.f;\n        for (int64_t j = 0; j < cols; ++j) {\n"
             "            float yv = row[j] - c; float t = s + yv; c = (t - s) - yv; s = t;\n        }\n        Y[r] = s;", True),
        _row("softmax", "max_of_first_tile", "wrong", "missed_tail",
             "the max taken over the first 256 columns only: right unless exp overflows (a wide range)",
             "float m = -INFINITY;\n        for (int64_t j = 0; j < std::min<int64_t>(cols, 256); ++j) m = std::max(m, row[j]);\n"
             "        float s = 0.f;\n        for (int64_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);\n"
             "        for (int64_t j = 0; j < cols; ++j) out[j] = std::exp(row[j] - m) / s;", False),
        _row("softmax", "online", "control", "online_softmax", "one pass with a running max and a rescaled sum",
             "float m = -INFINITY, s = 0.f;\n        for (int64_t j = 0; j < cols; ++j) {\n"
             "            float mn = std::max(m, row[j]);\n            s = s * std::exp(m - mn) + std::exp(row[j] - mn);\n"
             "            m = mn;\n        }\n        for (int64_t j = 0; j < cols; ++j) out[j] = std::exp(row[j] - m) / s;",
             False),
        _row("cumsum", "block_carry_missed", "wrong", "missed_carry",
             "scanned in blocks of 256 without adding the previous blocks' carry",
             "for (int64_t b = 0; b < cols; b += 256) {\n            float acc = 0.f;\n"
             "            for (int64_t j = b; j < std::min(cols, b + 256); ++j) { acc += row[j]; out[j] = acc; }\n        }",
             False),
        _row("cumsum", "double_running", "control", "fp64_accumulate", "the running sum kept in double",
             "double acc = 0.0;\n        for (int64_t j = 0; j < cols; ++j) { acc += row[j]; out[j] = (float)acc; }", False),
        _row("layernorm", "eps_outside_sqrt", "wrong", "wrong_formula",
             "1 / (sqrt(var) + eps) instead of 1 / sqrt(var + eps): a ~1e-5 relative shift",
             "double mu = 0;\n        for (int64_t j = 0; j < cols; ++j) mu += row[j];\n        mu /= cols;\n"
             "        double var = 0;\n        for (int64_t j = 0; j < cols; ++j) var += (row[j] - mu) * (row[j] - mu);\n"
             "        var /= cols;\n        float inv = 1.0f / ((float)std::sqrt(var) + 1e-5f);\n"
             "        for (int64_t j = 0; j < cols; ++j) out[j] = (row[j] - (float)mu) * inv;", False),
        _row("layernorm", "welford", "control", "welford", "Welford's running mean and M2 in float",
             "float mean = 0.f, m2 = 0.f;\n        for (int64_t j = 0; j < cols; ++j) {\n"
             "            float d = row[j] - mean; mean += d / (j + 1); m2 += d * (row[j] - mean);\n        }\n"
             "        float inv = 1.0f / std::sqrt(m2 / cols + 1e-5f);\n"
             "        for (int64_t j = 0; j < cols; ++j) out[j] = (row[j] - mean) * inv;", False),
        _row("cross_entropy", "double_rows", "control", "fp64_accumulate", "per-row logsumexp in double",
             "double m = -INFINITY;\n        for (int64_t j = 0; j < cols; ++j) m = std::max(m, (double)row[j]);\n"
             "        double s = 0;\n        for (int64_t j = 0; j < cols; ++j) s += std::exp(row[j] - m);\n"
             "        Y[r] = (float)(m + std::log(s));", True),
    ]
    # cross entropy's wrapper: the per-row logsumexp above, the gather and mean in the module
    ce = out[-1]
    out[-1] = Kernel(ce.task, ce.name, ce.kind, ce.language, ce.style, ce.why,
                     ce.code.replace("def forward(self, x):\n        return ext.cross_entropy_double_rows(x)",
                                     "def forward(self, x, t):\n        lse = ext.cross_entropy_double_rows(x)\n"
                                     "        return (lse - x.gather(1, t[:, None]).squeeze(1)).mean()"),
                     ce.devices)
    out += [_elementwise("silu", "vector8_tail_missed", "wrong", "missed_tail",
                         "8-wide vector loop with no scalar remainder: the last 99900 % 8 = 4 outputs never written "
                         "(torch::empty)",
                         "for (int64_t i = 0; i + 8 <= n; i += 8)\n"
                         "        for (int u = 0; u < 8; ++u) { float v = X[i + u]; Y[i + u] = v / (1.f + std::exp(-v)); }"),
            _elementwise("silu", "scalar", "control", "other_formula", "x / (1 + exp(-x)), one element at a time",
                         "for (int64_t i = 0; i < n; ++i) { float v = X[i]; Y[i] = v / (1.f + std::exp(-v)); }"),
            _matmul("k_tail_missed", "wrong", "missed_tail", "K blocked by 64 with no remainder block: 1000 % 64 = 40 dropped",
                    "for (int64_t k0 = 0; k0 + 64 <= K; k0 += 64)\n"
                    "        for (int64_t i = 0; i < M; ++i)\n"
                    "            for (int64_t k = k0; k < k0 + 64; ++k) {\n"
                    "                float a = A[i * K + k];\n"
                    "                for (int64_t j = 0; j < N; ++j) C[i * N + j] += a * B[k * N + j];\n            }"),
            _matmul("ikj", "control", "summation_order", "the i-k-j loop: each output summed over K in order, "
                    "no BLAS blocking",
                    "for (int64_t i = 0; i < M; ++i)\n        for (int64_t k = 0; k < K; ++k) {\n"
                    "            float a = A[i * K + k];\n"
                    "            for (int64_t j = 0; j < N; ++j) C[i * N + j] += a * B[k * N + j];\n        }")]
    return out


def _elementwise(task, name, kind, style, why, body) -> Kernel:
    fn = f"{task}_{name}"
    src = (f"torch::Tensor {fn}(torch::Tensor x) {{\n    auto xc = x.contiguous();\n    auto y = torch::empty_like(xc);\n"
           f"    const float* X = xc.data_ptr<float>();\n    float* Y = y.data_ptr<float>();\n    const int64_t n = xc.numel();\n"
           f"    {body}\n    return y;\n}}\n")
    return Kernel(task, name, kind, "cpp", style, why, _MODULE.format(src=src, ident=fn, fn=fn, args="x", call="x"),
                  devices=("cpu",))


def _matmul(name, kind, style, why, body) -> Kernel:
    fn = f"matmul_{name}"
    src = (f"torch::Tensor {fn}(torch::Tensor a, torch::Tensor b) {{\n    auto ac = a.contiguous(), bc = b.contiguous();\n"
           f"    const int64_t M = ac.size(0), K = ac.size(1), N = bc.size(1);\n"
           f"    auto c = torch::zeros({{M, N}}, ac.options());\n"
           f"    const float* A = ac.data_ptr<float>();\n    const float* B = bc.data_ptr<float>();\n    float* C = c.data_ptr<float>();\n"
           f"    {body}\n    return c;\n}}\n")
    return Kernel("matmul", name, kind, "cpp", style, why, _MODULE.format(src=src, ident=fn, fn=fn, args="x, w", call="x, w"),
                  devices=("cpu",))
