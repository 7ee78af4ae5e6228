"""Reward-hacking guards: catch the known ways a kernel fakes correctness or speed.

``VerifyConfig(guards="standard")`` (the default) runs each candidate under a
supervisor that never imports it (`supervisor`), in a process of its own that
only reports what happened (`candidate`); the catalogue, each defence and what
it does not cover are in docs/guards.md.

    from kernelmill.verify.guards import FLAGS, check_source
    check_source(code, level="strict", language="cuda")  # static findings
"""

from .flags import FALLBACK_POLICIES, FLAGS, LEVELS, Findings, decide
from .source import Finding, check_source, own_kernel_names

__all__ = ["FALLBACK_POLICIES", "FLAGS", "Finding", "Findings", "LEVELS", "check_source", "decide",
           "own_kernel_names"]
