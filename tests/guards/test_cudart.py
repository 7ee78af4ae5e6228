"""The ctypes binding to the loaded CUDA runtime: without one (a CPU process)
every call answers None and nothing crashes; on a GPU it reads the
persisting-L2 limit back and names a failed launch (``-m gpu``)."""

from __future__ import annotations

import pytest

from kernelmill.verify.guards import cudart

MAPS = """\
7f0000000000-7f0000001000 r--p 00000000 08:01 1234   /usr/lib/x86_64-linux-gnu/libc.so.6
7f0000002000-7f0000003000 r-xp 00001000 08:01 99     /site/nvidia/cuda_runtime/lib/libcudart.so.12
7f0000004000-7f0000005000 r--p 00002000 08:01 99     /site/nvidia/cuda_runtime/lib/libcudart.so.12
7f0000006000-7f0000007000 r-xp 00000000 08:01 77     /usr/local/cuda/lib64/libcudart.so.13.0.48
7f0000008000-7f0000009000 rw-p 00000000 00:00 0
7f000000a000-7f000000b000 r-xp 00000000 08:01 55     /opt/libcudart_static_helper.so
"""


def test_maps_parsing_finds_each_runtime_once():
    assert cudart.cudart_paths(MAPS) == ["/site/nvidia/cuda_runtime/lib/libcudart.so.12",
                                         "/usr/local/cuda/lib64/libcudart.so.13.0.48"]
    assert cudart.cudart_paths("") == []


def _has_runtime() -> bool:
    return bool(cudart.runtimes())


@pytest.mark.skipif(_has_runtime(), reason="a CUDA runtime is loaded in this process")
def test_without_a_runtime_everything_is_none():
    assert cudart.runtimes() == []
    assert cudart.last_error() is None
    assert cudart.persisting_l2_limit() is None
    assert cudart.access_policy_window(0) is None
    assert cudart.reset_persisting_l2() is None


def test_an_empty_answer_read_before_cuda_started_is_read_again(monkeypatch):
    # a skip condition at collection asked before CUDA was loaded; the GPU tests after it
    # then saw no runtime at all (the device, issue 41's GPU run)
    monkeypatch.setattr(cudart, "_found", [])
    monkeypatch.setattr(cudart, "cudart_paths", lambda text: ["/nonexistent/libcudart.so.13"])
    monkeypatch.setattr(cudart, "_cuda_started", lambda: False)
    cudart.runtimes()
    assert cudart._found == []  # nothing started: the cached answer stands
    monkeypatch.setattr(cudart, "_cuda_started", lambda: True)
    assert cudart.runtimes() == []  # the path does not load here, but it was read again
    assert cudart._found == ["/nonexistent/libcudart.so.13"]


@pytest.mark.gpu
def test_persisting_limit_is_read_back_and_reset():
    import torch

    torch.zeros(1, device="cuda")  # the context and the runtime are loaded now
    libs = cudart.runtimes()
    assert libs
    assert cudart.last_error() is None
    assert libs[0].cudaDeviceSetLimit(cudart.CUDA_LIMIT_PERSISTING_L2, 1 << 20) == 0
    assert (cudart.persisting_l2_limit() or 0) > 0
    cudart.reset_persisting_l2()
    assert cudart.persisting_l2_limit() == 0
    assert cudart.access_policy_window(torch.cuda.current_stream().cuda_stream) is None


@pytest.mark.gpu
def test_illegal_launch_is_named(tmp_path):
    import torch
    from torch.utils.cpp_extension import load_inline

    src = r"""
    #include <torch/extension.h>
    __global__ void touch(float* y) { y[threadIdx.x] = 1.f; }
    void launch_2048(torch::Tensor y) { touch<<<1, 2048>>>(y.data_ptr<float>()); }
    """
    ext = load_inline(name="cudart_bad_launch", cpp_sources="void launch_2048(torch::Tensor y);",
                      cuda_sources=src, functions=["launch_2048"], build_directory=str(tmp_path), verbose=False)
    y = torch.zeros(2048, device="cuda")
    cudart.last_error()  # nothing pending from earlier work
    ext.launch_2048(y)
    err = cudart.last_error()
    # CUDA 12 names it "invalid configuration argument" (9); the CUDA 13 runtime "invalid argument" (1)
    assert err is not None and ("invalid configuration" in err or "invalid argument" in err), err
    assert cudart.last_error() is None  # reading it cleared it
