"""The decompilation evaluator (PtxDec's evaluation, SPEC.md section 3):
decompiled CUDA against each pair's reference CUDA, compiled into host
harnesses and run on identical inputs.

Modules: `config` (the launch configuration of a pair), `harness` (host entry
source and nvcc builds), `worker` and `runner` (sandboxed runs), `ncu`
(global-load efficiency), `metrics`, `codebleu`, `candidates` (reference and
perturbed candidate sets), `report` (figures), `pipeline` (the run).
"""

from .candidates import make_candidates, perturb
from .codebleu import CodeBleu
from .config import ConfigError, KernelConfig, derive_config, pair_config
from .pipeline import EvalSettings, EvaluateError, evaluate
from .runner import RunSettings

__all__ = ["CodeBleu", "ConfigError", "EvalSettings", "EvaluateError", "KernelConfig", "RunSettings",
           "derive_config", "evaluate", "make_candidates", "pair_config", "perturb"]
