"""Export curated rows to the shapes trainers take (docs/FORMATS.md).

Input rows are curated rows (`kernelmill curate` output: Sample fields plus
`correct`, `speedup`, `source_part`, `task_code`) or plain Samples joined with
verdicts. Each format is written as JSONL (CSV for the two CSV splits) and
Parquet, plus `README.md` (the dataset card) and `excluded.jsonl` (every row
not exported, with the reason).

Formats:
  sft-messages           {"messages": [system, user, assistant], task_id, sample_id, source_part}
  sft-prompt-completion  {"prompt": [system, user], "completion": [assistant], ...}
  kto                    {"prompt": [system, user], "completion": [assistant], "label": bool, ...}
  grpo                   {"prompt": [system, user], task_id, language, task_code}: one row per task
  fim-csv                prompt,completion: Triton signature + context -> body
  translate-csv          prompt,completion: CUDA program -> Triton program, one per task

The prompt is `kernelmill.chat.export_prompt(row)`: the system and user turns
`generate` sends for the row's task (same template, same few-shot example),
so a model is trained on the text it is prompted with at inference. The
assistant turn is `kernelmill.chat.assistant_turn`: `<think>\\nREASONING\\n</think>\\n\\n`
+ the code in a ```python block (no think block when a row has no reasoning). The KTO label
is `correct and speedup >= min_speedup` (min_speedup 1.0 by default; 0 makes
it plain correctness).
"""

from __future__ import annotations

import csv
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from .card import dataset_card, read_meta
from .fim import fim_pairs, translation_pairs
from ..chat import TemplateError, assistant_turn, export_prompt

FORMATS = ("sft-messages", "sft-prompt-completion", "kto", "grpo", "fim-csv", "translate-csv")
_CSV = ("fim-csv", "translate-csv")


@dataclass
class ExportConfig:
    format: str
    min_speedup: float = 1.0      # KTO: desirable = correct and speedup >= this
    only_correct: bool = True     # SFT formats: skip rows known to be incorrect
    name: str = "train"


@dataclass
class ExportResult:
    rows: list[dict[str, Any]] = field(default_factory=list)
    excluded: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)


def assistant_text(row: dict[str, Any]) -> str:
    return assistant_turn(row["code"], row.get("reasoning"))


def _rid(row: dict[str, Any]) -> str:
    return str(row.get("sample_id") or row.get("id") or "")


def build_rows(rows: list[dict[str, Any]], cfg: ExportConfig,
               render_prompt: Callable[[dict[str, Any]], list[dict[str, str]]] = export_prompt) -> ExportResult:
    """`render_prompt(row) -> messages` (default: the prompt `generate` sends)."""
    if cfg.format not in FORMATS:
        raise ValueError(f"unknown format {cfg.format!r}; choose one of {', '.join(FORMATS)}")
    res = ExportResult()

    def skip(row, reason):
        res.excluded.append({"id": _rid(row), "task_id": row.get("task_id"), "reason": reason})

    if cfg.format == "translate-csv":
        res.rows = translation_pairs(rows)
        res.counts = {"input": len(rows), "pairs": len(res.rows)}
        paired = {r["cuda_sample_id"] for r in res.rows} | {r["triton_sample_id"] for r in res.rows}
        for r in rows:
            if _rid(r) not in paired:
                skip(r, "not the chosen CUDA/Triton sample of a task with both")
        return res
    if cfg.format == "fim-csv":
        for r in rows:
            if r.get("language") != "triton":
                skip(r, f"language {r.get('language')!r} is not triton")
                continue
            try:
                pairs = fim_pairs(r["code"])
            except SyntaxError as exc:
                skip(r, f"code does not parse: line {exc.lineno}: {exc.msg}")
                continue
            if not pairs:
                skip(r, "no @triton.jit function")
            for fn, prompt, completion in pairs:
                res.rows.append({"prompt": prompt, "completion": completion, "task_id": r.get("task_id"),
                                 "sample_id": _rid(r), "function": fn})
        res.counts = {"input": len(rows), "pairs": len(res.rows)}
        return res

    seen_tasks: set[tuple] = set()
    labels = {True: 0, False: 0}
    no_reasoning = 0
    for r in rows:
        task_code = r.get("task_code")
        if not task_code:
            skip(r, "no task code (pass --tasks SOURCE)")
            continue
        if not isinstance(r.get("code"), str) and cfg.format != "grpo":
            skip(r, "no code")
            continue
        try:
            prompt = render_prompt({**r, "task_code": task_code})
        except TemplateError as exc:
            skip(r, f"no prompt: {exc}")
            continue
        if cfg.format == "grpo":
            key = (r.get("task_id"), r.get("language"))
            if key in seen_tasks:
                continue  # prompt-only: one row per task, not per sample
            seen_tasks.add(key)
            res.rows.append({"prompt": prompt, "task_id": r.get("task_id"), "language": r.get("language"),
                             "task_code": task_code})
            continue
        if cfg.format != "kto" and cfg.only_correct and r.get("correct") is False:
            skip(r, "incorrect (SFT keeps correct kernels)")
            continue
        if not r.get("reasoning"):
            no_reasoning += 1
        assistant = {"role": "assistant", "content": assistant_text(r)}
        # which harness judged the row (`kernelmill regrade` lists those a later one judges otherwise)
        common = {"task_id": r.get("task_id"), "sample_id": _rid(r), "harness_version": r.get("harness_version")}
        if cfg.format == "sft-messages":
            res.rows.append({"messages": prompt + [assistant], **common, "source_part": r.get("source_part")})
        elif cfg.format == "sft-prompt-completion":
            res.rows.append({"prompt": prompt, "completion": [assistant], **common,
                             "source_part": r.get("source_part")})
        else:  # kto
            if "correct" not in r:
                skip(r, "no verdict (correct is unknown; pass --verdicts)")
                continue
            sp = r.get("speedup")
            label = bool(r["correct"]) and (cfg.min_speedup <= 0 or (sp is not None and sp >= cfg.min_speedup))
            labels[label] += 1
            res.rows.append({"prompt": prompt, "completion": [assistant], "label": label, **common})
    res.counts = {"input": len(rows), "rows": len(res.rows), "excluded": len(res.excluded)}
    if cfg.format == "grpo":
        res.counts["tasks"] = len(seen_tasks)
    if cfg.format == "kto":
        res.counts.update({"desirable": labels[True], "undesirable": labels[False]})
    if cfg.format.startswith("sft") or cfg.format == "kto":
        res.counts["without_reasoning"] = no_reasoning
    return res


_DESCRIPTIONS = {
    "sft-messages": "Conversational SFT rows for TRL's SFTTrainer: system and user turns, then the "
                    "assistant turn with the reasoning in a <think> block and the kernel in a code block.",
    "sft-prompt-completion": "Conversational prompt/completion rows for TRL's SFTTrainer (loss on the completion).",
    "kto": "Unpaired preference rows for TRL's KTOTrainer: prompt, completion, label.",
    "grpo": "Prompt-only rows for TRL's GRPOTrainer, one per task; task_id and task_code reach the reward.",
    "fim-csv": "Fill-in-the-middle pairs for Triton kernels: prompt = context + signature, completion = body.",
    "translate-csv": "CUDA -> Triton translation pairs, one per task.",
}


def write_export(res: ExportResult, cfg: ExportConfig, out_dir: str | os.PathLike, source: str) -> list[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = []
    if cfg.format in _CSV:
        path = out / f"{cfg.name}.csv"
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=["prompt", "completion"], extrasaction="ignore",
                               quoting=csv.QUOTE_ALL)
            w.writeheader()
            w.writerows(res.rows)
        os.replace(tmp, path)
    else:
        path = out / f"{cfg.name}.jsonl"
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for r in res.rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
    files.append(path.name)
    pq_path = out / f"{cfg.name}.parquet"
    tmp = pq_path.with_name(f".{pq_path.name}.tmp")
    pq.write_table(pa.Table.from_pylist(res.rows) if res.rows else pa.table({}), tmp)
    os.replace(tmp, pq_path)
    files.append(pq_path.name)
    with open(out / "excluded.jsonl", "w", encoding="utf-8") as fh:
        for e in res.excluded:
            fh.write(json.dumps(e, ensure_ascii=False) + "\n")
    columns = list(res.rows[0]) if res.rows else []
    card = dataset_card(cfg.format, files, res.counts, columns, _DESCRIPTIONS[cfg.format],
                        {k: v for k, v in asdict(cfg).items() if k != "name"}, read_meta(source), source)
    (out / "README.md").write_text(card, encoding="utf-8")
    res.files = files + ["README.md", "excluded.jsonl"]
    return res.files
