"""The TileLang seed corpus (candidates/<level>/<task>/tilelang__ok*.py): each file is a
ModelNew for a builtin task written with TileLang, lists its kernels in CHECK, and (where
tilelang is installed) a sample of them lowers to CUDA source for sm_90a without a GPU.
benchmarks/tilelang_seeds_check.py --cpu compiles all of them; the GPU run is
benchmarks/tilelang_seeds_device.sh."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest
from optional_modules import import_or_skip

from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import BUILTIN_CANDIDATES_DIR

SEEDS = sorted(BUILTIN_CANDIDATES_DIR.glob("level*/*/tilelang__ok*.py"))
# one seed per kind of construct: elementwise, row reduction, register-tiled fp32 GEMM,
# T.gemm + T.Pipelined in fp16, flash attention, implicit-GEMM convolution
SAMPLE = ["level1/01_ReLU", "level1/24_Softmax", "level2/01_Gemm_Bias_ReLU", "level1/14_Matmul_fp16",
          "level3/06_CausalSelfAttention_fp16", "level1/16_Conv2d"]


def _task_id(path: Path) -> str:
    return "/".join(path.relative_to(BUILTIN_CANDIDATES_DIR).parts[:2])


def test_at_least_40_seeds_on_distinct_builtin_tasks():
    tasks = set(load_tasks("builtin").by_id())
    ids = [_task_id(p) for p in SEEDS]
    assert len(set(ids)) >= 40
    assert set(ids) <= tasks


@pytest.mark.parametrize("path", SEEDS, ids=_task_id)
def test_seed_is_a_tilelang_model_new(path):
    tree = ast.parse(path.read_text())
    imports = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    aliases = {(a.name, a.asname) for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "tilelang" in imports and ("tilelang.language", "T") in aliases
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    assert "ModelNew" in classes
    prim_funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                  and any(ast.unparse(d) == "T.prim_func" for d in n.decorator_list)]
    assert prim_funcs, "no @T.prim_func kernel"
    assert any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "CHECK" for t in n.targets)
               for n in tree.body), "no CHECK list of (factory, kwargs)"
    doc = ast.get_docstring(tree) or ""
    assert "PyTorch -> TileLang" in doc, "the construct map comment is missing"
    # the kernel is what runs: forward calls compiled kernels, never torch's compute
    forward = next(n for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "ModelNew"
                   for n in c.body if isinstance(n, ast.FunctionDef) and n.name == "forward")
    called = {ast.unparse(n.func) for n in ast.walk(forward) if isinstance(n, ast.Call)}
    assert not {c for c in called if c.startswith(("torch.", "F.")) and c not in ("torch.empty",)}, called


@pytest.mark.parametrize("task", SAMPLE)
def test_seed_lowers_to_cuda_source_without_a_gpu(task, tmp_path, monkeypatch):
    import_or_skip("tilelang", reason="tilelang cannot be imported (pip install 'kernelmill[tilelang]')")
    monkeypatch.setenv("TILELANG_PRINT_ON_COMPILATION", "0")
    path = BUILTIN_CANDIDATES_DIR / task / "tilelang__ok.py"
    spec = importlib.util.spec_from_file_location(f"seed_{task.replace('/', '_')}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for factory, kwargs in mod.CHECK:
        src = factory(**kwargs, target={"kind": "cuda", "arch": "sm_90a"}).get_kernel_source()
        assert "__global__" in src and "blockIdx" in src
