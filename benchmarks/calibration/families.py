"""The calibration suite's tasks and kernels (issue 42).

Per op family, KernelBench-style tasks; per task, plausible wrong kernels written in the
styles of real bugs and honest controls (other summation orders, other formulas, fused
forms). Every kernel is a `Kernel`: its task, language (torch, cpp, triton, cuda), kind
("wrong" or "control"), style (the bug's style, or the control's kind), a one-line
explanation, the devices it is meant for, and the candidate's source (a module defining
``ModelNew``, as an LLM would write it).

The PyTorch kernels are here; the C++ (CPU), Triton and CUDA ones are in `cpp_kernels.py`,
`triton_kernels.py` and `cuda_kernels.py`. `suite.all_kernels()` is the whole suite.
"""

from __future__ import annotations

from dataclasses import dataclass

# task -> (family, forward's arguments, reference body, get_inputs() list)
TASKS: dict[str, tuple[str, str, str, str]] = {
    # elementwise / activation
    "gelu": ("elementwise", "x", "return torch.nn.functional.gelu(x)", "[torch.randn(128, 512)]"),
    "sigmoid": ("elementwise", "x", "return torch.sigmoid(x)", "[torch.randn(128, 512)]"),
    "silu": ("elementwise", "x", "return x * torch.sigmoid(x)", "[torch.randn(100, 999)]"),
    "bias_relu": ("elementwise", "x, w", "return torch.relu(x + w)", "[torch.randn(256, 256), torch.randn(256)]"),
    # reductions
    "rowsum": ("reduction", "x", "return x.sum(-1)", "[torch.randn(128, 4096)]"),
    "rowmax": ("reduction", "x", "return x.amax(-1)", "[torch.randn(96, 1000)]"),
    # softmax / logsumexp
    "softmax": ("softmax", "x", "return torch.softmax(x, dim=-1)", "[torch.randn(64, 1000)]"),
    "logsumexp": ("softmax", "x", "return torch.logsumexp(x, dim=-1)", "[torch.randn(64, 1000)]"),
    # norms
    "layernorm": ("norm", "x",
                  "x = x - x.mean(-1, keepdim=True)\n        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5)",
                  "[torch.randn(64, 1024)]"),
    "rmsnorm": ("norm", "x", "return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)", "[torch.randn(64, 2048)]"),
    "batchnorm": ("norm", "x",  # training-mode batch statistics, no affine
                  "return (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + 1e-5)", "[torch.randn(256, 384)]"),
    # GEMM
    "matmul": ("gemm", "x, w", "return x @ w", "[torch.randn(128, 1000), torch.randn(1000, 96)]"),
    "linear_relu": ("gemm", "x, w, b", "return torch.relu(x @ w + b)",
                    "[torch.randn(100, 500), torch.randn(500, 72), torch.randn(72)]"),
    # convolution
    "conv1d": ("conv", "x, w", "return torch.nn.functional.conv1d(x, w, padding=1)",
               "[torch.randn(8, 16, 250), torch.randn(32, 16, 3)]"),
    "conv2d": ("conv", "x, w", "return torch.nn.functional.conv2d(x, w, padding=1)",
               "[torch.randn(4, 8, 30, 30), torch.randn(16, 8, 3, 3)]"),
    # pooling
    "maxpool2d": ("pooling", "x", "return torch.nn.functional.max_pool2d(x, 3, stride=2, padding=1)",
                  "[torch.randn(8, 16, 33, 33)]"),
    "avgpool2d": ("pooling", "x", "return torch.nn.functional.avg_pool2d(x, 3, stride=1, padding=1)",
                  "[torch.randn(8, 16, 32, 32)]"),
    # scan
    "cumsum": ("scan", "x", "return torch.cumsum(x, dim=-1)", "[torch.randn(32, 1000)]"),
    # attention
    "attention": ("attention", "q, k, v",
                  "s = q @ k.transpose(-1, -2) / 8.0\n        return torch.softmax(s, dim=-1) @ v",
                  "[torch.randn(4, 100, 64), torch.randn(4, 100, 64), torch.randn(4, 100, 64)]"),
    # indexing / gather / scatter
    "embedding": ("indexing", "w, idx", "return w[idx]",
                  "[torch.randn(1000, 64), torch.randint(0, 1000, (4096,))]"),
    "index_add": ("indexing", "x, idx", "return x.new_zeros(100, x.shape[1]).index_add_(0, idx, x)",
                  "[torch.randn(2000, 64), torch.randint(0, 100, (2000,))]"),
    # losses
    "mse": ("loss", "x, w", "return ((x - w) ** 2).mean()", "[torch.randn(256, 256), torch.randn(256, 256)]"),
    "cross_entropy": ("loss", "x, t", "return torch.nn.functional.cross_entropy(x, t)",
                      "[torch.randn(128, 1000), torch.randint(0, 1000, (128,))]"),
}


@dataclass(frozen=True)
class Kernel:
    task: str
    name: str
    kind: str  # "wrong" | "control"
    language: str  # torch | cpp | triton | cuda
    style: str  # the bug's style (wrong) or the control's kind
    why: str  # one line: what the kernel does and, if wrong, when it shows
    code: str  # the candidate module
    devices: tuple[str, ...] = ("cpu", "cuda")  # where it belongs in the table

    @property
    def family(self) -> str:
        return TASKS[self.task][0]

    @property
    def kernel_id(self) -> str:
        return f"{self.task}/{self.language}/{self.name}"


def task_code(task: str) -> str:
    _, args, body, inputs = TASKS[task]
    return (f"import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, {args}):\n"
            f"        {body}\n\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n")


def torch_code(task: str, body: str) -> str:
    args = TASKS[task][1]
    return (f"import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n\n\nclass ModelNew(nn.Module):\n"
            f"    def forward(self, {args}):\n        {body}\n")


# (task, name, kind, style, why, forward body)
TORCH = [
    # --- elementwise
    ("gelu", "tanh_approximation", "wrong", "approximation",
     "the tanh form of GELU: off by up to ~5e-4, inside KernelBench's 1e-2",
     "return F.gelu(x, approximate='tanh')"),
    ("gelu", "erf_formula", "control", "other_formula", "0.5 x (1 + erf(x / sqrt 2)), written out",
     "return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))"),
    ("sigmoid", "hard_sigmoid", "wrong", "approximation", "the piecewise-linear hard sigmoid",
     "return torch.clamp(x / 6 + 0.5, 0, 1)"),
    ("sigmoid", "clamped_input", "wrong", "approximation", "inputs clamped to [-3, 3] (a lookup table's range)",
     "return torch.sigmoid(torch.clamp(x, -3.0, 3.0))"),
    ("sigmoid", "tanh_form", "control", "other_formula", "0.5 (tanh(x/2) + 1)",
     "return 0.5 * (torch.tanh(0.5 * x) + 1.0)"),
    # class 34 (issue 42): errors under the 1e-4 atol, in the tail only a wide range reaches
    ("sigmoid", "clamped_at_10", "wrong", "approximation",
     "inputs clamped to [-10, 10]: 4.5e-5 off where the answer is ~0, under the atol on every draw",
     "return torch.sigmoid(torch.clamp(x, -10.0, 10.0))"),
    ("sigmoid", "taylor_exp", "wrong", "approximation",
     "exp(|x|) as its degree-12 Taylor polynomial: 1e-7 relative for |x| < 2, 30% low at |x| = 12",
     "t = x.abs()\n        e = torch.ones_like(t)\n        term = torch.ones_like(t)\n"
     "        for k in range(1, 13):\n            term = term * t / k\n            e = e + term\n"
     "        s = 1.0 / (1.0 + e)\n        return torch.where(x < 0, s, 1.0 - s)"),
    ("sigmoid", "exp_form", "control", "other_formula",
     "1 / (1 + exp(-x)): exp overflows to inf in the tail, so exactly 0 where torch gives a denormal",
     "return 1.0 / (1.0 + torch.exp(-x))"),
    ("silu", "hard_swish", "wrong", "approximation", "x * hard_sigmoid(x): the mobile approximation",
     "return x * torch.clamp(x / 6 + 0.5, 0, 1)"),
    ("silu", "tail_block_zero", "wrong", "missed_tail",
     "the flat tensor in blocks of 1024, the last partial block (ragged size 99900) left at zero",
     "f = x.reshape(-1)\n        n = f.numel() // 1024 * 1024\n        y = torch.zeros_like(f)\n"
     "        y[:n] = f[:n] * torch.sigmoid(f[:n])\n        return y.view_as(x)"),
    ("silu", "exp_form", "control", "other_formula", "x / (1 + exp(-x)) (exp overflows to inf, the quotient is -0)",
     "return x / (1.0 + torch.exp(-x))"),
    ("bias_relu", "bias_broadcast_wrong_axis", "wrong", "wrong_broadcast", "the bias added along rows, not columns",
     "return torch.relu(x + w[:, None])"),
    ("bias_relu", "non_negative_fast_path", "wrong", "fast_path", "an all-non-negative fast path that forgets the bias",
     "return x if bool((x >= 0).all()) else torch.relu(x + w)"),
    ("bias_relu", "race_one_in_20", "wrong", "race", "a race that shows 1 call in 20 (8 outputs lost)",
     "import random\n        y = torch.relu(x + w)\n        if random.random() < 0.05:\n            y[0, :8] = 0.0\n"
     "        return y"),
    ("bias_relu", "clamp_form", "control", "other_formula", "clamp_min(x + b, 0)",
     "return torch.clamp_min(x + w, 0.0)"),
    # --- reductions
    ("rowsum", "last_element_skipped", "wrong", "off_by_one", "the loop stops one short", "return x[:, :-1].sum(-1)"),
    ("rowsum", "float16_partials", "wrong", "reduction_precision", "partial sums stored in fp16",
     "return x.view(x.shape[0], -1, 64).sum(-1).half().float().sum(-1)"),
    ("rowsum", "chunked", "control", "summation_order", "64-element partial sums, then their sum",
     "return x.view(x.shape[0], -1, 64).sum(-1).sum(-1)"),
    ("rowsum", "float64_accumulate", "control", "fp64_accumulate", "accumulated in float64, rounded once",
     "return x.double().sum(-1).float()"),
    ("rowmax", "tail_missed", "wrong", "missed_tail", "a 32-wide tiling that ignores the last 8 columns of 1000",
     "return x[:, :992].amax(-1)"),
    ("rowmax", "blocked", "control", "summation_order", "max of 8 block maxima", "return x.view(x.shape[0], 8, 125).amax(-1).amax(-1)"),
    # --- softmax / logsumexp
    ("softmax", "no_max_subtraction", "wrong", "numerical_instability", "exp without the max shift: overflows on a wide range",
     "e = torch.exp(x)\n        return e / e.sum(-1, keepdim=True)"),
    ("softmax", "tail_tile_dropped", "wrong", "missed_tail", "the last partial tile of 1000 columns written as zero",
     "y = torch.softmax(x, dim=-1)[:, :992]\n        return torch.cat([y, torch.zeros_like(x[:, 992:])], -1)"),
    ("softmax", "logsumexp", "control", "other_formula", "exp(x - logsumexp(x))",
     "return torch.exp(x - torch.logsumexp(x, -1, keepdim=True))"),
    ("softmax", "max_shift", "control", "other_formula", "the two-pass max-shifted form",
     "e = torch.exp(x - x.amax(-1, keepdim=True))\n        return e / e.sum(-1, keepdim=True)"),
    ("logsumexp", "no_max_shift", "wrong", "numerical_instability", "log(sum(exp(x))): inf on a wide range",
     "return torch.log(torch.exp(x).sum(-1))"),
    ("logsumexp", "max_not_added_back", "wrong", "wrong_formula", "the max shift applied but not added back",
     "m = x.amax(-1, keepdim=True)\n        return torch.log(torch.exp(x - m).sum(-1))"),
    ("logsumexp", "manual_shift", "control", "other_formula", "m + log(sum(exp(x - m)))",
     "m = x.amax(-1, keepdim=True)\n        return (m + torch.log(torch.exp(x - m).sum(-1, keepdim=True))).squeeze(-1)"),
    ("logsumexp", "online_chunks", "control", "online_softmax", "online logsumexp over 10 chunks of 100 (running max, rescaled sum)",
     "m = x.new_full(x.shape[:1], -float('inf'))\n        s = x.new_zeros(x.shape[:1])\n"
     "        for c in x.split(100, -1):\n            mn = torch.maximum(m, c.amax(-1))\n"
     "            s = s * torch.exp(m - mn) + torch.exp(c - mn[:, None]).sum(-1)\n            m = mn\n"
     "        return m + torch.log(s)"),
    # --- norms
    ("layernorm", "eps_forgotten", "wrong", "wrong_formula", "no epsilon: moves the output by ~5e-6",
     "x = x - x.mean(-1, keepdim=True)\n        return x / torch.sqrt((x * x).mean(-1, keepdim=True))"),
    ("layernorm", "unbiased_variance", "wrong", "wrong_formula", "the unbiased variance (n - 1): off by 1/2n ~ 5e-4",
     "x = x - x.mean(-1, keepdim=True)\n        return x / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)"),
    ("layernorm", "halves", "control", "summation_order", "both moments summed as two halves",
     "n = x.shape[-1]\n        m = x.view(-1, 2, n // 2).sum(-1).sum(-1, keepdim=True) / n\n        d = x - m\n"
     "        return d / torch.sqrt((d * d).view(-1, 2, n // 2).sum(-1).sum(-1, keepdim=True) / n + 1e-5)"),
    ("layernorm", "functional", "control", "library_call", "F.layer_norm (Welford inside ATen)",
     "return F.layer_norm(x, x.shape[-1:], eps=1e-5)"),
    ("rmsnorm", "eps_dropped", "wrong", "wrong_formula", "no epsilon: moves the output by ~7e-7 of its scale",
     "return x * torch.rsqrt((x * x).mean(-1, keepdim=True))"),
    ("rmsnorm", "norm_form", "control", "other_formula", "x / sqrt(sum x^2 / n + eps)",
     "return x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) / x.shape[-1] + 1e-6)"),
    ("batchnorm", "unbiased_variance", "wrong", "wrong_formula", "the unbiased batch variance (n - 1 = 255)",
     "return (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=True) + 1e-5)"),
    ("batchnorm", "one_pass_variance", "wrong", "numerical_instability",
     "var = E[x^2] - E[x]^2: cancels catastrophically only when |mean| >> std",
     "m = x.mean(0)\n        return (x - m) / torch.sqrt((x * x).mean(0) - m * m + 1e-5)"),
    ("batchnorm", "chan_merge", "control", "welford", "Chan's parallel merge of 4 chunks' (mean, M2)",
     "parts = x.split(64, 0)\n        n = 0\n        mean = x.new_zeros(x.shape[1])\n        m2 = x.new_zeros(x.shape[1])\n"
     "        for p in parts:\n            nb = p.shape[0]\n            mb = p.mean(0)\n            m2b = ((p - mb) ** 2).sum(0)\n"
     "            d = mb - mean\n            tot = n + nb\n            mean = mean + d * nb / tot\n"
     "            m2 = m2 + m2b + d * d * n * nb / tot\n            n = tot\n"
     "        return (x - mean) / torch.sqrt(m2 / n + 1e-5)"),
    ("batchnorm", "float64_stats", "control", "fp64_accumulate", "statistics in float64, normalised in float32",
     "xd = x.double()\n        m = xd.mean(0)\n        v = ((xd - m) ** 2).mean(0)\n"
     "        return ((x - m.float()) / torch.sqrt(v + 1e-5).float())"),
    # --- GEMM
    ("matmul", "k_tail_missed", "wrong", "missed_tail", "a 32-wide K loop that drops K % 32 = 8", "k = x.shape[1] // 32 * 32\n        return x[:, :k] @ w[:k]"),
    ("matmul", "fp16_accumulate", "wrong", "reduction_precision", "fp16 inputs and accumulation",
     "return (x.half() @ w.half()).float()"),
    ("matmul", "bf16_inputs", "wrong", "reduction_precision", "inputs rounded to bf16",
     "return (x.bfloat16().float() @ w.bfloat16().float())"),
    ("matmul", "split_k", "control", "split_k", "two K halves summed", "k = x.shape[1] // 2\n        return x[:, :k] @ w[:k] + x[:, k:] @ w[k:]"),
    ("matmul", "transposed_twice", "control", "other_formula", "(w^T x^T)^T", "return (w.t() @ x.t()).t()"),
    ("matmul", "k_reversed", "control", "summation_order", "fp32 GEMM summed over K in reverse order",
     "return x.flip(1) @ w.flip(0)"),
    ("linear_relu", "relu_before_bias", "wrong", "wrong_formula", "the epilogue applies ReLU before the bias",
     "return torch.relu(x @ w) + b"),
    ("linear_relu", "k_tail_missed", "wrong", "missed_tail", "a 64-wide K loop that drops 500 % 64 = 52",
     "k = x.shape[1] // 64 * 64\n        return torch.relu(x[:, :k] @ w[:k] + b)"),
    ("linear_relu", "addmm_fused", "control", "fused_epilogue", "addmm with the ReLU fused after it",
     "return torch.addmm(b, x, w).clamp_min_(0.0)"),
    ("linear_relu", "k_chunks", "control", "summation_order", "K in chunks of 128, summed in order",
     "acc = b.expand(x.shape[0], -1).clone()\n        for i in range(0, x.shape[1], 128):\n"
     "            acc = acc + x[:, i:i + 128] @ w[i:i + 128]\n        return torch.relu(acc)"),
    # --- convolution
    ("conv1d", "padding_shift", "wrong", "off_by_one", "both pads on the left: the output shifted by one",
     "return F.conv1d(F.pad(x, (2, 0)), w)"),
    ("conv1d", "flipped_kernel", "wrong", "wrong_formula", "true convolution (flipped taps), not cross-correlation",
     "return F.conv1d(x, w.flip(-1), padding=1)"),
    ("conv1d", "im2col", "control", "other_formula", "unfold (im2col) and a GEMM",
     "cols = F.pad(x, (1, 1)).unfold(2, 3, 1)\n        return torch.einsum('bclk,ock->bol', cols, w)"),
    ("conv2d", "border_skipped", "wrong", "missed_tail", "the valid convolution, the border left at zero",
     "return F.pad(F.conv2d(x, w), (1, 1, 1, 1))"),
    ("conv2d", "im2col", "control", "other_formula", "F.unfold and a GEMM",
     "cols = F.unfold(x, 3, padding=1)\n        y = w.view(w.shape[0], -1) @ cols\n"
     "        return y.view(x.shape[0], w.shape[0], x.shape[2], x.shape[3])"),
    # --- pooling
    ("maxpool2d", "zero_padding", "wrong", "uninitialised_init", "pads with 0, not -inf: a negative border window gives 0",
     "return F.max_pool2d(F.pad(x, (1, 1, 1, 1)), 3, stride=2)"),
    ("maxpool2d", "window_2", "wrong", "off_by_one", "a 2x2 window where the task asks 3x3 (same output shape)",
     "return F.max_pool2d(x, 2, stride=2, padding=1)"),
    ("maxpool2d", "unfold_max", "control", "other_formula", "-inf pad, unfold, max",
     "p = F.pad(x, (1, 1, 1, 1), value=-float('inf'))\n        return p.unfold(2, 3, 2).unfold(3, 3, 2).amax((-1, -2))"),
    ("avgpool2d", "exclude_pad", "wrong", "wrong_formula", "count_include_pad=False: border windows divide by fewer",
     "return F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=False)"),
    ("avgpool2d", "box_conv", "control", "other_formula", "a depthwise conv with a 1/9 box kernel",
     "c = x.shape[1]\n        return F.conv2d(x, x.new_full((c, 1, 3, 3), 1.0 / 9.0), padding=1, groups=c)"),
    # --- scan
    ("cumsum", "exclusive_scan", "wrong", "off_by_one", "an exclusive scan where the task is inclusive",
     "return torch.cat([torch.zeros_like(x[:, :1]), torch.cumsum(x, -1)[:, :-1]], -1)"),
    ("cumsum", "blocked_with_carry", "control", "summation_order", "blocks of 100 scanned, carries added",
     "b = x.view(x.shape[0], -1, 100).cumsum(-1)\n        carry = b[:, :, -1].cumsum(-1) - b[:, :, -1]\n"
     "        return (b + carry[:, :, None]).view_as(x)"),
    # --- attention
    ("attention", "scale_by_d", "wrong", "wrong_formula", "scores scaled by 1/d, not 1/sqrt(d)",
     "return torch.softmax(q @ k.transpose(-1, -2) / 64.0, dim=-1) @ v"),
    ("attention", "softmax_wrong_axis", "wrong", "wrong_broadcast", "softmax over the queries (dim -2)",
     "return torch.softmax(q @ k.transpose(-1, -2) / 8.0, dim=-2) @ v"),
    ("attention", "no_max_shift", "wrong", "numerical_instability", "exp of raw scores: overflows on a wide range",
     "e = torch.exp(q @ k.transpose(-1, -2) / 8.0)\n        return (e / e.sum(-1, keepdim=True)) @ v"),
    ("attention", "sdpa", "control", "library_call", "F.scaled_dot_product_attention (fused kernel, scale 1/8)",
     "return F.scaled_dot_product_attention(q, k, v)"),
    ("attention", "prescaled_q", "control", "other_formula", "q scaled before the product",
     "return torch.softmax((q * 0.125) @ k.transpose(-1, -2), dim=-1) @ v"),
    # --- indexing
    ("embedding", "clamp_off_by_one", "wrong", "off_by_one", "indices clamped to n - 2 (a bounds check one short)",
     "return w[idx.clamp(max=w.shape[0] - 2)]"),
    ("embedding", "index_select", "control", "library_call", "index_select", "return w.index_select(0, idx)"),
    ("embedding", "one_hot_gemm", "control", "other_formula", "one_hot(idx) @ w (exact: one term per row)",
     "return F.one_hot(idx, w.shape[0]).to(w.dtype) @ w"),
    ("index_add", "lost_updates", "wrong", "race", "a non-atomic scatter: duplicate indices overwrite, the last wins",
     "return x.new_zeros(100, x.shape[1]).index_put_((idx,), x, accumulate=False)"),
    ("index_add", "one_hot_gemm", "control", "summation_order", "one_hot(idx)^T @ x: the sums in GEMM order",
     "return F.one_hot(idx, 100).to(x.dtype).t() @ x"),
    ("index_add", "sorted_segments", "control", "summation_order", "rows sorted by index, summed per segment",
     "order = torch.argsort(idx, stable=True)\n        out = x.new_zeros(100, x.shape[1])\n"
     "        xs, ids = x[order], idx[order]\n        for i in range(100):\n"
     "            out[i] = xs[ids == i].sum(0)\n        return out"),
    # --- losses
    ("mse", "sum_not_mean", "wrong", "wrong_formula", "divides by n (m - 1): a 0.4% error",
     "return ((x - w) ** 2).sum() / (x.shape[0] * (x.shape[1] - 1))"),
    ("mse", "functional", "control", "library_call", "F.mse_loss", "return F.mse_loss(x, w)"),
    ("mse", "pairwise_rows", "control", "summation_order", "row means, then their mean",
     "return ((x - w) ** 2).mean(1).mean()"),
    ("cross_entropy", "log_of_softmax", "wrong", "numerical_instability",
     "log(softmax(x)): the target's probability underflows to 0 on a wide range (inf loss)",
     "p = torch.softmax(x, -1)\n        return -torch.log(p.gather(1, t[:, None])).mean()"),
    ("cross_entropy", "last_row_dropped", "wrong", "missed_tail",
     "the batch's last row (a tail tile) left out of the sum, still divided by 128: ~0.8% low",
     "return -(F.log_softmax(x[:-1], -1).gather(1, t[:-1, None])).sum() / x.shape[0]"),
    ("cross_entropy", "logsumexp_form", "control", "other_formula", "logsumexp(x) - x[t]",
     "return (torch.logsumexp(x, -1) - x.gather(1, t[:, None]).squeeze(1)).mean()"),
    ("cross_entropy", "nll_of_log_softmax", "control", "library_call", "nll_loss(log_softmax(x))",
     "return F.nll_loss(F.log_softmax(x, -1), t)"),
]


def torch_kernels() -> list[Kernel]:
    return [Kernel(task, name, kind, "torch", style, why, torch_code(task, body))
            for task, name, kind, style, why, body in TORCH]
