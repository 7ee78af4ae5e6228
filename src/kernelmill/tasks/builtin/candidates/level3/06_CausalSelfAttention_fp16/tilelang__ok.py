"""TileLang seed for level3/06_CausalSelfAttention_fp16: QKV projection, causal softmax
attention over 16 heads of 64, output projection, all in half precision.

PyTorch -> TileLang:
  self.qkv / self.out_proj (nn.Linear, fp16)
      -> linear_kernel: T.gemm on fp16 T.alloc_shared tiles into a float32 T.alloc_fragment,
         K walked by T.Pipelined (3 stages); the weight (out, in) is multiplied with
         transpose_B=True; bias added on the fp32 fragment; one rounding to fp16 (T.copy)
  .split(d) / .view(b, t, h, hd) / .transpose(1, 2)
      -> no copies: the attention kernel reads q, k and v of head h straight out of the
         (b, t, 3h, hd) view of the projection's output (head h, h + H, h + 2H)
  q @ k^T * scale, masked_fill(triu(1), -inf), softmax, @ v
      -> attention_kernel, flash-attention style: one T.Kernel block per (128 queries, head,
         batch); K/V tiles of 64 keys stream through T.alloc_shared under T.Pipelined, only
         the tiles at or below the diagonal (the causal mask prunes the rest of the loop);
         S = Q K^T by T.gemm(transpose_B=True) into a fragment pre-filled with 0 / -inf
         (the mask); an online softmax keeps the running row max (T.reduce_max, clear=False)
         and row sum (T.reduce_sum) and rescales the output accumulator by
         exp2((m_old - m_new) * scale * log2 e); P (cast to fp16) @ V by T.gemm; a final
         divide by the row sum. The (t x t) score matrix never exists in memory.
  .transpose(1, 2).reshape(b, t, d)
      -> the kernel writes O as (b, t, h, hd), which is already that layout
"""
import math

import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

LM, LN, LK = 128, 128, 64  # linear tiles
QB, KB = 128, 64  # attention: queries per block, keys per step


def linear_kernel(M: int, N: int, K: int, target=None):
    if M % LM or N % LN or K % LK:
        raise ValueError(f"linear_kernel: ({M}, {N}, {K}) is not a multiple of ({LM}, {LN}, {LK})")

    @T.prim_func
    def linear_fp16(X: T.Tensor((M, K), "float16"), W: T.Tensor((N, K), "float16"),
                    Bias: T.Tensor((N,), "float16"), Y: T.Tensor((M, N), "float16")):
        with T.Kernel(N // LN, M // LM, threads=256) as (bx, by):
            X_s = T.alloc_shared((LM, LK), "float16")
            W_s = T.alloc_shared((LN, LK), "float16")
            C_f = T.alloc_fragment((LM, LN), "float32")
            T.clear(C_f)
            for ko in T.Pipelined(K // LK, num_stages=3):
                T.copy(X[by * LM, ko * LK], X_s)
                T.copy(W[bx * LN, ko * LK], W_s)
                T.gemm(X_s, W_s, C_f, transpose_B=True)
            for i, j in T.Parallel(LM, LN):
                C_f[i, j] = C_f[i, j] + T.Cast("float32", Bias[bx * LN + j])
            T.copy(C_f, Y[by * LM, bx * LN])

    return tilelang.compile(linear_fp16, out_idx=[3], target=target)


def attention_kernel(batch: int, seq: int, heads: int, hd: int, target=None):
    if seq % QB or QB % KB:
        raise ValueError(f"attention_kernel: seq {seq} is not a multiple of {QB}")
    scale = (1.0 / math.sqrt(hd)) * 1.4426950408889634  # softmax in base 2: exp(x) = exp2(x log2 e)

    @T.prim_func
    def causal_attention(QKV: T.Tensor((batch, seq, 3 * heads, hd), "float16"),
                         O: T.Tensor((batch, seq, heads, hd), "float16")):
        with T.Kernel(seq // QB, heads, batch, threads=128) as (bq, h, b):
            Q_s = T.alloc_shared((QB, hd), "float16")
            K_s = T.alloc_shared((KB, hd), "float16")
            V_s = T.alloc_shared((KB, hd), "float16")
            S = T.alloc_fragment((QB, KB), "float32")
            P = T.alloc_fragment((QB, KB), "float16")
            acc = T.alloc_fragment((QB, hd), "float32")
            m = T.alloc_fragment((QB,), "float32")
            m_old = T.alloc_fragment((QB,), "float32")
            alpha = T.alloc_fragment((QB,), "float32")
            row = T.alloc_fragment((QB,), "float32")
            l = T.alloc_fragment((QB,), "float32")
            T.copy(QKV[b, bq * QB:(bq + 1) * QB, h, :], Q_s)
            T.clear(acc)
            T.clear(l)
            T.fill(m, -T.infinity("float32"))
            for kb in T.Pipelined((bq + 1) * QB // KB, num_stages=2):
                T.copy(QKV[b, kb * KB:(kb + 1) * KB, heads + h, :], K_s)
                for i, j in T.Parallel(QB, KB):  # the causal mask, added to by the GEMM
                    S[i, j] = T.if_then_else(bq * QB + i >= kb * KB + j, 0, -T.infinity("float32"))
                T.gemm(Q_s, K_s, S, transpose_B=True)
                T.copy(m, m_old)
                T.reduce_max(S, m, dim=1, clear=False)
                for i in T.Parallel(QB):
                    alpha[i] = T.exp2((m_old[i] - m[i]) * scale)
                for i, j in T.Parallel(QB, KB):
                    S[i, j] = T.exp2(S[i, j] * scale - m[i] * scale)
                T.reduce_sum(S, row, dim=1)
                for i in T.Parallel(QB):
                    l[i] = l[i] * alpha[i] + row[i]
                for i, j in T.Parallel(QB, hd):
                    acc[i, j] = acc[i, j] * alpha[i]
                T.copy(S, P)
                T.copy(QKV[b, kb * KB:(kb + 1) * KB, 2 * heads + h, :], V_s)
                T.gemm(P, V_s, acc)
            for i, j in T.Parallel(QB, hd):
                acc[i, j] = acc[i, j] / l[i]
            T.copy(acc, O[b, bq * QB:(bq + 1) * QB, h, :])

    return tilelang.compile(causal_attention, out_idx=[1], target=target)


CHECK = [(linear_kernel, {"M": 8 * 1024, "N": 3 * 1024, "K": 1024}),
         (attention_kernel, {"batch": 8, "seq": 1024, "heads": 16, "hd": 64}),
         (linear_kernel, {"M": 8 * 1024, "N": 1024, "K": 1024})]


class ModelNew(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        self.num_heads = num_heads
        self.qkv = nn.Linear(d_model, 3 * d_model, dtype=torch.float16)  # as the reference, same order
        self.out_proj = nn.Linear(d_model, d_model, dtype=torch.float16)
        self._kernels = {}

    def _kernel(self, key, factory):
        if key not in self._kernels:
            self._kernels[key] = factory(*key[1:])
        return self._kernels[key]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        h = self.num_heads
        rows = b * t
        qkv = self._kernel(("lin", rows, 3 * d, d), linear_kernel)(
            x.contiguous().view(rows, d), self.qkv.weight.detach(), self.qkv.bias.detach())
        o = self._kernel(("attn", b, t, h, d // h), attention_kernel)(qkv.view(b, t, 3 * h, d // h))
        y = self._kernel(("lin", rows, d, d), linear_kernel)(
            o.view(rows, d), self.out_proj.weight.detach(), self.out_proj.bias.detach())
        return y.view(b, t, d)
