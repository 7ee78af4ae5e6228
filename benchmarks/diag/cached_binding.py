"""A cold build under 3 s? The fast builder's slim path (verify/build/slim_units.py), its steps timed apart (issue 14).

Every unit that includes torch/extension.h costs ~7.5 CPU-s with its header precompiled, an
empty one included (docs/results/benchmarks_history.md: the header's own roots). This builds one C++
extension (two functions, load_inline's `functions=` style, a CPU candidate) three ways,
from cold build folders, and checks that all three modules give the same answers:

1. torch's own `load_inline`;
2. the slim path's units (`slim_units.plan`), per candidate: the candidate's code compiled
   against `torch/types.h` (precompiled) instead of `torch/extension.h`, with one forwarding
   function per bound function appended; a unit of three lines with `PyInit_<name>` and the
   names; a link with a binding object made for the *signature list* (pybind11 and the full
   header), which any candidate binding functions of the same types reuses;
3. what the prototype needs once per machine and signature list, timed apart: the
   `torch/types.h` header precompiled, and the binding object.

    python benchmarks/diag/cached_binding.py [--out OUT.json]

It shows what a build costs on this path, not that the path keeps a candidate's meaning:
the full header declares more than `torch/types.h`, which could in principle change which
overload a call picks (docs/results/benchmarks_history.md says what is open).
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

CANDIDATE = r"""
#include <torch/extension.h>

torch::Tensor relu_fwd(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "x must be contiguous");
  auto y = torch::empty_like(x);
  float* p = y.data_ptr<float>(); const float* q = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = q[i] > 0 ? q[i] : 0;
  return y;
}

torch::Tensor scale_add(torch::Tensor a, torch::Tensor b, double s) {
  return a + b * s;
}
"""
FUNCTIONS = ["relu_fwd", "scale_add"]


def _run(cmd: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(f"{shlex.join(cmd)[:300]}\n{p.stderr[-3000:]}")
    return time.perf_counter() - t0


def _load(path: Path, name: str):
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out")
    ap.add_argument("--keep", action="store_true", help="keep the build folders")
    args = ap.parse_args()
    import torch
    from torch.utils.cpp_extension import load_inline

    from kernelmill.verify.build.inline_build import assemble, torch_flags, unnamed
    from kernelmill.verify.build.slim_units import plan

    root = Path(tempfile.mkdtemp(prefix="km-binding-"))
    result: dict = {"machine_cpus": os.cpu_count()}

    # 1. torch's own load_inline, cold
    t0 = time.perf_counter()
    stock = load_inline("km_stock_ext", [CANDIDATE], functions=FUNCTIONS, build_directory=str(_mk(root / "stock")),
                        verbose=False)
    result["stock_load_inline_s"] = round(time.perf_counter() - t0, 2)

    fl = torch_flags("km_proto_ext", False, [], [], [], [])
    cxx, cflags, post, ldflags = shlex.split(fl["cxx"]), fl["cflags"], fl["post_cflags"], fl["ldflags"]
    shared = unnamed(cflags)  # the binding's: no module name

    # 3. once per machine (and per signature list for the binding object), timed apart
    once = _mk(root / "once")
    (once / "types.h").write_text("#include <torch/types.h>\n")
    units = plan(assemble("km_proto_ext", [CANDIDATE], None, FUNCTIONS)[0], "km_proto_ext")
    (once / "binding.cpp").write_text(units.binding)
    with ThreadPoolExecutor(2) as pool:
        pch = pool.submit(_run, [*cxx, *cflags, "-x", "c++-header", "types.h", "-o", "types.h.gch", *post], once)
        bind = pool.submit(_run, [*cxx, *shared, "-c", "binding.cpp", "-o", "binding.o", *post], once)
        result["once_types_pch_s"], result["once_binding_object_s"] = round(pch.result(), 2), round(bind.result(), 2)

    # 2. per candidate, cold: host unit against the precompiled torch/types.h, the C shim, the link
    d = _mk(root / "proto")
    (d / "host.cpp").write_text(units.slim)
    (d / "shim.cpp").write_text(units.shim)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(2) as pool:
        h = pool.submit(_run, [*cxx, *cflags, "-include", str(once / "types.h"), "-Winvalid-pch", "-c", "host.cpp",
                               "-o", "host.o", *post], d)
        s = pool.submit(_run, [*cxx, "-fPIC", "-c", "shim.cpp", "-o", "shim.o"], d)
        result["proto_host_unit_s"], result["proto_shim_s"] = round(h.result(), 2), round(s.result(), 3)
    result["proto_link_s"] = round(_run([*cxx, "-shared", "host.o", "shim.o", str(once / "binding.o"), "-o",
                                         "km_proto_ext.so", *ldflags], d), 2)
    result["proto_build_s"] = round(time.perf_counter() - t0, 2)
    proto = _load(d / "km_proto_ext.so", "km_proto_ext")

    x, a, b = torch.randn(1000), torch.randn(64), torch.randn(64)
    same = (torch.equal(proto.relu_fwd(x), stock.relu_fwd(x)) and torch.equal(proto.relu_fwd(x), torch.relu(x))
            and torch.equal(proto.scale_add(a, b, 0.5), stock.scale_add(a, b, 0.5)))
    try:
        proto.relu_fwd(x[::2])  # TORCH_CHECK raises through the same error translation
        raised = None
    except RuntimeError as exc:
        raised = "must be contiguous" in str(exc)
    result.update(same_answers=bool(same), check_raises=raised,
                  speedup_vs_stock=round(result["stock_load_inline_s"] / result["proto_build_s"], 1))
    print(json.dumps(result, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)


def _mk(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p


if __name__ == "__main__":
    main()
