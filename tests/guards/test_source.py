"""The AST checks alone (no processes): each flag fires on its pattern and
stays quiet on honest code, including the builtin suite's correct candidates."""

from __future__ import annotations

import pytest

from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify.guards import FLAGS, Findings, check_source, decide, own_kernel_names

HEAD = "import torch\nimport torch.nn as nn\n"


@pytest.mark.parametrize("code,flag", [
    (HEAD + "from reference import Model\nclass ModelNew(Model):\n    pass\n", "calls_reference"),
    (HEAD + "class ModelNew(nn.Module):\n    def forward(self, x):\n        return Model()(x)\n", "calls_reference"),
    (HEAD + "torch.cuda.synchronize = lambda: None\n", "harness_patched"),
    (HEAD + "import time as t\nt.perf_counter = lambda: 0.0\n", "harness_patched"),
    (HEAD + "setattr(torch, 'allclose', lambda *a: True)\n", "harness_patched"),
    (HEAD + "torch.backends.cudnn.allow_tf32 = True\n", "precision_downgrade"),
    (HEAD + "torch.set_float32_matmul_precision('medium')\n", "precision_downgrade"),
    (HEAD + "import sys\ndef f():\n    return sys._getframe(2).f_locals\n", "harness_introspection"),
    (HEAD + "import gc\nobjs = gc.get_objects()\n", "harness_introspection"),
    (HEAD + "data = open('/proc/self/maps').read()\n", "harness_introspection"),
    (HEAD + "from torch.utils.cpp_extension import load_inline\next = load_inline('r', cpp_sources='')\n"
            "def forward(x):\n    try:\n        return ext.relu(x)\n    except RuntimeError:\n"
            "        return torch.relu(x)\n", "try_fallback"),
    # 16: persisting L2, by name or by number
    (HEAD + 'src = "cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, n);"\n', "l2_persistence"),
    (HEAD + 'src = """\ncudaStreamAttrValue v;\nv.accessPolicyWindow.num_bytes = n;\n"""\n', "l2_persistence"),
    (HEAD + 'src = "cudaDeviceSetLimit((cudaLimit)6, 1 << 20);"\n', "l2_persistence"),
    (HEAD + 'src = "cudaStreamSetAttribute(s, (cudaStreamAttrID)1, &v);"\n', "l2_persistence"),
    (HEAD + 'src = "cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, n);"\n', "l2_persistence"),
    # 20: descriptors the harness opened, detached processes
    (HEAD + "import os\nos.write(3, b'{\"status\": \"ok\"}')\n", "forged_output"),
    (HEAD + "import os\nos.dup2(os.open('/dev/null', os.O_WRONLY), 5)\n", "forged_output"),
    (HEAD + "import os\nif os.fork() == 0:\n    os.setsid()\n", "forged_output"),
    (HEAD + "from os import fork as f\nf()\n", "forged_output"),
    (HEAD + "import subprocess\nsubprocess.Popen(['python', 'w.py'], start_new_session=True)\n", "forged_output"),
    (HEAD + "import subprocess as sp\nsp.Popen(['python', 'w.py'], process_group=0)\n", "forged_output"),
    (HEAD + "import os\nos.system('nohup python w.py &')\n", "forged_output"),
])
def test_pattern_is_flagged(code, flag):
    assert flag in {f.flag for f in check_source(code, "standard", "cuda")}


@pytest.mark.parametrize("code", [
    HEAD + "torch.backends.cudnn.benchmark = True\n",
    HEAD + "torch.backends.cuda.matmul.allow_tf32 = False\n",
    HEAD + "try:\n    import triton\nexcept ImportError:\n    triton = None\n",
    HEAD + "def forward(x):\n    try:\n        return ext.relu(x)\n    except RuntimeError as e:\n        raise ValueError(e)\n",
    HEAD + "class ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.ones(3))\n",
])
def test_honest_patterns_are_not_flagged(code):
    assert check_source(code, "strict", "cuda") == []


def test_strict_adds_heuristics():
    code = HEAD + "import inspect\n"
    assert check_source(code, "standard") == []
    assert [f.flag for f in check_source(code, "strict")] == ["harness_introspection"]


@pytest.mark.parametrize("call, flagged", [
    ('open(p, "w")', False), ('open(p, mode="wb")', False), ('open(p, "a")', False), ('io.open(p, "x")', False),
    ("open(p)", True), ('open(p, "r")', True), ('open(p, "w+")', True), ('open(p, "r+b")', True),
    ("open(p, mode)", True),  # a mode that is not a literal may read
])
def test_strict_reading_files_is_introspection_writing_one_is_not(call, flagged):
    """A candidate writing its CUDA source for torch's `load` (LLM output does) reads nothing;
    where it writes is the audit hook's to judge at run time."""
    code = f"import io\np, mode = '/tmp/k.cu', 'r'\nf = {call}\n"
    assert bool([f for f in check_source(code, "strict") if f.flag == "harness_introspection"]) == flagged
    assert check_source(code, "standard") == []


def test_builtin_candidates_have_no_finding_even_strict():
    for s in builtin_samples():
        assert check_source(s.code, "strict", s.language) == [], s.sample_id


def test_own_kernel_names():
    src = HEAD + 'cuda = r"""\n__global__ void __launch_bounds__(256) my_kernel(float* x) {}\n"""\n' \
                 "import triton\n@triton.jit\ndef tri_kernel(x):\n    pass\n"
    assert own_kernel_names(src) == ["my_kernel", "tri_kernel"]


def test_decide_status_and_policy():
    f = Findings()
    f.add("torch_fallback", "no own call")
    base = {"status": "ok", "correct": True, "speedup": 2.0}
    assert decide(f, base)["status"] == "rejected"
    flagged = decide(f, base, "flag")
    assert flagged["status"] == "ok" and flagged["flags"] == ["torch_fallback"]
    assert decide(f, base, "allow") == {**base, "flags": []}
    g = Findings()
    g.add("nondeterministic", "second call differs")
    out = decide(g, base)
    assert out["status"] == "incorrect" and "speedup" not in out and "nondeterministic" in out["message"]
    with pytest.raises(KeyError):
        g.add("no_such_flag", "")


def test_every_flag_has_a_status_and_item():
    assert all(status in ("rejected", "incorrect") and 1 <= item <= 36 for status, item, _ in FLAGS.values())
    assert {FLAGS[f][1] for f in ("l2_persistence", "forged_output", "launch_failure")} == {16, 20, 21}
    # issue 42's classes
    assert {f: FLAGS[f][1] for f in ("harness_tampering", "shared_answers", "forbidden_library", "fake_fusion",
                                     "runtime_install")} == {"harness_tampering": 28, "shared_answers": 29,
                                                             "forbidden_library": 30, "fake_fusion": 35,
                                                             "runtime_install": 36}


# every way of naming torch.backends.cudnn / torch.backends.cuda in a module
BACKEND_ALIASES = [
    ("import torch\n", "torch.backends.cudnn", "torch.backends.cuda"),
    ("import torch.backends.cudnn\nimport torch.backends.cuda\n", "torch.backends.cudnn", "torch.backends.cuda"),
    ("from torch.backends import cudnn\nfrom torch.backends import cuda as bc\n", "cudnn", "bc"),
    ("import torch.backends.cudnn as cudnn\nimport torch.backends.cuda as bc\n", "cudnn", "bc"),
    ("import torch.backends as tb\n", "tb.cudnn", "tb.cuda"),
    ("from torch import backends\n", "backends.cudnn", "backends.cuda"),
    ("import torch as t\n", "t.backends.cudnn", "t.backends.cuda"),
    ("import torch\ncudnn = torch.backends.cudnn\nbc = torch.backends.cuda\n", "cudnn", "bc"),
]
NUMERICS_PRESERVING = [
    "{cudnn}.benchmark = True", "{cudnn}.deterministic = True", "{cudnn}.enabled = False",
    "{cudnn}.benchmark_limit = 0", "{cudnn}.allow_tf32 = False", "{cudnn}.fp32_precision = 'ieee'",
    "{cuda}.matmul.allow_tf32 = False", "{cuda}.matmul.allow_bf16_reduced_precision_reduction = False",
    "{cuda}.enable_flash_sdp(False)", "{cuda}.enable_mem_efficient_sdp(True)", "{cuda}.enable_math_sdp(True)",
    "{cuda}.preferred_linalg_library('cusolver')", "{cuda}.preferred_blas_library('cublaslt')",
    "{cuda}.cufft_plan_cache.max_size = 32", "{cuda}.enable_fp16_bf16_reduction_math_sdp(False)",
    "setattr({cudnn}, 'benchmark', True)",
    "with {cudnn}.flags(enabled=True, benchmark=True, deterministic=True, allow_tf32=False):\n    pass",
    "{cudnn}.set_flags(True, True, 10, True, False)",
    "with {cuda}.sdp_kernel(enable_flash=True, enable_math=False):\n    pass",
]
PRECISION_REDUCING = [
    "{cudnn}.allow_tf32 = True", "{cudnn}.fp32_precision = 'tf32'", "{cudnn}.conv.fp32_precision = 'tf32'",
    "{cuda}.matmul.allow_tf32 = True", "{cuda}.matmul.allow_fp16_reduced_precision_reduction = True",
    "{cuda}.matmul.allow_bf16_reduced_precision_reduction = True", "{cuda}.matmul.fp32_precision = 'tf32'",
    "{cuda}.matmul.allow_fp16_accumulation = True", "{cuda}.enable_fp16_bf16_reduction_math_sdp(True)",
    "{cuda}.allow_fp16_bf16_reduction_math_sdp(True)", "setattr({cudnn}, 'allow_tf32', True)",
    "with {cudnn}.flags(enabled=True, allow_tf32=True):\n    pass", "{cudnn}.set_flags(True, True, 10, True, True)",
    "{cudnn}.allow_tf32 = flag",
]


@pytest.mark.parametrize("imports,cudnn,cuda", BACKEND_ALIASES)
@pytest.mark.parametrize("line", NUMERICS_PRESERVING)
def test_numerics_preserving_backend_knobs_are_not_flagged(imports, cudnn, cuda, line):
    code = imports + "flag = True\n" + line.format(cudnn=cudnn, cuda=cuda) + "\n"
    assert check_source(code, "strict", "cuda") == [], code


@pytest.mark.parametrize("imports,cudnn,cuda", BACKEND_ALIASES)
@pytest.mark.parametrize("line", PRECISION_REDUCING)
def test_precision_reducing_backend_knobs_are_flagged(imports, cudnn, cuda, line):
    code = imports + "flag = True\n" + line.format(cudnn=cudnn, cuda=cuda) + "\n"
    assert [f.flag for f in check_source(code, "standard", "cuda")] == ["precision_downgrade"], code


@pytest.mark.parametrize("code,flag", [
    ("import torch\ntorch.set_float32_matmul_precision('high')\n", "precision_downgrade"),
    ("from torch import set_float32_matmul_precision as p\np('medium')\n", "precision_downgrade"),
    ("import torch\ntorch.backends.fp32_precision = 'tf32'\n", "precision_downgrade"),
    ("import torch\ntorch.backends.mkldnn.matmul.fp32_precision = 'bf16'\n", "precision_downgrade"),
    ("import torch\ntorch.set_default_dtype(torch.bfloat16)\n", "precision_downgrade"),
    ("import torch\ntorch.backends.cudnn = None\n", "harness_patched"),
    ("import torch\ntorch.backends.cudnn.is_available = lambda: False\n", "harness_patched"),
    ("import torch\ndef no():\n    return False\ntorch.backends.cuda.is_built = no\n", "harness_patched"),
])
def test_other_torch_settings(code, flag):
    assert [f.flag for f in check_source(code, "standard")] == [flag]


def test_full_precision_torch_settings_are_not_flagged():
    code = ("import torch\ntorch.set_float32_matmul_precision('highest')\ntorch.backends.mkldnn.enabled = False\n"
            "torch.backends.opt_einsum.strategy = 'optimal'\ntorch.use_deterministic_algorithms(True)\n"
            "torch.set_default_dtype(torch.float32)\n")
    assert check_source(code, "strict") == []


@pytest.mark.parametrize("code", [
    "import os, sys\nsaved = os.dup(1)\nos.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())\n",
    "import os\nos.write(2, b'building\\n')\n",
    "import atexit\natexit.register(lambda: None)\n",
    "import signal\nsignal.signal(signal.SIGALRM, lambda *a: None)\n",
])
def test_output_channel_heuristics_are_strict_only(code):
    assert check_source(code, "standard") == []
    assert {f.flag for f in check_source(code, "strict")} == {"forged_output"}


def test_honest_process_and_cuda_patterns_are_not_flagged():
    code = ("import subprocess, os\nsubprocess.run(['nvcc', '--version'], check=True)\n"
            "print('speed', flush=True)\n"
            'src = """\n// no persisting L2 here, no accessPolicyWindow either\n'
            "cudaDeviceSetLimit(cudaLimitStackSize, 4096);\n"
            "cudaStreamSetAttribute(s, cudaLaunchAttributeSynchronizationPolicy, &v);\n"
            'asm volatile("ld.global.L2::evict_last.f32 %0, [%1];" : "=f"(r) : "l"(p));\n"""\n')
    assert check_source(code, "standard") == []
