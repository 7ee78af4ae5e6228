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
    include: tuple[str, ...] = ()  # -I directories (where the source's own headers are; not recorded)

    def flags(self) -> list[str]:
        return ["-ptx", f"-arch={self.arch}", f"-O{self.opt}", "-Xcicc", f"-O{self.opt}", *self.extra,
                *(f"-I{d}" for d in self.include)]

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


def demangle_full(names: list[str]) -> dict[str, str]:
    """Mangled PTX entry name -> its demangled signature (the name itself if not mangled)."""
    out = {n: n for n in names}
    mangled = [n for n in names if n.startswith("_Z")]
    exe = (shutil.which("cu++filt") or shutil.which("c++filt")) if mangled else None
    if exe:
        r = subprocess.run([exe], input="\n".join(mangled), capture_output=True, text=True)
        out.update(zip(mangled, r.stdout.splitlines()))
    return out


def demangle(names: list[str]) -> dict[str, str]:
    """Mangled PTX entry name -> plain function name (without scope, template arguments
    or parameters)."""
    full = demangle_full(names)
    out = {}
    for n in names:
        d = full[n]
        if d == n and n.startswith("_Z"):  # no demangler: _Z<len><name>..., unnamespaced kernels
            m = re.match(r"_Z(\d+)", n)
            out[n] = n[m.end():m.end() + int(m.group(1))] if m else n
        else:
            out[n] = bare_name(d) or n
    return out


def _top_level(s: str) -> list[int]:
    """Depth (in (), <>, []) before each character of s."""
    depth, out = 0, []
    for c in s:
        if c in ")>]":
            depth -= 1
        out.append(depth)
        if c in "(<[":
            depth += 1
    return out


def bare_name(demangled: str) -> str:
    """`void (anonymous namespace)::foo<float, 4>(float const*, int)` -> `foo`."""
    s = demangled.strip()
    if s.endswith(")"):  # cut the parameter list: the '(' that matches the last ')'
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += (s[i] == ")") - (s[i] == "(")
            if depth == 0:
                s = s[:i]
                break
    s = s.rstrip()
    if s.endswith(">"):  # cut the template argument list
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            depth += (s[i] == ">") - (s[i] == "<")
            if depth == 0:
                s = s[:i]
                break
    d = _top_level(s)
    cut = max([i + 1 for i, c in enumerate(s) if c == " " and d[i] == 0], default=0)
    s = s[cut:]  # drop a return type
    d = _top_level(s)
    parts = [i + 2 for i in range(len(s) - 1) if s[i:i + 2] == "::" and d[i] == 0]
    return s[max(parts, default=0):]
