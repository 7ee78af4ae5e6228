"""The CuTe DSL language (languages/cute_dsl.py) without a GPU: what it finds in a
candidate's source and module, its environment, its registration."""

from __future__ import annotations

import ast
import sys
import types
from pathlib import Path

from cute_dsl_candidates import CORRECT

from kernelmill import languages
from kernelmill.languages.cute_dsl import LANGUAGE


def test_the_language_is_registered_from_its_file():
    assert languages.get_language("cute_dsl") is LANGUAGE
    assert LANGUAGE.needs_gpu and not LANGUAGE.compiles_extension
    assert "need a CUDA GPU" in LANGUAGE.unsupported("cpu")


def test_its_kernel_functions_are_its_own_kernel_names():
    assert LANGUAGE.own_kernel_names(ast.parse(CORRECT)) == {"add_rows_kernel"}
    # through the registry, the name the provenance and the fallback guard look for
    assert "add_rows_kernel" in languages.own_kernel_names(CORRECT)
    # a `@kernel` of a file that does not import cutlass is another package's
    other = "import warp as wp\n@wp.kernel\ndef k(x):\n    pass\n"
    assert LANGUAGE.own_kernel_names(ast.parse(other)) == set()


def test_its_compile_cache_lives_in_the_verify_cache(tmp_path):
    env = LANGUAGE.env("cuda", tmp_path / "cache", tmp_path / "ext", "9.0", 2)
    assert env["CUTE_DSL_CACHE_DIR"] == str(tmp_path / "cache" / "cute_dsl")


def _code_in(path: str, src: str, name: str):
    ns: dict = {}
    exec(compile(src, path, "exec"), ns)
    return ns[name]


def test_jit_functions_and_compiled_functions_are_the_candidates_own_callables(monkeypatch):
    # a @cute.jit function: a wrapper (functools.wraps) whose code is the DSL's
    dsl_file = str(Path("site-packages") / "cutlass" / "base_dsl" / "dsl.py")
    wrapper_of = _code_in(dsl_file, "import functools\n"
                                    "def jit(f):\n"
                                    "    @functools.wraps(f)\n"
                                    "    def wrapper(*a):\n"
                                    "        return f(*a)\n"
                                    "    return wrapper\n", "jit")

    def add_rows(x):
        return x

    jitted = wrapper_of(add_rows)
    # a compiled function kept as a global: an object of the DSL's executor class
    executor = types.ModuleType("cutlass.base_dsl.jit_executor")
    exec(compile("class JitCompiledFunction:\n    def __call__(self, *a):\n        return a\n",
                 str(Path("site-packages") / "cutlass" / "base_dsl" / "jit_executor.py"), "exec"), executor.__dict__)
    executor.JitCompiledFunction.__module__ = "cutlass.base_dsl.jit_executor"
    compiled = executor.JitCompiledFunction()
    cand = types.ModuleType("candidate")
    cand.add_rows, cand.compiled, cand.plain, cand.torch_like = jitted, compiled, add_rows, len
    found = LANGUAGE.own_callables(cand)
    assert jitted in found and executor.JitCompiledFunction.__call__ in found
    assert add_rows not in found and len not in found
    # compiled at run time (in forward): the executor's __call__, once its module is imported
    for name in ("cutlass.base_dsl.jit_executor", "cutlass.cutlass_dsl.cuda_jit_executor"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert LANGUAGE.kernel_codes() == set()  # a process that never imported the DSL
    monkeypatch.setitem(sys.modules, "cutlass.base_dsl.jit_executor", executor)
    assert executor.JitCompiledFunction.__call__.__code__ in LANGUAGE.kernel_codes()
    assert executor.JitCompiledFunction.__call__.__code__ in languages.kernel_codes()


def test_a_library_cute_kernel_is_cutlass_in_the_provenance():
    import re

    assert any(origin == "cutlass" and re.search(rx, "kernel_cutlass_flash_fwd_0") for origin, rx in
               languages.kernel_origins())


def test_the_candidates_own_cute_kernel_is_own_in_the_provenance():
    """The symbol an H200 recorded for tests/cute_dsl_candidates.py's kernel (tenth session):
    the first device run labelled it `cutlass`, since the own rule wanted the bare name."""
    from kernelmill.verify.measure.kernel_time import origin, own_kernel_names

    own = own_kernel_names(CORRECT)
    assert "add_rows_kernel" in own
    seen = ("kernel_cutlass_add_rows_kernel_tensorptrf32gmemo2563843841_tensorptrf32gmemo2563843841_"
            "tensorptrf32gmemo2563843841_0")
    assert origin(seen, own) == "own"
    assert origin(seen) == "cutlass"  # without the candidate's names: a CuTe kernel of a library
    # a name that only starts the same is not the candidate's
    assert origin("kernel_cutlass_add_rows_kernel2_tensorptrf32_0", frozenset({"add_rows_kernel"})) == "cutlass"


def test_an_audited_cute_dsl_kernel_is_read_as_cute_dsl():
    from kernelmill.audit.sources import guess_language

    assert guess_language(CORRECT) == "cute_dsl"
    assert guess_language("import triton\nimport triton.language as tl\n") == "triton"
    assert guess_language("import torch\n") == "torch"
