"""Host removal on LeetCUDA-style files (issue 44): a macro that defines the torch
wrappers, invoked at file scope without a semicolon; the parser places the invocations in
no node, so they stayed while their #define went, and nvcc stopped there."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("tree_sitter_cuda")

from kernelmill.cudasrc import device_unit  # noqa: E402

SRC = (Path(__file__).parent / "leetcuda_style.cu").read_text()


def test_file_scope_invocations_of_a_dropped_macro_go_with_it():
    unit = device_unit(SRC)
    assert "TORCH_BINDING_RELU" not in unit.source and "torch::" not in unit.source
    assert "relu_f32x4_kernel" in unit.source and "WARP_SIZE 32" in unit.source


def test_conditional_lines_between_nodes_are_kept():
    src = "#ifdef TORCH_X\n__global__ void k(float* x) { x[0] = 1; }\n#endif\n"
    assert device_unit(src).source.count("#") == 2


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_device_unit_compiles(tmp_path):
    from kernelmill.ptx import NvccOptions, nvcc_ptx

    ptx = nvcc_ptx(device_unit(SRC).source, NvccOptions("sm_90"))
    assert ptx.count(".entry") == 2
