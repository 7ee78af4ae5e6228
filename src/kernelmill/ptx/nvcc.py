"""nvcc as a PTX compiler (no GPU needed)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


class CompileFailed(RuntimeError):
    """The compiler rejected the source; `stderr` holds its message."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message + (f"\n{stderr.strip()}" if stderr.strip() else ""))
        self.stderr = stderr


@dataclass(frozen=True)
class NvccOptions:
    arch: str = "sm_90"
    opt: int = 3            # -O level, applied to the device front end (cicc) too
    unroll: bool = True     # False: `#pragma unroll 1` on every loop
    extra: tuple[str, ...] = field(default_factory=tuple)

    def flags(self) -> list[str]:
        return ["-ptx", f"-arch={self.arch}", f"-O{self.opt}", "-Xcicc", f"-O{self.opt}", *self.extra]

    def label(self) -> list[str]:
        """Options as recorded in a Pair."""
        return [f"-arch={self.arch}", f"-O{self.opt}", *([] if self.unroll else ["no-unroll"]), *self.extra]


def find_nvcc() -> str:
    exe = shutil.which("nvcc")
    if exe is None:
        for cand in ("/usr/local/cuda/bin/nvcc",):
            if Path(cand).exists():
                return cand
        raise CompileFailed("nvcc not found on PATH (install the CUDA toolkit)")
    return exe


def nvcc_ptx(source: str, opts: NvccOptions = NvccOptions(), timeout: float = 300) -> str:
    """Compile CUDA source text to PTX text; raise CompileFailed with nvcc's stderr."""
    if not opts.unroll:
        from ..cudasrc.tsparse import disable_unrolling
        source = disable_unrolling(source)
    with tempfile.TemporaryDirectory(prefix="kernelmill-nvcc-") as d:
        cu, ptx = Path(d) / "kernel.cu", Path(d) / "kernel.ptx"
        cu.write_text(source)
        try:
            r = subprocess.run([find_nvcc(), *opts.flags(), str(cu), "-o", str(ptx)],
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise CompileFailed(f"nvcc timed out after {timeout:.0f}s") from None
        if r.returncode != 0 or not ptx.exists():
            raise CompileFailed(f"nvcc failed (exit {r.returncode})", r.stderr)
        return ptx.read_text()


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled PTX entry name -> plain function name (without arguments)."""
    out = {n: n for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    if not mangled:
        return out
    exe = shutil.which("cu++filt") or shutil.which("c++filt")
    if exe:
        r = subprocess.run([exe], input="\n".join(mangled), capture_output=True, text=True)
        for n, d in zip(mangled, r.stdout.splitlines()):
            out[n] = _bare(d)
        return out
    for n in mangled:  # _Z<len><name>..., enough for unnamespaced kernels
        m = re.match(r"_Z(\d+)", n)
        if m:
            k = int(m.group(1))
            out[n] = n[m.end():m.end() + k]
    return out


def _bare(demangled: str) -> str:
    # "void foo<float>(float const*, int)" / "foo(float*)" / "ns::foo(...)" -> foo
    head = demangled.split("(")[0]
    depth, cut = 0, len(head)
    for i in range(len(head) - 1, -1, -1):  # drop a trailing template argument list
        c = head[i]
        if c == ">":
            depth += 1
        elif c == "<":
            depth -= 1
            if depth == 0:
                cut = i
                break
        elif depth == 0:
            break
    head = head[:cut] if head.endswith(">") else head
    return head.split()[-1].split("::")[-1]
