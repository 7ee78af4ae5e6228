"""One chat format: the prompt every export (SFT, KTO, GRPO) trains on is the
prompt `generate` sent for the same task, compared as the messages the (fake)
server received against the export rows and the rows the trainers load."""

from __future__ import annotations

import pytest

from kernelmill.chat import assistant_turn, export_prompt, parse_completion, task_prompt
from kernelmill.curate.export import ExportConfig, build_rows, write_export
from kernelmill.curate.inputs import generation_row, join
from kernelmill.generate import GenerateConfig, SamplingParams, generate, load_template, make_backend, prompt_inputs
from kernelmill.generate.fake_server import FakeOpenAIServer
from kernelmill.records import Task, Verdict, read_jsonl, Sample
from kernelmill.tasks import load_tasks
from kernelmill.train.data import load_rows

BUILTIN = load_tasks("builtin").by_id()
# a user's task that shares its id with a builtin task but not its code: the few-shot
# example must be chosen the same way at inference and in the export
CLASH = Task("level1/01_ReLU", BUILTIN["level1/02_GELU"].code.replace("gelu", "silu"), name="MyReLU")


def run_generate(tmp_path, template: str, tasks: list[Task], examples: str = "builtin"):
    out = tmp_path / f"{template}-{examples}.jsonl"
    with FakeOpenAIServer() as server:
        tpl = load_template(template)
        cfg = GenerateConfig(n=2, params=SamplingParams(0.6, 0.95, 512, 0), examples=examples)
        generate(prompt_inputs(tasks, tpl, cfg), make_backend("openai", "fake-model", base_url=server.url), tpl, out, cfg)
        bodies = list(server.bodies)
    samples = read_jsonl(out, Sample)
    # which request produced which sample: the server saw them in some order; match by task code
    sent = {}
    for body in bodies:
        user = body["messages"][-1]["content"]
        task = max(tasks, key=lambda t: user.rfind(t.code.strip()))
        sent.setdefault(task.task_id, []).append(body["messages"])
    return samples, sent


@pytest.mark.parametrize("template,examples", [("cuda", "builtin"), ("triton", "builtin"), ("cpp", "fallback")])
def test_every_export_trains_on_the_prompt_generate_sent(tmp_path, template, examples):
    tasks = [BUILTIN["level1/24_Softmax"], BUILTIN["level2/01_Gemm_Bias_ReLU"], CLASH]
    samples, sent = run_generate(tmp_path, template, tasks, examples)
    assert len(samples) == 6 and set(sent) == {t.task_id for t in tasks}
    for task_id, prompts in sent.items():
        assert all(p == prompts[0] for p in prompts)  # every sample of a task got the same prompt
    verdicts = [Verdict(s.sample_id, s.task_id, "ok", compiled=True, correct=True, speedup=1.2) for s in samples]
    gens, _ = join(samples, verdicts)
    by_id = {t.task_id: t for t in tasks}
    rows = [{**generation_row(g), "task_code": by_id[g.task_id].code, "task_name": by_id[g.task_id].name} for g in gens]
    for fmt in ("sft-messages", "sft-prompt-completion", "kto", "grpo"):
        res = build_rows(rows, ExportConfig(fmt))
        assert res.rows and not res.excluded, (fmt, res.excluded)
        for r in res.rows:
            prompt = r["messages"][:-1] if fmt == "sft-messages" else r["prompt"]
            assert prompt == sent[r["task_id"]][0], (fmt, r["task_id"])
        # and what the trainers load from the written export
        write_export(res, ExportConfig(fmt, name="train"), tmp_path / fmt, "test")
        kind = {"sft-messages": "sft", "sft-prompt-completion": None, "kto": "kto", "grpo": "grpo"}[fmt]
        if kind:
            for row in load_rows(kind, tmp_path / fmt / "train.jsonl"):
                prompt = row["messages"][:-1] if kind == "sft" else row["prompt"]
                assert prompt in [p[0] for p in sent.values()]


def test_the_assistant_turn_parses_back_to_the_sample():
    sample = Sample("s", "t", "cuda", "class ModelNew:\n    pass\n", reasoning="think about tiles")
    text = assistant_turn(sample.code, sample.reasoning)
    parsed = parse_completion(text, None, "stop", {"python", "py"}, "ModelNew")
    assert parsed.code.strip() == sample.code.strip() and parsed.reasoning.strip() == sample.reasoning


def test_export_prompt_uses_the_recorded_template_and_example_source():
    task = BUILTIN["level1/24_Softmax"]
    row = {"task_id": task.task_id, "task_code": task.code, "task_name": task.name, "language": "cuda",
           "meta": {"template": "cuda", "example": "fallback"}}
    assert export_prompt(row) == task_prompt(task, "cuda", examples="fallback")
    assert export_prompt({**row, "meta": {}}) == task_prompt(task, "cuda")
    assert export_prompt({**row, "meta": {}}) != export_prompt(row)  # the few-shot example differs
