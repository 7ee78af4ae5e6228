"""Curation commands: curate, subset, dedup, decontaminate, difficulty, analyze,
export, task-types; thin layers over `kernelmill.curate`. Registered as
top-level `kernelmill` commands by `register`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from ..curate.card import write_meta
from ..curate.dataset import curated_rows, excluded_path, read_rows
from ..curate.inputs import CurateInputError, load_generations
from ..curate.recipes import PAPER_SINGLE_SHARE, PAPER_SIZE, PAPER_SPEEDUP_THRESHOLD, PAPER_SUBSET_SIZES, RECIPES
from ..records import ReadProblem, write_jsonl
from .common import maybe_tasks_or_exit, report_problems
from .console import console, err, fail, warn

def _problems(problems: list[ReadProblem]) -> None:
    report_problems(problems, label="warning:")


def _generations(samples: Path, verdicts: Path):
    try:
        gens, report = load_generations(samples, verdicts)
    except CurateInputError as exc:
        fail(str(exc))
    for line in report.lines():
        warn(line)
    return gens, report


def _table(title: str, counts: dict) -> None:
    t = Table(title=title)
    t.add_column("count")
    t.add_column("value", justify="right")
    for k, v in counts.items():
        t.add_row(str(k), str(v))
    console.print(t)


def curate(
    samples: Path = typer.Argument(..., help="Samples JSONL (from `kernelmill generate`)."),
    verdicts: Path = typer.Argument(..., help="Verdicts JSONL (from `kernelmill verify`), joined on sample_id."),
    recipe: str = typer.Option("concur", "--recipe", help=f"One of: {', '.join(RECIPES)}."),
    out: Path = typer.Option(..., "-o", "--out", help="Curated rows JSONL to write."),
    tasks: Optional[str] = typer.Option(None, "--tasks", help="Task source (folder, .jsonl/.parquet, 'builtin'): "
                                        "task types for concur part (c) and task_code for export."),
    size: int = typer.Option(PAPER_SIZE, "--size", help="concur: target size; ablations: how many to keep."),
    seed: int = typer.Option(0, "--seed", help="Seed for every random choice."),
    speedup_threshold: float = typer.Option(PAPER_SPEEDUP_THRESHOLD, help="concur part (b): speedup strictly above this."),
    single_share: float = typer.Option(PAPER_SINGLE_SHARE, help="concur part (c): share of the target size given to "
                                       "single-operator samples (paper: 544/4892)."),
    drop_changed: Optional[Path] = typer.Option(None, "--drop-changed", help="A regrade.json from `kernelmill regrade`: "
                                                "leave out the samples whose verdict changed under the newer harness."),
) -> None:
    """Select a training set from verified generations.

    concur (ConCuR, three disjoint parts): (a) per task, the generation with the
    shortest reasoning if it is also the task's fastest correct one; (b) every
    correct kernel with speedup > 5; (c) correct single-operator kernels to
    balance task types, round(single_share * size) of them within the room
    (a)+(b) leave under --size.

    Ablations (one pick per task among correct generations, then --size of the
    picks): random (random pick, random tasks), max-len (longest reasoning, then
    longest overall), min-len (shortest, then shortest overall), speedup
    (fastest, then fastest overall). Ties: the better secondary key (faster /
    shorter), then the smaller sample_id; unknown token counts never win a
    length rule.
    """
    from ..curate.optype import TaskType, task_types
    from ..curate.recipes import select

    if recipe not in RECIPES:
        fail(f"unknown recipe {recipe!r}; choose one of {', '.join(RECIPES)}")
    if recipe == "concur" and not tasks:
        fail("the concur recipe needs --tasks (a task source: folder, .jsonl/.parquet or 'builtin'): its part (c) "
              "picks single-operator kernels by their task types, which come from the task programs")
    gens, report = _generations(samples, verdicts)
    if drop_changed is not None:
        gens = _without_changed(gens, drop_changed)
    ts = maybe_tasks_or_exit(tasks)
    task_map = ts.by_id() if ts else {}
    needed = {g.task_id for g in gens}
    missing_tasks = sorted(needed - set(task_map)) if ts else []
    if missing_tasks:
        err.print(f"[yellow]warning:[/yellow] {len(missing_tasks)} task ids of the samples are not in {tasks} "
                  f"(e.g. {missing_tasks[0]}): their type is unknown")
    types = task_types([t for tid, t in task_map.items() if tid in needed]) if recipe == "concur" and ts else {}
    for tid in needed - set(types):
        types[tid] = TaskType(tid, None, "unknown")
    try:
        sel = select(recipe, gens, {t: tt.op_type for t, tt in types.items()}, size=size, seed=seed,
                     speedup_threshold=speedup_threshold, single_share=single_share)
    except ValueError as exc:
        fail(str(exc))
    rows = curated_rows(sel, task_map, types)
    write_jsonl(out, rows)
    excl = excluded_path(out)
    write_jsonl(excl, report.excluded_rows())
    counts = {**sel.counts, "join": report.summary()}
    write_meta(out, "curate", [str(samples), str(verdicts)] + ([tasks] if tasks else []),
               {"recipe": recipe, **sel.params}, counts, sel.notes)
    for note in sel.notes:
        err.print(f"[yellow]note:[/yellow] {note}")
    _table(f"{recipe}: {len(rows)} samples -> {out}", sel.counts)


def _without_changed(gens: list, regrade_path: Path) -> list:
    """The generations whose verdict `kernelmill regrade` did not change."""
    import json

    try:
        changed = {c["sample_id"] for c in json.loads(regrade_path.read_text(encoding="utf-8"))["changed"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        fail(f"{regrade_path}: not a regrade.json from `kernelmill regrade` ({exc})")
    kept = [g for g in gens if g.sample.sample_id not in changed]
    err.print(f"--drop-changed: {len(gens) - len(kept)} sample(s) left out (their verdict changed on regrade)")
    return kept


def subset(
    src: Path = typer.Argument(..., help="Curated rows JSONL."),
    sizes: list[int] = typer.Option(list(PAPER_SUBSET_SIZES), "--size", help="Subset size (repeat the option)."),
    out: Path = typer.Option(..., "-o", "--out", help="Folder for subset_<N>.jsonl files."),
    seed: int = typer.Option(0, "--seed"),
) -> None:
    """Random size subsets of a curated set.

    The paper's size ablation (552, 1105, 2210). Subsets are nested: one seeded
    shuffle, then prefixes."""
    from ..curate.recipes import subsets

    try:
        rows = read_rows(src)
        too_big = sorted({n for n in sizes if n > len(rows)})
        parts = subsets(rows, [n for n in sizes if n <= len(rows)], seed)
    except (CurateInputError, ValueError) as exc:
        fail(str(exc))
    for n, part in parts.items():
        path = out / f"subset_{n}.jsonl"
        write_jsonl(path, part)
        write_meta(path, "subset", [str(src)], {"size": n, "seed": seed, "nested": True}, {"rows": len(part)})
        console.print(f"{path}: {len(part)} rows")
    if too_big:
        err.print(f"[red]error:[/red] not written: size {', '.join(map(str, too_big))} (only {len(rows)} rows in "
                  f"{src})", soft_wrap=True)
        raise typer.Exit(1)


def dedup(
    src: Path = typer.Argument(..., help="JSONL with a 'code' field (or 'prompt' and 'completion')."),
    out: Path = typer.Option(..., "-o", "--out", help="Kept records JSONL."),
    method: str = typer.Option("minhash", "--method", help="exact | minhash (minhash also removes exact duplicates)."),
    threshold: float = typer.Option(0.8, "--threshold", help="Jaccard of token shingles at or above which records are near-duplicates."),
    shingle: int = typer.Option(5, "--shingle", help="Tokens per shingle."),
    num_perm: int = typer.Option(128, "--num-perm", help="MinHash permutations."),
    normalization: str = typer.Option("code", "--normalization", help="code (drop comments, canonical whitespace) | text (line ends unified, runs of blanks "
                                                                                   "and of empty lines collapsed; comments kept)."),
    scope: str = typer.Option("task", "--scope", help="task: compare records of the same task_id only | global."),
    excluded: Optional[Path] = typer.Option(None, "--excluded", help="Where dropped records go (default OUT.excluded.jsonl)."),
    workers: int = typer.Option(0, "--workers", help="Processes for normalising, MinHash rows and shingle sets (0 = all CPUs); results do not depend on it."),
) -> None:
    """Remove exact and near-duplicate records, keeping the first occurrence.

    Exact: SHA-1 of the normalised text. Near: MinHash over k-token shingles,
    LSH candidates (bands chosen by datasketch), each confirmed with the exact Jaccard. Every
    dropped record is written to the exclusion file with the reason, the id of
    the kept record it duplicates and the similarity."""
    from ..curate.dedup import DedupConfig
    from ..curate.dedup import dedup as run_dedup

    problems: list[ReadProblem] = []
    try:
        rows = read_rows(src, problems)
        cfg = DedupConfig(method=method, threshold=threshold, shingle=shingle, num_perm=num_perm,
                          normalization=normalization, scope=scope, workers=workers)
        res = run_dedup(rows, cfg, where=str(src))
    except (CurateInputError, ValueError) as exc:
        fail(str(exc))
    _problems(problems)
    write_jsonl(out, res.kept)
    write_jsonl(excluded_path(out, excluded), res.excluded)
    write_meta(out, "dedup", [str(src)], {k: v for k, v in vars(cfg).items() if k != "workers"}, res.counts())
    _table(f"dedup ({method}) -> {out}", res.counts())


def decontaminate(
    src: Path = typer.Argument(..., help="JSONL of curated rows, samples, or prompt/completion pairs."),
    against: str = typer.Option(..., "--against", help="Benchmark task source (e.g. a KernelBench folder)."),
    out: Path = typer.Option(..., "-o", "--out", help="Output JSONL."),
    tasks: Optional[str] = typer.Option(None, "--tasks", help="Task source for rows without task_code."),
    drop: bool = typer.Option(False, "--drop", help="Drop contaminated rows (default: flag them with a 'contamination' field)."),
    jaccard: float = typer.Option(0.8, "--jaccard", help="Word-set Jaccard at or above which a program matches."),
    ngram: int = typer.Option(50, "--ngram", help="A run of this many words shared with a benchmark task is a match."),
    excluded: Optional[Path] = typer.Option(None, "--excluded", help="Where dropped rows go (default OUT.excluded.jsonl)."),
) -> None:
    """Flag or drop rows that overlap a benchmark task.

    A row matches when its task program or code has word Jaccard >= 0.8 with a
    benchmark program, or shares a 50-word run with it, or its task id or task
    name is a benchmark task's; the benchmark task is named in the flag."""
    from ..curate.decontam import DecontamConfig
    from ..curate.decontam import decontaminate as run

    bench = maybe_tasks_or_exit(against)
    ts = maybe_tasks_or_exit(tasks)
    try:
        rows = read_rows(src)
        cfg = DecontamConfig(jaccard=jaccard, ngram=ngram, drop=drop)
        res = run(rows, bench.tasks, cfg, {t.task_id: t.code for t in ts} if ts else None,
                  {t.task_id: t.name for t in ts if t.name} if ts else None)
    except (CurateInputError, ValueError) as exc:
        fail(str(exc))
    if res.without_task_code:
        n = len(res.kept) + len(res.excluded)
        err.print(f"[yellow]warning:[/yellow] {res.without_task_code} of {n} rows have no task program "
                  f"(no task_code{', and their task is not in --tasks' if ts else '; give --tasks'}): "
                  "only their code, task id and name were checked", soft_wrap=True)
    write_jsonl(out, res.kept)
    if drop:
        write_jsonl(excluded_path(out, excluded), res.excluded)
    write_meta(out, "decontaminate", [str(src)], {"against": against, "jaccard": jaccard, "ngram": ngram,
                                                  "drop": drop}, res.counts())
    _table(f"decontaminate against {against} -> {out}", res.counts())


def difficulty(
    samples: Path = typer.Argument(..., help="Samples JSONL."),
    verdicts: Path = typer.Argument(..., help="Verdicts JSONL."),
    easy_below: float = typer.Option(4000, help="ARL below this: easy."),
    hard_above: float = typer.Option(8500, help="ARL above this: hard."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write every number (and per-task rows) as JSON."),
) -> None:
    """Task difficulty by average reasoning length (ARL).

    Buckets tasks by ARL over their generations and reports per bucket Exec
    (tasks with a correct kernel) and the geometric mean speedup of correct
    kernels, as the ConCuR paper's table."""
    from ..curate.difficulty import difficulty_table

    gens, _ = _generations(samples, verdicts)
    try:
        table = difficulty_table(gens, easy_below, hard_above)
    except ValueError as exc:
        fail(str(exc))
    t = Table(title=f"difficulty by ARL (easy < {easy_below:g} <= medium <= {hard_above:g} < hard)")
    for col in ("bucket", "tasks", "generations", "ARL", "Exec", "G_speedup", "fast_1"):
        t.add_column(col, justify="right")
    fmt = lambda x, f: "-" if x is None else format(x, f)  # noqa: E731
    for b, r in table["buckets"].items():
        if r["tasks"]:
            t.add_row(b, str(r["tasks"]), str(r["generations"]), fmt(r["arl"], ".0f"), fmt(r["exec"], ".1%"),
                      fmt(r["g_speedup"], ".3f"), fmt(r["fast_1"], ".1%"))
    console.print(t)
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(table, indent=2) + "\n")


def analyze(
    samples: Path = typer.Argument(..., help="Samples JSONL."),
    verdicts: Path = typer.Argument(..., help="Verdicts JSONL."),
    out: Path = typer.Option(..., "-o", "--out", help="Folder for the figures and analysis.json."),
    bin_width: float = typer.Option(2000, "--bin-width", help="Tokens per reasoning-length bin."),
) -> None:
    """Figures and numbers of the ConCuR observations on reasoning length.

    Boxplot of reasoning length (correct vs incorrect), accuracy per length bin
    with sample counts (bars), length vs speedup on a log axis with Pearson and Spearman on
    log speedup, and the
    within-task comparison of the shortest and longest generation; every
    number in analysis.json."""
    from ..curate.figures import write_analysis

    gens, report = _generations(samples, verdicts)
    try:
        stats = write_analysis(gens, out, bin_width, extra={"join": report.summary()})
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))
    fit, wt = stats["length_vs_speedup"], stats["within_task"]
    console.print(f"{stats['generations']} generations, {stats['tasks']} tasks, accuracy "
                  f"{stats['accuracy']:.1%}, ARL {stats['arl'] or 0:.0f} tokens")
    if "pearson_r_log" in fit:
        console.print(f"length vs log speedup (n = {fit['n_log']}): Pearson r = {fit['pearson_r_log']:.3f} "
                      f"(p = {fit['p_value_log']:.2g}), Spearman rho = {fit['spearman_rho']:.3f} "
                      f"(p = {fit['spearman_p']:.2g})")
    elif "note" in fit:
        console.print(f"length vs speedup: {fit['note']}")
    if wt["tasks"]:
        console.print(f"within task ({wt['tasks']} tasks): shortest correct {wt['shortest_accuracy']:.1%}, "
                      f"longest correct {wt['longest_accuracy']:.1%}, sign test p = {wt['sign_test_p']}")
    console.print(f"wrote {', '.join(stats['figures'])} and analysis.json to {out}")


def export(
    src: Path = typer.Argument(..., help="Curated rows JSONL (or samples with --verdicts)."),
    fmt: str = typer.Option(..., "--format", help="sft-messages | sft-prompt-completion | kto | grpo | fim-csv | translate-csv."),
    out: Path = typer.Option(..., "-o", "--out", help="Output folder (data file, Parquet, README.md card, excluded.jsonl)."),
    tasks: Optional[str] = typer.Option(None, "--tasks", help="Task source for rows without task_code."),
    verdicts: Optional[Path] = typer.Option(None, "--verdicts", help="Verdicts to join when SRC holds plain samples."),
    min_speedup: float = typer.Option(1.0, "--min-speedup", help="KTO: desirable = correct and speedup >= this (0: correct only)."),
    include_incorrect: bool = typer.Option(False, "--include-incorrect", help="SFT: keep rows marked incorrect."),
    prompt_fn: Optional[str] = typer.Option(None, "--prompt-fn", help="module:function rendering (task_code, language) -> messages; "
                                            "default: the prompt `generate` sends (kernelmill.chat.export_prompt)."),
) -> None:
    """Write a dataset in a trainer's format, with a dataset card.

    Formats are those of docs/FORMATS.md, written as JSONL (CSV for the CSV
    splits) and Parquet, plus README.md (counts, sources, recipe, filters) and
    excluded.jsonl (every row not exported, with the reason)."""
    from ..curate.export import ExportConfig, build_rows, write_export
    from ..curate.inputs import generation_row, join
    from ..chat import load_renderer
    from ..records import Sample, Verdict, read_jsonl

    try:
        rows = read_rows(src)
        render = load_renderer(prompt_fn)
        if verdicts:
            problems: list[ReadProblem] = []
            gens, report = join(read_jsonl(src, Sample, problems), read_jsonl(verdicts, Verdict, problems))
            for line in report.lines():
                err.print(f"[yellow]warning:[/yellow] {line}")
            _problems(problems)
            rows = [generation_row(g) for g in gens]
        ts = maybe_tasks_or_exit(tasks)
        if ts:
            by_id = {t.task_id: t for t in ts}
            rows = [{**r, "task_code": r.get("task_code") or getattr(by_id.get(str(r.get("task_id"))), "code", None),
                     "task_name": r.get("task_name") or getattr(by_id.get(str(r.get("task_id"))), "name", None)}
                    for r in rows]
        cfg = ExportConfig(fmt, min_speedup=min_speedup, only_correct=not include_incorrect)
        res = build_rows(rows, cfg, render)
        files = write_export(res, cfg, out, str(src))
    except (CurateInputError, ValueError) as exc:
        fail(str(exc))
    reasons: dict[str, int] = {}
    for e in res.excluded:
        reasons[e["reason"]] = reasons.get(e["reason"], 0) + 1
    for reason, n in reasons.items():
        err.print(f"[yellow]excluded:[/yellow] {n} rows: {reason}")
    _table(f"export {fmt} -> {out} ({', '.join(files)})", res.counts)


def task_types_cmd(
    source: str = typer.Argument(..., help="Task source (folder, .jsonl/.parquet, 'builtin')."),
    out: Optional[Path] = typer.Option(None, "-o", "--out", help="Write the types as JSONL."),
) -> None:
    """Task type (single / fusion / network) of each task.

    From task metadata, else traced from Model.forward: 1 distinct torch op is
    single; more is fusion; over 12 counted op calls is network."""
    from dataclasses import asdict

    from ..curate.optype import task_types

    ts = maybe_tasks_or_exit(source)
    types = task_types(ts.tasks)
    t = Table(title=f"task types of {source}")
    for col in ("task_id", "op_type", "origin", "ops"):
        t.add_column(col)
    for tt in types.values():
        t.add_row(tt.task_id, tt.op_type or "?", tt.origin,
                  ", ".join(f"{k}x{v}" for k, v in tt.ops.items()) or (tt.error or ""))
    console.print(t)
    if out:
        write_jsonl(out, [asdict(tt) for tt in types.values()])


def register(app: typer.Typer) -> None:
    """Add the curation commands to the top-level `kernelmill` app."""
    app.command("curate")(curate)
    app.command("subset")(subset)
    app.command("dedup")(dedup)
    app.command("decontaminate")(decontaminate)
    app.command("difficulty")(difficulty)
    app.command("analyze")(analyze)
    app.command("export")(export)
    app.command("task-types")(task_types_cmd)
