"""The policy's GPU when the in-process verifier has GPUs of its own (train/placement.py).

No GPU here: the device probe and torch.cuda's start are stand-ins, and the tests check what
CUDA_VISIBLE_DEVICES says at the moment CUDA starts and after it."""

from __future__ import annotations

import os

import pytest

import kernelmill.verify.devices as devices
from kernelmill.train import placement
from kernelmill.train.config import recipe_from_dict
from kernelmill.train.models import LaunchError

TWO = ({"index": 0, "name": "H100", "capability": "9.0", "memory_gb": 79.1},
       {"index": 1, "name": "H100", "capability": "9.0", "memory_gb": 79.1})


@pytest.fixture
def cuda_start(monkeypatch):
    """torch.cuda.init records the variable it would read; the process then sees one GPU."""
    import torch

    at_init: list = []
    monkeypatch.setattr(devices, "cuda_devices", lambda: TWO)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "init", lambda: at_init.append(os.environ.get("CUDA_VISIBLE_DEVICES")))
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    for var in ("WORLD_SIZE", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MV2_COMM_WORLD_SIZE"):
        monkeypatch.delenv(var, raising=False)
    return at_init


def grpo_recipe(tmp_path, verifier="local", gpus=(1,)):
    reward = {"verifier": verifier, "tasks": "builtin"}
    if verifier == "http":
        reward["url"] = "http://127.0.0.1:8765"
    if gpus is not None:
        reward["verify"] = {"gpus": list(gpus)}
    return recipe_from_dict({"recipe": "grpo", "model": {"name_or_path": "m"}, "data": {"train": "d.jsonl"},
                             "reward": reward, "training": {"output_dir": str(tmp_path / "out")}},
                            src=str(tmp_path / "r.yaml"))


def test_policy_starts_on_the_gpu_the_verifier_leaves_and_children_see_all(cuda_start, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")
    out = placement.pin_policy_gpu([0])
    # CUDA started with physical GPU 5 alone (index 1 of "3,5"); the variable is given back at once
    assert cuda_start == ["5"] and os.environ["CUDA_VISIBLE_DEVICES"] == "3,5"
    assert out["policy_gpu"] == "5" and out["policy_index"] == 1 and out["policy_sees"] == 1
    assert out["verifier_sees"] == [dict(g) for g in TWO]


def test_without_a_variable_the_first_free_gpu_and_none_left_behind(cuda_start, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert placement.pin_policy_gpu([1])["policy_gpu"] == "0"
    assert cuda_start == ["0"] and "CUDA_VISIBLE_DEVICES" not in os.environ
    # the verifier on every GPU: the policy shares the first
    assert placement.pin_policy_gpu([0, 1])["policy_gpu"] == "0"


def test_recipe_with_verify_gpus_places_the_policy(cuda_start, tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    assert placement.place_policy(grpo_recipe(tmp_path, gpus=(1,)))["policy_gpu"] == "0"
    assert placement.place_policy(grpo_recipe(tmp_path, gpus=(0,)))["policy_gpu"] == "1"
    assert cuda_start == ["0", "1"]


@pytest.mark.parametrize("case", ["http", "no_gpus", "launched", "one_gpu"])
def test_nothing_is_placed_where_nothing_asks_for_it(cuda_start, tmp_path, monkeypatch, case):
    recipe = grpo_recipe(tmp_path, verifier="http" if case == "http" else "local",
                         gpus=None if case == "no_gpus" else (1,))
    if case == "launched":  # accelerate/torchrun give each process its GPU
        monkeypatch.setenv("WORLD_SIZE", "2")
    if case == "one_gpu":
        monkeypatch.setattr(devices, "cuda_devices", lambda: TWO[:1])
    assert placement.place_policy(recipe) is None
    assert cuda_start == []


def test_cuda_started_on_several_gpus_is_an_error_that_says_what_to_do(cuda_start, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    with pytest.raises(LaunchError, match=r"CUDA_VISIBLE_DEVICES=0 .*kernelmill serve --gpus"):
        placement.pin_policy_gpu([1])
    # started on one GPU already (a caller placed it): nothing to do, no error
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    assert placement.pin_policy_gpu([1])["policy_sees"] == 1 and cuda_start == []
