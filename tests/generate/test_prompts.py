"""Templates by name and path, placeholder errors, few-shot examples."""

import pytest

from kernelmill.chat.prompts import (TemplateError, fewshot_example, list_templates, load_template,
                                         task_variables)
from kernelmill.records import Task

TASK = Task("demo/relu", "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\n")


@pytest.mark.parametrize("name", ["cuda", "triton", "tilelang", "torch", "cpp"])
def test_task_templates_render_with_task_code_and_example(name):
    tpl = load_template(name)
    msgs = tpl.render(task_variables(tpl, TASK, examples="fallback"))
    assert [m["role"] for m in msgs] == ["system", "user"]
    user = msgs[1]["content"]
    assert TASK.code.strip() in user and "ModelNew" in user and "$" not in user.replace("$$", "")
    assert "class ModelNew" in user  # the few-shot answer


def test_cuda_template_follows_concur_structure():
    user = load_template("cuda").render(task_variables(load_template("cuda"), TASK, "fallback"))[1]["content"]
    # instruction, imports, inline-CUDA example (ref then new), the program, the naming/output order
    order = [user.index(s) for s in ("replace the PyTorch operators", "import torch.nn.functional as F",
                                     "load_inline", TASK.code.strip(), "Name the optimized architecture ModelNew")]
    assert order == sorted(order)


def test_ptx_template():
    tpl = load_template("ptx2cuda")
    assert tpl.input == "ptx" and tpl.language == "cuda" and "cuda" in tpl.code_tags
    from kernelmill.chat.prompts import kernel_linkage

    msgs = tpl.render({"ptx": ".visible .entry k()", "linkage": kernel_linkage(".visible .entry k()")})
    assert ".visible .entry k()" in msgs[-1]["content"] and 'an `extern "C" __global__` function' in msgs[-1]["content"]


def test_user_template_by_path(tmp_path):
    p = tmp_path / "mine.txt"
    p.write_text("---\nlanguage: triton\ncode_tags: python\nrequire: ModelNew\n---\n<|user|>\nOptimise:\n$code\n")
    tpl = load_template(p)
    assert tpl.language == "triton" and tpl.code_tags == {"python"}
    assert tpl.render({"code": "X"}) == [{"role": "user", "content": "Optimise:\nX"}]


def test_missing_value_names_file_and_line(tmp_path):
    p = tmp_path / "bad.md"
    p.write_text("---\nlanguage: cuda\n---\n<|system|>\nhi\n<|user|>\nfirst\nsecond $nothing_here\n")
    with pytest.raises(TemplateError, match=r"bad.md:8: no value for \$nothing_here"):
        load_template(p).render({"code": "x"})


def test_bad_header_and_missing_sections(tmp_path):
    p = tmp_path / "h.md"
    p.write_text("---\nlanguage: [unclosed\n---\n<|user|>\nx\n")
    with pytest.raises(TemplateError, match="h.md:.*bad YAML"):
        load_template(p)
    p.write_text("no markers at all\n")
    with pytest.raises(TemplateError, match="h.md:1: no <|system|>"):
        load_template(p)


def test_unknown_name_lists_shipped():
    with pytest.raises(TemplateError, match="shipped: .*cuda"):
        load_template("no_such_template")
    assert {"cuda", "triton", "tilelang", "ptx2cuda", "feedback"} <= set(list_templates())


def test_fewshot_from_suite_skips_the_prompted_task(tmp_path):
    ref = "import torch\nclass Model(torch.nn.Module):\n    pass\ndef get_inputs():\n    return []\n"
    for tid, body in (("a_small", "# a"), ("b_large", "# b" * 50)):
        (tmp_path / "tasks").mkdir(exist_ok=True)
        (tmp_path / "tasks" / f"{tid}.py").write_text(ref)
        d = tmp_path / "candidates" / tid
        d.mkdir(parents=True)
        (d / "cuda__ok.py").write_text(f"class ModelNew: pass\n{body}\n")
        (d / "cuda__compile_error.py").write_text("broken")
    ex = fewshot_example("cuda", suite_dir=tmp_path)
    assert ex.origin == "builtin:a_small" and "ModelNew" in ex.new
    assert fewshot_example("cuda", exclude_task_id="a_small", suite_dir=tmp_path).origin == "builtin:b_large"
    same_code = fewshot_example("cuda", exclude_code=ref, suite_dir=tmp_path)  # both refs equal ref
    assert same_code.origin == "fallback"
    # no candidate in that language: the shipped example
    assert fewshot_example("triton", suite_dir=tmp_path).origin == "fallback"


def test_render_prompt_for_exports_never_shows_the_task_as_its_own_example(tmp_path):
    from kernelmill.chat.prompts import render_prompt

    msgs = render_prompt(TASK.code, "triton", examples="fallback")
    assert msgs[1]["content"].count(TASK.code.strip()) == 1 and "@triton.jit" in msgs[1]["content"]
    with pytest.raises(TemplateError, match="takes 'ptx' input"):
        render_prompt(TASK.code, "ptx2cuda")
