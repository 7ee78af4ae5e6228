"""Do kernelmill's speedups agree with an independent measurement?

For every honest candidate of a corpus (benchmarks/corpus/, README there) this
script (1) runs `kernelmill verify` on all of them in a subprocess (a fresh
store in a temporary folder, so nothing is cached), or reads a verdicts JSONL
given with --verdicts; (2) measures each candidate again, independently of
kernelmill's timing and process code, in its own fresh process; (3) prints and
writes a table of both measurements and a summary of their deviation.

The independent measurement reproduces kernelmill's timing convention with
other tools (no kernelmill import in that path):

* cuda: reference `Model` and candidate `ModelNew`, each built under
  torch.manual_seed(seed) as a fresh module is (no .eval(), no weight copy),
  PyTorch's default numerics (cuDNN may use TF32; --numerics strict turns it
  off), under torch.no_grad(), the same inputs every call; the reference runs
  with cudnn.benchmark off (PyTorch's default), the candidate with whatever it
  set. Per round and side: GPU time per call from torch.profiler's device
  records (one profiler session per call, a 2x-L2 buffer zeroed before it,
  the union of the kernels' intervals: overlapping work counts once), and triton.testing.do_bench(fn, warmup=25, rep=100,
  return_mode="median") as the event figure; reference and candidate
  alternated over --rounds rounds; speedup = median over rounds of
  (reference / candidate). The kernel-time speedup is compared with
  kernelmill's speedup, the do_bench one is shown beside it.
* KernelBench (--kernelbench DIR): its own eval_kernel_against_ref in a fresh
  process per candidate (cuda_event timing, 100 trials), compared with the
  verdict's `speedup_kernelbench`; with --kernelbench-repeat N, N fresh processes
  per row, and the table says how far KernelBench's own figure moves between them.

Sources: --corpus (benchmarks/corpus/ layout), --external (a table such as
../shared/external/cuda-l1/kernels.jsonl: id, ref_code, custom_code) and
--llm (benchmarks/corpus_llm/, its GPU candidates expected ok), merged into one
folder. Only candidates kernelmill times (verdict ok) are measured independently.
--second-verdicts adds reproducibility: the share of a second run's speedups
inside the first run's interval, and the interval's median width.
* cpu: the same models and inputs, torch.set_num_threads(1),
  torch.utils.benchmark.Timer(...).blocked_autorange(min_run_time=0.2) median
  per side (num_threads=1), alternated over the rounds, median ratio.

    python benchmarks/timing_fidelity.py --device cpu --only relu_64k__clamp_min,swish_4m__silu \
        --out fidelity_cpu.json --markdown fidelity_cpu.md

Each independent measurement runs in a fresh process, started (torch imported) while the
card's measurement before it runs (--no-spares: started when needed); a compile that failed
once answers again from what it printed (--no-replay-failed-compiles: compiled in each
process, as a candidate's failing load_inline does in a plain process).

--out is rewritten after every candidate, so an interrupted run keeps what it
measured; --resume skips candidates already measured in --out (and lets
kernelmill resume its verdicts file next to it).
"""

from __future__ import annotations

import argparse
import ast
import gzip
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_CORPUS = HERE / "corpus"
HEADER = re.compile(r"^#\s*task:\s*(?P<task>\S+)\s+language:\s*(?P<language>\w+)\s+device:\s*(?P<device>\w+)(?P<rest>.*)$")
LANGUAGES = ("cuda", "triton", "torch", "cpp")
DEVICES = ("cuda", "cpu", "both")
WEIGHT_SEED = 42
INPUT_SEED = 1234
# goals of the summary: |deviation| bound per device, and the GPU's median bound
GOALS = {"cuda": {"within": 0.10, "median": 0.03, "share": 0.95, "kb_share": 0.90},
         "cpu": {"within": 0.25, "median": None, "share": 1.0, "kb_share": None}}


# ---------------------------------------------------------------- the corpus

@dataclass
class Candidate:
    name: str
    path: str
    task: str
    language: str
    device: str  # cuda, cpu or both
    style: str = ""
    fidelity: bool = True  # part of the GPU fidelity table

    def runs_on(self, device: str) -> bool:
        return self.device in (device, "both")


def parse_header(text: str, where: str = "<candidate>") -> dict:
    """The first line `# task: T  language: L  device: D [fidelity: no]` and an
    optional `# style: ...` line after it; ValueError naming the problem."""
    lines = text.splitlines()
    m = HEADER.match(lines[0].strip()) if lines else None
    if not m:
        raise ValueError(f"{where}: first line must be '# task: <stem>  language: <lang>  device: <dev>'")
    info = {"task": m["task"], "language": m["language"], "device": m["device"], "style": "", "fidelity": True}
    if info["language"] not in LANGUAGES:
        raise ValueError(f"{where}: language {info['language']!r} is not one of {', '.join(LANGUAGES)}")
    if info["device"] not in DEVICES:
        raise ValueError(f"{where}: device {info['device']!r} is not one of {', '.join(DEVICES)}")
    fm = re.search(r"fidelity:\s*(\w+)", m["rest"])
    if fm:
        info["fidelity"] = fm.group(1).lower() not in ("no", "false", "0")
    for line in lines[1:4]:
        sm = re.match(r"^#\s*style:\s*(.*)$", line.strip())
        if sm:
            info["style"] = sm.group(1).strip()
            break
    return info


def load_corpus(corpus: Path) -> list[Candidate]:
    out = []
    for path in sorted((corpus / "honest").glob("*.py")):
        info = parse_header(path.read_text(encoding="utf-8"), str(path))
        out.append(Candidate(name=path.stem, path=str(path), **info))
    return out


def materialize(dest: Path, corpus: Path | None, external: Path | None, llm: Path | None,
                kernelbench: Path | None, builtin_tasks: Path) -> Path:
    """One folder in the corpus layout (tasks/, honest/) holding every source asked for:
    the corpus's own files, each row of an external table (its reference as the task, its
    candidate as `<id>.py`), and the LLM-style corpus's GPU candidates expected ok (their
    tasks copied from kernelmill's builtin suite or KernelBench's problems)."""
    (dest / "tasks").mkdir(parents=True, exist_ok=True)
    (dest / "honest").mkdir(parents=True, exist_ok=True)
    if corpus is not None:
        for sub in ("tasks", "honest"):
            for f in sorted((corpus / sub).glob("*.py")):
                shutil.copyfile(f, dest / sub / f.name)
    if external is not None:
        for n, line in enumerate(external.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                rid, ref, code = row["id"], row["ref_code"], row["custom_code"]
            except (ValueError, KeyError) as exc:
                raise SystemExit(f"{external}:{n}: not a row of id, ref_code, custom_code ({exc})")
            name = file_name(rid)
            # the rule of kernelmill's audit (audit/sources.guess_language; no kernelmill import here):
            # `load(sources=...)` through cpp_extension builds an extension too. Labelled torch, three
            # cuda-l1 rows skipped the torch_fallback check (a100-L1-3: only cuBLAS ran, verdict ok)
            builds = "load_inline" in code or "cpp_extension" in code
            lang = "cuda" if builds else "triton" if "triton" in code else "torch"
            (dest / "tasks" / f"{name}.py").write_text(ref, encoding="utf-8")
            claim = row.get("claimed_speedup")
            (dest / "honest" / f"{name}.py").write_text(
                f"# task: {name}  language: {lang}  device: cuda\n# style: external {rid} (claimed {claim}x on "
                f"{row.get('gpu_tuned_for', '?')})\n" + code, encoding="utf-8")
    if llm is not None:
        for f in sorted((llm / "candidates").glob("*.py")):
            text = f.read_text(encoding="utf-8")
            head = text.splitlines()[:3]
            m = re.match(r"#\s*task:\s*(\S+)\s+language:\s*(\w+)\s+device:\s*(\w+)", head[0])
            if not m or m[3] not in ("cuda", "both") or m[2] == "cpp" or not any("expect: ok" in h for h in head):
                continue
            where, rel = m[1].split("/", 1)
            src = (builtin_tasks / rel) if where == "builtin" else (kernelbench / "tasks" / rel if kernelbench else None)
            if src is None or not src.exists():
                continue
            stem = re.sub(r"[^A-Za-z0-9_]", "_", m[1][:-3] if m[1].endswith(".py") else m[1])
            shutil.copyfile(src, dest / "tasks" / f"{stem}.py")
            style = next((h.split(":", 1)[1].strip() for h in head if h.startswith("# style:")), "")
            body = "\n".join(text.splitlines()[1:])
            (dest / "honest" / f"llm_{f.stem}.py").write_text(
                f"# task: {stem}  language: {m[2]}  device: cuda\n# style: llm {style[:80]}\n{body}\n", encoding="utf-8")
    return dest


def task_path(corpus: Path, task: str) -> Path:
    return corpus / "tasks" / f"{task}.py"


def task_sizes(task_code: str, profile: str) -> dict:
    """The module constants a size profile overrides (kernelmill's
    SIZE_PROFILES convention; the full profile overrides nothing)."""
    if profile == "full":
        return {}
    for node in ast.parse(task_code).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "SIZE_PROFILES"):
            return dict(ast.literal_eval(node.value).get(profile, {}))
    return {}


def select(cands: list[Candidate], device: str, only: list[str] | None) -> list[Candidate]:
    chosen = [c for c in cands if c.runs_on(device)]
    if device == "cuda":
        chosen = [c for c in chosen if c.fidelity]
    if only:
        known = {c.name for c in chosen}
        missing = [n for n in only if n not in known]
        if missing:
            raise SystemExit(f"--only names not in the {device} corpus: {', '.join(missing)}")
        chosen = [c for c in chosen if c.name in set(only)]
    return chosen


# ------------------------------------------------- the independent measurement

def _import_file(path: str, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _to(obj, device):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to(o, device) for o in obj)
    return obj


def _flat(obj) -> list:
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat(o)]
    return []


def measure_in_process(spec: dict) -> dict:
    """Measure one candidate against its reference in THIS process (called in a
    fresh one by `measure`). spec: task, candidate, device, sizes, rounds, seed,
    and for cpu min_run_time."""
    import torch

    device = spec["device"]
    seed = spec.get("seed", WEIGHT_SEED)
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False  # PyTorch's default
        torch.backends.cudnn.allow_tf32 = spec.get("numerics", "pytorch") == "pytorch"
    ref_flags = _backend_flags()  # before the candidate's module runs
    task = _import_file(spec["task"], "fidelity_task")
    for key, value in spec.get("sizes", {}).items():
        setattr(task, key, value)
    torch.manual_seed(seed)
    init = task.get_init_inputs() if hasattr(task, "get_init_inputs") else []
    torch.manual_seed(seed)
    ref = task.Model(*init).to(device)
    cand_mod = _import_file(spec["candidate"], "fidelity_candidate")
    torch.manual_seed(seed)
    cand = cand_mod.ModelNew(*init).to(device)
    torch.manual_seed(spec.get("input_seed", INPUT_SEED))
    inputs = _to(task.get_inputs(), device)
    if spec.get("build_only"):  # --prebuild: the candidate's extensions compiled (a first call builds lazy ones)
        with torch.no_grad():
            cand(*inputs)
        return {"built": True}

    rounds = int(spec.get("rounds", 5))
    ref_t, cand_t = [], []
    ref_k, cand_k = [], []
    with torch.no_grad():
        # each side runs under its own backend settings, as kernelmill's separate processes
        # do: a candidate's import, init or first call may switch TF32 or cudnn.benchmark on,
        # and in one process that would also speed up the reference (docs/SEMANTICS.md). The
        # reference's first call too: cuDNN's plan for a shape is chosen at its first call and
        # kept whatever the flags are later, so a candidate's __init__ that turned benchmark on
        # made the reference's first call a tuned one (cuda-l1 L1-54: 1.38 ms here, 1.85 ms in
        # its own process). Where both sides run one convolution key, the reference's plan is
        # the candidate's too (a limit of one process; kernelmill's processes do not share it).
        init_flags = _backend_flags()
        _set_backend_flags(ref_flags)
        want = _flat(ref(*inputs))
        _set_backend_flags(init_flags)
        got = _flat(cand(*inputs))
        cand_flags = _backend_flags()
        _set_backend_flags(ref_flags)
        max_err = max((float((g.float() - w.float()).abs().max()) for g, w in zip(got, want) if w.numel()),
                      default=0.0)
        shapes_ok = len(got) == len(want) and all(g.shape == w.shape for g, w in zip(got, want))
        if device == "cuda":
            from triton.testing import do_bench

            def bench(model):
                return do_bench(lambda: model(*inputs), warmup=25, rep=100, return_mode="median")

            flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, dtype=torch.int32,
                                device="cuda")

            def kernel_ms(model):
                return _profiled_kernel_ms(lambda: model(*inputs), flush, int(spec.get("calls", 10)))
        else:
            from torch.utils.benchmark import Timer

            min_run_time = float(spec.get("min_run_time", 0.2))

            def bench(model):
                timer = Timer(stmt="model(*inputs)", globals={"model": model, "inputs": inputs}, num_threads=1)
                return timer.blocked_autorange(min_run_time=min_run_time).median * 1e3
        for _ in range(rounds):
            _set_backend_flags(ref_flags)
            ref_t.append(bench(ref))
            if device == "cuda":
                ref_k.append(kernel_ms(ref))
            _set_backend_flags(cand_flags)
            if device == "cuda":
                cand_k.append(kernel_ms(cand))
            cand_t.append(bench(cand))
    ratios = [r / c for r, c in zip(ref_t, cand_t)]
    out = {
        "ref_ms": statistics.median(ref_t), "cand_ms": statistics.median(cand_t),
        "speedup": statistics.median(ratios), "ratios": ratios,
        "ref_rounds_ms": ref_t, "cand_rounds_ms": cand_t,
        "max_abs_err": max_err, "shapes_ok": shapes_ok,
        "method": ("triton.testing.do_bench(warmup=25, rep=100, median)" if device == "cuda"
                   else f"torch.utils.benchmark.Timer.blocked_autorange(min_run_time={spec.get('min_run_time', 0.2)}), 1 thread"),
        "torch": torch.__version__,
    }
    if device == "cuda":  # kernel time is the figure compared; do_bench's events stay beside it
        kr = [r / c for r, c in zip(ref_k, cand_k) if c > 0]
        out.update(event_ref_ms=out["ref_ms"], event_cand_ms=out["cand_ms"], event_speedup=out["speedup"],
                   ref_ms=statistics.median(ref_k), cand_ms=statistics.median(cand_k),
                   speedup=statistics.median(kr) if kr else None, ratios=kr,
                   method="torch.profiler device records per call, their union (L2 flushed), alternated rounds; "
                          "do_bench events beside it", cand_cudnn_benchmark=cand_flags["cudnn_benchmark"],
                   cand_flags_changed=sorted(k for k in cand_flags if cand_flags[k] != ref_flags[k]))
    return out


def _backend_flags() -> dict:
    import torch

    b = torch.backends
    return {"matmul_tf32": b.cuda.matmul.allow_tf32, "cudnn_tf32": b.cudnn.allow_tf32,
            "cudnn_benchmark": b.cudnn.benchmark, "cudnn_deterministic": b.cudnn.deterministic,
            "fp16_reduced": b.cuda.matmul.allow_fp16_reduced_precision_reduction,
            "bf16_reduced": b.cuda.matmul.allow_bf16_reduced_precision_reduction,
            "precision": torch.get_float32_matmul_precision()}


def _set_backend_flags(f: dict) -> None:
    import torch

    b = torch.backends
    torch.set_float32_matmul_precision(f["precision"])  # sets matmul TF32 too: first, then the flags
    b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = f["matmul_tf32"], f["cudnn_tf32"]
    b.cudnn.benchmark, b.cudnn.deterministic = f["cudnn_benchmark"], f["cudnn_deterministic"]
    b.cuda.matmul.allow_fp16_reduced_precision_reduction = f["fp16_reduced"]
    b.cuda.matmul.allow_bf16_reduced_precision_reduction = f["bf16_reduced"]


def busy_us(intervals) -> float:
    """The time covered by a set of [start, end) intervals (their union): GPU work that
    overlaps itself, on several streams, counts once (a sum counted a 99-stream LSTM's
    7 ms call as 19 ms, issue 39 session 9)."""
    # a sweep over the ends (not kernelmill's merge of sorted spans: a second method):
    # time counts while at least one interval is open
    spans = [(a, b) for a, b in intervals if b > a]
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    total, open_, since = 0.0, 0, 0.0
    for t, step in events:
        if open_ and step < 0 and open_ == 1:
            total += t - since
        elif not open_:
            since = t
        open_ += step
    return total


def _profiled_kernel_ms(fn, flush, calls: int) -> float:
    """Median over calls of the GPU time of one call: the union of the intervals of every
    device record of a profiler session opened around that call alone (host synchronised
    before and after)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    per_call = []
    for _ in range(calls):
        flush.zero_()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        per_call.append(busy_us((e.time_range.start, e.time_range.end) for e in prof.events()
                                if e.device_type == torch.autograd.DeviceType.CUDA) / 1e3)
    return statistics.median(per_call)


def measure(spec: dict, timeout: float = 900.0) -> dict:
    """`measure_in_process` in a fresh Python process; {"error": ...} if it fails."""
    env = dict(os.environ)
    if spec.get("card"):  # the card kernelmill timed it on (CUDA_VISIBLE_DEVICES takes a GPU's UUID)
        env["CUDA_VISIBLE_DEVICES"] = spec["card"]
    if spec.get("ext_dir"):  # one build folder per candidate: both sides (and --prebuild) share its build
        env["TORCH_EXTENSIONS_DIR"] = spec["ext_dir"]
    if spec["device"] == "cpu" and spec.get("language") == "triton":
        env["TRITON_INTERPRET"] = "1"
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        out = Path(tmp) / "result.json"
        flag = "--kb-one" if spec.get("kernelbench") else "--measure-one"
        cmd = [sys.executable, str(Path(__file__).resolve()), flag, json.dumps(spec), "--result", str(out)]
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s"}
        return _result(proc.returncode, proc.stderr or proc.stdout, out)


def _result(returncode: int, output: str | None, out: Path) -> dict:
    """A measurement process's result file, or {"error": ...} with its exit and last lines."""
    if returncode != 0 or not out.exists():
        tail = (output or "").strip().splitlines()[-6:]
        return {"error": f"exit {returncode}: " + " | ".join(tail)}
    return json.loads(out.read_text())


# A compiler in front of the real one that answers a compile it saw fail with the same
# output and exit code, without compiling again. A candidate whose `load_inline` fails and
# falls back to PyTorch compiled the failing unit again in every fresh process (torch keeps
# nothing of a failed build): 10-35 s of each such row's 25-50 s (session_2026-11-29i). Keyed
# by the command line and the bytes of every file it names; only failures are kept (a unit
# that compiled is kept by torch's own build folder). Written here, not taken from ccache,
# which caches successes only.
FAILED_COMPILES = r"""#!REAL_PYTHON
import hashlib, os, subprocess, sys
real, store = REAL_COMPILER, STORE
h = hashlib.sha256(repr(sys.argv[1:]).encode())
for a in sys.argv[1:]:
    if os.path.isfile(a):
        with open(a, "rb") as f:
            h.update(f.read())
key = os.path.join(store, h.hexdigest())
if os.path.exists(key + ".rc"):
    with open(key + ".out", "rb") as f:
        sys.stderr.buffer.write(f.read())
    sys.exit(int(open(key + ".rc").read()))
proc = subprocess.run([real, *sys.argv[1:]], stderr=subprocess.PIPE)
sys.stderr.buffer.write(proc.stderr)
if proc.returncode != 0 and "-v" not in sys.argv[1:] and "--version" not in sys.argv[1:]:
    tmp = f"{key}.{os.getpid()}"
    with open(tmp + ".out", "wb") as f:
        f.write(proc.stderr)
    os.replace(tmp + ".out", key + ".out")
    with open(tmp + ".rc", "w") as f:
        f.write(str(proc.returncode))
    os.replace(tmp + ".rc", key + ".rc")
sys.exit(proc.returncode)
"""


def failed_compile_env(folder: Path) -> dict[str, str]:
    """CXX and PYTORCH_NVCC (what torch's builder reads) pointing at FAILED_COMPILES in front
    of the compilers torch would use; {} where one of them is not found."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "failed").mkdir(exist_ok=True)
    env = {}
    cuda_home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    for var, name, real in (("CXX", "c++", shutil.which(os.environ.get("CXX", "c++"))),
                            ("PYTORCH_NVCC", "nvcc", os.environ.get("PYTORCH_NVCC")
                             or shutil.which("nvcc") or str(Path(cuda_home) / "bin" / "nvcc"))):
        if not real or not os.path.exists(real):
            continue
        # a folder of its own per compiler, the file named as torch expects (its check reads the path)
        (folder / var).mkdir(exist_ok=True)
        path = folder / var / name
        path.write_text(FAILED_COMPILES.replace("REAL_PYTHON", sys.executable)
                        .replace("REAL_COMPILER", repr(real)).replace("STORE", repr(str(folder / "failed"))))
        path.chmod(0o755)
        env[var] = str(path)
    return env


class Spares:
    """One card's measurements, each in a fresh process as `measure` runs them, whose start
    overlaps the measurement before it: the next process is started when a measurement is
    handed out, imports torch (and triton) and then waits on its stdin for its one spec. What
    it does before the spec arrives is CPU work (no CUDA call: the card's context is made by
    the measurement, as in a process started then), so the card's running measurement is not
    disturbed; it saves the 2-4 s of a start and torch's import per row (issue 39's table
    took 11-15 s a row on an H200, session_2026-11-29i). The card (CUDA_VISIBLE_DEVICES) is
    fixed per process; the build folder is set from the spec before the candidate loads.
    `ahead` False: each process started when its measurement is (--no-spares)."""

    def __init__(self, card: str | None, timeout: float, ahead: bool = True):
        self.card, self.timeout, self.ahead, self.next = card, timeout, ahead, None

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ)
        if self.card:
            env["CUDA_VISIBLE_DEVICES"] = self.card
        return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve-one"], env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def measure(self, spec: dict, more: bool = True) -> dict:
        """`measure(spec)` in the waiting process (a new one if none waits); with `more`, the
        process for the next call starts now."""
        if spec.get("card") != self.card or (spec["device"] == "cpu" and spec.get("language") == "triton"):
            return measure(spec, self.timeout)  # TRITON_INTERPRET is read at triton's import
        proc, self.next = self.next or self._start(), None
        if more and self.ahead:
            self.next = self._start()
        with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
            out = Path(tmp) / "result.json"
            try:
                _, err = proc.communicate(json.dumps({"spec": spec, "result": str(out)}) + "\n", timeout=self.timeout)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return {"error": f"timed out after {self.timeout:.0f} s"}
            return _result(proc.returncode, err, out)

    def close(self) -> None:
        if self.next is not None:
            self.next.kill()
            self.next.communicate()
            self.next = None


def serve_one() -> int:
    """The process a `Spares` started: torch imported ahead, then one spec from stdin."""
    import torch  # noqa: F401 - imported before the spec arrives: the point of the spare

    try:
        import triton  # noqa: F401
    except ImportError:
        pass
    line = sys.stdin.readline()
    if not line.strip():
        return 0  # closed unused
    job = json.loads(line)
    spec = job["spec"]
    if spec.get("ext_dir"):  # read by torch's builder when the candidate builds, not at import
        os.environ["TORCH_EXTENSIONS_DIR"] = spec["ext_dir"]
    res = measure_in_process(spec)
    Path(job["result"]).write_text(json.dumps(res, default=str), encoding="utf-8")
    return 0


# ------------------------------------------------------------ KernelBench side

def kb_preflight(kb_root: Path) -> str | None:
    """vs_kernelbench's check, loaded by path (a script, not a package): KernelBench's eval
    imported in a throw-away process on kb_in_process's sys.path; the error, or None."""
    import importlib.util

    name = "kernelmill_bench_vs_kernelbench"  # tests/benchmark_support.py's name for it
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HERE / "vs_kernelbench.py")
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name].kb_preflight(kb_root)


def kb_in_process(spec: dict) -> dict:
    """KernelBench's eval_kernel_against_ref on one candidate in THIS process (its
    batch scripts' settings: cuda_event timing, 100 trials, seed 42, fp32)."""
    import torch

    harness = Path(spec["kernelbench"]) / "harness"
    for p in (harness / "stubs", harness):
        sys.path.insert(0, str(p))
    from kernelbench import eval as kb_eval  # KernelBench's own code, imported at run time

    r = kb_eval.eval_kernel_against_ref(
        Path(spec["task"]).read_text(encoding="utf-8"), Path(spec["candidate"]).read_text(encoding="utf-8"),
        seed_num=WEIGHT_SEED, num_correct_trials=int(spec.get("correct_trials", 1)),
        num_perf_trials=int(spec.get("trials", 100)), measure_performance=True, timing_method="cuda_event",
        verbose=False, build_dir=spec.get("build_dir"), device=torch.device("cuda:0"), backend="cuda",
        precision=torch.float32)
    if r is None:
        return {"error": "eval_kernel_against_ref returned None"}
    ok = bool(r.compiled and r.correctness and r.runtime and r.runtime > 0 and r.ref_runtime)
    return {"compiled": bool(r.compiled), "correct": bool(r.correctness), "runtime_us": r.runtime,
            "ref_runtime_us": r.ref_runtime, "speedup": (r.ref_runtime / r.runtime) if ok else None,
            "metadata": {k: str(v)[:300] for k, v in (r.metadata or {}).items()}}


# ------------------------------------------------------------ kernelmill side

def local_cards() -> list[str]:
    """This machine's GPU UUIDs (nvidia-smi), [] if it cannot say."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=uuid", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.splitlines() if line.strip().startswith("GPU-")]


def write_samples(cands: list[Candidate], path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for c in cands:
            code = Path(c.path).read_text(encoding="utf-8")
            f.write(json.dumps({"sample_id": c.name, "task_id": c.task, "language": c.language, "code": code,
                                "meta": {"style": c.style}}) + "\n")


def kernelmill_command() -> list[str]:
    exe = shutil.which("kernelmill")
    return [exe] if exe else [sys.executable, "-m", "kernelmill"]


def run_kernelmill(cands: list[Candidate], corpus: Path, device: str, profile: str, verdicts: Path,
                   extra: list[str]) -> int:
    with tempfile.TemporaryDirectory(prefix="fidelity-km-") as tmp:
        samples = Path(tmp) / "samples.jsonl"
        write_samples(cands, samples)
        cmd = kernelmill_command() + [
            "verify", str(corpus / "tasks"), str(samples), "--out", str(verdicts), "--device", device,
            "--guards", "standard", "--profile", profile, "--store", str(Path(tmp) / "store.sqlite"), *extra]
        print("$ " + " ".join(cmd[:1] + cmd[1:]), file=sys.stderr, flush=True)
        return subprocess.run(cmd).returncode


def read_verdicts(path: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    if not path.exists():
        return out
    # gzip-compressed or not; read here, not with kernelmill.records: this side imports nothing of kernelmill
    for line in (gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()).decode("utf-8").splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "sample_id" in row:
            out[row["sample_id"]] = row  # a later line (a re-run) wins
    # verdicts of the external table's rows made elsewhere (`kernelmill audit TABLE`: sample id
    # = the row's id, `cudal1-a100-L1-9`) under the name the merged corpus gives them
    for sid, row in list(out.items()):
        out.setdefault(file_name(sid), row)
    return out


def file_name(row_id: str) -> str:
    """An external row's candidate and task name in the merged corpus (materialize)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", row_id)


# --------------------------------------------------------- table and summary

# rejections by policy, not by the candidate's answers: such a candidate computes the task
# and is timed like any other (the verdict's `measurement.timed`), so the timer's fidelity is
# checked on it too; KernelBench's harness times it as well. The row says it was not awarded.
POLICY_FLAGS = {"torch_fallback", "try_fallback", "calls_reference", "decoy_kernel", "precision_downgrade"}
# flags that say how a verdict was measured or what its task lets through, not a guard's finding
# (kernelmill's report lists them as harness flags; written out here: this script imports
# nothing of kernelmill): a verdict rejected by policy alone and carrying one is still timed
NOTE_FLAGS = {"weak_task", "events_disagree", "kernelbench_host_bound", "clocks_moved", "kernel_time_partial",
              "timing_skipped", "compiled_baseline_failed", "extension_build_failed"}


def timed_figures(v: dict) -> dict:
    """The speedup figures of a verdict: its own when ok; `measurement.timed` when it was
    rejected by policy alone (POLICY_FLAGS); nothing otherwise."""
    if v.get("status") == "ok":
        return {"speedup": v.get("speedup"), "speedup_ci": v.get("speedup_ci"), "awarded": True,
                "speedup_kernelbench": v.get("speedup_kernelbench"),
                "ref_ms": v.get("ref_runtime_ms"), "cand_ms": v.get("runtime_ms")}
    timed = (v.get("measurement") or {}).get("timed") or {}
    flags = set(v.get("flags") or []) - NOTE_FLAGS
    if v.get("status") == "rejected" and flags and flags <= POLICY_FLAGS and timed.get("speedup") is not None:
        return {**timed, "awarded": False}
    return {}


def make_row(cand: Candidate, verdict: dict | None, ind: dict | None, kb: dict | None = None,
             second: dict | None = None) -> dict:
    v = verdict or {}
    ind = ind or {}
    kb = kb or {}
    t = timed_figures(v)
    km_speedup = t.get("speedup")
    ind_speedup = ind.get("speedup")
    deviation = kb_deviation = None
    if km_speedup is not None and ind_speedup:
        deviation = km_speedup / ind_speedup - 1.0
    if t.get("speedup_kernelbench") and kb.get("speedup"):
        kb_deviation = t["speedup_kernelbench"] / kb["speedup"] - 1.0
    # KernelBench's harness again in fresh processes (--kernelbench-repeat): how far its own
    # figure moves, the bound on how close any other measurement of its convention can come
    again = [x for x in kb.get("repeats") or [] if isinstance(x, (int, float)) and x > 0]
    kb_self = max(abs(x / kb["speedup"] - 1.0) for x in again) if again and kb.get("speedup") else None
    m = v.get("measurement") or {}
    return {
        "candidate": cand.name, "task": cand.task, "language": cand.language, "style": cand.style,
        "km_ref_ms": t.get("ref_ms"), "ind_ref_ms": ind.get("ref_ms"),
        "km_cand_ms": t.get("cand_ms"), "ind_cand_ms": ind.get("cand_ms"),
        "km_speedup": km_speedup, "ind_speedup": ind_speedup, "deviation": deviation,
        "awarded": t.get("awarded"),
        "ind_event_speedup": ind.get("event_speedup"), "km_event_speedup": m.get("event_speedup"),
        "km_speedup_kernelbench": t.get("speedup_kernelbench"), "kb_speedup": kb.get("speedup"),
        "kb_deviation": kb_deviation, "kb_repeats": again, "kb_self_deviation": kb_self,
        "kb_error": kb.get("error") or (
            None if not kb or kb.get("speedup") else f"compiled={kb.get('compiled')} correct={kb.get('correct')}"),
        "second_speedup": timed_figures(second or {}).get("speedup"),
        "speedup_ci": t.get("speedup_ci"), "status": v.get("status", "missing" if verdict is None else ""),
        "flags": list(v.get("flags") or []), "message": (v.get("message") or "")[:300],
        "measurement": m, "independent_error": ind.get("error"),
    }


def summarize(rows: list[dict], device: str) -> dict:
    goal = GOALS[device]
    devs = [abs(r["deviation"]) for r in rows if r.get("deviation") is not None]
    flagged = [r["candidate"] for r in rows if r.get("status") != "ok" or r.get("flags")]
    within = sum(d <= goal["within"] + 1e-9 for d in devs)  # 10% counts as within 10%
    median_dev = statistics.median(devs) if devs else None
    ci_holds = [r for r in rows if r.get("speedup_ci") and r.get("ind_speedup")]
    kb = [abs(r["kb_deviation"]) for r in rows if r.get("kb_deviation") is not None]
    kb_self = [r["kb_self_deviation"] for r in rows if r.get("kb_self_deviation") is not None]
    again = [r for r in rows if r.get("second_speedup") and r.get("speedup_ci")]
    widths = sorted(r["speedup_ci"][1] / r["speedup_ci"][0] - 1 for r in rows if r.get("speedup_ci"))
    summary = {
        "device": device, "candidates": len(rows), "n": len(devs),
        "timed": sum(r.get("km_speedup") is not None for r in rows),
        "timed_not_awarded": sum(r.get("awarded") is False for r in rows),
        "median_abs_deviation": median_dev, "max_abs_deviation": max(devs) if devs else None,
        "within": within, "within_bound": goal["within"], "within_share": within / len(devs) if devs else None,
        "flagged": len(flagged), "flagged_names": flagged,
        "ci_contains_independent": sum(r["speedup_ci"][0] <= r["ind_speedup"] <= r["speedup_ci"][1] for r in ci_holds),
        "ci_n": len(ci_holds),
        "kb_n": len(kb), "kb_within": sum(d <= 0.10 + 1e-9 for d in kb),
        "kb_median_abs_deviation": statistics.median(kb) if kb else None,
        "kb_self_n": len(kb_self), "kb_self_within": sum(d <= 0.10 + 1e-9 for d in kb_self),
        "kb_self_median": statistics.median(kb_self) if kb_self else None,
        "repro_n": len(again),
        "repro_inside": sum(r["speedup_ci"][0] <= r["second_speedup"] <= r["speedup_ci"][1] for r in again),
        "ci_median_width": widths[len(widths) // 2] if widths else None,
    }
    logs = [math.log(r["second_speedup"] / r["km_speedup"]) for r in again if r.get("km_speedup")]
    # the spread of one process's speedup around the truth: two runs differ by sqrt(2) of it
    summary["process_spread_measured"] = statistics.stdev(logs) / math.sqrt(2) if len(logs) > 2 else None
    ok = bool(devs) and within >= goal["share"] * len(devs)
    if goal["median"] is not None:
        ok = ok and median_dev is not None and median_dev <= goal["median"]
    if kb and goal["kb_share"] is not None:
        ok = ok and summary["kb_within"] >= goal["kb_share"] * len(kb)
    summary["goal_met"] = ok
    return summary


def _f(x, spec=".3f") -> str:
    return "-" if x is None else format(x, spec)


COLUMNS = ["candidate", "style", "ref ms (km / ind)", "cand ms (km / ind)", "speedup (km / ind)", "dev %",
           "events (km / do_bench)", "KernelBench (km / KB)", "KB dev %", "status", "flags"]


def row_cells(r: dict) -> list[str]:
    dev = "-" if r["deviation"] is None else f"{100 * r['deviation']:+.1f}"
    status = r["status"] + (f" (ind: {r['independent_error'][:60]})" if r.get("independent_error") else "")
    kbd = "-" if r.get("kb_deviation") is None else f"{100 * r['kb_deviation']:+.1f}"
    return [r["candidate"], r["style"][:48], f"{_f(r['km_ref_ms'], '.4f')} / {_f(r['ind_ref_ms'], '.4f')}",
            f"{_f(r['km_cand_ms'], '.4f')} / {_f(r['ind_cand_ms'], '.4f')}",
            f"{_f(r['km_speedup'], '.3f')} / {_f(r['ind_speedup'], '.3f')}", dev,
            f"{_f(r.get('km_event_speedup'), '.3f')} / {_f(r.get('ind_event_speedup'), '.3f')}",
            f"{_f(r.get('km_speedup_kernelbench'), '.3f')} / {_f(r.get('kb_speedup'), '.3f')}", kbd,
            status, ",".join(r["flags"]) or "-"]


def summary_lines(s: dict) -> list[str]:
    pct = lambda x: "-" if x is None else f"{100 * x:.1f}%"  # noqa: E731
    lines = [
        f"n = {s['n']} of {s['candidates']} candidates with both speedups ({s['device']}); kernelmill timed "
        f"{s.get('timed', '-')}, of them {s.get('timed_not_awarded', '-')} rejected by a policy (timed, not awarded)",
        f"median |deviation| = {pct(s['median_abs_deviation'])}, max |deviation| = {pct(s['max_abs_deviation'])}",
        f"within {pct(s['within_bound'])}: {s['within']} of {s['n']}",
        f"flagged honest candidates (status not ok, or flags): {s['flagged']}"
        + (f" ({', '.join(s['flagged_names'][:12])})" if s["flagged"] else ""),
    ]
    if s["ci_n"]:
        lines.append(f"kernelmill's speedup_ci holds the independent speedup: {s['ci_contains_independent']} of {s['ci_n']}")
    if s.get("kb_n"):
        lines.append(f"speedup_kernelbench within 10% of KernelBench's harness: {s['kb_within']} of {s['kb_n']} "
                     f"(median |deviation| {pct(s['kb_median_abs_deviation'])})")
    if s.get("kb_self_n"):
        lines.append(f"KernelBench's harness against itself (fresh processes, largest move): within 10% on "
                     f"{s['kb_self_within']} of {s['kb_self_n']} (median {pct(s['kb_self_median'])})")
    if s.get("repro_n"):
        lines.append(f"second run's speedup inside the first run's interval: {s['repro_inside']} of {s['repro_n']}"
                     + (f" (process spread measured: {pct(s['process_spread_measured'])})"
                        if s.get("process_spread_measured") is not None else ""))
    if s.get("ci_median_width") is not None:
        lines.append(f"interval median width (high/low - 1): {pct(s['ci_median_width'])}")
    goal = GOALS[s["device"]]
    lines.append(f"goal ({pct(goal['share'])} within {pct(goal['within'])}"
                 + (f", median within {pct(goal['median'])}" if goal["median"] else "")
                 + (f", KernelBench {pct(goal['kb_share'])} within 10%" if goal.get("kb_share") and s.get("kb_n") else "")
                 + f"): {'met' if s['goal_met'] else 'NOT met'}")
    return lines


def markdown(rows: list[dict], summary: dict) -> str:
    out = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    out += ["| " + " | ".join(c.replace("|", "/") for c in row_cells(r)) + " |" for r in rows]
    out += [""] + [f"- {line}" for line in summary_lines(summary)]
    return "\n".join(out) + "\n"


def print_table(rows: list[dict], summary: dict) -> None:
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:  # plain text
        for r in rows:
            print("  ".join(row_cells(r)))
    else:
        table = Table(*COLUMNS, title=f"timing fidelity ({summary['device']})")
        for r in rows:
            table.add_row(*row_cells(r))
        Console(width=200).print(table)
    print("\n".join(summary_lines(summary)))


# ------------------------------------------------------------ results file

def load_results(path: Path | None) -> dict:
    if path is None or not path.exists():
        return {"independent": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    data.setdefault("independent", {})
    return data


def save_results(path: Path | None, data: dict) -> None:
    if path is None:
        return
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(tmp, path)


def pending(cands: list[Candidate], results: dict, resume: bool, kb_repeat: int = 1) -> list[Candidate]:
    """Candidates still to measure: all of them, or with --resume those without
    an independent result (an earlier error is measured again), and those whose
    KernelBench figure has fewer repeats than `kb_repeat` asks (only those are run again)."""
    if not resume:
        return list(cands)
    done, kb = results.get("independent", {}), results.get("kernelbench", {})

    def short(name: str) -> bool:
        k = kb.get(name) or {}
        return bool(k.get("speedup")) and len(k.get("repeats") or []) < kb_repeat - 1

    def stale(name: str) -> bool:  # measured by an earlier method: a table never mixes two
        return done[name].get("method") in SUPERSEDED_METHODS

    return [c for c in cands if c.name not in done or "error" in done[c.name] or stale(c.name) or short(c.name)]


# independent-side methods since replaced: --resume measures their rows again
SUPERSEDED_METHODS = frozenset({
    "torch.profiler device records per call (L2 flushed), alternated rounds; do_bench events beside it",  # summed
})


# --------------------------------------------------------------------- main

class CardQueues:
    """The rows each card has still to measure. A card takes its own first; with `steal`,
    when it has none, the last row (the costliest: each queue runs cheapest first) of the
    card with the most left: kernelmill's cards are not evenly loaded, and one card idled
    while the other had 9 rows left (session_2026-11-30)."""

    def __init__(self, queues: dict, steal: bool = True):
        self.left = {card: list(queue) for card, queue in queues.items()}
        self.steal = steal
        self._lock = threading.Lock()

    def take(self, card):
        """(row, the card whose queue it was on, whether any row is left for this card
        after it), or (None, None, False) when none is."""
        with self._lock:
            own = self.left.get(card) or []
            if own:
                row, came_from = own.pop(0), card
            else:
                others = [k for k in self.left if k != card and self.left[k]] if self.steal else []
                if not others:
                    return None, None, False
                came_from = max(others, key=lambda k: len(self.left[k]))
                row = self.left[came_from].pop()
            more = bool(own) or (self.steal and any(self.left.values()))
            return row, came_from, more


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", choices=("cuda", "cpu"))
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--only", default="", help="comma-separated candidate names")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--profile", default=None, help="task size profile (default: full on cuda, small on cpu)")
    ap.add_argument("--out", type=Path, default=None, help="results JSON, rewritten after every candidate")
    ap.add_argument("--markdown", type=Path, default=None)
    ap.add_argument("--verdicts", type=Path, default=None, help="read these kernelmill verdicts instead of running it")
    ap.add_argument("--resume", action="store_true")
    ap.add_argument("--min-run-time", type=float, default=0.2, help="cpu: blocked_autorange's min_run_time")
    ap.add_argument("--kernelmill-arg", action="append", default=[], help="extra argument for kernelmill verify")
    ap.add_argument("--external", type=Path, default=None,
                    help="a table of external kernels (id, ref_code, custom_code), e.g. ../shared/external/cuda-l1/kernels.jsonl")
    ap.add_argument("--llm", type=Path, default=None, help="the LLM-style corpus (benchmarks/corpus_llm): its GPU candidates")
    ap.add_argument("--no-corpus", action="store_true", help="leave --corpus out (only --external/--llm)")
    ap.add_argument("--kernelbench", type=Path, default=None,
                    help="KernelBench's folder (../shared/baselines/kernelbench): also run its eval_kernel_against_ref")
    ap.add_argument("--numerics", choices=("pytorch", "strict"), default="pytorch",
                    help="the independent side's numerics (kernelmill's timing.numerics)")
    ap.add_argument("--second-verdicts", type=Path, default=None,
                    help="a second kernelmill run's verdicts: reproducibility against the first run's intervals")
    ap.add_argument("--work", type=Path, default=None, help="where the merged corpus is written (default: a temp folder)")
    ap.add_argument("--repeat", action="store_true",
                    help="run kernelmill a second time (fresh store) and report reproducibility against the first")
    ap.add_argument("--measure-timeout", type=float, default=900.0,
                    help="seconds one independent (or KernelBench) measurement may take before it is recorded as an error")
    ap.add_argument("--limit-s", type=float, default=0, help="stop measuring after this many seconds (resume later)")
    ap.add_argument("--stop-at", type=float, default=0,
                    help="stop starting measurements at this Unix time (a whole call's deadline; resume later)")
    ap.add_argument("--prebuild", type=int, default=0, metavar="N",
                    help="cuda: compile the timed load_inline candidates first, N at a time, into the build "
                         "folders both independent sides then load from")
    ap.add_argument("--prebuild-only", action="store_true",
                    help="stop after --prebuild (builds are CPU work: they may run beside other GPU work; "
                         "a later --resume run measures from the folders kept next to --out)")
    ap.add_argument("--calls", type=int, default=10,
                    help="cuda: profiled calls per side per round (each in its own profiler session); the median is the round's figure")
    ap.add_argument("--kernelbench-repeat", type=int, default=1, metavar="N",
                    help="run KernelBench's harness N times per row, each in a fresh process: the table then "
                         "says how far its own figure moves between processes")
    ap.add_argument("--kernelbench-rows", choices=("all", "external", "none"), default="all",
                    help="which rows KernelBench's harness also measures (external: the --external table's only; "
                         "none: --kernelbench gives the external rows' tasks, and rows already measured keep "
                         "their KernelBench figures)")
    ap.add_argument("--per-card", action=argparse.BooleanOptionalAction, default=True,
                    help="measure each candidate on the card kernelmill timed it on, the cards side by side")
    ap.add_argument("--steal", action=argparse.BooleanOptionalAction, default=True,
                    help="with --per-card, a card whose rows are done measures the rows another card has "
                         "left (the row records both cards: `card`, `kernelmill_card`)")
    ap.add_argument("--spares", action=argparse.BooleanOptionalAction, default=True,
                    help="start each card's next measurement process while the one before it measures "
                         "(torch's import overlapped; each measurement still in a fresh process)")
    ap.add_argument("--replay-failed-compiles", action=argparse.BooleanOptionalAction, default=True,
                    help="cuda: a compile that failed once (a candidate's load_inline that falls back to PyTorch) "
                         "answers with its output again instead of compiling in each fresh process")
    ap.add_argument("--serve-one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--measure-one", help=argparse.SUPPRESS)
    ap.add_argument("--kb-one", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.serve_one:  # a process `Spares` started ahead
        return serve_one()
    if args.measure_one or args.kb_one:  # the fresh process of `measure`
        res = measure_in_process(json.loads(args.measure_one)) if args.measure_one else kb_in_process(json.loads(args.kb_one))
        Path(args.result).write_text(json.dumps(res, default=str), encoding="utf-8")
        return 0
    if not args.device:
        ap.error("--device is required")
    if args.rounds < 5:
        ap.error("--rounds must be at least 5")
    if args.prebuild_only and not (args.prebuild and args.out):
        ap.error("--prebuild-only needs --prebuild N and --out (the build folders live next to --out)")
    device = args.device
    if args.kernelbench and args.kernelbench_rows != "none" and device == "cuda":
        # KernelBench's eval imports its own dependencies (python-dotenv, pydantic): checked once
        # here, not found missing row by row (session 16 measured 48 rows beside a harness that
        # could not import, ~13 s of device time each)
        why = kb_preflight(args.kernelbench.resolve())
        if why:
            ap.error(f"--kernelbench: {why}; install them, or give --kernelbench-rows none")
    profile = args.profile or ("full" if device == "cuda" else "small")
    corpus = args.corpus.resolve()
    if args.external or args.llm:
        merged = args.work or Path(tempfile.mkdtemp(prefix="fidelity-")) / "corpus"
        corpus = materialize(merged, None if args.no_corpus else corpus, args.external, args.llm, args.kernelbench,
                             HERE.parent / "src" / "kernelmill" / "tasks" / "builtin" / "tasks").resolve()
    only = [n.strip() for n in args.only.split(",") if n.strip()] or None
    cands = select(load_corpus(corpus), device, only)
    if not cands:
        print("no candidates selected", file=sys.stderr)
        return 1

    results = load_results(args.out) if args.resume else {"independent": {}}
    results.update({"device": device, "profile": profile, "rounds": args.rounds, "corpus": str(corpus)})

    # (1) kernelmill's verdicts
    if args.verdicts:
        verdicts_path = args.verdicts
    else:
        verdicts_path = (args.out.with_suffix(".verdicts.jsonl") if args.out
                         else Path(tempfile.mkdtemp(prefix="fidelity-")) / "verdicts.jsonl")
        if not args.resume and verdicts_path.exists():
            verdicts_path.unlink()
        have = read_verdicts(verdicts_path)
        todo = [c for c in cands if c.name not in have]
        if todo:
            t0 = time.perf_counter()
            rc = run_kernelmill(todo, corpus, device, profile, verdicts_path, args.kernelmill_arg)
            print(f"kernelmill verify: exit {rc}, {time.perf_counter() - t0:.0f} s for {len(todo)} candidates",
                  file=sys.stderr, flush=True)
    verdicts = read_verdicts(verdicts_path)
    results["verdicts_file"] = str(verdicts_path)
    if args.repeat and not args.second_verdicts:
        args.second_verdicts = (args.out.with_suffix(".second.verdicts.jsonl") if args.out
                                else verdicts_path.with_name(verdicts_path.stem + ".second.jsonl"))
        have2 = read_verdicts(args.second_verdicts)
        todo2 = [c for c in cands if c.name not in have2 and timed_figures(verdicts.get(c.name) or {}).get("speedup")]
        if todo2:
            t0 = time.perf_counter()
            rc = run_kernelmill(todo2, corpus, device, profile, args.second_verdicts, args.kernelmill_arg)
            print(f"kernelmill verify (second run): exit {rc}, {time.perf_counter() - t0:.0f} s for {len(todo2)} "
                  "candidates", file=sys.stderr, flush=True)
    save_results(args.out, results)

    # (2) the independent measurement, one fresh process per candidate kernelmill timed,
    # on the card kernelmill timed it on (its verdict's gpu_uuid): one queue per card, the
    # cards side by side (each card runs one measurement at a time)
    timed = [c for c in cands if device != "cuda" or timed_figures(verdicts.get(c.name) or {}).get("speedup")]
    # the external table first, then the builtin corpus, then the LLM-style one, and inside
    # each the cheapest first (kernelmill's own times): a run cut by a deadline has measured
    # the most rows the issue counts (a 38 ms-a-call task held one card for 357 s)
    def cost(c: Candidate) -> float:
        t = timed_figures(verdicts.get(c.name) or {})
        return (t.get("ref_ms") or 0.0) + (t.get("cand_ms") or 0.0)

    timed.sort(key=lambda c: (not c.style.startswith("external"), c.name.startswith("llm_"), cost(c), c.name))
    todo = pending(timed, results, args.resume, args.kernelbench_repeat if args.kernelbench else 1)
    queues: dict[str | None, list[Candidate]] = {}
    here, elsewhere = (local_cards() if device == "cuda" else []), {}
    for c in todo:
        card = ((verdicts.get(c.name) or {}).get("measurement") or {}).get("gpu_uuid") if device == "cuda" else None
        if card and here and card not in here:  # verdicts of another machine: its cards map onto this one's
            card = elsewhere.setdefault(card, here[len(elsewhere) % len(here)])
        queues.setdefault(card if args.per_card else None, []).append(c)
    # the build folders live next to --out, so a run cut by a deadline and resumed (--resume) finds
    # the extensions it built (a plain load_inline of an external candidate takes 40-120 s on an
    # H200: 106 of them did not fit one device call); a `lock` left by a build killed at the
    # deadline would make torch wait on it forever, so stale locks go first
    ext_root = (args.out.with_suffix(".ext") if args.out else Path(tempfile.mkdtemp(prefix="fidelity-ext-")))
    ext_root.mkdir(parents=True, exist_ok=True)
    if args.replay_failed_compiles and device == "cuda":  # every process started from here on inherits it
        os.environ.update(failed_compile_env(ext_root / "compilers"))
    for stale in ext_root.glob("*/*/lock"):
        stale.unlink(missing_ok=True)
    t_start = time.perf_counter()
    if args.prebuild and device == "cuda":  # load_inline builds first, many at once (no timing meanwhile)
        builds = [c for c in todo if "load_inline" in Path(c.path).read_text(encoding="utf-8")]
        cards = [k for k in queues if k] or [None]

        def build(item):
            i, c = item
            tp = task_path(corpus, c.task)
            return c.name, measure({"task": str(tp), "candidate": c.path, "device": device, "build_only": True,
                                    "sizes": task_sizes(tp.read_text(encoding="utf-8"), profile),
                                    "card": cards[i % len(cards)], "ext_dir": str(ext_root / c.name)},
                                   args.measure_timeout)

        def build_in_time(item):  # a build started past the deadline is left to the measurement
            if (args.stop_at and time.time() > args.stop_at) or (args.limit_s and time.perf_counter() - t_start > args.limit_s):
                return item[1].name, {"error": "not prebuilt: time limit"}
            name, res = build(item)
            print(f"  prebuilt {name}: {'ok' if 'error' not in res else res['error'][-120:]}", flush=True)
            return name, res

        print(f"prebuilding {len(builds)} load_inline candidates, {args.prebuild} at a time", flush=True)
        with ThreadPoolExecutor(args.prebuild) as pool:
            built = dict(pool.map(build_in_time, enumerate(builds)))
        bad = {k: v["error"][-160:] for k, v in built.items() if "error" in v}
        print(f"prebuilt {len(builds) - len(bad)} of {len(builds)} load_inline candidates in "
              f"{time.perf_counter() - t_start:.0f} s" + (f"; failed: {bad}" if bad else ""), flush=True)
        if args.prebuild_only:
            return 0 if not bad else 1
    lock = threading.Lock()
    done = [0]
    stop = threading.Event()  # an interrupt: each card finishes its candidate, then the table is written

    left = CardQueues(queues, steal=args.steal)

    def work(card: str | None) -> None:
        spares = Spares(card, args.measure_timeout, ahead=args.spares)
        try:
            measure_queue(card, spares)
        finally:
            spares.close()

    def measure_queue(card: str | None, spares: Spares) -> None:
        while True:
            if (stop.is_set() or (args.limit_s and time.perf_counter() - t_start > args.limit_s)
                    or (args.stop_at and time.time() > args.stop_at)):
                print(f"time limit reached (--limit-s/--stop-at): candidates left for --resume on card {card}",
                      flush=True)
                return
            c, came_from, more_left = left.take(card)
            if c is None:
                return
            tp = task_path(corpus, c.task)
            spec = {"task": str(tp), "candidate": c.path, "device": device, "language": c.language,
                    "sizes": task_sizes(tp.read_text(encoding="utf-8"), profile), "rounds": args.rounds,
                    "seed": WEIGHT_SEED, "input_seed": INPUT_SEED, "min_run_time": args.min_run_time,
                    "numerics": args.numerics, "card": card, "ext_dir": str(ext_root / c.name), "calls": args.calls}
            t0 = time.perf_counter()
            before = results["independent"].get(c.name)  # kept where only KernelBench's repeats are wanted
            keep = before and "error" not in before and before.get("method") not in SUPERSEDED_METHODS
            ind = before if keep else spares.measure(spec, more=more_left)
            kb = None
            kb_row = args.kernelbench_rows == "all" or (args.kernelbench_rows == "external"
                                                         and c.style.startswith("external"))
            have_kb = results.setdefault("kernelbench", {}).get(c.name)
            more = max(0, args.kernelbench_repeat - 1 - len((have_kb or {}).get("repeats") or []))
            if args.kernelbench and kb_row and device == "cuda" and (have_kb is None or ("speedup" in have_kb and more)):
                kb_spec = {"task": str(tp), "candidate": c.path, "device": device, "card": card,
                           "ext_dir": str(ext_root / c.name), "kernelbench": str(args.kernelbench.resolve())}
                kb = have_kb or measure(kb_spec, args.measure_timeout)
                if kb.get("speedup") and more:
                    kb = {**kb, "repeats": list(kb.get("repeats") or []) + [
                        measure(kb_spec, args.measure_timeout).get("speedup") for _ in range(more)]}
            with lock:
                results["independent"][c.name] = {**ind, "card": card,
                                                  **({"kernelmill_card": came_from} if came_from != card else {})}
                if kb is not None:
                    results["kernelbench"][c.name] = {**kb, "card": card}
                save_results(args.out, results)
                done[0] += 1
                r = make_row(c, verdicts.get(c.name), ind, results.get("kernelbench", {}).get(c.name))
                dev = "-" if r["deviation"] is None else f"{100 * r['deviation']:+.1f}%"
                print(f"[{done[0]}/{len(todo)}] {c.name}: kernelmill {_f(r['km_speedup'])}x ({r['status']}), "
                      f"independent {_f(r['ind_speedup'])}x, deviation {dev}; KernelBench {_f(r['kb_speedup'])}x vs "
                      f"{_f(r['km_speedup_kernelbench'])}x" + (f"  ERROR {ind['error']}" if "error" in ind else "")
                      + (f"  [kernelmill's card {came_from}]" if came_from != card else "")
                      + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)

    threads = [threading.Thread(target=work, args=(card,)) for card in queues]
    for t in threads:
        t.start()
    try:
        for t in threads:
            t.join()
    except KeyboardInterrupt:  # what is measured is kept (saved after each candidate); --resume goes on
        stop.set()
        print("interrupted: the table of what was measured follows; --resume measures the rest", flush=True)
        for t in threads:
            t.join()

    # (3) the table and its summary
    second = read_verdicts(args.second_verdicts) if args.second_verdicts else {}
    rows = [make_row(c, verdicts.get(c.name), results["independent"].get(c.name),
                     results.get("kernelbench", {}).get(c.name), second.get(c.name)) for c in cands]
    summary = summarize(rows, device)
    results["rows"] = rows
    results["summary"] = summary
    save_results(args.out, results)
    print_table(rows, summary)
    if args.markdown:
        args.markdown.write_text(markdown(rows, summary), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
