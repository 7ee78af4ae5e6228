"""A DSL the bootstrap pipeline can target: one `DSLSpec` per language.

Everything DSL-specific the pipeline needs is here, so adding a DSL (CuTe,
ThunderKittens, Mojo, ...) is registering one spec (docs/tilelang.md):

* `language`: the `Sample.language` its candidates are verified as (the
  language of that name in `kernelmill/languages/`);
* `rag_template` and `trace_template`: prompt templates in the one chat
  format (`kernelmill.chat`: YAML header, `<|system|>`/`<|user|>` sections,
  `$name` placeholders). The RAG template takes `$code`, `$features` and
  `$examples`; the trace template `$code` and `$answer`;
* `example_label`: what the retrieved kernels are called in the prompt;
* `injections`: the error-injection rules (`negatives.Injection`) for the
  three kinds of SPEC.md section 2;
* `seed_glob`: which verified candidates of the builtin suite seed its corpus.

`tilelang` is the first real DSL. `torch` (PyTorch rewrites of PyTorch) is the
language the whole loop runs in on a machine without a GPU, so the pipeline
itself is tested end to end on CPU; TileLang candidates need a GPU to run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .negatives import Injection

TEMPLATES = Path(__file__).parent / "templates"


@dataclass(frozen=True)
class DSLSpec:
    name: str
    language: str
    rag_template: Path
    trace_template: Path
    example_label: str
    injections: tuple["Injection", ...] = field(default_factory=tuple)
    seed_glob: str = ""
    description: str = ""

    def load_rag_template(self):
        from ..chat import load_template

        return load_template(self.rag_template)

    def load_trace_template(self):
        from ..chat import load_template

        return load_template(self.trace_template)


DSLS: dict[str, DSLSpec] = {}


def register_dsl(spec: DSLSpec) -> DSLSpec:
    DSLS[spec.name] = spec
    return spec


def get_dsl(name: str) -> DSLSpec:
    _builtin()
    if name not in DSLS:
        raise ValueError(f"unknown DSL {name!r}; registered: {', '.join(sorted(DSLS))}")
    return DSLS[name]


def _builtin() -> None:
    if "tilelang" in DSLS and "torch" in DSLS:
        return
    from .negatives import TILELANG_INJECTIONS, TORCH_INJECTIONS

    DSLS.setdefault("tilelang", DSLSpec(
        "tilelang", "tilelang", TEMPLATES / "tilelang_rag.md", TEMPLATES / "tilelang_trace.md", "TileLang",
        TILELANG_INJECTIONS, "tilelang__ok*.py", "TileLang (tile-level Python DSL compiled to CUDA); needs a GPU"))
    DSLS.setdefault("torch", DSLSpec(
        "torch", "torch", TEMPLATES / "torch_rag.md", TEMPLATES / "torch_trace.md", "PyTorch rewrite",
        TORCH_INJECTIONS, "torch__ok*.py", "PyTorch rewrites of PyTorch: runs on CPU (tests, dry runs)"))
