"""The honest corpus of benchmarks/corpus/ (timing fidelity): every file parses
and names an existing task, the sets are as large as the benchmark needs, and
every CPU torch candidate matches its reference on the task's small inputs when
run directly (no kernelmill process code)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "benchmarks" / "corpus"


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


FIDELITY = _import(ROOT / "benchmarks" / "timing_fidelity.py", "kernelmill_bench_timing_fidelity")
CANDIDATES = FIDELITY.load_corpus(CORPUS)
TASKS = sorted(p.stem for p in (CORPUS / "tasks").glob("*.py"))


def test_corpus_sizes():
    gpu = [c for c in CANDIDATES if c.runs_on("cuda")]
    cpu = [c for c in CANDIDATES if c.runs_on("cpu")]
    assert len(gpu) >= 40
    assert sum(c.fidelity for c in gpu) >= 30
    assert len(cpu) >= 40
    assert sum(c.language == "cpp" for c in cpu) <= 6
    assert len(TASKS) >= 15


@pytest.mark.parametrize("path", sorted((CORPUS / "tasks").glob("*.py")), ids=lambda p: p.stem)
def test_task_file_is_a_kernelbench_task(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    assert {"Model", "get_inputs", "get_init_inputs"} <= names
    sizes = FIDELITY.task_sizes(path.read_text(encoding="utf-8"), "small")
    assigned = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert set(sizes) <= assigned, "the small profile overrides only module constants"


@pytest.mark.parametrize("cand", CANDIDATES, ids=lambda c: c.name)
def test_candidate_file_parses_and_names_a_task(cand):
    tree = ast.parse(Path(cand.path).read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)
    assert cand.task in TASKS
    assert cand.name.startswith(cand.task + "__"), "file names are <task>__<variant>"
    assert cand.style, "a '# style:' line follows the header"
    if cand.language == "cpp":
        assert cand.device == "cpu"
    if cand.language == "cuda":
        assert cand.device == "cuda"


def test_header_parser_rejects_bad_headers():
    with pytest.raises(ValueError):
        FIDELITY.parse_header("import torch\n")
    with pytest.raises(ValueError):
        FIDELITY.parse_header("# task: x  language: rust  device: cpu\n")
    info = FIDELITY.parse_header("# task: x  language: torch  device: both  fidelity: no\n# style: s\n")
    assert info == {"task": "x", "language": "torch", "device": "both", "style": "s", "fidelity": False}


def _flat(obj):
    if isinstance(obj, torch.Tensor):
        return [obj]
    return [t for o in obj for t in _flat(o)]


@pytest.mark.parametrize("cand", [c for c in CANDIDATES if c.runs_on("cpu") and c.language == "torch"],
                         ids=lambda c: c.name)
def test_cpu_torch_candidate_matches_its_reference(cand):
    task_file = CORPUS / "tasks" / f"{cand.task}.py"
    task = _import(task_file, f"corpus_task_{cand.task}")
    for key, value in FIDELITY.task_sizes(task_file.read_text(encoding="utf-8"), "small").items():
        setattr(task, key, value)
    cand_mod = _import(Path(cand.path), f"corpus_cand_{cand.name}")
    torch.manual_seed(7)
    init = task.get_init_inputs()
    torch.manual_seed(7)
    ref = task.Model(*init)
    torch.manual_seed(7)
    new = cand_mod.ModelNew(*init)
    for trial in range(1):
        torch.manual_seed(100 + trial)
        inputs = task.get_inputs()
        with torch.no_grad():
            want = _flat(ref(*[t.clone() for t in inputs]))
            got = _flat(new(*[t.clone() for t in inputs]))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            torch.testing.assert_close(g, w, atol=1e-3, rtol=1e-3)
