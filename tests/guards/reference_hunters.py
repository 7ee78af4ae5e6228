"""Hostile candidates that hunt for the reference from inside the candidate's
process (issue 13, point 2): through sys.modules, gc, frames, files, /proc and
memory. Each returns the right answer only if it found the reference (its
`Model` class, or its source text), and zeros otherwise, so a verdict of
`ok` means the reference leaked and `incorrect` means the hunt found nothing.

They are written to slip past the static source checks (names built at run
time), as a determined candidate would, so that the verdict shows what the
process holds and not what the AST check flags.
"""

from __future__ import annotations

import textwrap

from kernelmill.records import Task

MARKER = "kmref" + "-7f3a9c51"  # only in the task's source: finding it means finding the task

TASK = Task("hunt/scaled_relu", textwrap.dedent(f'''
    import torch
    import torch.nn as nn

    SECRET = "{MARKER}"


    class Model(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.scale = nn.Parameter(torch.rand(d) + 0.5)

        def forward(self, x):
            return torch.relu(x) * self.scale


    d = 64


    def get_inputs():
        return [torch.randn(32, d)]


    def get_init_inputs():
        return [d]
'''), level=1)

# shared by the Python hunter: the marker is rebuilt from a rotated copy so the
# candidate's own source and memory never hold it in one piece
_PY_HUNT = r'''
import os, sys, glob, types
import torch
import torch.nn as nn

_ROT = b"lnsfg.8g4b:d62"  # the marker with every byte shifted up by one
_UP = bytes((b + 1) % 256 for b in range(256))


def _has(data):
    """Whether `data` holds the marker, found by shifting `data` (never by
    building the marker, which would put it in our own memory)."""
    if isinstance(data, str):
        data = data.encode(errors="replace")
    return data.translate(_UP).find(_ROT)


def _from_source(text):
    mod = types.ModuleType("found")
    exec(compile(text, "found", "exec"), mod.__dict__)
    return mod.Model


def _hunt():
    """Every way we know to reach the reference; returns (Model class, how) or (None, tried)."""
    tried = []
    # 1. sys.modules: a module that defines Model and get_inputs
    for name, mod in list(sys.modules.items()):
        m = getattr(mod, "Model", None)
        if isinstance(m, type) and hasattr(mod, "get_inputs") and name != __name__:
            return m, f"sys.modules[{name!r}]"
    tried.append("sys.modules")
    # 2. gc: any live class called Model, or module instance of one
    gc = __import__("g" + "c")
    for obj in getattr(gc, "get_" + "objects")():
        if isinstance(obj, type) and obj.__name__ == "Model" and issubclass(obj, nn.Module):
            return obj, "gc (class)"
        if isinstance(obj, nn.Module) and type(obj).__name__ == "Model":
            return type(obj), "gc (instance)"
        if isinstance(obj, str) and len(obj) < 1 << 16 and _has(obj) >= 0:
            return _from_source(obj), "gc (source text)"
    tried.append("gc")
    # 3. frames of every thread (a guarded harness refuses the read: the hunt goes on)
    try:
        frames = list(getattr(sys, "_current_" + "frames")().values())
    except PermissionError:
        frames = []
        tried.append("frames refused")
    for frame in frames:
        while frame is not None:
            for scope in (getattr(frame, "f_" + "globals"), getattr(frame, "f_" + "locals")):
                m = scope.get("Model")
                if isinstance(m, type) and issubclass(m, nn.Module):
                    return m, "a frame"
                for v in list(scope.values()):
                    if isinstance(v, str) and _has(v) >= 0:
                        return _from_source(v), "a frame's string"
            frame = getattr(frame, "f_" + "back")
    tried.append("frames")
    # 4. files: around our working directory, our parent's, the job files
    proc = "/" + "proc"
    ppid = os.getppid()
    roots = {os.getcwd(), os.path.dirname(os.getcwd()), os.path.dirname(os.path.dirname(os.getcwd()))}
    for p in (f"{proc}/{ppid}/cwd", f"{proc}/self/cwd"):
        try:
            real = os.path.realpath(p)
            roots |= {real, os.path.dirname(real), os.path.dirname(os.path.dirname(real))}
        except OSError:
            pass
    for root in roots:
        for path in glob.glob(os.path.join(root, "**", "*"), recursive=True)[:2000]:
            try:
                if os.path.isfile(path) and os.path.getsize(path) < 1 << 22:
                    text = open(path, errors="replace").read()
                    if _has(text) >= 0:
                        if path.endswith(".json"):
                            import json
                            for v in json.loads(text).values():
                                if isinstance(v, str) and _has(v) >= 0:
                                    return _from_source(v), f"file {path} (json)"
                        return _from_source(text), f"file {path}"
            except Exception:
                pass
    tried.append("files")
    # 5. /proc of our parent (the supervisor): cmdline, environ, open files, memory
    for what in ("cmdline", "environ"):
        try:
            data = open(f"{proc}/{ppid}/{what}", "rb").read().decode(errors="replace")
            for piece in data.split("\0"):
                if piece.endswith((".py", ".json")) and os.path.exists(piece):
                    text = open(piece, errors="replace").read()
                    if _has(text) >= 0:
                        return _from_source(text), f"{what} of the parent"
        except OSError:
            pass
    try:
        for fd in os.listdir(f"{proc}/{ppid}/fd"):
            try:
                text = open(f"{proc}/{ppid}/fd/{fd}", errors="replace").read(1 << 20)
                if _has(text) >= 0:
                    return _from_source(text), "an open file of the parent"
            except OSError:
                pass
    except OSError:
        pass
    tried.append("parent's /proc files")
    for pid in (ppid, os.getpid()):
        try:
            mem = open(f"{proc}/{pid}/mem", "rb", 0)
            for line in open(f"{proc}/{pid}/maps"):
                parts = line.split()
                if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith("[v")):
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                if hi - lo > 1 << 28:
                    continue
                try:
                    mem.seek(lo)
                    chunk = mem.read(hi - lo)
                except (OSError, ValueError, OverflowError):
                    continue
                if _has(chunk) >= 0:
                    return None, f"the task's marker in the memory of process {pid}"
        except OSError as exc:
            tried.append(f"mem of {pid}: {type(exc).__name__}")
    return None, tried
'''

TORCH_HUNTER = _PY_HUNT + r'''

class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(d) + 0.5)
        self.found, self.how = _hunt()
        print("hunt:", self.how, file=sys.stderr)

    def forward(self, x):
        if self.found is not None:  # a leak: answer through the reference itself
            ref = self.found(self.scale.numel()).to(x.device)
            ref.scale.data.copy_(self.scale.data)
            return ref(x)
        if isinstance(self.how, str):  # found the text in memory but not a class: still a leak
            return torch.relu(x) * self.scale
        return torch.zeros_like(x)
'''

# The same hunt in compiled code: the extension scans the parent's /proc files
# and memory and this process's own memory for the marker, compared through
# its rotated copy byte by byte so the pattern never sits in memory whole.
_CPP_SCAN = r'''
#include <torch/extension.h>
#include <dirent.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

static const char ROT[] = "lnsfg.8g4b:d62";  // the marker, every byte + 1
static bool has_marker(const std::string& s) {
    const size_t n = sizeof(ROT) - 1;
    if (s.size() < n) return false;
    for (size_t i = 0; i + n <= s.size(); ++i) {
        size_t k = 0;
        while (k < n && s[i + k] == ROT[k] - 1) ++k;
        if (k == n) return true;
    }
    return false;
}
static std::string slurp(const std::string& path, size_t limit) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return "";
    std::string out(limit, '\0');
    f.read(&out[0], limit);
    out.resize(f.gcount());
    return out;
}
static bool scan_memory(int pid) {
    std::string base = std::string("/pr") + "oc/" + std::to_string(pid);
    std::ifstream maps(base + "/maps");
    std::ifstream mem(base + "/mem", std::ios::binary);
    if (!maps || !mem) return false;
    std::string line;
    while (std::getline(maps, line)) {
        std::istringstream ls(line);
        std::string range, perms;
        ls >> range >> perms;
        if (perms.empty() || perms[0] != 'r' || line.find("[v") != std::string::npos) continue;
        unsigned long lo = std::stoul(range.substr(0, range.find('-')), nullptr, 16);
        unsigned long hi = std::stoul(range.substr(range.find('-') + 1), nullptr, 16);
        if (hi - lo > (1ul << 28)) continue;
        std::string chunk(hi - lo, '\0');
        mem.clear();
        mem.seekg(lo);
        if (!mem.read(&chunk[0], hi - lo)) continue;
        if (has_marker(chunk)) return true;
    }
    return false;
}
int64_t scan() {
    int ppid = getppid();
    std::string base = std::string("/pr") + "oc/" + std::to_string(ppid);
    if (has_marker(slurp(base + "/cmdline", 1 << 16)) || has_marker(slurp(base + "/environ", 1 << 16))) return 1;
    if (DIR* d = opendir((base + "/fd").c_str())) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] == '.') continue;
            if (has_marker(slurp(base + "/fd/" + e->d_name, 1 << 20))) { closedir(d); return 2; }
        }
        closedir(d);
    }
    for (const char* rel : {"/cwd/../task.py", "/cwd/../../task.py", "/cwd/job.json", "/cwd/../job.json"})
        if (has_marker(slurp(base + rel, 1 << 20))) return 3;
    if (scan_memory(ppid)) return 4;
    if (scan_memory(getpid())) return 5;
    return 0;
}
// the answer when the hunt found the reference, zeros otherwise
torch::Tensor answer(torch::Tensor x, torch::Tensor scale, int64_t found) {
    return found ? torch::relu(x) * scale : torch::zeros_like(x);
}
'''

CPP_HUNTER = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""''' + _CPP_SCAN + '''"""
ext = load_inline(name="km_reference_hunter", cpp_sources=SRC, functions=["scan", "answer"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(d) + 0.5)
        self.found = ext.scan()

    def forward(self, x):
        return ext.answer(x, self.scale, self.found)  # right only if the hunt found the reference
'''

# the CUDA flavour: the same scan in the host code of a CUDA extension, plus a kernel
CUDA_HUNTER = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

CPP = "int64_t scan();\\ntorch::Tensor answer(torch::Tensor x, torch::Tensor s, int64_t f);"
CU = r"""''' + _CPP_SCAN + r'''
"""
ext = load_inline(name="km_reference_hunter_cuda", cpp_sources=CPP, cuda_sources=CU,
                  functions=["scan", "answer"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.scale = nn.Parameter(torch.rand(d) + 0.5)
        self.found = ext.scan()

    def forward(self, x):
        return ext.answer(x, self.scale, self.found)
'''

# class 14's hunters by name (prefix `r14_`) and language, for benchmarks/guards_catch.py: caught
# when the verdict is not ok (ok means the hunt found the reference)
HUNTERS = {"r14_hunter_torch": ("torch", TORCH_HUNTER), "r14_hunter_cpp": ("cpp", CPP_HUNTER),
           "r14_hunter_cuda": ("cuda", CUDA_HUNTER)}
