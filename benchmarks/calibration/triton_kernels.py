"""Triton candidates of the calibration suite. On a CPU they run in Triton's interpreter
(TRITON_INTERPRET=1, which `verify` sets for Triton candidates on a CPU); candidates whose
bug only a GPU shows (TF32 in ``tl.dot``: the interpreter multiplies in float32) are
marked for the device run only."""

from __future__ import annotations

from families import Kernel

_HEAD = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n\n\n"


def _k(task, name, kind, style, why, body, devices=("cpu", "cuda")) -> Kernel:
    return Kernel(task, name, kind, "triton", style, why, _HEAD + body.strip() + "\n", devices)


# --- elementwise: one flat launch; ACT is the activation; GRID the launch grid
_ELEM = '''
@triton.jit
def act_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    {act}
    tl.store(y_ptr + offs, y, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        act_kernel[({grid},)](xc, y, n, BLOCK=1024)
        return y
'''

# --- one program per row, the whole row in one block (cols <= BLOCK)
_ROW = '''
@triton.jit
def row_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    {body}


class ModelNew(nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        cols = xc.shape[-1]
        rows = xc.numel() // cols
        y = {alloc}
        row_kernel[(rows,)](xc, y, cols, BLOCK=triton.next_power_of_2(cols))
        return y
'''

# --- tiled GEMM (+ optional bias/ReLU epilogue): C[M, N] = A[M, K] @ B[K, N]
_GEMM = '''
@triton.jit
def gemm_kernel(a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                EPILOGUE: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BM + tl.arange(0, BM)
    offs_n = pid_n * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    {loop}
    {epilogue}
    c_mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    tl.store(c_ptr + offs_m[:, None] * N + offs_n[None, :], acc, mask=c_mask)


class ModelNew(nn.Module):
    def forward(self, {args}):
        a, bm = x.contiguous(), w.contiguous()
        M, K = a.shape
        N = bm.shape[1]
        c = torch.empty((M, N), device=a.device, dtype=torch.float32)
        grid = (triton.cdiv(M, 32), triton.cdiv(N, 32))
        gemm_kernel[grid](a, bm, {bias}, c, M, N, K, BM=32, BN=32, BK=32, EPILOGUE={epi_flag})
        return c
'''
_KLOOP = '''for k0 in range({range}):
        offs_k = k0 * BK + tl.arange(0, BK)
        a = tl.load(a_ptr + offs_m[:, None] * K + offs_k[None, :], mask=(offs_m[:, None] < M) & (offs_k[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + offs_k[:, None] * N + offs_n[None, :], mask=(offs_k[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        acc += tl.dot(a, b{prec})'''


def _gemm(task, name, kind, style, why, k_range="0, tl.cdiv(K, BK)", prec=', input_precision="ieee"',
          epilogue="", devices=("cpu", "cuda")) -> Kernel:
    linear = task == "linear_relu"
    return _k(task, name, kind, style, why, _GEMM.format(
        loop=_KLOOP.format(range=k_range, prec=prec), epilogue=epilogue or "pass",
        args="x, w, b" if linear else "x, w", bias="b.contiguous()" if linear else "a",
        epi_flag="True" if linear else "False"), devices)


_BIAS_RELU = ('if EPILOGUE:\n        bias = tl.load(bias_ptr + {offs}, mask={offs} < N, other=0.0)\n'
              '        acc = tl.maximum(acc + bias[None, :], 0.0)')

_ATTN = '''
@triton.jit
def attn_kernel(q_ptr, k_ptr, v_ptr, o_ptr, L, D: tl.constexpr, BL: tl.constexpr, scale):
    b = tl.program_id(0)
    i = tl.program_id(1)
    offs_l = tl.arange(0, BL)
    offs_d = tl.arange(0, D)
    base = b * L * D
    q = tl.load(q_ptr + base + i * D + offs_d)
    kmask = offs_l[:, None] < L
    kt = tl.load(k_ptr + base + offs_l[:, None] * D + offs_d[None, :], mask=kmask, other=0.0)
    s = tl.sum(kt * q[None, :], axis=1) * scale
    {mask_scores}
    m = tl.max(s, axis=0)
    p = tl.exp(s - m)
    p = p / tl.sum(p, axis=0)
    vt = tl.load(v_ptr + base + offs_l[:, None] * D + offs_d[None, :], mask=kmask, other=0.0)
    o = tl.sum(vt * p[:, None], axis=0)
    tl.store(o_ptr + base + i * D + offs_d, o)


class ModelNew(nn.Module):
    def forward(self, q, k, v):
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        B, L, D = q.shape
        o = torch.empty_like(q)
        attn_kernel[(B, L)](q, k, v, o, L, D=D, BL=triton.next_power_of_2(L), scale=1.0 / 8.0)
        return o
'''

_INDEX_ADD = '''
@triton.jit
def index_add_kernel(x_ptr, idx_ptr, out_ptr, R, D: tl.constexpr, BR: tl.constexpr):
    offs_r = tl.program_id(0) * BR + tl.arange(0, BR)
    offs_d = tl.arange(0, D)
    rmask = offs_r < R
    idx = tl.load(idx_ptr + offs_r, mask=rmask, other=0)
    x = tl.load(x_ptr + offs_r[:, None] * D + offs_d[None, :], mask=rmask[:, None], other=0.0)
    dst = out_ptr + idx[:, None] * D + offs_d[None, :]
    {update}


class ModelNew(nn.Module):
    def forward(self, x, idx):
        x = x.contiguous()
        out = torch.zeros((100, x.shape[1]), device=x.device, dtype=x.dtype)
        index_add_kernel[(triton.cdiv(x.shape[0], 16),)](x, idx.contiguous(), out, x.shape[0], D=x.shape[1], BR=16)
        return out
'''

_CUMSUM_BLOCKS = '''
@triton.jit
def scan_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    offs = blk * BLOCK + tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)
    tl.store(y_ptr + row * cols + offs, tl.cumsum(x, axis=0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        scan_kernel[(xc.shape[0], triton.cdiv(xc.shape[1], 256))](xc, y, xc.shape[1], BLOCK=256)
        return y
'''

_SOFTMAX_ONLINE = '''
@triton.jit
def softmax_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = x_ptr + row * cols
    m = tl.full((BLOCK,), -float("inf"), tl.float32)
    s = tl.zeros((BLOCK,), tl.float32)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < cols, other=-float("inf"))
        mn = tl.maximum(m, x)
        alpha = tl.where(mn == -float("inf"), 0.0, tl.exp(m - mn))
        s = s * alpha + tl.where(x == -float("inf"), 0.0, tl.exp(x - mn))
        m = mn
    mrow = tl.max(m, axis=0)
    srow = tl.sum(s * tl.where(m == -float("inf"), 0.0, tl.exp(m - mrow)), axis=0)
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(base + offs, mask=offs < cols, other=-float("inf"))
        tl.store(y_ptr + row * cols + offs, tl.exp(x - mrow) / srow, mask=offs < cols)


class ModelNew(nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        softmax_kernel[(xc.shape[0],)](xc, y, xc.shape[1], BLOCK=256)
        return y
'''

_ROWSUM_BLOCKS = '''
@triton.jit
def rowsum_kernel(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros((BLOCK,), {acc_dtype})
    for start in range(0, cols, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * cols + offs, mask=offs < cols, other=0.0)
        acc += x{cast}
    tl.store(y_ptr + row, tl.sum(acc, axis=0).to(tl.float32))


class ModelNew(nn.Module):
    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty(xc.shape[0], device=xc.device, dtype=torch.float32)
        rowsum_kernel[(xc.shape[0],)](xc, y, xc.shape[1], BLOCK=256)
        return y
'''


def kernels() -> list[Kernel]:
    lse_body = ("x = tl.load(x_ptr + row * cols + offs, mask=mask{other})\n    m = tl.max(x, axis=0)\n"
                "    s = tl.sum(tl.where(mask, tl.exp(x - m), 0.0){sum_mask}, axis=0)\n    tl.store(y_ptr + row, m + tl.log(s))")
    return [
        # elementwise
        _k("gelu", "tanh_approximation", "wrong", "approximation", "GELU's tanh form (the fast path of many kernels)",
           _ELEM.format(act="y = 0.5 * x * (1.0 + (2.0 * tl.sigmoid(2.0 * 0.7978845608 * (x + 0.044715 * x * x * x)) - 1.0))",
                        grid="triton.cdiv(n, 1024)")),
        _k("gelu", "erf", "control", "other_formula", "0.5 x (1 + erf(x / sqrt 2)) with tl.math.erf",
           _ELEM.format(act="y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))", grid="triton.cdiv(n, 1024)")),
        _k("silu", "grid_floor", "wrong", "missed_tail", "grid n // BLOCK: the last 99900 % 1024 = 572 elements never written",
           _ELEM.format(act="y = x * tl.sigmoid(x)", grid="n // 1024")),
        _k("silu", "masked", "control", "other_formula", "x * sigmoid(x), grid cdiv(n, BLOCK), masked tail",
           _ELEM.format(act="y = x / (1.0 + tl.exp(-x))", grid="triton.cdiv(n, 1024)")),
        # softmax
        _k("softmax", "pad_with_zero", "wrong", "off_by_one",
           "the padded lanes (1024 - 1000) loaded as 0, not -inf: each adds exp(-max) to the sum",
           _ROW.format(alloc="torch.empty_like(xc)", body=(
               "x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)\n    e = tl.exp(x - tl.max(x, axis=0))\n"
               "    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)"))),
        _k("softmax", "single_block", "control", "other_formula", "the whole row in one block, max-shifted",
           _ROW.format(alloc="torch.empty_like(xc)", body=(
               "x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float('inf'))\n    e = tl.exp(x - tl.max(x, axis=0))\n"
               "    tl.store(y_ptr + row * cols + offs, e / tl.sum(e, axis=0), mask=mask)"))),
        _k("softmax", "online", "control", "online_softmax", "blocks of 256 with a running max and rescaled sum per lane",
           _SOFTMAX_ONLINE),
        # logsumexp
        _k("logsumexp", "mask_without_other", "wrong", "uninitialised_memory",
           "masked load with no `other`: the 24 padded lanes hold undefined values that enter the max",
           _ROW.format(alloc="torch.empty(rows, device=xc.device)",
                       body=lse_body.format(other="", sum_mask="") .replace("tl.where(mask, tl.exp(x - m), 0.0)",
                                                                             "tl.exp(x - m)"))),
        _k("logsumexp", "masked_inf", "control", "other_formula", "padded lanes as -inf, masked out of the sum",
           _ROW.format(alloc="torch.empty(rows, device=xc.device)",
                       body=lse_body.format(other=", other=-float('inf')", sum_mask=""))),
        # reductions
        _k("rowsum", "fp16_accumulator", "wrong", "reduction_precision", "per-lane partial sums kept in fp16",
           _ROWSUM_BLOCKS.format(acc_dtype="tl.float16", cast=".to(tl.float16)")),
        _k("rowsum", "lane_partials", "control", "summation_order", "256 lane partial sums over 16 blocks, then a tree",
           _ROWSUM_BLOCKS.format(acc_dtype="tl.float32", cast="")),
        # GEMM
        _gemm("matmul", "tf32_dot", "wrong", "reduction_precision",
              "tl.dot's default input precision: TF32 on a GPU (the interpreter multiplies in fp32: device run only)",
              prec="", devices=("cuda",)),
        _gemm("matmul", "k_tail_missed", "wrong", "missed_tail", "K loop range(K // BK): 1000 % 32 = 8 dropped",
              k_range="0, K // BK"),
        _gemm("matmul", "ieee_dot", "control", "tf32_off", "tiled 32x32x32, tl.dot with input_precision='ieee'"),
        _gemm("matmul", "k_reversed", "control", "summation_order", "K tiles visited last to first (fp32, ieee)",
              k_range="tl.cdiv(K, BK) - 1, -1, -1"),
        _gemm("linear_relu", "bias_on_rows", "wrong", "wrong_broadcast", "the bias indexed by the row, not the column",
              epilogue=_BIAS_RELU.format(offs="offs_m")),
        _gemm("linear_relu", "fused_epilogue", "control", "fused_epilogue", "bias and ReLU applied to the fp32 accumulator",
              epilogue=_BIAS_RELU.format(offs="offs_n")),
        # scan
        _k("cumsum", "blocks_without_carry", "wrong", "missed_carry", "tl.cumsum per 256-column block, no carry between blocks",
           _CUMSUM_BLOCKS),
        _k("cumsum", "single_block_scan", "control", "summation_order", "tl.cumsum over the whole row (a tree scan)",
           _ROW.format(alloc="torch.empty_like(xc)", body=(
               "x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)\n"
               "    tl.store(y_ptr + row * cols + offs, tl.cumsum(x, axis=0), mask=mask)"))),
        # attention
        _k("attention", "padded_keys_scored", "wrong", "off_by_one",
           "the 28 padded key slots (100 -> 128) keep score 0 and take softmax weight",
           _ATTN.format(mask_scores="pass")),
        _k("attention", "rowwise", "control", "other_formula", "one program per query, scores masked to -inf past L",
           _ATTN.format(mask_scores="s = tl.where(offs_l < L, s, -float('inf'))")),
        # layernorm
        _k("layernorm", "two_pass", "control", "other_formula", "mean, then the centred second moment, in one block",
           _ROW.format(alloc="torch.empty_like(xc)", body=(
               "x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)\n    mean = tl.sum(x, axis=0) / cols\n"
               "    d = tl.where(mask, x - mean, 0.0)\n    var = tl.sum(d * d, axis=0) / cols\n"
               "    tl.store(y_ptr + row * cols + offs, d / tl.sqrt(var + 1e-5), mask=mask)"))),
        _k("layernorm", "rsqrt_eps_dropped", "wrong", "wrong_formula", "rsqrt(var) with the epsilon left out",
           _ROW.format(alloc="torch.empty_like(xc)", body=(
               "x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0)\n    mean = tl.sum(x, axis=0) / cols\n"
               "    d = tl.where(mask, x - mean, 0.0)\n    var = tl.sum(d * d, axis=0) / cols\n"
               "    tl.store(y_ptr + row * cols + offs, d * tl.rsqrt(var), mask=mask)"))),
        # scatter
        _k("index_add", "non_atomic_update", "wrong", "race",
           "load-add-store of 16 rows at once: duplicate indices in a block (and across blocks on a GPU) lose updates",
           _INDEX_ADD.format(update="tl.store(dst, tl.load(dst, mask=rmask[:, None]) + x, mask=rmask[:, None])")),
        _k("index_add", "atomic_add", "control", "atomic_order", "tl.atomic_add: the sums' order varies run to run",
           _INDEX_ADD.format(update="tl.atomic_add(dst, x, mask=rmask[:, None])")),
    ]
