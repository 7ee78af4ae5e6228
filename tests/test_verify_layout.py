"""Issue 41: the rules of `verify/`'s house, as tests (in the style of test_cli_layout.py).

- code outside verify/ imports only the package's face (`kernelmill.verify`, its `_WHERE`
  table), never a module past it;
- no private name (one leading underscore) is imported from one module of verify/ into another;
- every module path a process is started with (`python -m kernelmill.verify...`) exists: the
  workers start by module path, so a moved file would otherwise fail only on the machine that
  starts that process;
- each hall holds what its name says: process/ only what runs inside workers, pools/ the
  processes started ahead, measure/ nothing that judges, guards/ no builder.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

import kernelmill
import kernelmill.verify as verify_face

PKG = Path(kernelmill.__file__).parent
VERIFY = PKG / "verify"


def _module(path: Path) -> tuple[str, list[str]]:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    package = parts[:-1]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts), package


def _imports_from(path: Path):
    """(absolute module, imported name, line) of every `from ... import` in the file."""
    mod, package = _module(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                yield target, alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, None, node.lineno


def test_code_outside_verify_imports_only_its_face():
    face = set(verify_face._WHERE)
    bad = []
    for path in PKG.rglob("*.py"):
        if VERIFY in path.parents or path == VERIFY / "__init__.py":
            continue
        for target, name, line in _imports_from(path):
            where = f"{path.relative_to(PKG)}:{line}"
            if target.startswith("kernelmill.verify."):
                bad.append(f"{where} imports {target} (past the face)")
            elif target == "kernelmill.verify" and name is not None and name not in face:
                bad.append(f"{where} imports {name}, not in verify/__init__.py's _WHERE")
    assert bad == []


def test_every_name_of_the_face_resolves():
    for name in verify_face._WHERE:
        assert getattr(verify_face, name) is not None, name


def test_no_private_name_crosses_a_module_of_verify():
    bad = []
    for path in VERIFY.rglob("*.py"):
        for target, name, line in _imports_from(path):
            if (target.startswith("kernelmill.verify") and name and name.startswith("_")
                    and not name.startswith("__")):
                bad.append(f"{path.relative_to(PKG)}:{line} imports {target}.{name}")
    assert bad == []


def test_every_module_a_process_starts_by_path_exists():
    started = set()
    for path in PKG.rglob("*.py"):
        started |= set(re.findall(r'"-m",\s*"(kernelmill\.[\w.]+)"', path.read_text(encoding="utf-8")))
    assert "kernelmill.verify.process.candidate" in started and "kernelmill.verify.pools.zygote" in started
    missing = [m for m in sorted(started) if importlib.util.find_spec(m) is None]
    assert missing == []


def _hall(name: str) -> set[str]:
    return {p.stem for p in (VERIFY / name).glob("*.py")} - {"__init__"}


def test_each_hall_holds_what_its_name_says():
    assert _hall("process") == {"candidate", "channel", "cuda_ipc", "job", "launch", "loading", "supervisor", "worker"}
    assert _hall("pools") == {"standby", "resident", "resident_pool", "zygote"}
    assert {"timing", "kernel_time", "correctness", "environment", "gpulock"} <= _hall("measure")
    assert {"inline_build", "buildcache", "build_prepare", "lazy_builds"} <= _hall("build")
    top = {p.stem for p in VERIFY.glob("*.py")} - {"__init__"}
    assert top <= {"config", "session", "runner", "sandbox", "service", "client", "store", "progress", "devices", "health",
                   "paths", "early"}, top
    # measure/ never judges, guards/ never builds
    for path in (VERIFY / "measure").glob("*.py"):
        assert not [t for t, _, _ in _imports_from(path) if t.startswith("kernelmill.verify.guards")], path.name
    for path in (VERIFY / "guards").glob("*.py"):
        assert not [t for t, _, _ in _imports_from(path) if t.startswith("kernelmill.verify.build")], path.name


def test_language_names_live_in_languages():
    """What the harness knows of a language is in languages/<name>.py: verify/ names no
    language-only package (the names "cuda", "cpp" and "torch" are also a device, a
    library and the reference's framework, so only these are checked)."""
    from kernelmill import languages

    assert {"torch", "cuda", "cpp", "triton", "tilelang", "cute_dsl"} <= set(languages.ALL)
    only = {"triton", "tilelang", "cute_dsl"}  # ("cutlass" is also a library a provenance names)
    bad = []
    for path in VERIFY.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in only:
                bad.append(f"{path.relative_to(PKG)}:{node.lineno} the string {node.value!r}")
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            bad += [f"{path.relative_to(PKG)}:{node.lineno} imports {n}" for n in names if n.split(".")[0] in only]
    assert bad == []


def test_a_language_is_one_module():
    """Every module of languages/ but base defines LANGUAGE under its own name; the
    registry is what the files define (adding one is adding a file)."""
    from kernelmill import languages

    files = {p.stem for p in (PKG / "languages").glob("*.py")} - {"__init__", "base"}
    assert files == set(languages.ALL)


def test_one_reader_of_load_inline_calls():
    """Tools that read `load_inline` calls without running the code use cudasrc/inline_calls.py:
    no other module matches the name in an AST walk of its own."""
    readers = []
    for path in PKG.rglob("*.py"):
        if path.name == "inline_calls.py":
            continue
        text = path.read_text(encoding="utf-8")
        if re.search(r'==\s*"load_inline"|"load_inline"\s*[,)]?\s*(?:==|!=)|!=\s*"load_inline"', text):
            readers.append(str(path.relative_to(PKG)))
    assert readers == []


def test_one_walker_of_tensor_trees():
    """Copies, moves, snapshots and listings of tensor trees go through measure/tree.py:
    no other function of verify/ recurses into lists and tuples itself (cuda_ipc.py's
    packer, which also checks every leaf it packs, excepted)."""
    bad = []
    for path in VERIFY.rglob("*.py"):
        if path.name in ("tree.py", "cuda_ipc.py"):
            continue
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls_itself = any(isinstance(n, ast.Call) and getattr(n.func, "id", None) == fn.name for n in ast.walk(fn))
            checks_lists = "(list, tuple)" in ast.unparse(fn) or "(tuple, list)" in ast.unparse(fn)
            if calls_itself and checks_lists:
                bad.append(f"{path.relative_to(PKG)}: {fn.name}")
    assert bad == []


def test_the_tree_walker_leaves_no_garbage_cycle():
    """map_tensors is called for every timed call: a reference cycle there kept a large
    task's outputs alive until the cyclic collector ran (a resident candidate passed its
    memory limit). Collecting with the collector off must free what it held."""
    import gc
    import weakref

    torch = __import__("pytest").importorskip("torch")
    from kernelmill.verify.measure.tree import map_tensors, tensors_in, with_leaves

    t = torch.ones(4)
    ref = weakref.ref(t)
    gc.disable()
    try:
        for _ in range(3):
            tensors_in([t, (t, {"a": t})])
            map_tensors([t, (t,)], lambda x: x + 0, lists=True)
            with_leaves([t, (t,)], [1, 2])
        del t
        assert ref() is None
    finally:
        gc.enable()


def _verify_import_graph() -> dict[str, set[str]]:
    """Module -> the modules of verify/ it imports (function-level imports too: a circle
    through a late import is still a circle a reader has to hold in mind)."""
    paths = {_module(p)[0]: p for p in VERIFY.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in paths.items():
        graph[mod] = set()
        for target, name, _ in _imports_from(path):
            dotted = f"{target}.{name}" if name else target
            hit = dotted if dotted in paths else target if target in paths else None
            if hit and hit != mod and hit != "kernelmill.verify":  # the face's lazy table imports nothing
                graph[mod].add(hit)
    return graph


def test_no_import_circle_inside_verify():
    # the last one (pools/resident <-> process/worker) went when the resident got its own
    # entry point (`python -m kernelmill.verify.pools.resident`)
    graph = _verify_import_graph()
    circles = []
    for start in graph:  # a path back to `start`, depth first; verify/ is small enough
        stack, seen = [(start, [start])], set()
        while stack:
            node, path = stack.pop()
            for nxt in graph[node]:
                if nxt == start:
                    circles.append(path)
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, path + [nxt]))
    assert not circles, sorted({" -> ".join(sorted(c)) for c in circles})
