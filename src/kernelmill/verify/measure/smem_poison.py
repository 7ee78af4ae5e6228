"""Shared memory filled with a poison pattern before each checked call (`--guards strict`, GPU).

A kernel that reads shared memory it never wrote (a reduction tree written for 512 threads and
launched with 256) reads whatever the last kernel on that SM left there. That is often zero or
harmless, so the kernel passes one run and fails the next: the calibration suite's
`rowsum/cuda/smem_512_uninitialised` was caught by the defaults and missed by strict in one
run, and the other way round in the one before (session_2026-11-30d). compute-sanitizer's
initcheck watches global memory only, so strict had no sure check for this.

Before each call of the correctness trials, one kernel fills every SM's shared memory with a
pattern: all ones bits on the first call of a set (NaN as float, half and bfloat16, -1 as an
integer) and 0x7f7f7f7f on the second (NaN as half, 3.4e38 as float and bfloat16: a max that
skips NaN still sees it). A kernel that reads what it did not write then gets a wrong answer
on every run, which the comparison catches; one that writes before it reads sees nothing.
The pattern survives between kernels because the hardware does not clear shared memory
between launches of one context (it is what made the bug show at all).

Written by hand: no library fills shared memory. The kernel is PTX (the driver compiles it for
the GPU at hand, no nvcc at run time), loaded through torch's own driver-API loader
(`torch.cuda._utils._cuda_load_module`, private but present since torch 2.8); where that is
missing the fill is skipped and the verdict's measurement says why."""

from __future__ import annotations

try:  # bound when the harness loads, before any candidate code runs in the process
    from torch.cuda._utils import _cuda_load_module
except ImportError:  # torch before 2.8
    _cuda_load_module = None

PATTERNS = (-1, 0x7F7F7F7F)  # the first call's words, the second's (see above)
KERNEL = "km_fill_shared"
PTX = r"""
.version 7.0
.target sm_75
.address_size 64

.extern .shared .align 16 .b8 km_shared[];

.visible .entry km_fill_shared(.param .u32 km_bytes, .param .u32 km_word)
{
    .reg .pred %p<2>;
    .reg .b32 %r<8>;
    ld.param.u32 %r1, [km_bytes];
    ld.param.u32 %r2, [km_word];
    mov.u32 %r3, %tid.x;
    shl.b32 %r3, %r3, 2;
    mov.u32 %r4, %ntid.x;
    shl.b32 %r4, %r4, 2;
    mov.u32 %r5, km_shared;
$L_next:
    setp.ge.u32 %p1, %r3, %r1;
    @%p1 bra $L_done;
    add.u32 %r6, %r5, %r3;
    st.volatile.shared.u32 [%r6], %r2;
    add.u32 %r3, %r3, %r4;
    bra $L_next;
$L_done:
    ret;
}
"""


class SharedMemoryPoison:
    """`fill(call)` before the candidate's `call`-th call of a set (0 or 1), on the current
    stream; `state`: "on", or why not (the verdict's `measurement.smem_poison`)."""

    def __init__(self, device) -> None:
        self.kernel = None
        self.grid = self.bytes = 0
        self.state = "off"
        if getattr(device, "type", str(device)) != "cuda":
            self.state = "not a GPU"
            return
        if _cuda_load_module is None:
            self.state = "unavailable: this torch has no torch.cuda._utils._cuda_load_module"
            return
        try:
            import torch

            props = torch.cuda.get_device_properties(device)
            # the most one block may take: one block per SM covers what a kernel can be given
            self.bytes = int(getattr(props, "shared_memory_per_block_optin", 0) or 48 * 1024) // 4 * 4
            self.grid = 2 * int(props.multi_processor_count)  # each SM gets at least one block
            loaded = _cuda_load_module(PTX, [KERNEL])
            self.kernel = loaded[KERNEL] if isinstance(loaded, dict) else getattr(loaded, KERNEL)
            self.kernel.set_shared_memory_config(self.bytes)
            self.state = "on"
        except Exception as exc:  # noqa: BLE001 - an old torch or driver: strict goes on without it
            self.kernel = None
            self.state = f"unavailable: {type(exc).__name__}: {str(exc)[:160]}"

    def fill(self, call: int) -> None:
        if self.kernel is None:
            return
        try:
            self.kernel(grid=(self.grid, 1, 1), block=(1024, 1, 1),
                        args=[self.bytes, PATTERNS[call % len(PATTERNS)]], shared_mem=self.bytes)
        except Exception as exc:  # noqa: BLE001 - a launch that fails says so once and stops
            self.kernel = None
            self.state = f"failed: {type(exc).__name__}: {str(exc)[:160]}"
