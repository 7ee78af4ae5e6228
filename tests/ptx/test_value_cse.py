"""Value-expression CSE and loop-variable index CSE (issue 44): what they name and what
they must leave alone (a later write, a store between, a conditional read, a left-hand
side, an impure call, a shadowing declaration)."""

import pytest

pytest.importorskip("tree_sitter_cuda")

from kernelmill.cudasrc.cse import extract_index_cse  # noqa: E402
from kernelmill.cudasrc.value_cse import extract_value_cse  # noqa: E402

CLAMP = "max(min(x[i], 8.0f), -8.0f)"


def k(body: str) -> str:
    return f"__global__ void k(float* x, float* y, int n) {{\n  int i = threadIdx.x;\n{body}\n}}\n"


def test_repeated_pure_value_is_named_once_and_used_everywhere():
    out, n = extract_value_cse(k(f"  y[i] = {CLAMP} * 2.0f + {CLAMP} * {CLAMP};"))
    assert n == 1 and f"const auto v0 = {CLAMP};" in out and "y[i] = v0 * 2.0f + v0 * v0;" in out


def test_nested_repeats_are_named_in_later_rounds():
    e = f"({CLAMP} - floorf({CLAMP}))"
    out, n = extract_value_cse(k(f"  y[i] = {e} * {e} + {e};"))
    assert n == 2 and "y[i] = (v0) * (v0) + (v0);" in out and "v1 - floorf(v1)" in out  # parens: a later step


def test_a_short_repeat_that_saves_no_tokens_is_left():
    src = k("  y[i] = x[i] * x[i];")
    assert extract_value_cse(src) == (src, 0)


@pytest.mark.parametrize("body", [
    f"  y[i] = {CLAMP};\n  x[i] = 0.0f;\n  y[i + 1] = {CLAMP};",          # a store between the reads
    f"  y[i] = (i < n) ? {CLAMP} + {CLAMP} : 0.0f;",                  # a read on one path only
    f"  float a = {CLAMP};\n  foo();\n  float b = {CLAMP};",              # an impure call between
    f"  float a = {CLAMP};\n  i = i + 1;\n  float b = {CLAMP};",          # a name written in the scope
    "  y[i] = rand_f(x[i], 2.0f) + rand_f(x[i], 2.0f) + rand_f(x[i], 2.0f);",  # not a known-pure call
])
def test_unsafe_repeats_are_left(body):
    src = k(body)
    assert extract_value_cse(src) == (src, 0)


def test_the_left_hand_side_is_never_replaced():
    out, _ = extract_value_cse(k(f"  x[i] = {CLAMP} + {CLAMP};"))
    assert out.count("x[i] = v0 + v0;") == 1


def test_loop_variable_index_is_shared_inside_its_loop_only_with_loop_vars():
    src = ("__global__ void k(float* a, float* b) {\n  for (int j = 0; j < 4; ++j) {\n"
           "    a[j * 16 + threadIdx.x + 1] = b[j * 16 + threadIdx.x + 2];\n  }\n}\n")
    assert extract_index_cse(src)[1] == 0  # the default: j is written in the function
    out, n = extract_index_cse(src, loop_vars=True)
    assert n == 1 and "const auto idx0 = j * 16 + threadIdx.x;" in out and "a[idx0 + 1] = b[idx0 + 2]" in out
    written = src.replace("b[j * 16 + threadIdx.x + 2];", "b[j * 16 + threadIdx.x + 2]; j += 0;")
    assert extract_index_cse(written, loop_vars=True)[1] == 0  # written inside the body


def test_a_declaration_between_definition_and_use_stops_the_sharing():
    src = ("__global__ void k(float* a, int n) {\n  int j = threadIdx.x;\n  {\n"
           "    a[j * 16 + n + 1] = 0.f;\n    int j = 3;\n    a[j * 16 + n + 2] = 1.f;\n  }\n}\n")
    assert extract_index_cse(src, loop_vars=True)[1] == 0
