"""GRPO with verified kernel rewards, single- or multi-turn.

`episode.max_turns: 1` uses TRL's own generation and `KernelReward` as the
reward function; more turns hand generation to `EpisodeRunner` through TRL's
`rollout_func`, and the reward is the episode's. Per-turn verdicts go to
`output_dir/episodes.jsonl`.
"""

from __future__ import annotations

from typing import Any

from .config import Recipe
from .data import load_dataset, load_rows
from .episodes import EpisodeRunner, episode_reward
from .models import check_gpu_options, check_launch, load_model, load_tokenizer, peft_config, trl_args
from .outputs import finish_run, last_checkpoint
from .placement import place_policy
from .rewards import KernelReward, Verifier, make_verifier


def _task_map(source: str | None) -> dict:
    if not source:
        return {}
    from ..tasks import load_tasks

    return load_tasks(source).by_id()


def build_grpo_trainer(recipe: Recipe, verifier: Verifier | None = None):
    import os

    from trl import GRPOTrainer

    place_policy(recipe)  # before anything here touches CUDA: the policy off the verifier's GPUs
    check_gpu_options(recipe)
    reward_settings, ep = recipe.reward, recipe.episode
    need_code = not reward_settings.tasks
    rows = load_rows("grpo", recipe.data.train, recipe.data.max_samples, need_task_code=need_code)
    train = load_dataset("grpo", recipe.data.train, recipe.data.max_samples, need_task_code=need_code)
    tok = load_tokenizer(recipe.model, padding_side="left")
    reward = KernelReward(verifier or make_verifier(reward_settings), tasks=_task_map(reward_settings.tasks))
    recipe.output_dir.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {}
    if ep.max_turns > 1:
        os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is marked experimental
        kwargs["rollout_func"] = EpisodeRunner(reward, ep, rows, log_path=recipe.output_dir / "episodes.jsonl")
        reward_funcs = [episode_reward]
    else:
        reward_funcs = [reward]
    trainer = GRPOTrainer(model=load_model(recipe), reward_funcs=reward_funcs, args=trl_args(recipe),
                          train_dataset=train, processing_class=tok, peft_config=peft_config(recipe.lora), **kwargs)
    check_launch(trainer)
    return trainer, tok


def run_grpo(recipe: Recipe, resume: bool = True, verifier: Verifier | None = None) -> dict[str, Any]:
    trainer, tok = build_grpo_trainer(recipe, verifier)
    ckpt = last_checkpoint(recipe.output_dir) if resume else None
    trainer.train(resume_from_checkpoint=ckpt)
    result = finish_run(trainer, tok, "grpo", recipe.output_dir, title=f"GRPO: {recipe.source}")
    rewards = [h["reward"] for h in trainer.state.log_history if "reward" in h]
    result.update(resumed_from=ckpt, first_reward=rewards[0] if rewards else None,
                  last_reward=rewards[-1] if rewards else None)
    return result
