"""TileLang seed for level1/16_Conv2d: nn.Conv2d(64, 128, 3, padding=1) on (16, 64, 128, 128), fp32.

PyTorch -> TileLang (convolution as an implicit GEMM, im2col indexing):
  per image n:  out[o, y*W + x] = bias[o] + sum_{c, ky, kx} w[o, c, ky, kx] * in[c, y+ky-1, x+kx-1]
      GEMM rows M     = output channels o; its A operand is the weight viewed (O, C*9), as stored
      GEMM columns N  = output pixels y*W + x (the output is NCHW, so each row is contiguous)
      reduction K     = (c, ky, kx) flattened, K = C*9
  im2col              -> never materialised: the B tile is gathered straight from the input while
                         staging, with T.if_then_else giving 0 outside the image (padding=1):
                         B[kk, n] = in[c, y+ky-1, x+kx-1], c = kk // 9, ky = kk % 9 // 3, kx = kk % 3
  the GEMM            -> register-tiled fp32 on CUDA cores (128x128 tile per block, 256 threads,
                         8x8 accumulators each, K in slices of 16 under T.Pipelined), exact fp32
                         as the task's 1e-4 tolerance needs (TF32 tensor cores would not meet it)
  + bias              -> the epilogue, one write; the batch is the grid's third axis
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BM, BN, BK, TM, TN = 128, 128, 16, 8, 8
THREADS = (BM // TM) * (BN // TN)


def conv3x3_kernel(batch: int, C: int, O: int, H: int, W: int, target=None):
    K, N, M = C * 9, H * W, O
    if M % BM or N % BN or K % BK:
        raise ValueError(f"conv3x3_kernel: GEMM ({M}, {N}, {K}) is not a multiple of ({BM}, {BN}, {BK})")

    @T.prim_func
    def conv3x3_same(X: T.Tensor((batch, C, H, W), "float32"), Wt: T.Tensor((O, K), "float32"),
                     Bias: T.Tensor((O,), "float32"), Y: T.Tensor((batch, O, N), "float32")):
        with T.Kernel(N // BN, M // BM, batch, threads=THREADS) as (bx, by, bz):
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
                for k, i in T.Parallel(BK, BM):  # weight (O, C*9) -> K-major tile
                    As[k, i] = Wt[by * BM + i, ko * BK + k]
                for k, j in T.Parallel(BK, BN):  # implicit im2col gather, zero padding
                    kk = ko * BK + k
                    n = bx * BN + j
                    iy = n // W + (kk % 9) // 3 - 1
                    ix = n % W + kk % 3 - 1
                    Bs[k, j] = T.if_then_else(iy >= 0 and iy < H and ix >= 0 and ix < W,
                                              X[bz, kk // 9, iy, ix], T.float32(0))
                for kk in T.serial(BK):
                    for i in T.unroll(TM):
                        a[i] = As[kk, ty * TM + i]
                    for j in T.unroll(TN):
                        b[j] = Bs[kk, tx * TN + j]
                    for i, j in T.grid(TM, TN):
                        acc[i, j] += a[i] * b[j]
            for i, j in T.grid(TM, TN):
                o = by * BM + ty * TM + i
                Y[bz, o, bx * BN + tx * TN + j] = acc[i, j] + Bias[o]

    return tilelang.compile(conv3x3_same, out_idx=[3], target=target)


CHECK = [(conv3x3_kernel, {"batch": 16, "C": 64, "O": 128, "H": 128, "W": 128})]


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        if kernel_size != 3:
            raise ValueError("this kernel is written for 3x3 convolutions with padding 1")
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)  # as the reference
        self._kernels = {}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, c, h, w = x.shape
        o = self.conv.out_channels
        key = (n, c, o, h, w)
        if key not in self._kernels:
            self._kernels[key] = conv3x3_kernel(*key)
        y = self._kernels[key](x.contiguous(), self.conv.weight.detach().view(o, c * 9), self.conv.bias.detach())
        return y.view(n, o, h, w)
