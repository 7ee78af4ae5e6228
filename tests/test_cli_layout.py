"""Item 5 of issue 17: all typer code in `kernelmill.cli`, one module per stage,
no stage module importing another's, the load-or-exit helpers written once."""

from __future__ import annotations

import ast
from pathlib import Path

import kernelmill

PKG = Path(kernelmill.__file__).parent
CLI = PKG / "cli"
SHARED = {"common", "console", "runs", "options"}  # written once, used by several stage modules


def _imports(path: Path) -> list[tuple[int, str]]:
    """(level, module) of every import in the file, nested ones included."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            out.append((node.level, node.module or ""))
        elif isinstance(node, ast.Import):
            out += [(0, a.name) for a in node.names]
    return out


def test_typer_lives_only_in_the_cli_package():
    outside = [p.relative_to(PKG) for p in PKG.rglob("*.py")
               if CLI not in p.parents and any(m == "typer" or m.startswith("typer.") for _, m in _imports(p))]
    assert outside == []
    assert not [p for p in PKG.rglob("cli.py")], "a stage still keeps its own cli.py"


def test_no_stage_module_imports_another_stage_module():
    stages = {p.stem for p in CLI.glob("*.py")} - {"__init__", "__main__"} - SHARED
    assert {"tasks", "verify", "curate", "report", "generate", "train", "ptx", "cuda", "demo"} <= stages
    for stage in stages:
        for level, module in _imports(CLI / f"{stage}.py"):
            first = module.split(".")[0]
            if level == 1:
                assert first in SHARED, f"cli/{stage}.py imports .{module}"
            if level == 0 and module.startswith("kernelmill.cli"):
                raise AssertionError(f"cli/{stage}.py imports {module}")


def test_load_or_exit_helpers_are_defined_once():
    defined = [(p.name, node.name) for p in CLI.glob("*.py") for node in ast.walk(ast.parse(p.read_text()))
               if isinstance(node, ast.FunctionDef) and node.name.endswith("_or_exit")]
    assert defined and all(f == "common.py" for f, _ in defined)


def test_help_and_version_import_nothing_heavy_and_every_command_is_listed():
    import subprocess
    import sys

    from typer import _click as click

    from kernelmill.cli import COMMANDS, load_command

    probe = ("import sys, kernelmill.cli as c\n"
             "from typer.testing import CliRunner\n"
             "r = CliRunner().invoke(c.app, ['--help'], env={'COLUMNS': '200'}); assert r.exit_code == 0, r.output\n"
             "v = CliRunner().invoke(c.app, ['--version']); assert v.exit_code == 0\n"
             "heavy = sorted(m for m in ('torch', 'numpy', 'pyarrow', 'matplotlib', 'triton') if m in sys.modules)\n"
             "print(heavy, v.output.strip()); print(r.output)\n")
    res = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    first, help_text = res.stdout.split("\n", 1)
    assert first.startswith("[] kernelmill ")
    for name in COMMANDS:
        assert f"  {name} " in help_text
    # the one-line help in COMMANDS is the command's own
    for name, (_, _, _, line) in COMMANDS.items():
        cmd = load_command(name)
        assert cmd.get_short_help_str(limit=1000) == line, name
        assert isinstance(cmd, click.Command)


def test_one_pass_at_k_default_everywhere_and_help_texts_stand_alone():
    from kernelmill.cli import COMMANDS, load_command

    defaults = {}
    for name in ("verify", "metrics", "report", "demo"):
        for p in load_command(name).params:
            if p.name == "k":
                defaults[name] = p.default
    assert len(set(defaults.values())) == 1 and len(defaults) >= 3, defaults
    words = []
    for name in COMMANDS:
        cmd = load_command(name)
        cmds = [cmd] + list(getattr(cmd, "commands", {}).values())
        for c in cmds:
            for p in c.params:
                text = getattr(p, "help", "") or ""
                if "SPEC" in text.replace("SPECS", "") or "paper 0" in text:
                    words.append((name, p.name, text))
    assert words == []  # users have neither SPEC.md nor the papers' numbers


def test_verification_options_are_derived_from_the_config():
    """Issue 41: the options of verify, serve, refine, bootstrap and align are VerifyConfig's
    settings (cli/options.py), with its defaults and its help (`FIELD_HELP`): one list, so
    none goes missing from a command or from the config."""
    import inspect

    from kernelmill.cli import options
    from kernelmill.cli.bootstrap import align_command, bootstrap_command
    from kernelmill.cli.generate import refine_command
    from kernelmill.cli.verify import serve_command, verify_command
    from kernelmill.verify import VerifyConfig
    from kernelmill.verify.config import FIELD_HELP

    assert set(options.ALL) == set(FIELD_HELP)
    config = VerifyConfig()
    for command in (verify_command, serve_command, refine_command, bootstrap_command, align_command):
        params = inspect.signature(command).parameters
        assert "verify_config" not in params
        for setting in options.ALL:
            name = setting.split(".")[-1]
            info = params[name].default
            assert info.help == FIELD_HELP[setting], (command.__name__, setting)
            want = getattr(config.timing if setting.startswith("timing.") else config, name)
            if setting not in ("gpus", "run_timeout"):  # written differently on the command line
                assert info.default == want, (command.__name__, setting, info.default, want)
