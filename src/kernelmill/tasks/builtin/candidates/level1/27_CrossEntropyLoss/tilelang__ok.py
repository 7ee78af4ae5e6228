"""TileLang seed for level1/27_CrossEntropyLoss: F.cross_entropy(logits, targets), mean over rows.

PyTorch -> TileLang:
  log_softmax + nll per row       -> one T.Kernel block per row, logits read once:
      online softmax per thread      two (1, BLK) T.alloc_fragment buffers hold each thread's
                                     running max and running sum of exp (rescaled by
                                     exp(old_max - new_max) when the max grows), over a T.serial
                                     loop of BLK-wide T.Parallel chunks
      combine the threads            T.reduce_max of the maxima, then sum * exp(max_j - max) and
                                     T.reduce_sum: the row's logsumexp
      the target's logit             a gather: X[r, targets[r]] (targets as int64)
  mean over rows                  -> a second kernel (one block) sums the per-row losses, * 1/rows
"""
import torch
import torch.nn as nn
import tilelang
import tilelang.language as T

BLK = 1280  # 32000 = 25 x 1280; 5 values per thread per chunk


def row_loss_kernel(rows: int, classes: int, target=None):
    if classes % BLK:
        raise ValueError(f"row_loss_kernel: {classes} classes is not a multiple of {BLK}")

    @T.prim_func
    def row_ce(X: T.Tensor((rows, classes), "float32"), Tg: T.Tensor((rows,), "int64"),
               L: T.Tensor((rows,), "float32")):
        with T.Kernel(rows, threads=256) as r:
            m = T.alloc_fragment((1, BLK), "float32")
            s = T.alloc_fragment((1, BLK), "float32")
            gm = T.alloc_fragment((1,), "float32")
            gs = T.alloc_fragment((1,), "float32")
            T.fill(m, -T.infinity("float32"))
            T.clear(s)
            for k in T.serial(classes // BLK):
                for i, j in T.Parallel(1, BLK):
                    v = X[r, k * BLK + j]
                    mn = T.max(m[i, j], v)
                    s[i, j] = s[i, j] * T.exp(m[i, j] - mn) + T.exp(v - mn)
                    m[i, j] = mn
            T.reduce_max(m, gm, dim=1)
            for i, j in T.Parallel(1, BLK):
                s[i, j] = s[i, j] * T.exp(m[i, j] - gm[i])
            T.reduce_sum(s, gs, dim=1)
            L[r] = gm[0] + T.log(gs[0]) - X[r, Tg[r]]

    return tilelang.compile(row_ce, out_idx=[2], target=target)


def mean_kernel(rows: int, target=None):
    if rows % 256:
        raise ValueError(f"mean_kernel: {rows} rows is not a multiple of 256")

    @T.prim_func
    def mean_rows(L: T.Tensor((rows,), "float32"), Out: T.Tensor((1,), "float32")):
        with T.Kernel(1, threads=256) as _:
            acc = T.alloc_fragment((1, 256), "float32")
            total = T.alloc_fragment((1,), "float32")
            T.clear(acc)
            for k in T.serial(rows // 256):
                for i, j in T.Parallel(1, 256):
                    acc[i, j] += L[k * 256 + j]
            T.reduce_sum(acc, total, dim=1)
            Out[0] = total[0] * (1.0 / rows)

    return tilelang.compile(mean_rows, out_idx=[1], target=target)


CHECK = [(row_loss_kernel, {"rows": 4096, "classes": 32000}), (mean_kernel, {"rows": 4096})]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._kernels = {}

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        key = tuple(logits.shape)
        if key not in self._kernels:
            self._kernels[key] = (row_loss_kernel(*key), mean_kernel(key[0]))
        row_loss, mean = self._kernels[key]
        return mean(row_loss(logits.contiguous(), targets.contiguous())).view(())
