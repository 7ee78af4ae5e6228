"""cudasrc/inline_calls.py: the one reader of load_inline calls (build headers, lazy builds,
ptx pairs, the builtin nvcc check)."""

from __future__ import annotations

import inspect

import pytest

from kernelmill.cudasrc.inline_calls import PARAMETERS, inline_calls

CODE = '''
import torch
from torch.utils.cpp_extension import load_inline

top = load_inline("top", "cpp", "cuda", None, ["f"], extra_cflags=["-O3"])

class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        make = lambda: torch.utils.cpp_extension.load_inline(name="in_lambda", cpp_sources=s)
        self.ext = load_inline(**options)

    def forward(self, x):
        return x
broken = load_inline(
'''


def test_positional_arguments_take_torchs_parameter_names():
    calls = inline_calls(CODE.replace("broken = load_inline(\n", ""))
    assert [c.line for c in calls] == [5, 10, 11]
    top = calls[0]
    assert set(top.arguments) == {"name", "cpp_sources", "cuda_sources", "sycl_sources", "functions", "extra_cflags"}
    assert top.arguments["functions"].elts[0].value == "f"  # the fifth positional, after sycl_sources
    assert not top.lazy and not top.star_kwargs


def test_calls_in_functions_are_lazy_with_their_scopes():
    _, in_lambda, starred = inline_calls(CODE.replace("broken = load_inline(\n", ""))
    assert in_lambda.lazy and [type(s).__name__ for s in in_lambda.scopes] == ["FunctionDef", "Lambda"]
    assert in_lambda.arguments["name"].value == "in_lambda"
    assert starred.star_kwargs and starred.arguments == {}


def test_source_that_does_not_parse_has_no_calls():
    assert inline_calls(CODE) == []


def test_parameters_match_the_installed_torch():
    cpp_extension = pytest.importorskip("torch.utils.cpp_extension")
    names = list(inspect.signature(cpp_extension.load_inline).parameters)
    assert list(PARAMETERS[:5]) == names[:5]
