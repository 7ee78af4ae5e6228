"""The verification options of `verify`, `serve`, `refine` and `bootstrap`, derived from
`VerifyConfig`: each option's type and default are its field's, its help is the config's
`FIELD_HELP`. A command takes a `verify_config: VerifyConfig` parameter and names the
settings it offers; `with_verify_options` adds those options to its signature (typer reads
`__signature__`) and builds the config from them, validated by the config itself.

Written here rather than with a library: typer has no way to expand a dataclass into
options, and a hand-written list per command is what this replaces (the same options were
restated in three places and had drifted: `--check` was documented and missing)."""

from __future__ import annotations

import functools
import inspect
import typing
from dataclasses import MISSING, dataclass, fields
from typing import Any, Callable, Optional, Sequence

import typer

# every setting a command line may set, in the order --help lists them
ALL = ("device", "trials", "build_timeout", "run_timeout", "sanitize_timeout", "workers", "build_nice", "profile", "check", "norm_tol",
       "executor", "address", "fast_build", "standby_on_demand", "spare_lead_s", "fork_workers", "merge_units",
       "slim_units", "gpu_lend", "early_check", "fp64_k", "input_seed", "guards", "fallback", "policy", "build_standby", "standby", "cpu_runners", "runs_per_gpu",
       "timing.cpu_threads", "timing.numerics", "timing.kernel_time", "timing.round_ms", "timing.deferred_records",
       "timing.kb_budget_ms", "compile_baseline", "compile_mode",
       "compile_backend", "exchange", "resident", "gpus")
# option names that are not the field's (kept from before the options were derived)
FLAG = {"spare_lead_s": "--spare-lead"}


@dataclass(frozen=True)
class _Spec:
    setting: str  # "field" or "timing.field"
    param: str  # the Python parameter (and, dashed, the option) name
    type: Any
    default: Any
    help: str

    def parameter(self) -> inspect.Parameter:
        flag = FLAG.get(self.setting, "--" + self.param.replace("_", "-"))
        if self.type is bool:  # an on/off pair, as typer makes for a bool without a name of its own
            flag = f"{flag}/--no-{flag[2:]}"
        info = typer.Option(self.default, flag, help=self.help)
        return inspect.Parameter(self.param, inspect.Parameter.KEYWORD_ONLY, default=info, annotation=self.type)


def _specs() -> dict[str, _Spec]:
    from ..verify import FIELD_HELP, TimingConfig, VerifyConfig

    out = {}
    for cls, prefix in ((VerifyConfig, ""), (TimingConfig, "timing.")):
        hints = typing.get_type_hints(cls)
        for f in fields(cls):
            setting = prefix + f.name
            if setting not in ALL:
                continue
            default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
            kind = hints[f.name]
            if setting == "gpus":  # the command line writes the list as "0,1"
                kind, default = Optional[str], None
            elif setting == "run_timeout":  # none given: the device's default (DEFAULT_RUN_TIMEOUT)
                kind, default = Optional[float], None
            elif setting == "address":
                kind = Optional[str]
            out[setting] = _Spec(setting, f.name, kind, default, FIELD_HELP[setting])
    return out


def with_verify_options(settings: Sequence[str] = ALL) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A typer command with the options of `settings` (`ALL` by default) after its own
    parameters; it receives them as one validated `verify_config`."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        specs = [_specs()[s] for s in settings]
        own_hints = typing.get_type_hints(fn)
        own = [p.replace(annotation=own_hints.get(p.name, p.annotation))
               for p in inspect.signature(fn).parameters.values() if p.name != "verify_config"]

        @functools.wraps(fn)
        def command(**kwargs: Any) -> Any:
            values = {s.setting: kwargs.pop(s.param) for s in specs}
            return fn(**kwargs, verify_config=config_from_settings(values))

        params = own + [s.parameter() for s in specs]
        command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        command.__annotations__ = {p.name: p.annotation for p in params}
        del command.__wrapped__  # typer reads the signature above, not fn's
        return command

    return decorate


def config_from_settings(values: dict[str, Any]):
    """The settings as a `VerifyConfig` (timing ones nested), validated by the config."""
    from .runs import config_from_values

    return config_from_values(values)
