"""TileLang seed for level1/15_Conv1d: nn.Conv1d(64, 128, 3) (no padding) on (64, 64, 4096), fp32.

PyTorch -> TileLang (convolution as an implicit GEMM, im2col indexing):
  per sequence n:  out[o, l] = bias[o] + sum_{c, k} w[o, c, k] * in[c, l + k],  l < L - 2
      GEMM rows M     = output channels; A operand = the weight viewed (O, C*3), as stored
      GEMM columns N  = output positions l (L_out = 4094 is not a multiple of the 128-wide tile:
                        the last tile's loads give 0 and its stores are skipped, by T.if_then_else
                        and an `if` on l < L_out)
      reduction K     = (c, k) flattened, K = C*3
  im2col              -> gathered while staging the B tile: B[kk, l] = in[kk // 3, l + kk % 3]
  the GEMM            -> register-tiled fp32 on CUDA cores (exact fp32 for the 1e-4 tolerance):
                         128x128 tile per block, 8x8 accumulators per thread, T.Pipelined over K
  + bias              -> the epilogue; the batch is the grid's third axis
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BM, BN, BK, TM, TN = 128, 128, 16, 8, 8
THREADS = (BM // TM) * (BN // TN)


def conv1d_k3_kernel(batch: int, C: int, O: int, L: int, target=None):
    K, M, LO = C * 3, O, L - 2
    if M % BM or K % BK:
        raise ValueError(f"conv1d_k3_kernel: ({M}, {K}) is not a multiple of ({BM}, {BK})")

    @T.prim_func
    def conv1d_k3(X: T.Tensor((batch, C, L), "float32"), Wt: T.Tensor((O, K), "float32"),
                  Bias: T.Tensor((O,), "float32"), Y: T.Tensor((batch, O, LO), "float32")):
        with T.Kernel(T.ceildiv(LO, BN), M // BM, batch, threads=THREADS) as (bx, by, bz):
            As = T.alloc_shared((BK, BM), "float32")
            Bs = T.alloc_shared((BK, BN), "float32")
            acc = T.alloc_local((TM, TN), "float32")
            a = T.alloc_local((TM,), "float32")
            b = T.alloc_local((TN,), "float32")
            tid = T.get_thread_binding()
            ty = tid // (BN // TN)
            tx = tid % (BN // TN)
            for i, j in T.grid(TM, TN):
                acc[i, j] = 0.0
            for ko in T.Pipelined(K // BK, num_stages=2):
                for k, i in T.Parallel(BK, BM):
                    As[k, i] = Wt[by * BM + i, ko * BK + k]
                for k, j in T.Parallel(BK, BN):
                    kk = ko * BK + k
                    l = bx * BN + j
                    Bs[k, j] = T.if_then_else(l < LO, X[bz, kk // 3, l + kk % 3], T.float32(0))
                for kk in T.serial(BK):
                    for i in T.unroll(TM):
                        a[i] = As[kk, ty * TM + i]
                    for j in T.unroll(TN):
                        b[j] = Bs[kk, tx * TN + j]
                    for i, j in T.grid(TM, TN):
                        acc[i, j] += a[i] * b[j]
            for i, j in T.grid(TM, TN):
                o = by * BM + ty * TM + i
                l = bx * BN + tx * TN + j
                if l < LO:
                    Y[bz, o, l] = acc[i, j] + Bias[o]

    return tilelang.compile(conv1d_k3, out_idx=[3], target=target)


CHECK = [(conv1d_k3_kernel, {"batch": 64, "C": 64, "O": 128, "L": 4096})]


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        if kernel_size != 3:
            raise ValueError("this kernel is written for kernel_size 3")
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size)  # as the reference
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, length = x.shape
        o = self.conv.out_channels
        key = (n, c, o, length)
        if key not in self._kernels:
            self._kernels[key] = conv1d_k3_kernel(*key)
        return self._kernels[key](x.contiguous(), self.conv.weight.detach().view(o, c * 3), self.conv.bias.detach())
