"""Prompt templates: files with a YAML header and `<|system|>` / `<|user|>`
sections, filled with `$name` placeholders (`$$` for a literal dollar).

A template is chosen by name (a file in `templates/` shipped with kernelmill)
or by path (a user's own file in the same format). The header says what the
template produces (`language`), what it reads (`input`: task, ptx or
feedback), how to find the code in the reply (`code_tags`, `require`) and
which few-shot example it wants (`examples`). Few-shot examples come from the
builtin suite's verified candidates, else from `templates/examples/`.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..records import Pair, Task

TEMPLATES_DIR = Path(__file__).parent / "templates"
_SECTION = re.compile(r"^<\|(system|user|assistant)\|>[ \t]*$", re.M)
_PLACEHOLDER = re.compile(r"\$(?:(\$)|([_a-z][_a-z0-9]*)|\{([_a-z][_a-z0-9]*)\})", re.I)
INPUTS = ("task", "ptx", "feedback")


class TemplateError(ValueError):
    """A template file that cannot be used (names the file and line)."""


@dataclass
class PromptTemplate:
    name: str
    path: Path
    sections: list[tuple[str, str, int]]  # (role, text, first line in the file)
    language: str | None = None
    input: str = "task"
    code_tags: set[str] = field(default_factory=set)
    require: str | None = None
    examples: str | None = None
    description: str = ""

    def placeholders(self) -> set[str]:
        names = set()
        for _, text, _ in self.sections:
            names |= {m.group(2) or m.group(3) for m in _PLACEHOLDER.finditer(text) if not m.group(1)}
        return names

    def render(self, variables: dict[str, Any]) -> list[dict[str, str]]:
        """Fill every section; a placeholder without a value is an error naming
        the template file and line."""
        messages = []
        for role, text, line in self.sections:
            try:
                content = string.Template(text).substitute(variables)
            except KeyError as exc:
                key = exc.args[0]
                where = line + text[: text.find("$" + key)].count("\n") if ("$" + key) in text else line
                raise TemplateError(f"{self.path}:{where}: no value for ${key} (have: {', '.join(sorted(variables))})") from None
            except ValueError as exc:  # a lone '$' not followed by a name
                raise TemplateError(f"{self.path}:{line}: {exc} (write $$ for a literal dollar)") from None
            messages.append({"role": role, "content": content.strip("\n")})
        return messages


def list_templates() -> list[str]:
    return sorted(p.stem for p in TEMPLATES_DIR.glob("*.md"))


def load_template(name_or_path: str | Path) -> PromptTemplate:
    """A shipped template by name (`cuda`, `triton`, ...) or a file by path."""
    path = Path(name_or_path)
    if not path.suffix and not path.exists():
        path = TEMPLATES_DIR / f"{name_or_path}.md"
        if not path.exists():
            raise TemplateError(f"no template named {name_or_path!r}; shipped: {', '.join(list_templates())} "
                                "(or give the path of your own template file)")
    if not path.exists():
        raise TemplateError(f"template file not found: {path}")
    return parse_template(path.read_text(encoding="utf-8"), path)


def parse_template(text: str, path: Path) -> PromptTemplate:
    header: dict[str, Any] = {}
    body_start = 0
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end < 0:
            raise TemplateError(f"{path}:1: the YAML header opened with --- is never closed")
        try:
            header = yaml.safe_load(text[4:end]) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            raise TemplateError(f"{path}:{(mark.line + 2) if mark else 1}: bad YAML header: {exc}") from None
        if not isinstance(header, dict):
            raise TemplateError(f"{path}:2: the header must be a YAML mapping")
        body_start = end + 5
    body = text[body_start:]
    first_line = text[:body_start].count("\n") + 1
    marks = list(_SECTION.finditer(body))
    if not marks:
        raise TemplateError(f"{path}:{first_line}: no <|system|> or <|user|> section")
    if body[: marks[0].start()].strip():
        line = first_line + body[: marks[0].start()].count("\n")
        raise TemplateError(f"{path}:{line}: text before the first <|system|>/<|user|> marker")
    sections = []
    for i, m in enumerate(marks):
        stop = marks[i + 1].start() if i + 1 < len(marks) else len(body)
        line = first_line + body[: m.end()].count("\n") + 1
        sections.append((m.group(1), body[m.end() + 1: stop], line))
    inp = header.get("input", "task")
    if inp not in INPUTS:
        raise TemplateError(f"{path}: input must be one of {', '.join(INPUTS)}, not {inp!r}")
    tags = header.get("code_tags") or []
    if isinstance(tags, str):
        tags = [tags]
    return PromptTemplate(name=path.stem, path=path, sections=sections, language=header.get("language"),
                          input=inp, code_tags={str(t).lower() for t in tags}, require=header.get("require"),
                          examples=header.get("examples"), description=str(header.get("description", "")))


# -- few-shot examples --------------------------------------------------------------------------

@dataclass(frozen=True)
class FewShotExample:
    ref: str
    new: str
    origin: str  # builtin task id, or "fallback"


@functools.lru_cache(maxsize=None)
def _suite_examples(language: str, suite_dir: str) -> tuple[tuple[str, FewShotExample], ...]:
    """Verified candidates of a task suite (`tasks/` + `candidates/<task_id>/
    <language>__ok*.py`) for a language, shortest first: a short example
    costs fewer prompt tokens and shows the format just as well."""
    from ..tasks import BUILTIN_DIR, load_tasks

    root = Path(suite_dir)
    cand_dir = root / "candidates"
    if not cand_dir.is_dir():
        return ()
    try:
        ts = load_tasks("builtin" if root == BUILTIN_DIR else root / "tasks")
    except Exception:  # the suite only improves prompts; without it we fall back
        return ()
    found = []
    for task_id, task in ts.by_id().items():
        for f in sorted((cand_dir / task_id).glob(f"{language}__ok*.py")):
            new = f.read_text(encoding="utf-8")
            found.append((task_id, FewShotExample(task.code.strip(), new.strip(), f"builtin:{task_id}")))
    found.sort(key=lambda kv: len(kv[1].ref) + len(kv[1].new))
    return tuple(found)


def fewshot_example(language: str, exclude_task_id: str | None = None, prefer: str = "builtin",
                    suite_dir: str | Path | None = None, exclude_code: str | None = None) -> FewShotExample:
    """The example for a prompt: the builtin suite's shortest verified
    candidate in the language, never the task being prompted (that would
    hand the model a verified answer); else the shipped fallback."""
    if prefer == "builtin":
        from ..tasks import BUILTIN_DIR

        for task_id, ex in _suite_examples(language, str(suite_dir or BUILTIN_DIR)):
            if task_id != exclude_task_id and (exclude_code is None or ex.ref != exclude_code.strip()):
                return ex
    elif prefer != "fallback":
        raise TemplateError(f"examples must be 'builtin' or 'fallback', not {prefer!r}")
    ref = TEMPLATES_DIR / "examples" / "add_ref.py"
    new = TEMPLATES_DIR / "examples" / f"add_{language}.py"
    if not new.exists():
        raise TemplateError(f"no few-shot example for language {language!r} (looked in the builtin suite and {new})")
    return FewShotExample(ref.read_text().strip(), new.read_text().strip(), "fallback")


def task_variables(template: PromptTemplate, task: Task, examples: str = "builtin") -> dict[str, str]:
    vars_ = {"code": task.code.strip(), "task_id": task.task_id, "name": task.name or task.task_id}
    needs = template.placeholders()
    if {"example_ref", "example_new"} & needs:
        lang = template.examples or template.language or "cuda"
        ex = fewshot_example(lang, exclude_task_id=task.task_id, prefer=examples, exclude_code=task.code)
        vars_.update(example_ref=ex.ref, example_new=ex.new, example_origin=ex.origin)
    return vars_


_ENTRY = re.compile(r"\.entry\s+([A-Za-z_$][\w$]*)")


def kernel_linkage(ptx: str) -> str:
    """What the decompiled kernel must be declared as, read from the PTX's entry name: nvcc
    mangles a C++ `__global__` function's name (`_Z...`), an `extern "C"` one keeps it. The
    prompt asks for what the pair's own CUDA source is (issue 44: the template asked every
    pair for `extern "C"`, while most external sources' kernels have C++ linkage)."""
    m = _ENTRY.search(ptx or "")
    if m and m.group(1).startswith("_Z"):
        return ("a `__global__` function with C++ linkage, not `extern \"C\"`: the entry's mangled name "
                "gives its name and parameter types")
    return "an `extern \"C\" __global__` function"


def ptx_variables(pair: Pair, field_name: str = "ptx") -> dict[str, str]:
    ptx = getattr(pair, field_name, None) or pair.ptx
    return {"ptx": ptx.strip(), "task_id": pair.pair_id, "name": pair.kernel_name, "kernel_name": pair.kernel_name,
            "linkage": kernel_linkage(pair.ptx or ptx)}


def template_for(language: str | None, recorded: str | None = None) -> PromptTemplate:
    """The template a task prompt in `language` is rendered with: the shipped
    template a sample recorded (`meta["template"]`) when it is a task template
    for that language, else the shipped template named after the language."""
    if recorded and recorded in list_templates():
        tpl = load_template(recorded)
        if tpl.input == "task" and (language is None or tpl.language in (None, language)):
            return tpl
    tpl = load_template(language or "cuda")
    if tpl.input != "task":
        raise TemplateError(f"{tpl.path} takes {tpl.input!r} input, not a task")
    return tpl


def task_prompt(task: Task, template: PromptTemplate | str | Path | None = None,
                examples: str = "builtin") -> list[dict[str, str]]:
    """The chat messages (system and user turns) for a task: what `generate`
    sends at inference and what every export (SFT, KTO, GRPO) trains on.
    `template` is a template, a shipped name or a path (default: the cuda one)."""
    tpl = template if isinstance(template, PromptTemplate) else load_template(template or "cuda")
    if tpl.input != "task":
        raise TemplateError(f"{tpl.path} takes {tpl.input!r} input, not a task")
    return tpl.render(task_variables(tpl, task, examples))


def render_prompt(task_code: str, language: str, examples: str = "builtin",
                  task_id: str = "") -> list[dict[str, str]]:
    """`task_prompt` from a task's code and the target language (the template of
    that name): the `(task_code, language)` signature of `--prompt-fn` renderers."""
    return task_prompt(Task(task_id, task_code), template_for(language), examples)
