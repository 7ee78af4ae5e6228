"""4 cold builds at once of C++ extensions sharing one signature list: which path each took."""
import json, sys, time, subprocess, tempfile, os
cache = tempfile.mkdtemp(prefix="par-")
child = r'''
import json, sys, time
from kernelmill.verify.build import inline_build
inline_build.set_fingerprint("")
i = int(sys.argv[2])
name = f"km_par{i}"
flags = inline_build.torch_flags(name, False, [], [], None, None)
code = f"torch::Tensor act(torch::Tensor y) {{ return y * {i + 1}; }}"
main, _ = inline_build.assemble(name, [code], None, ["act"])
b = inline_build.InlineBuilder(sys.argv[1])
t = time.perf_counter()
b.build(name, main, None, flags)
print(json.dumps({"i": i, "s": round(time.perf_counter() - t, 2), "slim": b.log.get("slim"),
                  "compiled": b.log.get("compiled"), "reused": b.log.get("reused"), "own": b.log.get("sigbind_own_copy")}))
'''
t = time.perf_counter()
procs = []
for i in range(4):
    procs.append(subprocess.Popen([sys.executable, "-c", child, cache, str(i)], stdout=subprocess.PIPE, text=True))
    time.sleep(0.3)
for p in procs:
    out, _ = p.communicate()
    print(out.strip())
print("wall", round(time.perf_counter() - t, 1))
