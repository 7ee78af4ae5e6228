"""`kernelmill ptx ...`: reroll, expand, pairs, stats, export, evaluate (+ candidates, eval-plot)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table

from .console import console, err, fail

app = typer.Typer(help="PTX toolkit: lossless Rolled-PTX, CUDA/Triton -> PTX pairs.",
                  no_args_is_help=True)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as exc:
        fail(f"{path}: {exc.strerror}")


_STRATEGY = typer.Option("best", "--strategy", help="Loop choice: dp (most tokens saved per pass), "
                         "greedy (PtxDec's top-down order), best (both, keep the shorter).")
_GEOMETRIC = typer.Option(True, "--geometric/--linear-only",
                          help="Allow the geometric terms (m>>i) / (m<<i) of our grammar extension.")


def _config(strategy: str, geometric: bool):
    from ..ptx.reroll import RerollConfig
    try:
        return RerollConfig(strategy=strategy, geometric=geometric)
    except ValueError as exc:
        fail(f"{exc}")


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


_JOBS = typer.Option(0, "--jobs", "-j", help="Worker processes, one kernel a task (0: one per CPU; "
                     "the output does not depend on it).")


@app.command()
def reroll(src: Path = typer.Argument(..., help="PTX file."),
           out: Path = typer.Option(..., "-o", "--out", help="Rolled-PTX output file."),
           strategy: str = _STRATEGY, geometric: bool = _GEOMETRIC, jobs: int = _JOBS) -> None:
    """Reroll unrolled loops into Rolled-PTX (checked: expand(out) == input). A file of many
    kernels is shared out over --jobs worker processes; the output does not depend on it."""
    from ..ptx.batch import reroll_texts
    from ..ptx.lexer import PtxSyntaxError
    cfg = _config(strategy, geometric)
    n_jobs = _jobs(jobs)
    text = _read(src)
    try:
        [done] = reroll_texts([(text, str(src))], cfg, n_jobs, count=True)
    except PtxSyntaxError as exc:
        fail(f"{exc}", 1)
    _write_atomic(out, done.text)
    (a, b), st = done.tokens, done.stats
    console.print(f"{src} -> {out}: {st.loops} loops ({st.geometric_loops} geometric), {a} -> {b} tokens "
                  f"({100 * (a - b) / max(a, 1):.1f}% shorter), round trip "
                  f"{st.checked}/{st.functions} functions checked"
                  + (f", [red]{st.failed} kept unrolled[/red]" if st.failed else ""))


@app.command()
def expand(src: Path = typer.Argument(..., help="Rolled-PTX file."),
           out: Path = typer.Option(..., "-o", "--out", help="PTX output file.")) -> None:
    """Expand Rolled-PTX back to plain PTX."""
    from ..ptx.expand import ExpandError, expand_text
    from ..ptx.lexer import PtxSyntaxError
    try:
        text = expand_text(_read(src), str(src))
    except (PtxSyntaxError, ExpandError) as exc:
        fail(f"{exc}", 1)
    _write_atomic(out, text)
    console.print(f"{src} -> {out}")


@app.command()
def pairs(sources: list[Path] = typer.Argument(..., help=".cu files, Python candidates with "
                                               "load_inline, Triton modules with TRITON_PTX_SPECS."),
          out: Path = typer.Option(..., "-o", "--out", help="Pairs JSONL (appended; re-runs resume)."),
          arch: list[str] = typer.Option(["sm_90"], "--arch", help="Target(s), repeatable."),
          opt: list[int] = typer.Option([3], "-O", "--opt", help="Optimisation level(s)."),
          unroll: str = typer.Option("on", help="on | off | both: loop unrolling."),
          keep_debug: bool = typer.Option(False, help="Keep .loc/.file and debug labels."),
          include: list[Path] = typer.Option([], "-I", "--include",
                                             help="Header directory (repeatable; each source's own "
                                                  "directory is always searched)."),
          task: Path = typer.Option(None, "--task",
                                    help="The KernelBench task (reference .py) the Python candidates were "
                                         "written for: each candidate runs on the CPU with the task's "
                                         "inputs (in the sandbox) and the launches it makes give its pairs "
                                         "their launch configuration (meta.config), so `ptx evaluate` can "
                                         "run them. A .jsonl source (rows id, ref_code, custom_code) "
                                         "carries each row's own task."),
          ) -> None:
    """Compile sources to PTX per kernel and write Pair records with Rolled-PTX.

    Sources: .cu files, Python candidates with load_inline, Triton modules with
    TRITON_PTX_SPECS, and tables of KernelBench candidates (.jsonl rows id, ref_code,
    custom_code: each row's candidate is written to OUT.sources/<id>.py and configured
    from its reference)."""
    from ..ptx.evaluate.task_configs import TaskConfigurer, table_sources
    from ..ptx.pairs import PairConfig, build_pairs
    modes = {"on": (True,), "off": (False,), "both": (True, False)}
    if unroll not in modes:
        fail(f"--unroll must be on, off or both, not {unroll!r}")
    missing = [str(p) for p in [*sources, *([task] if task else [])] if not p.exists()]
    if missing:
        fail(f"no such file: {', '.join(missing)}")
    cfg = PairConfig(tuple(arch), tuple(opt), modes[unroll], strip_debug=not keep_debug)
    tasks: dict[Path, str] = {}
    files: list[Path] = []
    for src in sources:
        if src.suffix == ".jsonl":
            try:
                rows = table_sources(src, out.with_name(out.name + ".sources"))
            except ValueError as exc:
                fail(str(exc))
            tasks.update(rows)
            files.extend(rows)
        else:
            files.append(src)
            if task is not None and src.suffix == ".py":
                tasks[src] = task.read_text(encoding="utf-8")
    configure = TaskConfigurer(tasks) if tasks else None

    def report(unit_id, ps):
        for p in ps:
            if p.meta.get("status") == "failed":
                lines = p.meta["error"].splitlines() or [""]
                lines = [next((ln for ln in lines[1:] if "error" in ln), lines[0])]
                what = f"{p.origin}{' ' + p.kernel_name if p.kernel_name else ''} {' '.join(p.options)}"
                err.print(f"[yellow]failed[/yellow] {escape(what)}: {escape(lines[0])}", highlight=False)

    s = build_pairs(files, out, cfg, on_unit=report, include=tuple(str(d) for d in include), configure=configure)
    console.print(f"{s.pairs} pairs written to {out} ({s.units} compile units, "
                  f"{s.skipped} already done, {s.failed} failed)"
                  + (f"; {s.configured} with a launch configuration from their task" if configure else ""))
    for where, why in (configure.errors.items() if configure else ()):
        err.print(f"[yellow]no launch configurations[/yellow] {escape(where)}: {escape(why[-300:])}", highlight=False)



def _jobs(jobs: int) -> int | None:
    if jobs < 0:
        fail(f"--jobs must be >= 0, not {jobs}")
    return jobs or None


@app.command()
def stats(files: list[Path] = typer.Argument(..., help="PTX files (rerolled in memory)."),
          strategy: str = _STRATEGY, geometric: bool = _GEOMETRIC, jobs: int = _JOBS) -> None:
    """Length in tokens before/after rerolling, and reroll speed (all files' kernels in parallel)."""
    from ..ptx.batch import reroll_texts
    from ..ptx.lexer import PtxSyntaxError
    cfg = _config(strategy, geometric)
    n_jobs = _jobs(jobs)
    texts = [_read(f) for f in files]
    t0 = time.perf_counter()
    try:
        done = reroll_texts([(t, str(f)) for t, f in zip(texts, files)], cfg, n_jobs, count=True)
    except PtxSyntaxError as exc:
        fail(f"{exc}", 1)
    took = time.perf_counter() - t0
    table = Table(title="Rolled-PTX length")
    for c in ("file", "tokens", "rolled", "reduction", "loops", "round trip"):
        table.add_column(c)
    tot_a = tot_b = size = 0
    for f, text, r in zip(files, texts, done):
        size += len(text.encode())
        a, b = r.tokens
        tot_a, tot_b = tot_a + a, tot_b + b
        table.add_row(str(f), str(a), str(b), f"{100 * (a - b) / max(a, 1):.1f}%", str(r.stats.loops),
                      "ok" if r.stats.failed == 0 else f"{r.stats.failed} failed")
    if len(files) > 1:
        table.add_row("total", str(tot_a), str(tot_b), f"{100 * (tot_a - tot_b) / max(tot_a, 1):.1f}%", "", "")
    console.print(table)
    console.print(f"rerolled {size / 1e6:.3f} MB in {took:.2f} s ({size / 1e6 / max(took, 1e-9):.2f} MB/s wall, "
                  f"parse + reroll + round-trip check)")


@app.command("export")
def export_command(pairs: Path = typer.Argument(..., help="Pairs JSONL from `kernelmill ptx pairs`."),
                   out: Path = typer.Option(..., "-o", "--out", help="Folder for train.jsonl, test.jsonl, split.json."),
                   rolled: bool = typer.Option(False, help="Rolled-PTX in the prompt (made here for pairs stored "
                                               "without it, e.g. by `ptx augment --no-reroll`)."),
                   reroll: str = typer.Option("best", help="How --rolled makes a missing Rolled-PTX: best (both "
                                              "strategies, table terms) or fast (greedy, no tables: ~12x faster, "
                                              "~2 points less reduction on augmented pairs; docs/results/benchmarks_history.md)."),
                   test_frac: float = typer.Option(0.1, help="Share of subgraphs (or source units) held out."),
                   seed: int = typer.Option(0, help="Seed of the split (stable as pairs are added)."),
                   jobs: int = _JOBS) -> None:
    """PtxDec SFT rows: PTX (or Rolled-PTX) in the PTX->CUDA prompt, CUDA out; split by subgraph
    so no test kernel's subgraph is in training (configs/ptxdec_sft.yaml reads train.jsonl)."""
    from ..ptx.export import export_sft
    from ..records import RecordError

    if not pairs.is_file():
        fail(f"no pairs file at {pairs}")
    try:
        summary = export_sft(pairs, out, rolled=rolled, test_frac=test_frac, seed=seed, reroll=reroll,
                             jobs=_jobs(jobs))
    except (RecordError, ValueError) as exc:
        fail(str(exc))
    console.print(f"train {summary.train} rows ({summary.train_groups} groups), test {summary.test} rows "
                  f"({summary.test_groups} groups) -> {out}"
                  + "".join(f"; skipped {n}: {why}" for why, n in summary.skipped.items()))


@app.command("evaluate")
def evaluate_command(
        pairs: Path = typer.Argument(..., help="Pairs JSONL (`ptx pairs`, `ptx augment`)."),
        candidates: Path = typer.Argument(..., help="Samples JSONL of decompiled CUDA: `generate -t ptx2cuda` "
                                          "on the pairs (task id = pair id), or `ptx candidates`."),
        out: Path = typer.Option(..., "-o", "--out", help="Folder: results.jsonl (appended per chunk of 64; a re-run "
                                 "resumes, so use a new folder after changing --device), summary.json, figures.png, "
                                 "build/ (nvcc cache), work/."),
        device: str = typer.Option("cuda", "--device", help="cuda: compile, run and time; cpu: compile and "
                                   "CodeBLEU only (run metrics reported as not run)."),
        ncu: bool = typer.Option(False, "--ncu", help="Global-load efficiency of both sides with Nsight Compute "
                                 "(I/O-correct candidates only; needs GPU counter access)."),
        ncu_metric: str = typer.Option("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct",
                                       "--ncu-metric", help="ncu's name for gld_efficiency."),
        ncu_limit: Optional[int] = typer.Option(None, "--ncu-limit", help="Profile at most N candidates."),
        limit: Optional[int] = typer.Option(None, "--limit", help="Only the first N pairs of the pairs file."),
        arch: str = typer.Option("sm_90", "--arch", help="nvcc -arch of the harnesses."),
        workers: int = typer.Option(4, "--workers", help="Sandboxed run processes in parallel on the GPU "
                                    "(timed rounds never overlap: they hold the GPU's timing lock)."),
        batch: int = typer.Option(16, "--batch", help="Candidates per run process."),
        job_timeout: float = typer.Option(30.0, "--timeout", help="Seconds per candidate run (then: timeout)."),
        build_jobs: int = typer.Option(0, "--build-jobs", help="Parallel nvcc builds (0: one per core)."),
        build_dir: Optional[Path] = typer.Option(None, "--build-dir", help="nvcc cache (default OUT/build; "
                                                 "content-addressed, safe to share between runs)."),
        no_timing: bool = typer.Option(False, "--no-timing", help="Skip latency (no latency deviation)."),
        seed: int = typer.Option(0, "--seed", help="Input seed (inputs depend on it and the pair id only)."),
) -> None:
    """Evaluate decompiled CUDA against the pairs' reference CUDA: compilation, runtime and I/O correctness
    (max normalised abs error <= 1e-3 per output), CodeBLEU, latency and global-load efficiency deviation."""
    import os

    from ..ptx.evaluate import EvalSettings, EvaluateError, RunSettings, evaluate
    from ..records import RecordError

    for p, what in ((pairs, "pairs"), (candidates, "candidates")):
        if not p.is_file():
            fail(f"no {what} file at {p}")
    if device not in ("cuda", "cpu"):
        fail(f"--device must be cuda or cpu, not {device!r}")
    if device == "cuda":
        import torch
        if not torch.cuda.is_available():
            fail("--device cuda but torch sees no GPU (use --device cpu for compile rate and CodeBLEU)")
    run = RunSettings(device=device, workers=workers, batch=batch, job_timeout=job_timeout, seed=seed)
    settings = EvalSettings(device=device, limit=limit, arch=arch, build_jobs=build_jobs or os.cpu_count() or 2,
                            build_dir=build_dir, timing=not no_timing, ncu=ncu, ncu_metric=ncu_metric,
                            ncu_limit=ncu_limit, run=run)

    def progress(r: dict, i: int, n: int) -> None:
        extra = ""
        if r.get("codebleu"):
            extra += f" codebleu {r['codebleu']['codebleu']:.3f}"
        if r.get("latency_dev") is not None:
            extra += f" latency {r['latency_dev']:+.1%}"
        if r.get("gld_eff_dev") is not None:
            extra += f" gld_eff {r['gld_eff_dev']:+.1f}pp"
        msg = (r.get("message") or "").strip().splitlines()
        why = f" ({escape(msg[0][:120])})" if msg and r["status"] not in ("ok",) else ""
        err.print(f"[{i}/{n}] {escape(r['sample_id'])}: {r['status']}{extra}{why}", highlight=False, soft_wrap=True)

    try:
        summary = evaluate(pairs, candidates, out, settings, progress)
    except (EvaluateError, RecordError, ValueError) as exc:
        fail(str(exc), 1)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted[/yellow]: finished candidates are in results.jsonl; run again to resume")
        raise typer.Exit(130)

    def pct(v):
        return "not run" if v is None else f"{100 * v:.1f}%"
    cb = summary.get("codebleu") or {}
    console.print(f"{summary['evaluated']} evaluated of {summary['samples']} samples ({summary['pairs']} pairs): "
                  f"compile {pct(summary['compilation_rate'])}, runtime {pct(summary['runtime_correctness_rate'])}, "
                  f"I/O {pct(summary['io_correctness_rate'])}, CodeBLEU "
                  f"{cb.get('codebleu', float('nan')):.3f}; counts {summary['counts']}"
                  + (f"; {summary['not_run']}" if summary.get("not_run") else "")
                  + (f"\nnote: {summary['ref_unwritten']} launches left part of an output unwritten by the reference "
                     "(results.jsonl: ref_unwritten): check their launch configurations"
                     if summary.get("ref_unwritten") else "")
                  + "".join(f"\nnote: {n}" for n in summary.get("notes") or []), highlight=False)
    console.print(f"-> {out / 'summary.json'}, {out / 'results.jsonl'}, {out / 'figures.png'}")


@app.command("candidates")
def candidates_command(pairs: Path = typer.Argument(..., help="Pairs JSONL."),
                       out: Path = typer.Option(..., "-o", "--out", help="Samples JSONL to write (replaced)."),
                       kind: str = typer.Option("reference", "--as", help="reference: each pair's own CUDA; "
                                                "perturbed: every store to an output changed (I/O errors)."),
                       ) -> None:
    """Candidate sets for checking `ptx evaluate`: the reference as its own candidate, or a perturbed copy."""
    from ..ptx.evaluate import make_candidates
    from ..records import RecordError

    if not pairs.is_file():
        fail(f"no pairs file at {pairs}")
    try:
        n, skipped = make_candidates(pairs, out, kind)
    except (RecordError, ValueError) as exc:
        fail(str(exc))
    console.print(f"{n} {kind} candidates -> {out}" + "".join(f"; skipped {k}: {v}" for k, v in skipped.items()))


@app.command("eval-plot")
def eval_plot_command(runs: list[str] = typer.Argument(..., help="LABEL=FOLDER of `ptx evaluate` outputs."),
                      out: Path = typer.Option(..., "-o", "--out", help="PNG to write."),
                      json_out: Optional[Path] = typer.Option(None, "--json", help="Combined summaries JSON.")) -> None:
    """One figure (rates, CodeBLEU, latency and efficiency deviation KDEs) for several evaluation runs."""
    from ..ptx.evaluate.report import combine

    dirs = {}
    for r in runs:
        label, sep, folder = r.partition("=")
        if not sep:
            label, folder = Path(r).name, r
        dirs[label] = Path(folder)
    try:
        combine(dirs, out, json_out)
    except (FileNotFoundError, ValueError) as exc:
        fail(str(exc))
    console.print(f"{len(dirs)} runs -> {out}" + (f", {json_out}" if json_out else ""))


@app.command("augment")
def augment_command(
        out: Path = typer.Argument(..., help="Pairs JSONL to append to (re-runs skip finished jobs)."),
        families: str = typer.Option("all", "--families", help="Comma-separated model families, or all: "
                                     "resnet, mobilenet, vgg, squeezenet, convnext, transformer, mixer, recommender."),
        models: int = typer.Option(4, "--models", help="Instances per family (batch, shapes, FP32/FP16 drawn)."),
        variants: int = typer.Option(8, "--variants", help="Schedule pipeline: random schedules per subgraph."),
        tiles: int = typer.Option(6, "--tiles", help="Subgraph pipeline: tile configurations per subgraph sketch."),
        pipelines: str = typer.Option("schedule,subgraph", "--pipelines", help="schedule, subgraph or both."),
        workers: int = typer.Option(2, "--workers", help="Worker processes."),
        batch: int = typer.Option(48, "--batch", help="PrimFuncs lowered and compiled by one nvcc call."),
        max_chars: int = typer.Option(12000, "--max-source-chars", help="Drop kernels with longer CUDA "
                                       "(a PtxDec sample holds PTX and CUDA in 8,192 tokens)."),
        refactor: bool = typer.Option(True, "--refactor/--no-refactor", help="Index CSE + parentheses, PTX-checked."),
        reroll: bool = typer.Option(True, "--reroll/--no-reroll", help="Store each pair's Rolled-PTX (about a "
                                    "fifth of the time); without it `ptx export --rolled` makes it when exporting."),
        seed: int = typer.Option(0, "--seed"),
        budget: Optional[float] = typer.Option(None, "--time-budget", help="Stop after this many seconds "
                                               "(finished jobs are kept; a re-run resumes)."),
        distinct: Optional[Path] = typer.Option(None, "--distinct", help="Also write the near-deduplicated "
                                                "pairs here (MinHash LSH over the CUDA side)."),
        threshold: float = typer.Option(0.9, "--threshold", help="Jaccard threshold of --distinct."),
) -> None:
    """Compiler-based augmentation (PtxDec): torch models with random weights -> TVM fusion
    groups -> schedule variants -> CUDA (TVM's backend) -> PTX (nvcc -O3, sm_90) pairs, each
    with its launch configuration. Needs apache-tvm 0.27 (the `augment` extra, in an
    environment without tilelang) and nvcc; no GPU. Resumable; --time-budget stops early."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    try:
        from ..ptx.augment.runner import AugmentConfig, augment, write_distinct
    except ImportError as exc:
        fail(f"kernelmill ptx augment needs apache-tvm: {exc}")
    from ..ptx.augment.models import FAMILIES
    fams = tuple(FAMILIES) if families == "all" else tuple(f.strip() for f in families.split(",") if f.strip())
    cfg = AugmentConfig(families=fams, models=models, variants=variants, tiles=tiles,
                        pipelines=tuple(p.strip() for p in pipelines.split(",")), batch=batch,
                        max_source_chars=max_chars, refactor=refactor, reroll=reroll, workers=workers, seed=seed)
    try:
        cfg.check()
    except ValueError as exc:
        fail(str(exc))
    deadline = None if budget is None else time.monotonic() + budget
    pairs_seen = 0
    with Progress(TextColumn("augment"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[pairs]} pairs"),
                  TimeElapsedColumn(), console=err) as bar:
        task = bar.add_task("jobs", total=None, pairs=0)

        def on_job(job_id, pairs, done, total):
            nonlocal pairs_seen
            pairs_seen += sum(p["meta"].get("status") == "ok" for p in pairs)
            bar.update(task, completed=done, total=total, pairs=pairs_seen)

        s = augment(out, cfg, deadline, on_job)
    console.print(f"{out}: {s.pairs} new pairs from {s.jobs - s.skipped} jobs ({s.skipped} already done, "
                  f"{s.failed_jobs} without a pair) in {s.seconds:.0f}s"
                  + (" - stopped at the time budget; run again to resume" if s.stopped_early else ""))
    if s.stats:
        console.print("  " + ", ".join(f"{k} {v}" for k, v in s.stats.items()))
    if distinct is not None:
        d = write_distinct(out, distinct, threshold)
        console.print(f"{distinct}: {d['kept']} distinct of {d['input']} pairs ({d})")
