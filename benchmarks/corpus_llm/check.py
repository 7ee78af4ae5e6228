"""CPU check of the LLM-style corpus (benchmarks/corpus_llm/, README there).

For every candidate in candidates/:

1. static: the file parses, has the header lines (`# task: ...  language: ...
   device: ...`, `# style: ...`, `# expect: ok|incorrect`), names a task file
   that exists (`builtin/...` in kernelmill's builtin suite, `kernelbench/...`
   in KernelBench's problems) and defines `ModelNew`; every CUDA extension
   has a `name=` of its own in the whole corpus;
2. nvcc: every `cuda_sources` string of every `load_inline` call, extracted
   with `ast` (string constants assigned at module level or in the function
   that calls load_inline, or passed directly; `+` of such strings and lists
   of them), compiles with `nvcc -ptx -arch=sm_90 -std=c++17` against torch's
   headers, with what load_inline itself puts in front of a CUDA source; the
   sources that could not be extracted are named;
3. run: torch-only candidates whose task is small enough (the task's `small`
   size profile, or inputs and parameters under --max-mb) run on the CPU
   against the reference; a candidate marked `# expect: ok` must match
   (allclose with atol = rtol = --tol), one marked `# expect: incorrect` must
   not.

    python benchmarks/corpus_llm/check.py                   # everything
    python benchmarks/corpus_llm/check.py --no-nvcc --jobs 2
    python benchmarks/corpus_llm/check.py --only b_relu__torch_clamp_min --json out.json

Exit status 0 when every check that ran passed.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures as cf
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CANDIDATES = HERE / "candidates"
BUILTIN_TASKS = REPO / "src" / "kernelmill" / "tasks" / "builtin" / "tasks"
KERNELBENCH_TASKS = Path(os.environ.get("KERNELBENCH_DIR", REPO.parent / "shared" / "baselines" / "kernelbench")) / "tasks"

HEADER = re.compile(r"^#\s*task:\s*(?P<task>\S+)\s+language:\s*(?P<language>\w+)\s+device:\s*(?P<device>\w+)(?P<rest>.*)$")
LANGUAGES = ("cuda", "triton", "torch", "cpp")
DEVICES = ("cuda", "cpu", "both")
EXPECTS = ("ok", "incorrect")
WEIGHT_SEED = 42
INPUT_SEED = 1234
# what torch.utils.cpp_extension.load_inline writes in front of every CUDA source
# a CUDA toolkit without the math libraries' headers cannot compile ATen/cuda/CUDAContext.h;
# such a failure is the machine's, not the candidate's (it is reported apart)
MISSING_LIB_HEADER = re.compile(r"fatal error: ((?:cusparse|cublas_v2|cublasLt|cusolverDn|curand|cufft|cudss)\.h): No such file")
LOAD_INLINE_CUDA_PREFIX = "#include <torch/types.h>\n#include <cuda.h>\n#include <cuda_runtime.h>\n"


# ------------------------------------------------------------------ corpus

@dataclass
class Candidate:
    name: str
    path: Path
    task: str  # e.g. kernelbench/level1/88_MinGPTNewGelu.py
    language: str
    device: str
    style: str
    expect: str

    @property
    def task_id(self) -> str:
        """The task's id in a folder laid out as builtin/... and kernelbench/..."""
        return self.task[:-3] if self.task.endswith(".py") else self.task

    @property
    def kind(self) -> str:
        return self.task.split("/", 1)[0]

    def runs_on(self, device: str) -> bool:
        return self.device in (device, "both")


def parse_header(text: str, where: str = "<candidate>") -> dict:
    """`# task: T  language: L  device: D`, then `# style: ...` and
    `# expect: ok|incorrect` within the next lines; ValueError naming the problem."""
    lines = text.splitlines()
    m = HEADER.match(lines[0].strip()) if lines else None
    if not m:
        raise ValueError(f"{where}: first line must be '# task: <path>  language: <lang>  device: <dev>'")
    info = {"task": m["task"], "language": m["language"], "device": m["device"], "style": "", "expect": ""}
    if info["language"] not in LANGUAGES:
        raise ValueError(f"{where}: language {info['language']!r} is not one of {', '.join(LANGUAGES)}")
    if info["device"] not in DEVICES:
        raise ValueError(f"{where}: device {info['device']!r} is not one of {', '.join(DEVICES)}")
    for line in lines[1:6]:
        sm = re.match(r"^#\s*style:\s*(.*)$", line.strip())
        if sm and not info["style"]:
            info["style"] = sm.group(1).strip()
        em = re.match(r"^#\s*expect:\s*(\S+)", line.strip())
        if em and not info["expect"]:
            info["expect"] = em.group(1).strip()
    if not info["style"]:
        raise ValueError(f"{where}: no '# style: ...' line after the task line")
    if info["expect"] not in EXPECTS:
        raise ValueError(f"{where}: '# expect: ok' or '# expect: incorrect' line missing or wrong ({info['expect']!r})")
    return info


def load_corpus(corpus: Path = HERE) -> list[Candidate]:
    out = []
    for path in sorted((corpus / "candidates").glob("*.py")):
        info = parse_header(path.read_text(encoding="utf-8"), str(path))
        out.append(Candidate(name=path.stem, path=path, **info))
    return out


def task_file(task: str, kernelbench_tasks: Path = KERNELBENCH_TASKS, builtin_tasks: Path = BUILTIN_TASKS) -> Path:
    """The task file a header names: builtin/<rel> or kernelbench/<rel>."""
    kind, _, rel = task.partition("/")
    if not rel.endswith(".py"):
        rel += ".py"
    if kind == "builtin":
        return builtin_tasks / rel
    if kind == "kernelbench":
        return kernelbench_tasks / rel
    raise ValueError(f"task {task!r}: must start with builtin/ or kernelbench/")


# --------------------------------------------------- sources of load_inline

@dataclass
class Extension:
    name: str | None  # the name= constant, None if not a constant
    line: int
    cuda: list[str] | None  # the cuda_sources strings; None: could not be extracted
    has_cuda_arg: bool
    why: str = ""


class _Scopes(ast.NodeVisitor):
    """Record string-valued assignments per scope (module, each function) and
    every load_inline call with the scope it sits in."""

    def __init__(self) -> None:
        self.module: dict[str, list[ast.expr]] = {}
        self.calls: list[tuple[ast.Call, list[dict[str, list[ast.expr]]]]] = []
        self._stack: list[dict[str, list[ast.expr]]] = [self.module]

    def _function(self, node) -> None:
        scope: dict[str, list[ast.expr]] = {}
        self._stack.append(scope)
        self.generic_visit(node)
        self._stack.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        for t in node.targets:
            if isinstance(t, ast.Name):
                self._stack[-1].setdefault(t.id, []).append(node.value)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name) and node.value is not None:
            self._stack[-1].setdefault(node.target.id, []).append(node.value)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        f = node.func
        fname = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""
        if fname == "load_inline":
            self.calls.append((node, list(reversed(self._stack))))
        self.generic_visit(node)


def _resolve(node: ast.expr, scopes, depth: int = 0) -> list[str] | None:
    """A string / list of strings the expression evaluates to, from constants
    only; None when it is not that simple (an f-string with values, a call...)."""
    if depth > 20:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        if all(isinstance(v, ast.Constant) for v in node.values):
            return ["".join(v.value for v in node.values)]
        return None
    if isinstance(node, (ast.List, ast.Tuple)):
        out: list[str] = []
        for elt in node.elts:
            got = _resolve(elt, scopes, depth + 1)
            if got is None:
                return None
            out += got
        return out
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _resolve(node.left, scopes, depth + 1), _resolve(node.right, scopes, depth + 1)
        if left is None or right is None:
            return None
        is_list = lambda n: isinstance(n, (ast.List, ast.Tuple))  # noqa: E731
        if len(left) == 1 and len(right) == 1 and not is_list(node.left) and not is_list(node.right):
            return [left[0] + right[0]]  # string concatenation
        return left + right
    if isinstance(node, ast.Name):
        for scope in scopes:
            values = scope.get(node.id)
            if values:
                got = [_resolve(v, scopes, depth + 1) for v in values]
                if any(g is None for g in got) or len({tuple(g) for g in got}) != 1:
                    return None  # reassigned to different things
                return got[0]
        return None
    return None


def extract_extensions(code: str) -> list[Extension]:
    tree = ast.parse(code)
    sc = _Scopes()
    sc.visit(tree)
    out = []
    for call, scopes in sc.calls:
        kw = {k.arg: k.value for k in call.keywords if k.arg}
        name_node = kw.get("name", call.args[0] if call.args else None)
        name = None
        if name_node is not None:
            got = _resolve(name_node, scopes)
            name = got[0] if got and len(got) == 1 else None
        cuda_node = kw.get("cuda_sources", call.args[2] if len(call.args) > 2 else None)
        if cuda_node is None or (isinstance(cuda_node, ast.Constant) and cuda_node.value is None):
            out.append(Extension(name, call.lineno, [], False))
            continue
        got = _resolve(cuda_node, scopes)
        why = "" if got is not None else f"cuda_sources at line {call.lineno} is not built from string constants"
        out.append(Extension(name, call.lineno, got, True, why))
    return out


# ------------------------------------------------------------------ static

def static_check(c: Candidate, kernelbench_tasks: Path = KERNELBENCH_TASKS) -> list[str]:
    problems = []
    code = c.path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(code, filename=str(c.path))
    except SyntaxError as exc:
        return [f"syntax error line {exc.lineno}: {exc.msg}"]
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        problems.append("no top-level class ModelNew")
    try:
        tf = task_file(c.task, kernelbench_tasks)
        if not tf.is_file():
            problems.append(f"task file {tf} does not exist")
    except ValueError as exc:
        problems.append(str(exc))
    exts = extract_extensions(code)
    if c.language == "cuda" and not any(e.has_cuda_arg for e in exts):
        problems.append("language cuda but no load_inline with cuda_sources")
    if c.language == "cpp" and (not exts or any(e.has_cuda_arg for e in exts)):
        problems.append("language cpp needs load_inline with cpp_sources only")
    if c.language == "triton" and "@triton.jit" not in code:
        problems.append("language triton but no @triton.jit")
    if c.language == "torch" and (exts or "triton" in code):
        problems.append("language torch but it builds an extension or uses triton")
    return problems


def duplicate_names(cands: list[Candidate]) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {}
    for c in cands:
        for e in extract_extensions(c.path.read_text(encoding="utf-8")):
            if e.name:
                seen.setdefault(e.name, []).append(c.name)
    return {k: v for k, v in seen.items() if len(v) > 1}


# -------------------------------------------------------------------- nvcc

def nvcc_command(src: Path, out: Path, ext_name: str, arch: str = "sm_90") -> list[str]:
    import sysconfig

    from torch.utils.cpp_extension import COMMON_NVCC_FLAGS, include_paths

    incs = [f"-I{p}" for p in include_paths()] + [f"-I{sysconfig.get_paths()['include']}"]
    return ["nvcc", "-ptx", f"-arch={arch}", "-std=c++17", *COMMON_NVCC_FLAGS, "-DTORCH_API_INCLUDE_EXTENSION_H",
            f"-DTORCH_EXTENSION_NAME={ext_name}", "-diag-suppress=3306", *incs, str(src), "-o", str(out)]


def compile_ptx(source: str, ext_name: str, workdir: Path, tag: str, timeout: float = 900.0) -> dict:
    src = workdir / f"{tag}.cu"
    out = workdir / f"{tag}.ptx"
    src.write_text(LOAD_INLINE_CUDA_PREFIX + source, encoding="utf-8")
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(nvcc_command(src, out, ext_name or "ext"), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"ok": False, "seconds": time.perf_counter() - t0, "error": f"nvcc ran past {timeout:g} s"}
    res = {"ok": proc.returncode == 0 and out.exists(), "seconds": round(time.perf_counter() - t0, 1)}
    if res["ok"]:
        res["entries"] = out.read_text(errors="replace").count(".entry ")
    else:
        err = [l for l in (proc.stderr or proc.stdout).splitlines() if "error" in l.lower()] or (proc.stderr or "").splitlines()[-5:]
        res["error"] = " | ".join(err[:5])
        m = MISSING_LIB_HEADER.search(proc.stderr or "")
        if m:
            res["toolkit_lacks"] = m.group(1)
    return res


def module_cuda_constants(code: str) -> dict[str, str]:
    """Module-level string constants that hold CUDA kernels (`__global__`)."""
    out = {}
    for node in ast.parse(code).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            got = _resolve(node.value, [{}])
            if got and len(got) == 1 and "__global__" in got[0]:
                out[node.targets[0].id] = got[0]
    return out


def cuda_units(cands: list[Candidate]) -> tuple[list[dict], list[dict]]:
    """(compilable units, load_inline calls whose cuda_sources could not be
    extracted). For a candidate with such a call, the module-level string
    constants holding `__global__` kernels that no extracted call used are
    compiled instead (the entry's resolved_by names them)."""
    units, missing = [], []
    for c in cands:
        code = c.path.read_text(encoding="utf-8")
        used: set[str] = set()
        lost = []
        for i, e in enumerate(extract_extensions(code)):
            if not e.has_cuda_arg:
                continue
            if e.cuda is None:
                lost.append({"candidate": c.name, "extension": e.name, "why": e.why})
                continue
            for j, s in enumerate(e.cuda):
                used.add(s)
                units.append({"candidate": c.name, "extension": e.name, "tag": f"{c.name}__{i}_{j}", "source": s})
        if lost:
            rest = {k: v for k, v in module_cuda_constants(code).items() if v not in used}
            for k, v in rest.items():
                units.append({"candidate": c.name, "extension": f"{c.name}_{k}", "tag": f"{c.name}__{k}", "source": v})
            for m in lost:
                m["resolved_by"] = sorted(rest)
            missing += lost
    return units, missing


def run_nvcc(units: list[dict], jobs: int, log=print) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="corpus-llm-nvcc-") as tmp, cf.ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futs = {pool.submit(compile_ptx, u["source"], u["extension"], Path(tmp), u["tag"]): u for u in units}
        for i, fut in enumerate(cf.as_completed(futs), 1):
            u = futs[fut]
            r = {"candidate": u["candidate"], "extension": u["extension"], **fut.result()}
            results.append(r)
            status = (f"ok, {r.get('entries', 0)} kernels" if r["ok"] else
                      f"not compilable here: this CUDA toolkit has no {r['toolkit_lacks']}" if r.get("toolkit_lacks") else
                      "FAILED: " + r.get("error", ""))
            log(f"  nvcc [{i}/{len(units)}] {u['candidate']} ({u['extension']}): {status} ({r['seconds']} s)")
    return sorted(results, key=lambda r: (r["candidate"], r["extension"] or ""))


# --------------------------------------------------------------------- run

def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _flat(obj) -> list:
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, (list, tuple)):
        return [t for o in obj for t in _flat(o)]
    return []


def task_size_profile(code: str) -> dict | None:
    for node in ast.parse(code).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "SIZE_PROFILES"):
            return dict(ast.literal_eval(node.value).get("small", {})) or None
    return None


def task_megabytes(path: Path) -> float:
    """Inputs plus parameters of a task at its module sizes, on the meta device."""
    import torch

    mod = _import(path, "corpus_llm_size_probe")
    with torch.device("meta"):
        inputs = mod.get_inputs()
        model = mod.Model(*mod.get_init_inputs())
    n = sum(t.numel() * t.element_size() for t in _flat(inputs))
    n += sum(p.numel() * p.element_size() for p in model.parameters())
    return n / 2**20


def run_on_cpu(c: Candidate, tol: float, max_mb: float, kernelbench_tasks: Path = KERNELBENCH_TASKS) -> dict:
    """Run a torch candidate against its reference on the CPU; a dict with
    match (bool), max_abs_diff, shapes, sizes, or skipped / error."""
    import torch

    tf = task_file(c.task, kernelbench_tasks)
    sizes = task_size_profile(tf.read_text(encoding="utf-8"))
    if sizes is None:
        mb = task_megabytes(tf)
        if mb > max_mb:
            return {"skipped": f"task has no small profile and {mb:.0f} MB of inputs and parameters (> {max_mb:g})"}
        sizes = {}
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    task = _import(tf, f"corpus_llm_task_{c.name}")
    for k, v in sizes.items():
        setattr(task, k, v)
    try:
        init = task.get_init_inputs()
        torch.manual_seed(WEIGHT_SEED)
        ref = task.Model(*init)
        cand_mod = _import(c.path, f"corpus_llm_cand_{c.name}")
        torch.manual_seed(WEIGHT_SEED)
        new = cand_mod.ModelNew(*init)
        results = []
        for trial in range(2):
            torch.manual_seed(INPUT_SEED + trial)
            inputs = task.get_inputs()
            with torch.no_grad():
                want = ref(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])
                got = new(*[t.clone() if isinstance(t, torch.Tensor) else t for t in inputs])
            results.append((want, got))
    except Exception as exc:  # noqa: BLE001 - a candidate's failure is a result
        return {"error": f"{type(exc).__name__}: {exc}", "match": False, "sizes": sizes}
    match, diff, shapes = True, 0.0, None
    for want, got in results:
        w, g = _flat(want), _flat(got)
        if len(w) != len(g) or any(a.shape != b.shape for a, b in zip(w, g)):
            match = False
            shapes = f"{[tuple(a.shape) for a in w]} vs {[tuple(b.shape) for b in g]}"
            continue
        for a, b in zip(w, g):
            if a.numel():
                d = (a.double() - b.double()).abs()
                diff = max(diff, float(d[torch.isfinite(d)].max()) if torch.isfinite(d).any() else float("inf"))
                if not torch.isfinite(d).all():
                    diff = float("inf")
            if not torch.allclose(a, b, atol=tol, rtol=tol):
                match = False
    out = {"match": match, "max_abs_diff": diff, "sizes": sizes}
    if shapes:
        out["shape_mismatch"] = shapes
    return out


# -------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=HERE, help="corpus folder (with candidates/)")
    ap.add_argument("--kernelbench-tasks", type=Path, default=KERNELBENCH_TASKS, help="KernelBench's problems folder (level1..)")
    ap.add_argument("--only", default="", help="comma-separated candidate names")
    ap.add_argument("--no-nvcc", action="store_true", help="skip the nvcc compile")
    ap.add_argument("--nvcc-sample", type=int, default=0, help="compile only the first N CUDA sources")
    ap.add_argument("--no-run", action="store_true", help="skip the CPU runs of torch candidates")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel nvcc processes")
    ap.add_argument("--tol", type=float, default=1e-4, help="atol = rtol for the CPU comparison")
    ap.add_argument("--max-mb", type=float, default=16.0, help="largest task (inputs + parameters) run on the CPU without a small profile")
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args(argv)

    cands = load_corpus(args.corpus)
    if args.only:
        names = {n.strip() for n in args.only.split(",") if n.strip()}
        unknown = names - {c.name for c in cands}
        if unknown:
            print(f"unknown candidates: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        cands = [c for c in cands if c.name in names]
    report: dict = {"candidates": len(cands)}
    failed = False

    # 1. static
    by = lambda key: {k: sum(1 for c in cands if key(c) == k) for k in sorted({key(c) for c in cands})}  # noqa: E731
    print(f"{len(cands)} candidates on {len({c.task for c in cands})} tasks")
    print(f"  by language: {by(lambda c: c.language)}")
    print(f"  by task kind: {by(lambda c: c.kind)}")
    print(f"  by expectation: {by(lambda c: c.expect)}")
    static = {}
    for c in cands:
        probs = static_check(c, args.kernelbench_tasks)
        if probs:
            static[c.name] = probs
            print(f"  STATIC {c.name}: {'; '.join(probs)}")
    dups = duplicate_names(cands)
    for n, who in dups.items():
        print(f"  DUPLICATE extension name {n}: {', '.join(who)}")
    report["static_problems"] = static
    report["duplicate_names"] = dups
    failed |= bool(static or dups)
    print(f"static: {len(cands) - len(static)} of {len(cands)} clean, {len(dups)} duplicate extension names")

    # 2. nvcc
    units, missing = cuda_units(cands)
    report["cuda_sources_not_extracted"] = missing
    for m in missing:
        how = (f"; compiled instead: module-level constants {', '.join(m['resolved_by'])}" if m.get("resolved_by")
               else "; nothing compiled in its place")
        print(f"  NOT EXTRACTED {m['candidate']}: {m['why']} (name= not a constant either){how}"
              if m["extension"] is None else f"  NOT EXTRACTED {m['candidate']} ({m['extension']}): {m['why']}{how}")
    if not args.no_nvcc:
        if not shutil.which("nvcc"):
            print("nvcc: not on PATH, compile skipped")
            report["nvcc"] = {"skipped": "no nvcc"}
        else:
            todo = units[: args.nvcc_sample] if args.nvcc_sample else units
            print(f"nvcc: {len(todo)} CUDA sources from {len({u['candidate'] for u in todo})} candidates, {args.jobs} at a time")
            t0 = time.perf_counter()
            res = run_nvcc(todo, args.jobs)
            ok = sum(r["ok"] for r in res)
            env = [r for r in res if not r["ok"] and r.get("toolkit_lacks")]
            bad = [r for r in res if not r["ok"] and not r.get("toolkit_lacks")]
            report["nvcc"] = {"sources": len(res), "ok": ok, "toolkit_lacks_headers": len(env), "failed": len(bad),
                              "seconds": round(time.perf_counter() - t0, 1), "results": res}
            print(f"nvcc: {ok} of {len(res)} CUDA sources compile to PTX for sm_90 "
                  f"({len({r['candidate'] for r in res if r['ok']})} candidates), {len(bad)} fail, {len(missing)} not extracted "
                  f"(their module-level kernels compiled instead), {time.perf_counter() - t0:.0f} s")
            if env:
                libs = sorted({r["toolkit_lacks"] for r in env})
                print(f"nvcc: {len(env)} sources not compilable on this machine: they include ATen/cuda/CUDAContext.h, which "
                      f"needs {', '.join(libs)} (CUDA math-library headers this toolkit lacks): "
                      + ", ".join(sorted({r['candidate'] for r in env})))
            failed |= bool(bad)
    failed |= any(not m.get("resolved_by") for m in missing)

    # 3. CPU runs
    if not args.no_run:
        runs = {}
        torch_cands = [c for c in cands if c.language == "torch"]
        for c in torch_cands:
            r = run_on_cpu(c, args.tol, args.max_mb, args.kernelbench_tasks)
            runs[c.name] = r
            if "skipped" in r:
                continue
            good = r["match"] == (c.expect == "ok")
            r["as_expected"] = good
            failed |= not good
            what = "match" if r["match"] else ("shape " + r["shape_mismatch"] if "shape_mismatch" in r else r.get("error") or f"differ (max {r['max_abs_diff']:.3g})")
            print(f"  cpu {c.name}: {what}, expected {c.expect}{'' if good else '  <-- UNEXPECTED'}")
        ran = [n for n, r in runs.items() if "skipped" not in r]
        matched = [n for n in ran if runs[n]["match"]]
        as_exp = [n for n in ran if runs[n].get("as_expected")]
        report["cpu"] = {"torch_candidates": len(torch_cands), "ran": len(ran), "matched": len(matched),
                         "as_expected": len(as_exp), "tol": args.tol, "results": runs}
        print(f"cpu: {len(torch_cands)} torch candidates, {len(ran)} small enough to run, {len(matched)} match their reference "
              f"(atol=rtol={args.tol:g}), {len(as_exp)} of {len(ran)} as expected "
              f"({len(torch_cands) - len(ran)} skipped: KernelBench-sized tasks)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    print("check: " + ("FAILED" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
