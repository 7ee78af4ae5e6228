"""The calibration suite's kernels (issue 42): per op family a KernelBench-style task, plausible
wrong kernels written in the styles of real bugs, and honest controls (other summation
orders, other formulas, fused forms). Written as PyTorch so the suite runs on a CPU; the
device run adds CUDA and Triton ones (not yet written: see README.md)."""

from __future__ import annotations

TASKS = {
    "layernorm": ("x = x - x.mean(-1, keepdim=True)\n        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-5)",
                  "[torch.randn(64, 1024)]"),
    "softmax": ("return torch.softmax(x, dim=-1)", "[torch.randn(64, 1000)]"),
    "gelu": ("return torch.nn.functional.gelu(x)", "[torch.randn(128, 512)]"),
    "matmul": ("return x @ w", "[torch.randn(128, 1000), torch.randn(1000, 96)]"),
    "rowsum": ("return x.sum(-1)", "[torch.randn(128, 4096)]"),
    "cumsum": ("return torch.cumsum(x, dim=-1)", "[torch.randn(32, 1000)]"),
    "sigmoid": ("return torch.sigmoid(x)", "[torch.randn(128, 512)]"),
    "mse": ("return ((x - w) ** 2).mean()", "[torch.randn(256, 256), torch.randn(256, 256)]"),
    "rmsnorm": ("return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-6)", "[torch.randn(64, 2048)]"),
    "bias_relu": ("return torch.relu(x + w)", "[torch.randn(256, 256), torch.randn(256)]"),
}

# (family, name, kind, forward body): kind "wrong" (a bug) or "control" (honest)
KERNELS = [
    ("layernorm", "eps_forgotten", "wrong",
     "x = x - x.mean(-1, keepdim=True)\n        return x / torch.sqrt((x * x).mean(-1, keepdim=True))"),
    ("layernorm", "unbiased_variance", "wrong",
     "x = x - x.mean(-1, keepdim=True)\n        return x / torch.sqrt(x.var(-1, keepdim=True) + 1e-5)"),
    ("layernorm", "halves", "control",
     "n = x.shape[-1]\n        m = x.view(-1, 2, n // 2).sum(-1).sum(-1, keepdim=True) / n\n        d = x - m\n"
     "        return d / torch.sqrt((d * d).view(-1, 2, n // 2).sum(-1).sum(-1, keepdim=True) / n + 1e-5)"),
    ("layernorm", "functional", "control", "return torch.nn.functional.layer_norm(x, x.shape[-1:], eps=1e-5)"),
    ("softmax", "no_max_subtraction", "wrong", "e = torch.exp(x)\n        return e / e.sum(-1, keepdim=True)"),
    ("softmax", "tail_tile_dropped", "wrong",
     "y = torch.softmax(x[:, :992], dim=-1) * 0 + torch.softmax(x, dim=-1)[:, :992]\n"
     "        return torch.cat([y, torch.zeros_like(x[:, 992:])], -1)"),
    ("softmax", "logsumexp", "control", "return torch.exp(x - torch.logsumexp(x, -1, keepdim=True))"),
    ("softmax", "max_shift", "control",
     "e = torch.exp(x - x.amax(-1, keepdim=True))\n        return e / e.sum(-1, keepdim=True)"),
    ("gelu", "tanh_approximation", "wrong", "return torch.nn.functional.gelu(x, approximate='tanh')"),
    ("gelu", "erf_formula", "control", "return 0.5 * x * (1.0 + torch.erf(x * 0.7071067811865476))"),
    ("matmul", "k_tail_missed", "wrong", "k = x.shape[1] // 32 * 32\n        return x[:, :k] @ w[:k]"),
    ("matmul", "fp16_accumulate", "wrong", "return (x.half() @ w.half()).float()"),
    ("matmul", "split_k", "control", "k = x.shape[1] // 2\n        return x[:, :k] @ w[:k] + x[:, k:] @ w[k:]"),
    ("matmul", "bf16_inputs", "wrong", "return (x.bfloat16().float() @ w.bfloat16().float())"),
    ("matmul", "transposed_twice", "control", "return (w.t() @ x.t()).t()"),
    ("rowsum", "last_element_skipped", "wrong", "return x[:, :-1].sum(-1)"),
    ("rowsum", "float16_partials", "wrong", "return x.view(x.shape[0], -1, 64).sum(-1).half().float().sum(-1)"),
    ("rowsum", "chunked", "control", "return x.view(x.shape[0], -1, 64).sum(-1).sum(-1)"),
    ("cumsum", "exclusive_scan", "wrong",
     "return torch.cat([torch.zeros_like(x[:, :1]), torch.cumsum(x, -1)[:, :-1]], -1)"),
    ("cumsum", "blocked_with_carry", "control",
     "b = x.view(x.shape[0], -1, 100).cumsum(-1)\n        carry = b[:, :, -1].cumsum(-1) - b[:, :, -1]\n"
     "        return (b + carry[:, :, None]).view_as(x)"),
    ("sigmoid", "hard_sigmoid", "wrong", "return torch.clamp(x / 6 + 0.5, 0, 1)"),
    ("sigmoid", "clamped_input", "wrong", "return torch.sigmoid(torch.clamp(x, -3.0, 3.0))"),
    ("sigmoid", "tanh_form", "control", "return 0.5 * (torch.tanh(0.5 * x) + 1.0)"),
    ("mse", "sum_not_mean", "wrong", "return ((x - w) ** 2).sum() / (x.shape[0] * (x.shape[1] - 1))"),
    ("mse", "functional", "control", "return torch.nn.functional.mse_loss(x, w)"),
    ("rmsnorm", "eps_inside_sqrt_dropped", "wrong", "return x * torch.rsqrt((x * x).mean(-1, keepdim=True))"),
    ("rmsnorm", "norm_form", "control",
     "return x / torch.sqrt(x.pow(2).sum(-1, keepdim=True) / x.shape[-1] + 1e-6)"),
    ("bias_relu", "bias_broadcast_wrong_axis", "wrong", "return torch.relu(x + w[:, None])"),
    ("bias_relu", "non_negative_fast_path", "wrong",  # an easy-case fast path that forgets the bias
     "return x if bool((x >= 0).all()) else torch.relu(x + w)"),
    ("bias_relu", "race_one_in_20", "wrong",  # a race that shows 1 time in 20
     "import random\n        y = torch.relu(x + w)\n        if random.random() < 0.05:\n            y[0, :8] = 0.0\n"
     "        return y"),
    ("bias_relu", "clamp_form", "control", "return torch.clamp_min(x + w, 0.0)"),
]


def task_code(family: str) -> str:
    body, inputs = TASKS[family]
    args = "x, w" if "w" in body.split("return")[-1] or "w" in body.split("\n")[0] else "x"
    return (f"import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, {args}):\n"
            f"        {body}\n\n\ndef get_inputs():\n    return {inputs}\n\n\ndef get_init_inputs():\n    return []\n")


def kernel_code(family: str, body: str) -> str:
    args = task_code(family).split("def forward(self, ")[1].split(")")[0]
    return (f"import torch\nimport torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n    def forward(self, {args}):\n"
            f"        {body}\n")
