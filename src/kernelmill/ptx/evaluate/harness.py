"""Host harnesses: a kernel's CUDA source plus an `extern "C"` entry that
launches it with a pair's configuration, compiled by nvcc into a shared
library Python loads with ctypes (the paper's "Python-callable .so").

The entry is ``int kmh_launch(void* const* args, void* stream)``: `args` holds
one device pointer per pointer parameter, in parameter order; scalars are
compiled in as constants. Pointers reach the kernel through a proxy that
converts to whatever pointer type the kernel declares (``const float*
__restrict__``, ``half*``, ``float4*``), so the harness never rejects a
candidate for spelling a type differently; the element type the config names
decides only how the buffers are filled. It returns ``cudaGetLastError()``
after the launch (bad launch configurations, too much shared memory);
``kmh_error_string`` turns a code into text.

Builds are content-addressed (the harness text, the flags and nvcc's version
name the file), so the reference of a pair is compiled once however many
candidates it has, and a candidate identical to it costs nothing. A failed
build is remembered with nvcc's message. nvcc runs in the verify sandbox (its
own process group, scrubbed environment, deadline, memory watchdog): the
candidate's source is untrusted text, and the preprocessor reads files.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .config import DTYPES, KernelConfig

ENTRY = "kmh_launch"
_PRELUDE = """#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <stdint.h>
"""


def _literal(value, dtype: str) -> str:
    ctype = DTYPES[dtype][0]
    if dtype.startswith("float") or dtype == "bfloat16":
        return f"(({ctype}){float(value)!r}f)" if dtype != "float64" else f"(({ctype}){float(value)!r})"
    if dtype == "bool":
        return "true" if value else "false"
    return f"(({ctype}){int(value)}LL)"


def launch_name(kernel_source: str, cfg: KernelConfig) -> str:
    """The kernel as the entry launches it: `k<float, 4>` where the config names a template
    instance and the source defines `k` as a template, else `k` (a candidate may decompile an
    instance into a plain kernel of the same signature)."""
    if not cfg.template_args:
        return cfg.kernel
    try:
        from ...cudasrc.tsparse import functions
        template = any(f.name == cfg.kernel and f.is_kernel and f.template is not None
                       for f in functions(kernel_source))
    except ImportError:  # no tree-sitter: a template named before the kernel's name
        template = re.search(rf"template\s*<[^{{;]*>\s*__global__[^{{;]*\b{re.escape(cfg.kernel)}\s*\(",
                             kernel_source) is not None
    return f"{cfg.kernel}<{', '.join(cfg.template_args)}>" if template else cfg.kernel


def harness_source(kernel_source: str, cfg: KernelConfig, prelude: str = "") -> str:
    """The .cu text: includes, the pair's shared prelude (`ptx augment` keeps the
    headers and macros its kernels share apart from each kernel's source; both
    sides get it), the kernel's source as given, then the entry."""
    args, slot = [], 0
    for p in cfg.params:
        if p.role == "scalar":
            args.append(_literal(p.value, p.dtype))
        else:
            args.append(f"kmh_detail::Ptr{{args[{slot}]}}")
            slot += 1
    gx, gy, gz = cfg.grid
    bx, by, bz = cfg.block
    smem = int(cfg.shared_mem)
    kernel = launch_name(kernel_source, cfg)
    opt_in = (f"  {{ cudaError_t e = cudaFuncSetAttribute({kernel}, cudaFuncAttributeMaxDynamicSharedMemorySize, "
              f"{smem}); if (e != cudaSuccess) return (int)e; }}\n") if smem > 48 * 1024 else ""
    return (
        f"{_PRELUDE}\n{prelude.rstrip()}\n// ---- kernel source ----\n{kernel_source.rstrip()}\n// ---- harness ----\n"
        "namespace kmh_detail {\n"
        "struct Ptr {\n  void* p;\n"
        "  template <class T> __host__ operator T*() const { return static_cast<T*>(p); }\n};\n"
        "}  // namespace kmh_detail\n"
        f'extern "C" int {ENTRY}(void* const* args, void* stream) {{\n'
        f"{opt_in}"
        f"  {kernel}<<<dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}), {smem}, (cudaStream_t)stream>>>"
        f"({', '.join(args)});\n"
        "  return (int)cudaGetLastError();\n}\n"
        'extern "C" const char* kmh_error_string(int e) { return cudaGetErrorString((cudaError_t)e); }\n'
    )


@dataclass
class Build:
    ok: bool
    so: str = ""          # path of the library
    error: str = ""       # nvcc's message (trimmed) when not ok
    seconds: float = 0.0
    cached: bool = False


class NvccMissing(RuntimeError):
    pass


def find_nvcc() -> str | None:
    exe = shutil.which("nvcc")
    if exe:
        return exe
    for cand in (os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"):
        p = Path(cand) / "bin" / "nvcc"
        if cand and p.exists():
            return str(p)
    return None


@lru_cache(maxsize=4)
def nvcc_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.strip().splitlines()[-1] if out.strip() else "unknown"


def nvcc_flags(arch: str) -> list[str]:
    return ["-shared", "-Xcompiler", "-fPIC", f"-arch={arch}", "-O3"]


def _trim(msg: str, limit: int = 4000) -> str:
    msg = msg.strip()
    return msg if len(msg) <= limit else msg[:limit] + f"\n[... {len(msg) - limit} characters cut]"


class Builder:
    """Content-addressed nvcc builds of harness sources under `root`."""

    def __init__(self, root: Path, arch: str = "sm_90", timeout: float = 180.0, nvcc: str | None = None):
        self.root = Path(root).resolve()
        self.arch, self.timeout = arch, timeout
        self.nvcc = nvcc or find_nvcc()
        self.root.mkdir(parents=True, exist_ok=True)

    @property
    def available(self) -> bool:
        return self.nvcc is not None

    def key(self, source: str) -> str:
        h = hashlib.sha256()
        for part in (source, " ".join(nvcc_flags(self.arch)), nvcc_version(self.nvcc or "")):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()[:24]

    def build(self, source: str) -> Build:
        if self.nvcc is None:
            raise NvccMissing("nvcc not found (PATH, CUDA_HOME, /usr/local/cuda)")
        key = self.key(source)
        so, err = self.root / f"{key}.so", self.root / f"{key}.err"
        if so.exists():
            return Build(True, str(so), cached=True)
        if err.exists():
            return Build(False, error=err.read_text(), cached=True)
        from ...verify import Sandbox, scrubbed_env
        with tempfile.TemporaryDirectory(prefix="kmh-build-", dir=self.root) as d:
            cu, out = Path(d) / "harness.cu", Path(d) / "harness.so"
            cu.write_text(source)
            box = Sandbox(memory_limit_gb=8, max_procs=64, output_limit=20000, limit_address_space=False)
            res = box.run([self.nvcc, *nvcc_flags(self.arch), str(cu), "-o", str(out)], Path(d),
                          scrubbed_env(home=d), self.timeout)
            if res.returncode == 0 and out.exists():
                os.replace(out, so)
                return Build(True, str(so), seconds=res.wall_s)
            if res.timed_out:
                msg = f"nvcc timed out after {self.timeout:.0f} s"
            elif res.killed_reason:
                msg = f"nvcc killed ({res.killed_reason})"
            else:
                msg = _trim((res.stderr + "\n" + res.stdout).replace(str(cu), "harness.cu"))
                if not msg:
                    msg = f"nvcc exited with {res.returncode}"
            if not res.killed_reason and not res.timed_out:  # a machine problem is not remembered
                tmp = Path(d) / "err.txt"
                tmp.write_text(msg)
                os.replace(tmp, err)
            return Build(False, error=msg, seconds=res.wall_s)
