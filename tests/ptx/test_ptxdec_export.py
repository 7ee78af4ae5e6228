"""PtxDec SFT export (ptx/export.py): rows in the PTX->CUDA chat format that
the trainer reads, split by subgraph so no test subgraph is in training."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from kernelmill.chat import load_template, ptx_variables
from kernelmill.cli import app
from kernelmill.records import Pair, write_jsonl
from kernelmill.train.data import load_rows


def _pairs() -> list[Pair]:
    out = []
    for g in range(12):  # 12 subgraphs, 3 variants each (schedules / flags)
        for v in range(3):
            out.append(Pair(f"p{g}-{v}", f"k{g}", "cuda", f'extern "C" __global__ void k{g}(float* x) {{ x[{v}] = {g}; }}',
                            f".visible .entry k{g}(\n.param .u64 x\n)\n{{ // variant {v}\n ret;\n}}",
                            rolled_ptx=f".visible .entry k{g}() {{ // rolled {v}\n ret; }}",
                            target="sm_90", meta={"subgraph": f"model{g % 4}/sg{g}"}))
    out.append(Pair("failed", "kx", "cuda", "bad source", "", meta={"error": "nvcc failed"}))
    return out


def test_export_rows_split_by_subgraph_and_read_by_the_trainer(tmp_path):
    write_jsonl(tmp_path / "pairs.jsonl", _pairs())
    r = CliRunner().invoke(app, ["ptx", "export", str(tmp_path / "pairs.jsonl"), "-o", str(tmp_path / "sft"),
                                 "--test-frac", "0.3", "--rolled"])
    assert r.exit_code == 0, r.output
    assert "skipped 1: no PTX" in " ".join(r.output.split())  # rich wraps long lines
    train = [json.loads(l) for l in (tmp_path / "sft/train.jsonl").read_text().splitlines()]
    test = [json.loads(l) for l in (tmp_path / "sft/test.jsonl").read_text().splitlines()]
    assert len(train) + len(test) == 36 and train and test
    assert not {r["group"] for r in train} & {r["group"] for r in test}  # no subgraph on both sides
    assert all(len({r["group"] for r in rows}) * 3 == len(rows) for rows in (train, test))  # variants stay together
    # the prompt is the one generate sends for this pair (same template), with the Rolled-PTX
    pair = next(p for p in _pairs() if p.pair_id == train[0]["pair_id"])
    want = load_template("ptx2cuda").render(ptx_variables(pair, "rolled_ptx"))
    assert train[0]["messages"][:-1] == want and "// rolled" in want[-1]["content"]
    assert train[0]["messages"][-1] == {"role": "assistant", "content": f"```cuda\n{pair.source}\n```"}
    rows = load_rows("sft", tmp_path / "sft/train.jsonl")
    assert len(rows) == len(train)
    split = json.loads((tmp_path / "sft/split.json").read_text())
    assert split["train"] == len(train) and split["skipped"] == {"no PTX (a failed pair)": 1}


def test_split_is_stable_as_pairs_are_added(tmp_path):
    from kernelmill.ptx.export import export_sft

    pairs = _pairs()
    write_jsonl(tmp_path / "a.jsonl", pairs[:18])
    write_jsonl(tmp_path / "b.jsonl", pairs)
    export_sft(tmp_path / "a.jsonl", tmp_path / "a", test_frac=0.3)
    export_sft(tmp_path / "b.jsonl", tmp_path / "b", test_frac=0.3)
    side = lambda d: {json.loads(l)["group"] for l in (tmp_path / d / "test.jsonl").read_text().splitlines()}  # noqa: E731
    assert side("a") <= side("b")  # a group never changes sides when more pairs arrive


def test_bad_input_is_a_clear_error(tmp_path):
    r = CliRunner().invoke(app, ["ptx", "export", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o")])
    assert r.exit_code == 2 and "no pairs file" in r.output


@pytest.mark.parametrize("mode", ["best", "fast"])
def test_rolled_export_makes_the_rolled_ptx_of_pairs_stored_without_it(tmp_path, mode):
    # `ptx augment --no-reroll` stores pairs without Rolled-PTX: export --rolled makes it, losslessly
    from kernelmill.ptx.expand import expand_text

    ptx = (".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(\n.param .u64 p\n)\n{\n"
           + "\n".join(f"\tadd.s32 %r{t + 2}, %r1, {t * 32};" for t in range(10)) + "\n\tret;\n}\n")
    pair = Pair("p0", "k", "cuda", 'extern "C" __global__ void k(int* p) {}', ptx, target="sm_90",
                meta={"subgraph": "m/sg0"})
    write_jsonl(tmp_path / "pairs.jsonl", [pair])
    r = CliRunner().invoke(app, ["ptx", "export", str(tmp_path / "pairs.jsonl"), "-o", str(tmp_path / "sft"),
                                 "--test-frac", "0", "--rolled", "--reroll", mode])
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "sft/split.json").read_text())["reroll"] == mode
    (row,) = [json.loads(l) for l in (tmp_path / "sft/train.jsonl").read_text().splitlines()]
    assert row["input"] == "rolled_ptx"
    prompt = row["messages"][-2]["content"]
    assert "for.size.1" in prompt and "add.s32 %r3, %r1, 32;" not in prompt
    rolled = prompt[prompt.index(".version"):prompt.rindex("}") + 1]
    assert expand_text(rolled) == expand_text(ptx)


def test_an_unknown_reroll_mode_is_refused_before_anything_is_written(tmp_path):
    write_jsonl(tmp_path / "pairs.jsonl", _pairs())
    r = CliRunner().invoke(app, ["ptx", "export", str(tmp_path / "pairs.jsonl"), "-o", str(tmp_path / "sft"),
                                 "--rolled", "--reroll", "fastest"])
    assert r.exit_code != 0 and "best, fast" in r.output
    assert not (tmp_path / "sft").exists()


def _asks_extern_c(row: dict) -> bool:
    prompt = row["messages"][-2]["content"]
    assert ("C++ linkage" in prompt) != ('an `extern "C" __global__` function' in prompt), prompt[:400]
    return "C++ linkage" not in prompt


def test_the_prompt_asks_for_the_linkage_the_answer_has():
    """A pair whose PTX entry is mangled (a C++ `__global__`) is asked for C++ linkage, an
    unmangled one for `extern "C"`: the answer is the pair's own source (issue 44: 438
    external answers were not the `extern "C"` kernels every prompt asked for)."""
    from kernelmill.ptx.export import sft_row

    cxx = Pair("c", "_Z4reluPfi", "cuda", "__global__ void relu(float* x, int n) { }",
               ".visible .entry _Z4reluPfi(\n.param .u64 p0,\n.param .u32 p1\n)\n{\n ret;\n}", target="sm_90")
    plain = Pair("e", "relu", "cuda", 'extern "C" __global__ void relu(float* x, int n) { }',
                 ".visible .entry relu(\n.param .u64 p0,\n.param .u32 p1\n)\n{\n ret;\n}", target="sm_90")
    assert not _asks_extern_c(sft_row(cxx, rolled=False))
    assert _asks_extern_c(sft_row(plain, rolled=False))
    # the rolled PTX's prompt says the same (the rule reads the plain PTX's entry)
    cxx.rolled_ptx = cxx.ptx
    assert not _asks_extern_c(sft_row(cxx, rolled=True))


@pytest.mark.skipif(__import__("shutil").which("nvcc") is None, reason="needs nvcc")
def test_real_pairs_prompts_agree_with_their_answers(tmp_path):
    """nvcc's own PTX of a C++ and an `extern "C"` kernel, through `ptx pairs` and `ptx export`:
    every row asks for the linkage its answer declares."""
    (tmp_path / "k.cu").write_text(
        "__global__ void scale(float* x, float s, int n) { int i = threadIdx.x; if (i < n) x[i] *= s; }\n"
        'extern "C" __global__ void shift(float* x, float s, int n) { int i = threadIdx.x; if (i < n) x[i] += s; }\n')
    runner = CliRunner()
    r = runner.invoke(app, ["ptx", "pairs", str(tmp_path / "k.cu"), "-o", str(tmp_path / "pairs.jsonl")])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["ptx", "export", str(tmp_path / "pairs.jsonl"), "-o", str(tmp_path / "sft"),
                            "--test-frac", "0"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(l) for l in (tmp_path / "sft/train.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        answer = row["messages"][-1]["content"]
        kernel = "shift" if "shift" in row["kernel_name"] else "scale"
        assert _asks_extern_c(row) == (kernel == "shift"), (row["kernel_name"], row["messages"][-2]["content"][:300])
        assert f"void {kernel}(" in answer
