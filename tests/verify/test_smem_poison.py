"""Strict's shared-memory fill before each checked call (measure/smem_poison.py): the wiring
into the trials on a CPU, the PTX through ptxas where nvcc is installed, and on a GPU the
fill read back by a kernel and a calibration kernel that reads shared memory it never wrote
caught on every run (session_2026-11-30d: caught by one check and missed by the other, in
turn, over two runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from kernelmill.verify.measure import smem_poison
from kernelmill.verify.process import candidate as cand_proc


def test_the_fill_is_off_away_from_a_gpu():
    p = smem_poison.SharedMemoryPoison(torch.device("cpu"))
    assert p.state == "not a GPU" and p.kernel is None
    p.fill(0)  # nothing to do, nothing raised


def test_each_call_of_a_trial_is_preceded_by_its_own_pattern():
    calls = []

    class Poison:
        state = "on"

        def fill(self, call):
            calls.append(("fill", call))
            if len(calls) > 6:  # the fourth fill fails: the verdict says so, the trials go on
                self.state = "failed: a stand-in's launch error"

    class Model(torch.nn.Module):
        def forward(self, x):
            calls.append(("call",))
            return x * 2

    facts = {"input_mutation": [], "output_aliases_input": False}
    sets = [[torch.ones(4)], [torch.zeros(4)]]
    cand_proc._run_trials(Model(), sets, torch.device("cpu"), facts, "trial", poison=Poison())
    assert calls == [("fill", 0), ("call",), ("fill", 1), ("call",)] * 2
    assert facts["smem_poison"] == "failed: a stand-in's launch error"
    # and the two patterns differ where a NaN hides: max() skips NaN, so the second is finite in float
    assert smem_poison.PATTERNS[0] == -1 and smem_poison.PATTERNS[1] == 0x7F7F7F7F


@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs CUDA's ptxas (nvcc's toolkit)")
def test_the_fill_kernel_assembles_for_hopper(tmp_path):
    src = tmp_path / "fill.ptx"
    src.write_text(smem_poison.PTX)
    out = subprocess.run(["ptxas", "-arch=sm_90", str(src), "-o", str(tmp_path / "fill.cubin")],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "fill.cubin").stat().st_size > 0


_READ_PTX = r"""
.version 7.0
.target sm_75
.address_size 64
.extern .shared .align 16 .b8 km_seen[];
.visible .entry km_read_shared(.param .u64 km_out)
{
    .reg .b32 %r<6>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [km_out];
    cvta.to.global.u64 %rd1, %rd1;
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, km_seen;
    add.u32 %r3, %r3, %r2;
    ld.volatile.shared.u32 %r4, [%r3];
    mul.wide.u32 %rd2, %r2, 1;
    add.u64 %rd3, %rd1, %rd2;
    st.global.u32 [%rd3], %r4;
    ret;
}
"""


@pytest.mark.gpu
def test_a_kernel_reading_shared_memory_it_never_wrote_sees_the_pattern():
    from torch.cuda._utils import _cuda_load_module

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    device = torch.device("cuda")
    poison = smem_poison.SharedMemoryPoison(device)
    assert poison.state == "on", poison.state
    read = _cuda_load_module(_READ_PTX, ["km_read_shared"])["km_read_shared"]
    out = torch.zeros(256, dtype=torch.int32, device=device)
    for call, word in enumerate(smem_poison.PATTERNS):
        poison.fill(call)
        read(grid=(1, 1, 1), block=(256, 1, 1), args=[out], shared_mem=1024)
        torch.cuda.synchronize()
        seen = out.cpu()
        assert bool((seen == torch.tensor(word, dtype=torch.int64).to(torch.int32)).all()), \
            f"call {call}: {seen[:8].tolist()} after a fill of {word:#x}"


@pytest.mark.gpu
def test_strict_catches_the_calibration_kernel_that_reads_unwritten_shared_memory(tmp_path):
    """`rowsum/cuda/smem_512_uninitialised` (a 512-thread tree launched with 256) is wrong on every
    strict run, and its honest neighbours with shared memory stay ok."""
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    from calibration_support import calibration_kernels

    picked, run = calibration_kernels("rowsum/cuda/smem_512_uninitialised", "rowsum/cuda/kahan",
                                      "cumsum/cuda/hillis_steele")
    got = {}
    for attempt in range(2):  # twice: the catch must not depend on what an earlier kernel left
        run.kernelmill_checks(picked, "cuda", str(tmp_path / f"cache{attempt}"), 8.0, None, 1, "strict_fp64",
                              lambda kid, res, attempt=attempt: got.__setitem__((attempt, kid), res))
        wrong = got[(attempt, "rowsum/cuda/smem_512_uninitialised")]
        assert not wrong["passed"] and wrong.get("smem_poison") == "on", wrong
        for honest in ("rowsum/cuda/kahan", "cumsum/cuda/hillis_steele"):
            assert got[(attempt, honest)]["passed"], got[(attempt, honest)]
