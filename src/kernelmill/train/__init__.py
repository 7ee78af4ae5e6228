"""Training recipes on TRL: SFT (LoRA/QLoRA/full), KTO and multi-turn GRPO with kernel rewards.

    from kernelmill.train import load_recipe, run_sft
    run_sft(load_recipe("configs/kernelcoder_sft.yaml"))

Heavy imports (torch, transformers, TRL) happen inside the functions.
"""

from .config import (ConfigError, DataSettings, EpisodeSettings, LoraSettings, ModelSettings,
                     QuantizationSettings, Recipe, RewardSettings, load_recipe, recipe_from_dict)
from .data import DatasetFormatError, load_dataset, load_rows
from .episodes import EpisodeRunner, episode_reward, feedback_turn
from .grpo import build_grpo_trainer, run_grpo
from .kto import build_kto_trainer, class_balance, run_kto
from .masks import LabelMaskError, check_batch_mask, check_trainer_mask, ensure_generation_markers
from .models import GpuRequiredError, LaunchError, check_gpu_options, check_launch
from .outputs import is_main_process, last_checkpoint, launch_rank, plot_curves
from .rewards import HttpVerifier, KernelReward, LocalVerifier, extract_code, kernel_reward, make_verifier
from .sft import build_sft_trainer, run_sft
from .tiny import CHAT_TEMPLATE, build_tiny_model, train_tokenizer

__all__ = [
    "CHAT_TEMPLATE", "ConfigError", "DataSettings", "DatasetFormatError", "EpisodeRunner", "EpisodeSettings",
    "GpuRequiredError", "HttpVerifier", "KernelReward", "LabelMaskError", "LaunchError", "LocalVerifier",
    "LoraSettings", "ModelSettings", "QuantizationSettings", "Recipe", "RewardSettings", "build_grpo_trainer",
    "build_kto_trainer", "build_sft_trainer", "build_tiny_model", "check_batch_mask", "check_gpu_options",
    "check_launch", "check_trainer_mask", "class_balance", "ensure_generation_markers", "episode_reward",
    "extract_code", "feedback_turn", "is_main_process", "kernel_reward", "last_checkpoint", "launch_rank",
    "load_dataset", "load_recipe", "load_rows", "make_verifier", "plot_curves", "recipe_from_dict", "run_grpo",
    "run_kto", "run_sft", "train_tokenizer",
]
