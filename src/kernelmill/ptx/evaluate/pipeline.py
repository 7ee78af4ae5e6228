"""`evaluate`: decompiled CUDA candidates against their pairs' reference CUDA.

For each sample (``task_id`` = pair id, as `generate` with the ptx2cuda
template writes them): the pair's configuration (stored, or derived:
config.py), CodeBLEU against the reference source (codebleu.py), host
harnesses for both sides compiled with nvcc (harness.py), a run of both on the
same inputs in sandboxed workers (runner.py, worker.py), and, with ``ncu``,
global-load efficiency of both (ncu.py). One JSON line per sample is appended
to ``OUT/results.jsonl`` as each chunk finishes; a re-run skips the samples
already there. ``OUT/summary.json`` and ``OUT/figures.png`` are rewritten at
the end from the whole results file.

Where there is no GPU (``device="cpu"``) the harnesses are still compiled
(compilation rate) when nvcc is present, and CodeBLEU is computed; the run
metrics are null with the reason (statuses ``not_run``), never failures.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from ...records import Pair, ReadProblem, Sample, append_jsonl, iter_jsonl, read_jsonl
from .codebleu import codebleu
from .config import ConfigError, KernelConfig, pair_config
from .harness import Builder, harness_source
from .metrics import IO_TOL, efficiency_deviation, latency_deviation, summarize
from .ncu import DEFAULT_METRIC, find_ncu
from .runner import RunnerError, RunSettings, run_jobs, run_ncu


@dataclass
class EvalSettings:
    device: str = "cuda"               # cuda | cpu
    limit: int | None = None           # the first N pairs of the pairs file
    arch: str = "sm_90"
    build_jobs: int = field(default_factory=lambda: os.cpu_count() or 2)
    build_timeout: float = 180.0
    build_dir: Path | None = None      # default OUT/build (content-addressed; safe to share)
    timing: bool = True
    ncu: bool = False
    ncu_metric: str = DEFAULT_METRIC
    ncu_limit: int | None = None       # profile at most this many I/O-correct candidates
    chunk: int = 64                    # candidates per chunk (what a resume can lose)
    run: RunSettings = field(default_factory=RunSettings)

    def __post_init__(self):
        if self.device not in ("cuda", "cpu"):
            raise ValueError(f"device must be cuda or cpu, not {self.device!r}")


class EvaluateError(RuntimeError):
    pass


def _usable_pairs(pairs_path: Path, problems: list[ReadProblem], limit: int | None) -> dict[str, Pair]:
    pairs: dict[str, Pair] = {}
    for p in read_jsonl(pairs_path, Pair, problems):
        if (p.meta or {}).get("status") == "failed" or not (p.ptx or "").strip():
            continue
        pairs.setdefault(p.pair_id, p)
        if limit is not None and len(pairs) >= limit:
            break
    return pairs


def _base(s: Sample, pair: Pair | None) -> dict[str, Any]:
    return {"sample_id": s.sample_id, "task_id": s.task_id, "kernel": pair.kernel_name if pair else None,
            "model": s.model, "status": "", "compiled": None, "ran": None, "io_correct": None,
            "max_norm_err": None, "errors": None, "codebleu": None, "ref_ms": None, "cand_ms": None,
            "latency_dev": None, "ref_gld_eff": None, "cand_gld_eff": None, "gld_eff_dev": None,
            "config_derived": None, "message": ""}


class Evaluation:
    """One evaluation run (see the module docstring)."""

    def __init__(self, pairs_path: Path, samples_path: Path, out_dir: Path, settings: EvalSettings,
                 on_result: Callable[[dict, int, int], None] | None = None):
        self.s = settings
        self.out = Path(out_dir).resolve()
        self.out.mkdir(parents=True, exist_ok=True)
        self.results_path = self.out / "results.jsonl"
        self.problems: list[ReadProblem] = []
        self.pairs = _usable_pairs(Path(pairs_path), self.problems, settings.limit)
        side = Path(pairs_path).with_name(Path(pairs_path).name + ".preludes.json")  # ptx augment's
        try:
            self.preludes: dict[str, str] = json.loads(side.read_text()) if side.exists() else {}
        except (OSError, ValueError) as exc:
            raise EvaluateError(f"{side}: cannot read the preludes: {exc}") from None
        samples = read_jsonl(Path(samples_path), Sample, self.problems)
        if settings.limit is not None:
            samples = [x for x in samples if x.task_id in self.pairs]
        self.samples = samples
        self.builder = Builder(settings.build_dir or self.out / "build", settings.arch, settings.build_timeout)
        self.on_result = on_result
        self._configs: dict[str, KernelConfig | str] = {}
        self._ref_builds: dict[str, Any] = {}
        self.ncu_exe = find_ncu() if settings.ncu else None
        self.ncu_done = 0
        self.notes: list[str] = []

    # --- pieces -----------------------------------------------------------------
    def config(self, pair: Pair) -> KernelConfig | str:
        if pair.pair_id not in self._configs:
            try:
                cfg = pair_config(pair)
                if cfg.prelude and cfg.prelude not in self.preludes:
                    raise ConfigError(f"prelude {cfg.prelude!r} is not in the pairs' .preludes.json")
                self._configs[pair.pair_id] = cfg
            except ConfigError as exc:
                self._configs[pair.pair_id] = str(exc)
        return self._configs[pair.pair_id]

    def ref_build(self, pair: Pair, cfg: KernelConfig):
        if pair.pair_id not in self._ref_builds:
            self._ref_builds[pair.pair_id] = self.builder.build(
                harness_source(pair.source, cfg, self.preludes.get(cfg.prelude, "")))
        return self._ref_builds[pair.pair_id]

    def _prepare(self, s: Sample) -> tuple[dict, Pair | None, KernelConfig | None]:
        pair = self.pairs.get(s.task_id)
        r = _base(s, pair)
        if pair is None:
            r.update(status="no_pair", message=f"no pair {s.task_id!r} in the pairs file")
            return r, None, None
        if (s.code or "").strip():
            try:
                r["codebleu"] = codebleu(pair.source, s.code).to_dict()
            except Exception as exc:  # noqa: BLE001 - a parser failure is reported, not fatal
                r["message"] = f"CodeBLEU failed: {type(exc).__name__}: {exc}"
        else:
            r["codebleu"] = {"codebleu": 0.0, "ngram": 0.0, "weighted_ngram": 0.0, "syntax": 0.0, "dataflow": 0.0}
        cfg = self.config(pair)
        if isinstance(cfg, str):
            r.update(status="no_configuration", message=f"no configuration: {cfg}")
            return r, pair, None
        r["config_derived"] = cfg.derived
        return r, pair, cfg

    def _build(self, s: Sample, r: dict, pair: Pair, cfg: KernelConfig):
        """(the candidate's library or None); sets status on failures."""
        ref = self.ref_build(pair, cfg)
        if not ref.ok:
            r.update(status="reference_failed", message=f"reference does not compile: {ref.error[:1500]}")
            return None
        if not (s.code or "").strip():
            r.update(status="compile_error", compiled=False, ran=False, io_correct=False,
                     message="no code in the answer" + (f" ({s.meta.get('parse_error')})"
                                                        if (s.meta or {}).get("parse_error") else ""))
            return None
        b = self.builder.build(harness_source(s.code, cfg, self.preludes.get(cfg.prelude, "")))
        r["compiled"] = b.ok
        if not b.ok:
            r.update(status="compile_error", ran=False, io_correct=False, message=b.error[:3000])
            return None
        return ref.so, b.so

    # --- the run ----------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        done = {r.get("sample_id") for r in iter_jsonl(self.results_path)} if self.results_path.exists() else set()
        todo = [s for s in self.samples if s.sample_id not in done]
        total, count = len(self.samples), len(done & {s.sample_id for s in self.samples})
        for i in range(0, len(todo), self.s.chunk):
            rows = self._chunk(todo[i:i + self.s.chunk])
            append_jsonl(self.results_path, rows)
            for r in rows:
                count += 1
                if self.on_result:
                    self.on_result(r, count, total)
        return self.finish()

    def _chunk(self, chunk: list[Sample]) -> list[dict]:
        prepared = [self._prepare(s) for s in chunk]
        libs: dict[str, tuple[str, str]] = {}
        if self.builder.available:
            buildable = [(s, r, p, c) for s, (r, p, c) in zip(chunk, prepared) if c is not None]
            with ThreadPoolExecutor(max(1, self.s.build_jobs)) as ex:
                refs = {p.pair_id: (p, c) for _, _, p, c in buildable}  # references first, once each
                list(ex.map(lambda pc: self.ref_build(*pc), refs.values()))
                built = list(ex.map(lambda a: self._build(*a), buildable))
            for (s, r, _, _), lib in zip(buildable, built):
                if lib is not None:
                    libs[s.sample_id] = lib
        else:
            for s, (r, p, c) in zip(chunk, prepared):
                if c is not None:
                    r.update(status="not_run", message="nvcc not found: not compiled, not run")
        by_id = {s.sample_id: (s, r, p, c) for s, (r, p, c) in zip(chunk, prepared)}
        if self.s.device == "cpu":
            for sid in libs:
                by_id[sid][1].update(status="not_run", message="no GPU: compiled, not run")
        elif libs:
            self._run(by_id, libs)
        return [r for r, _, _ in prepared]

    def _run(self, by_id: dict, libs: dict[str, tuple[str, str]]) -> None:
        """Checks in parallel workers (no timing), then the I/O-correct ones timed by one
        worker with nothing else of ours on the GPU, then ncu on those."""
        jobs = []
        for sid, (ref_so, cand_so) in libs.items():
            s, r, pair, cfg = by_id[sid]
            jobs.append({"id": sid, "pair_id": pair.pair_id, "ref_so": ref_so, "cand_so": cand_so,
                         "config": cfg.to_dict()})
        base = self.s.run
        work = self.out / "work"
        try:
            got = run_jobs(jobs, replace(base, timing=None), work)
        except RunnerError as exc:
            raise EvaluateError(str(exc)) from exc
        correct = []
        for sid, res in got.items():
            r = by_id[sid][1]
            for k in ("status", "compiled", "ran", "io_correct", "max_norm_err", "errors", "ref_unwritten"):
                if k in res:
                    r[k] = res[k]
            if res.get("status") != "ok":
                r["ran"] = bool(res.get("ran"))
                r["io_correct"] = False
            if res.get("message"):
                r["message"] = res["message"]
            if res.get("status") == "reference_failed":
                r["compiled"] = None
            if r["io_correct"]:
                correct.append(sid)
        chosen = [j for j in jobs if j["id"] in set(correct)]
        if self.s.timing and base.timing and chosen:
            try:
                timed = run_jobs(chosen, replace(base, workers=1, batch=max(1, len(chosen))), work)
            except RunnerError as exc:
                raise EvaluateError(str(exc)) from exc
            for sid, res in timed.items():
                r = by_id[sid][1]
                if res.get("ref_ms") is not None:
                    r["ref_ms"], r["cand_ms"] = res["ref_ms"], res["cand_ms"]
                    r["latency_dev"] = latency_deviation(r["ref_ms"], r["cand_ms"])
                elif res.get("message"):
                    r["message"] = f"not timed: {res['message']}"
        if self.s.ncu and chosen:
            self._ncu(by_id, chosen, replace(base, batch=max(1, len(chosen))), work)

    def _ncu(self, by_id: dict, jobs: list[dict], settings: RunSettings, work: Path) -> None:
        if self.ncu_exe is None:
            self.notes.append("ncu not found: global-load efficiency not measured")
            return
        if self.s.ncu_limit is not None:
            jobs = jobs[:max(0, self.s.ncu_limit - self.ncu_done)]
        if not jobs:
            return
        self.ncu_done += len(jobs)
        try:
            effs, note = run_ncu(jobs, settings, work, self.ncu_exe, self.s.ncu_metric)
        except RunnerError as exc:
            self.notes.append(f"ncu run failed: {str(exc)[:500]}")
            return
        if note:
            self.notes.append(note)
        for j in jobs:
            r = by_id[j["id"]][1]
            e = effs.get(j["id"], {})
            r["ref_gld_eff"], r["cand_gld_eff"] = e.get("ref"), e.get("cand")
            r["gld_eff_dev"] = efficiency_deviation(r["ref_gld_eff"], r["cand_gld_eff"])

    def finish(self) -> dict[str, Any]:
        from .report import write_figures
        rows = list(iter_jsonl(self.results_path)) if self.results_path.exists() else []
        wanted = {s.sample_id for s in self.samples}
        rows = [r for r in rows if r.get("sample_id") in wanted]
        compiled = self.builder.available
        ran = self.s.device == "cuda" and compiled
        why = ("" if ran else "no GPU (--device cpu)" if compiled else "nvcc not found")
        summary = summarize(rows, compiled_measured=compiled, run_measured=ran, not_run_reason=why)
        summary.update(pairs=len(self.pairs), device=self.s.device, arch=self.s.arch, io_tol=IO_TOL,
                       ncu_metric=self.s.ncu_metric if self.s.ncu else None,
                       notes=list(dict.fromkeys(self.notes)),
                       unreadable_lines=[str(p) for p in self.problems][:20])
        (self.out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
        try:
            write_figures({"run": rows}, self.out / "figures.png")
        except ImportError as exc:  # matplotlib/scipy are optional
            summary["notes"].append(f"figures not drawn: {exc}")
        return summary


def evaluate(pairs_path: Path, samples_path: Path, out_dir: Path, settings: EvalSettings | None = None,
             on_result: Callable[[dict, int, int], None] | None = None) -> dict[str, Any]:
    return Evaluation(pairs_path, samples_path, out_dir, settings or EvalSettings(), on_result).run()
