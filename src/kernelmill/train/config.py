"""Training recipes as dataclasses, filled from YAML.

A recipe file has our own sections (`model`, `data`, `lora`, `quantization`,
`reward`, `episode`) and one `training` section whose keys are the fields of
TRL's config class for that trainer (`SFTConfig`, `KTOConfig`, `GRPOConfig`),
so the same definition serves Python, the CLI and YAML. Every key is checked:
a misspelt key is an error naming the file and line, never a silent default.
"""

from __future__ import annotations

import dataclasses
import difflib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

RECIPE_KINDS = ("sft", "kto", "grpo")


class ConfigError(ValueError):
    """A recipe file that cannot be used (names file and line)."""


@dataclass
class ModelSettings:
    name_or_path: str
    dtype: str = "auto"  # auto | float32 | bfloat16 | float16
    attn_implementation: str | None = None
    chat_template: str | None = None  # a .jinja file that replaces the tokenizer's template
    trust_remote_code: bool = False


@dataclass
class LoraSettings:
    r: int = 32
    alpha: int = 32
    dropout: float = 0.05
    target_modules: Any = "all-linear"  # "all-linear" or a list of module names
    bias: str = "none"


@dataclass
class QuantizationSettings:
    """QLoRA: the base model in 4-bit NF4, LoRA adapters trained on top."""

    load_in_4bit: bool = True
    quant_type: str = "nf4"
    compute_dtype: str = "bfloat16"
    double_quant: bool = True


@dataclass
class DataSettings:
    train: str
    eval: str | None = None
    max_samples: int | None = None  # keep the first N rows (smoke runs)


@dataclass
class RewardSettings:
    verifier: str = "local"  # local (in-process verify API) | http (a `kernelmill serve` endpoint)
    url: str | None = None
    tasks: str | None = None  # task source for rows that carry no `task_code`
    verify: dict[str, Any] = field(default_factory=dict)  # VerifyConfig fields
    store: str | None = None  # SQLite result store: identical candidates are verified once
    http_timeout: float = 900.0


@dataclass
class EpisodeSettings:
    """Multi-turn episodes (TileLang paper: up to 4 turns, feedback in the next user turn)."""

    max_turns: int = 4
    episode_reward: str = "max"  # max | last | mean over the turns' rewards
    stop_when_correct: bool = False
    turn_max_tokens: int | None = None  # new tokens per turn; None = what is left of max_completion_length
    feedback_chars: int = 2000  # compiler/checker message kept in the feedback turn (RefineConfig.max_error_chars)
    feedback_template: str = "feedback"  # template of the feedback turn (RefineConfig.feedback_template)


@dataclass
class Recipe:
    kind: str
    model: ModelSettings
    data: DataSettings
    training: dict[str, Any] = field(default_factory=dict)
    lora: LoraSettings | None = None
    quantization: QuantizationSettings | None = None
    reward: RewardSettings | None = None
    episode: EpisodeSettings | None = None
    source: str = ""  # the YAML file this came from

    @property
    def output_dir(self) -> Path:
        return Path(self.training["output_dir"])


_SECTIONS: dict[str, type] = {
    "model": ModelSettings, "data": DataSettings, "lora": LoraSettings,
    "quantization": QuantizationSettings, "reward": RewardSettings, "episode": EpisodeSettings,
}


def trl_config_class(kind: str) -> type:
    import trl

    return {"sft": trl.SFTConfig, "kto": trl.KTOConfig, "grpo": trl.GRPOConfig}[kind]


# --------------------------------------------------------------------- YAML io
def _line_map(node: yaml.Node, prefix: tuple[str, ...], out: dict[tuple[str, ...], int]) -> None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            path = prefix + (str(key.value),)
            if path in out:  # PyYAML would silently keep the last one
                raise ConfigError(f"line {key.start_mark.line + 1}: duplicate key '{'.'.join(path)}' "
                                  f"(first at line {out[path]})")
            out[path] = key.start_mark.line + 1
            _line_map(value, path, out)


def load_yaml(path: str | Path) -> tuple[dict[str, Any], dict[tuple[str, ...], int]]:
    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: recipe file not found")
    text = path.read_text()
    try:
        data = yaml.safe_load(text)
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: a recipe must be a mapping of sections")
    lines: dict[tuple[str, ...], int] = {}
    if node is not None:
        try:
            _line_map(node, (), lines)
        except ConfigError as exc:
            raise ConfigError(f"{path}:{exc}") from None
    return data, lines


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """`section.key=value` strings (values parsed as YAML) from the command line."""
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {item!r}: expected section.key=value")
        *parents, leaf = key.split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {item!r}: {part} is not a section")
        node[leaf] = yaml.safe_load(raw)
    return data


# ------------------------------------------------------------------- filling
def _where(src: str, lines: dict[tuple[str, ...], int], path: tuple[str, ...]) -> str:
    while path and path not in lines:
        path = path[:-1]
    return f"{src}:{lines[path]}" if path else src


def _unknown(src, lines, path, key, known) -> ConfigError:
    hint = difflib.get_close_matches(key, known, n=1)
    section = ".".join(path) or "top level"
    msg = f"{_where(src, lines, path + (key,))}: unknown key '{key}' in {section}"
    msg += f" (did you mean '{hint[0]}'?)" if hint else f" (known: {', '.join(sorted(known))})"
    return ConfigError(msg)


_SIMPLE = {int: (int,), float: (int, float), str: (str,), bool: (bool,)}


def _check_type(value, annotation, where: str, key: str) -> None:
    options = typing.get_args(annotation) or (annotation,)
    if value is None:
        if type(None) in options:
            return
        raise ConfigError(f"{where}: '{key}' must not be empty")
    for opt in options:
        if opt is Any or opt not in _SIMPLE and opt is not type(None):
            return  # containers and Any: left to the consumer
        if opt in _SIMPLE and isinstance(value, _SIMPLE[opt]) and not (opt is not bool and isinstance(value, bool)):
            return
    names = "/".join(getattr(o, "__name__", str(o)) for o in options)
    raise ConfigError(f"{where}: '{key}' must be {names}, got {value!r}")


def fill(cls: type, data: Any, src: str, lines: dict, path: tuple[str, ...]):
    """Build dataclass `cls` from a mapping, naming unknown and missing keys."""
    if not isinstance(data, dict):
        raise ConfigError(f"{_where(src, lines, path)}: section '{'.'.join(path)}' must be a mapping")
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for key, value in data.items():
        if key not in fields:
            raise _unknown(src, lines, path, str(key), list(fields))
        _check_type(value, hints[key], _where(src, lines, path + (key,)), f"{'.'.join(path)}.{key}")
    missing = [n for n, f in fields.items() if n not in data
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ConfigError(f"{_where(src, lines, path)}: section '{'.'.join(path)}' is missing {', '.join(missing)}")
    return cls(**data)


def _check_training(kind: str, training: Any, src: str, lines: dict) -> dict[str, Any]:
    if not isinstance(training, dict):
        raise ConfigError(f"{_where(src, lines, ('training',))}: section 'training' must be a mapping")
    known = {f.name for f in dataclasses.fields(trl_config_class(kind)) if f.init}
    for key in training:
        if key not in known:
            raise _unknown(src, lines, ("training",), str(key), known)
    if not training.get("output_dir"):
        raise ConfigError(f"{_where(src, lines, ('training',))}: training.output_dir is required")
    return dict(training)


def recipe_from_dict(data: dict[str, Any], kind: str | None = None, src: str = "<recipe>",
                     lines: dict | None = None) -> Recipe:
    lines = lines or {}
    data = dict(data)
    file_kind = data.pop("recipe", None)
    if file_kind is None:
        raise ConfigError(f"{src}:1: missing top-level 'recipe: sft|kto|grpo'")
    if file_kind not in RECIPE_KINDS:
        raise ConfigError(f"{_where(src, lines, ('recipe',))}: recipe must be one of {RECIPE_KINDS}, got {file_kind!r}")
    if kind is not None and kind != file_kind:
        raise ConfigError(f"{_where(src, lines, ('recipe',))}: this is a '{file_kind}' recipe, "
                          f"not '{kind}' (run `kernelmill train {file_kind}`)")
    known = set(_SECTIONS) | {"training"}
    for key in data:
        if key not in known:
            raise _unknown(src, lines, (), str(key), known | {"recipe"})
    for required in ("model", "data", "training"):
        if required not in data:
            raise ConfigError(f"{src}:1: missing section '{required}'")
    sections = {name: fill(cls, data[name], src, lines, (name,))
                for name, cls in _SECTIONS.items() if data.get(name) is not None}
    if file_kind == "grpo":
        sections.setdefault("reward", RewardSettings())
        sections.setdefault("episode", EpisodeSettings())
    elif "reward" in sections or "episode" in sections:
        raise ConfigError(f"{src}: 'reward' and 'episode' sections belong to grpo recipes only")
    if "quantization" in sections and "lora" not in sections:
        raise ConfigError(f"{_where(src, lines, ('quantization',))}: quantization (QLoRA) needs a 'lora' section: "
                          "a 4-bit base cannot be fully fine-tuned")
    training = _check_training(file_kind, data["training"], src, lines)
    return Recipe(kind=file_kind, training=training, source=src, **sections)


def load_recipe(path: str | Path, kind: str | None = None, overrides: list[str] | None = None) -> Recipe:
    data, lines = load_yaml(path)
    if overrides:
        data = apply_overrides(data, overrides)
    return recipe_from_dict(data, kind=kind, src=str(path), lines=lines)
