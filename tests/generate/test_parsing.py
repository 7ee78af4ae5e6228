"""Reasoning/answer split, code block choice, truncation."""

from kernelmill.chat.parsing import code_blocks, extract_code, parse_completion, split_reasoning

PY = {"python", "py"}
MODEL_NEW = "import torch\nclass ModelNew(torch.nn.Module):\n    pass"


def test_split_inline_think():
    r, a = split_reasoning("<think>\nstep 1\n</think>\n\nanswer")
    assert (r, a) == ("step 1", "answer")


def test_split_closing_tag_only_when_template_opened_the_block():
    r, a = split_reasoning("the plan\n</think>\nanswer")
    assert (r, a) == ("the plan", "answer")


def test_split_unclosed_think_is_all_reasoning():
    r, a = split_reasoning("<think>still thinking when the budget ran out")
    assert r == "still thinking when the budget ran out" and a == ""


def test_split_prefers_separate_field_and_drops_echoed_think():
    r, a = split_reasoning("<think></think>final", reasoning="server-side trace")
    assert (r, a) == ("server-side trace", "final")


def test_no_reasoning():
    assert split_reasoning("just code") == (None, "just code")


def test_picks_last_block_defining_modelnew_over_later_blocks():
    text = (f"```python\nclass Model: pass\n```\n```python\n{MODEL_NEW}\n```\n"
            "Usage:\n```python\nm = ModelNew()\n```")
    code, err = extract_code(text, PY, "ModelNew")
    assert err is None and code == MODEL_NEW


def test_language_tag_decides_without_required_class():
    text = "```ptx\n.reg .f32 %f<3>;\n```\n```cuda\n__global__ void k() {}\n```\n```text\nnotes\n```"
    code, err = extract_code(text, {"cuda", "cu"}, None)
    assert err is None and code == "__global__ void k() {}"


def test_bare_code_without_fences_is_accepted_when_it_parses():
    code, err = extract_code(MODEL_NEW + "\n", PY, "ModelNew")
    assert err is None and "class ModelNew" in code


def test_no_code_block_is_a_parse_error():
    code, err = extract_code("I cannot help with that.", PY, "ModelNew")
    assert code == "" and err == "no code block in the answer"


def test_block_without_required_class_is_flagged():
    code, err = extract_code("```python\nprint(1)\n```", PY, "ModelNew")
    assert code == "print(1)" and "ModelNew" in err


def test_truncated_inside_block():
    p = parse_completion("<think>x</think>```python\nclass ModelNew:\n    def f(", None, "length", PY, "ModelNew")
    assert p.truncated and p.parse_error.startswith("reply ended inside a code block")
    assert "def f(" in p.code


def test_truncated_while_reasoning():
    p = parse_completion("<think>long long", None, "length", PY, "ModelNew")
    assert p.truncated and p.reasoning == "long long" and p.parse_error == "reply ended while reasoning (no answer)"


def test_tilde_fences_and_longer_backtick_fences():
    blocks = code_blocks("~~~python\na = 1\n~~~\n````py\nb = '```'\n````")
    assert [b.code for b in blocks] == ["a = 1", "b = '```'"]
