"""Which GPU the policy trains on when the in-process verifier has GPUs of its own.

A GRPO recipe with `reward.verifier: local` and `reward.verify.gpus: [1]` asks for the policy on
one GPU and the verifier's run workers on another. One process that sees two GPUs cannot do
that by itself: transformers' `Trainer` then wraps the model in `nn.DataParallel`, which TRL's
GRPOTrainer refuses. So, before anything in this process touches CUDA, `pin_policy_gpu` starts
CUDA with only the policy's GPU visible and puts `CUDA_VISIBLE_DEVICES` back at once: CUDA reads
the variable once, at initialisation, so this process keeps seeing one GPU, while the verifier's
GPU probe (`verify.devices.cuda_devices`, a subprocess, asked first and cached) and every child
process it starts see and number the GPUs as the user's environment does, so `gpus: [1]` means
the GPU the user calls 1.

No library does this: accelerate and torch pick devices per process from the launcher, not
around an in-process service that starts its own GPU processes.
"""

from __future__ import annotations

import os
from typing import Any

from .config import Recipe
from .models import LaunchError


class PlacementError(LaunchError):
    """The policy cannot be kept off the verifier's GPUs (the message says why and what to do)."""


def pin_policy_gpu(avoid: list[int] | tuple[int, ...] = ()) -> dict[str, Any]:
    """Start this process's CUDA on one GPU: the first visible one not in `avoid` (indices as
    this process sees them), or the first visible one if `avoid` names them all. Returns what
    each side sees. Must run before anything in this process initialises CUDA."""
    import torch

    from ..verify import cuda_devices

    seen = [dict(d) for d in cuda_devices()]  # the verifier's view, cached before the variable changes
    old = os.environ.get("CUDA_VISIBLE_DEVICES")
    visible = [v.strip() for v in old.split(",") if v.strip()] if old is not None else []
    indices = [d["index"] for d in seen]
    free = [i for i in indices if i not in set(avoid)] or indices[:1]
    if not free:
        return {"verifier_sees": seen, "policy_gpu": None, "policy_sees": 0}
    index = free[0]
    physical = visible[index] if index < len(visible) else str(index)
    if torch.cuda.is_initialized():
        if torch.cuda.device_count() <= 1:  # already started on one GPU (by the caller): nothing to do
            return {"verifier_sees": seen, "policy_gpu": None, "policy_sees": torch.cuda.device_count()}
        raise PlacementError(
            "CUDA was initialised in this process before the policy's GPU was chosen, so the policy "
            f"would see every GPU. Start the trainer with CUDA_VISIBLE_DEVICES={physical} and the verifier as "
            "`kernelmill serve --gpus ...` (reward.verifier: http), or call pin_policy_gpu() first.")
    os.environ["CUDA_VISIBLE_DEVICES"] = physical
    try:
        torch.cuda.init()
        policy_sees = torch.cuda.device_count()
    finally:
        if old is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = old
    return {"verifier_sees": seen, "policy_gpu": physical, "policy_index": index, "policy_sees": policy_sees}


def place_policy(recipe: Recipe) -> dict[str, Any] | None:
    """For a recipe whose in-process verifier names its GPUs (`reward.verify.gpus`) and a process
    that runs alone (no distributed launcher) and sees several GPUs: the policy goes to the first
    GPU the verifier does not use (`pin_policy_gpu`). None where nothing needs placing."""
    from .outputs import launched_processes

    gpus = (recipe.reward.verify or {}).get("gpus")
    if recipe.reward.verifier != "local" or not gpus or launched_processes() > 1:
        return None
    from ..verify import cuda_devices

    if len(cuda_devices()) < 2:
        return None
    return pin_policy_gpu(gpus)
