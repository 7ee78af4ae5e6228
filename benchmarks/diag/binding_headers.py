"""Issue 14's cold-build floor: what a g++ unit of a load_inline build costs with torch's full
header (torch/extension.h, what load_inline and the cached builder include) against a slimmer
set (torch/types.h, torch/csrc/Exceptions.h, torch/csrc/utils/pybind.h), each without and with
a precompiled header. CPU seconds (user + system) of g++, with torch's own flags for a C++
extension. A lead, not used by the builder: docs/benchmarks.md says what it gave.

    PYTHONPATH=src python benchmarks/diag/binding_headers.py
"""
import os, resource, shlex, subprocess, sys, tempfile, time
from pathlib import Path
from kernelmill.verify.inline_build import torch_flags
fl = torch_flags("km_exp", False, [], [], None, None)
cxx = shlex.split(fl["cxx"]); cflags = fl["cflags"]; post = fl["post_cflags"]
BODY = """
torch::Tensor relu_fwd(torch::Tensor x);
torch::Tensor scale_add(torch::Tensor a, torch::Tensor b, double s);
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
m.def("relu_fwd", torch::wrap_pybind_function(relu_fwd), "relu_fwd");
m.def("scale_add", torch::wrap_pybind_function(scale_add), "scale_add");
}
"""
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
d = Path(tempfile.mkdtemp())
def run(args):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN); t = time.perf_counter()
    p = subprocess.run(args, cwd=d, capture_output=True, text=True)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p.returncode, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), time.perf_counter() - t, p.stderr[-600:]
for h, inc in HEADERS.items():
    (d / f"{h}.h").write_text(inc)
    rc, cpu, wall, err = run([*cxx, *cflags, "-x", "c++-header", f"{h}.h", "-o", f"{h}.h.gch", *post])
    print(f"PCH {h}: rc {rc} cpu {cpu:.1f} s, {os.path.getsize(d / f'{h}.h.gch') / 1e6 if rc == 0 else 0:.0f} MB", err if rc else "", flush=True)
    for unit, body in (("binding", BODY), ("host", HOST)):
        (d / f"{h}_{unit}.cpp").write_text(inc + body)
        rc, cpu, wall, err = run([*cxx, *cflags, "-c", f"{h}_{unit}.cpp", "-o", f"{h}_{unit}.o", *post])
        print(f"{h} {unit} no PCH: rc {rc} cpu {cpu:.1f} s", err if rc else "", flush=True)
        (d / f"{h}_{unit}_p.cpp").write_text(body)
        rc, cpu, wall, err = run([*cxx, *cflags, "-include", f"{h}.h", "-Winvalid-pch", "-c", f"{h}_{unit}_p.cpp", "-o", f"{h}_{unit}_p.o", *post])
        print(f"{h} {unit} PCH: rc {rc} cpu {cpu:.1f} s", err if rc else "", flush=True)
print(d)
