"""Loading the base model and tokenizer, and the PEFT/QLoRA settings.

Options that only work on a GPU (4-bit quantization, fp16, vLLM generation,
DeepSpeed) are refused up front with a message when no CUDA device is seen,
rather than failing inside bitsandbytes or the Trainer minutes later.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from .config import ConfigError, LoraSettings, ModelSettings, QuantizationSettings, Recipe

_DTYPES = ("auto", "float32", "bfloat16", "float16")


class GpuRequiredError(RuntimeError):
    """A recipe option that needs a CUDA GPU, on a machine without one."""


class LaunchError(RuntimeError):
    """The launcher started several processes that the trainer does not join into one run."""


def check_launch(trainer) -> None:
    """Refuse a launch whose processes would each train alone, before anything is written.

    `accelerate launch --multi_gpu --num_processes N` (or a config file that means it) starts N
    processes; without CUDA they join into one run over gloo only when the recipe says
    `training.use_cpu: true`. Without it each process trains the whole recipe by itself and all of
    them write the same output_dir. (`accelerate launch --cpu --num_processes N` starts a single
    process without mpirun: nothing to catch here, see configs/accelerate_cpu2.yaml.)
    """
    from .outputs import launched_processes

    launched = launched_processes()
    joined = int(getattr(getattr(trainer, "accelerator", None), "num_processes", 1))
    if launched > 1 and joined != launched:
        raise LaunchError(
            f"the launcher started {launched} processes but the trainer runs as {joined} "
            f"(each would train alone and write the same output_dir). Without a CUDA GPU set "
            "training.use_cpu: true (accelerate then joins the processes over gloo); on GPUs check "
            "the accelerate config and the visible devices.")


def check_gpu_options(recipe: Recipe, cuda: bool | None = None) -> None:
    import torch

    cuda = torch.cuda.is_available() if cuda is None else cuda
    if cuda:
        return
    t = recipe.training
    wanted = []
    if recipe.quantization is not None:
        wanted.append("quantization (4-bit QLoRA via bitsandbytes)")
    if t.get("fp16"):
        wanted.append("training.fp16")
    if t.get("tf32"):
        wanted.append("training.tf32")
    if t.get("use_vllm"):
        wanted.append("training.use_vllm")
    if t.get("deepspeed"):
        wanted.append("training.deepspeed")
    if wanted:
        raise GpuRequiredError(
            f"{recipe.source}: {', '.join(wanted)} need(s) a CUDA GPU and none is visible. "
            "Run on a GPU machine, or drop these options (e.g. --set training.fp16=false).")


def _torch_dtype(name: str):
    import torch

    if name not in _DTYPES:
        raise ConfigError(f"model.dtype must be one of {_DTYPES}, got {name!r}")
    return "auto" if name == "auto" else getattr(torch, name)


def load_tokenizer(settings: ModelSettings, padding_side: str | None = None):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(settings.name_or_path, trust_remote_code=settings.trust_remote_code)
    if settings.chat_template:
        path = Path(settings.chat_template)
        if not path.exists():
            raise ConfigError(f"model.chat_template: file not found: {path}")
        tok.chat_template = path.read_text()
    if not getattr(tok, "chat_template", None):
        raise ConfigError(f"{settings.name_or_path}: the tokenizer has no chat template; conversational exports "
                          "need one (set model.chat_template to a .jinja file)")
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if padding_side:
        tok.padding_side = padding_side
    return tok


def quantization_config(q: QuantizationSettings):
    if importlib.util.find_spec("bitsandbytes") is None:
        raise GpuRequiredError("quantization (QLoRA) needs bitsandbytes: pip install bitsandbytes (CUDA only)")
    from transformers import BitsAndBytesConfig

    return BitsAndBytesConfig(load_in_4bit=q.load_in_4bit, bnb_4bit_quant_type=q.quant_type,
                              bnb_4bit_compute_dtype=_torch_dtype(q.compute_dtype),
                              bnb_4bit_use_double_quant=q.double_quant)


def load_model(recipe: Recipe):
    from transformers import AutoModelForCausalLM

    m = recipe.model
    kwargs: dict[str, Any] = {"dtype": _torch_dtype(m.dtype), "trust_remote_code": m.trust_remote_code}
    if m.attn_implementation:
        kwargs["attn_implementation"] = m.attn_implementation
    if recipe.quantization is not None:
        kwargs["quantization_config"] = quantization_config(recipe.quantization)
        kwargs["device_map"] = {"": 0}
    model = AutoModelForCausalLM.from_pretrained(m.name_or_path, **kwargs)
    if recipe.quantization is not None:
        from peft import prepare_model_for_kbit_training

        gc = bool(recipe.training.get("gradient_checkpointing"))
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=gc)
    return model


def peft_config(lora: LoraSettings | None):
    if lora is None:
        return None
    from peft import LoraConfig

    return LoraConfig(r=lora.r, lora_alpha=lora.alpha, lora_dropout=lora.dropout,
                      target_modules=lora.target_modules, bias=lora.bias, task_type="CAUSAL_LM")


def trl_args(recipe: Recipe, **forced: Any):
    """The TRL config from the recipe's `training` section, with our defaults."""
    from .config import trl_config_class

    cls = trl_config_class(recipe.kind)
    values = {"report_to": "none", "logging_steps": 1, "save_total_limit": 3}
    values.update(recipe.training)
    values.update(forced)
    try:
        return cls(**values)
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{recipe.source}: invalid training settings: {exc}") from exc
