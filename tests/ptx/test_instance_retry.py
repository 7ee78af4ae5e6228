"""Template instances that do not compile together: the pairs keep those that do (issue 44 item 4)."""

from __future__ import annotations

import shutil

import pytest

pytest.importorskip("tree_sitter_cuda")

SRC = r"""
#include <torch/extension.h>
template <typename scalar_t>
__global__ void softmax_rows(const scalar_t* x, scalar_t* y, int cols) {
    extern __shared__ scalar_t smem[];
    int r = blockIdx.x;
    smem[threadIdx.x] = x[r * cols + threadIdx.x];
    __syncthreads();
    y[r * cols + threadIdx.x] = smem[threadIdx.x];
}
torch::Tensor softmax(torch::Tensor x) {
    auto y = torch::empty_like(x);
    AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "softmax", ([&] {
        softmax_rows<scalar_t><<<x.size(0), x.size(1), x.size(1) * sizeof(scalar_t)>>>(
            x.data_ptr<scalar_t>(), y.data_ptr<scalar_t>(), x.size(1));
    }));
    return y;
}
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc")
def test_instances_that_conflict_are_dropped_one_by_one_not_all():
    # float and double instances both declare `extern __shared__ smem[]` with another type: nvcc
    # rejects the pair ("declaration is incompatible"), each alone compiles. Before, the unit fell
    # back to no instance at all and the kernel had no pair (CUDA-L1 L2-31, L2-67).
    from kernelmill.cudasrc.device import device_unit
    from kernelmill.ptx.pairs import PairConfig, pairs_for_cuda
    assert device_unit(SRC).instances == ["softmax_rows<float>", "softmax_rows<double>"]
    ((_, pairs),) = list(pairs_for_cuda(SRC, "x.cu", PairConfig(reroll=False)))
    ok = [p for p in pairs if p.meta["status"] == "ok"]
    assert [p.meta["signature"] for p in ok] == ["void softmax_rows<float>(float const*, float*, int)"]
    assert all(p.meta["status"] == "ok" for p in pairs)
    assert "softmax_rows<double>" in ok[0].meta["instances_lost"]
