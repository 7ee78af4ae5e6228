"""Issue 14's cold-build floor: what a g++ unit of a load_inline build costs with torch's full
header (torch/extension.h, what load_inline and the cached builder include) against a slimmer
set (torch/types.h, torch/csrc/Exceptions.h, torch/csrc/utils/pybind.h), each without and with
a precompiled header. CPU seconds (user + system) of g++, with torch's own flags for a C++
extension. A lead, not used by the builder: docs/results/benchmarks_history.md says what it gave.

    PYTHONPATH=src python benchmarks/diag/binding_headers.py
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import tempfile
from pathlib import Path

# a binding unit as load_inline writes it for functions=[...] (its header prepended)
BINDING = """
torch::Tensor relu_fwd(torch::Tensor x);
torch::Tensor scale_add(torch::Tensor a, torch::Tensor b, double s);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("relu_fwd", torch::wrap_pybind_function(relu_fwd), "relu_fwd");
m.def("scale_add", torch::wrap_pybind_function(scale_add), "scale_add");
}
"""
# a small host unit in the style of the wrappers the CUDA split leaves on the host
HOST = """
torch::Tensor relu_fwd(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  auto y = torch::empty_like(x);
  float* p = y.data_ptr<float>(); const float* q = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = q[i] > 0 ? q[i] : 0;
  return y;
}
"""
HEADERS = {
    "full": "#include <torch/extension.h>\n",
    "slim": "#include <torch/types.h>\n#include <torch/csrc/Exceptions.h>\n#include <torch/csrc/utils/pybind.h>\n",
}


def _cpu_s(args: list[str], cwd: Path) -> tuple[int, float, str]:
    """Exit status, CPU seconds (user + system) and the end of stderr of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p.returncode, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), p.stderr[-600:]


def main() -> None:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    from kernelmill.verify.build.inline_build import torch_flags

    fl = torch_flags("km_headers", False, [], [], None, None)
    cxx, cflags, post = shlex.split(fl["cxx"]), fl["cflags"], fl["post_cflags"]
    d = Path(tempfile.mkdtemp(prefix="km-headers-"))
    for name, include in HEADERS.items():
        (d / f"{name}.h").write_text(include)
        rc, cpu, err = _cpu_s([*cxx, *cflags, "-x", "c++-header", f"{name}.h", "-o", f"{name}.h.gch", *post], d)
        size = os.path.getsize(d / f"{name}.h.gch") / 1e6 if rc == 0 else 0
        print(f"PCH {name}: rc {rc}, {cpu:.1f} CPU s, {size:.0f} MB", err if rc else "", flush=True)
        for unit, body in (("binding", BINDING), ("host", HOST)):
            (d / f"{name}_{unit}.cpp").write_text(include + body)
            rc, cpu, err = _cpu_s([*cxx, *cflags, "-c", f"{name}_{unit}.cpp", "-o", f"{name}_{unit}.o", *post], d)
            print(f"{name} {unit}, no PCH: rc {rc}, {cpu:.1f} CPU s", err if rc else "", flush=True)
            (d / f"{name}_{unit}_pch.cpp").write_text(body)
            rc, cpu, err = _cpu_s([*cxx, *cflags, "-include", f"{name}.h", "-Winvalid-pch", "-c",
                                   f"{name}_{unit}_pch.cpp", "-o", f"{name}_{unit}_pch.o", *post], d)
            print(f"{name} {unit}, PCH: rc {rc}, {cpu:.1f} CPU s", err if rc else "", flush=True)
    print(f"files in {d}")


if __name__ == "__main__":
    main()
