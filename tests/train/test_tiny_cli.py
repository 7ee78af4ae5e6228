"""`kernelmill train tiny`: one command trains a tiny model on the CPU; re-running
a finished run (tiny or a recipe) does nothing."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from kernelmill.cli import app


def test_train_tiny_then_rerun_does_nothing(tmp_path, sft_rows):
    data = tmp_path / "sft.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in sft_rows))
    out = tmp_path / "tiny"
    args = ["train", "tiny", str(data), "-o", str(out), "--steps", "3", "--max-length", "256"]
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "done: 3 steps" in first.output
    assert (out / "run" / "config.json").exists() and (out / "recipe.yaml").exists()
    history = [json.loads(x) for x in (out / "run" / "log_history.jsonl").read_text().splitlines()]
    mtime = (out / "run" / "model.safetensors").stat().st_mtime_ns

    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0, again.output
    assert "already finished: 3 steps" in again.output
    assert "done:" not in again.output
    assert (out / "run" / "model.safetensors").stat().st_mtime_ns == mtime
    assert [json.loads(x) for x in (out / "run" / "log_history.jsonl").read_text().splitlines()] == history

    # the recipe it wrote is the documented re-run: also finished, also nothing to do
    rec = CliRunner().invoke(app, ["train", "sft", "--config", str(out / "recipe.yaml")])
    assert rec.exit_code == 0, rec.output
    assert "already finished" in rec.output

    # a changed recipe (more steps) is not the finished run: it resumes and trains to the new end
    more = CliRunner().invoke(app, ["train", "sft", "--config", str(out / "recipe.yaml"), "--set", "training.max_steps=4"])
    assert more.exit_code == 0, more.output
    assert "done: 4 steps" in more.output and "resumed from" in more.output


def test_train_tiny_names_a_wrong_file(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"text": "no messages"}) + "\n")
    res = CliRunner().invoke(app, ["train", "tiny", str(bad), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "messages" in res.output


def test_train_tiny_refuses_a_multi_process_launch(tmp_path, monkeypatch, sft_rows):
    # under accelerate launch every process would build the model and write the recipe in one folder
    data = tmp_path / "sft.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in sft_rows))
    monkeypatch.setenv("WORLD_SIZE", "2")
    res = CliRunner().invoke(app, ["train", "tiny", str(data), "-o", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "builds its model and recipe in one process" in res.output
    assert not (tmp_path / "o").exists()
