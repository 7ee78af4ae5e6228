# one cold build of a C++ load_inline extension (slim path) with kernelmill's builder; prints seconds and units
import json, sys, time
from kernelmill.verify.build import inline_build
cache = sys.argv[1]
inline_build.install(cache)
import torch.utils.cpp_extension as ce
src = """#include <torch/extension.h>
torch::Tensor scale_add(torch::Tensor x, torch::Tensor y, double s) {
  TORCH_CHECK(x.sizes() == y.sizes(), "shapes differ");
  return x * s + y;
}
std::vector<torch::Tensor> split2(const torch::Tensor& x) { return {x.relu(), -x}; }
"""
t0 = time.perf_counter()
m = ce.load_inline("ab_ext", [src], functions=["scale_add", "split2"])
dt = time.perf_counter() - t0
import torch
x = torch.randn(5); y = torch.randn(5)
assert torch.allclose(m.scale_add(x, y, 2.0), x * 2 + y)
a, b = m.split2(x); assert torch.equal(a, x.relu()) and torch.equal(b, -x)
try:
    m.scale_add(x, torch.randn(3), 1.0); raise SystemExit("no error")
except RuntimeError as e:
    assert "shapes differ" in str(e)
print(json.dumps({"s": round(dt, 2), "units": inline_build.last_log().get("unit_s") if hasattr(inline_build, "last_log") else None}))
