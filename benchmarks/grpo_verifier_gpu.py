"""Multi-turn GRPO with the kernel verifier on its own GPU, against the verifier on the policy's GPU.

A small random Qwen2 policy (benchmarks/train_gpu.py's tiny model and GRPO recipe, no downloads)
trains with `kernelmill.train.run_grpo` on the default device (cuda:0). Its verifier runs either on
GPU 1 (`--verifier-gpu other`) or on GPU 0 beside the policy (`--verifier-gpu same`), as a
`kernelmill serve` process (`--via serve`: started here with `--gpus 1` or `--gpus 0`,
CUDA_VISIBLE_DEVICES left alone, recipe `reward.verifier: http`) or in the trainer's process
(`--via local`: `LocalVerifier`, recipe `reward.verify.gpus: [1]` or `[0]`). `--mode both` (the
default on CUDA) runs `other` and then `same` in one invocation with the same seed, data and
steps, each in a fresh output folder (and a fresh serve process), and prints the two side by side.

GPU run (2 GPUs; ~3 minutes in all, bounded by `--max-seconds`, default 180):

    python benchmarks/grpo_verifier_gpu.py --device cuda --via serve --mode both --out $OUT/grpo2.json
    python benchmarks/grpo_verifier_gpu.py --device cuda --via local --mode both --out $OUT/grpo2_local.json

CPU smoke (no GPU: the policy and the verifier both on the CPU, `--verifier-gpu` has no meaning and
the output says so; tests/train/test_grpo_verifier_bench.py runs this):

    python benchmarks/grpo_verifier_gpu.py --device cpu --via serve --hidden 32 --layers 1 --grpo-steps 1 \\
        --grpo-batch 2 --generations 2 --turns 2 --turn-tokens 8 --languages torch --out /tmp/grpo2.json

**What is real and what is not.** A random model writes no kernel, so each generated turn text
is replaced by a real builtin candidate of the row's task and language
(`kernelmill.tasks.builtin.builtin_samples()`, expectation ok or a failing one; `timeout`
candidates are left out, they would only burn the run timeout). Everything after that choice is
the code users run: `KernelReward.verify` (task lookup, samples, one verifier call per turn), the
verifier (HttpVerifier against `kernelmill serve`, or LocalVerifier), its verdicts, the reward
rule, the feedback turns of `EpisodeRunner` and TRL's update. How the text becomes a candidate:

* `kernelmill.train.rewards.extract_code` is the one parser of a turn's text; both
  `KernelReward.verify` and the rollout's feedback (`episodes.attempt`) call it, with the text
  only. It is patched to look the text up in a table (and to fall back to the real parser for a
  text not in it).
* The table is filled by `KernelReward.verify`, which is where the text meets its task: the
  benchmark replaces the name `kernelmill.train.grpo.KernelReward` (the class `run_grpo` builds
  the reward from) with a subclass whose `verify` first draws a candidate for each (text, task,
  language) and then calls the real `KernelReward.verify` unchanged. This was the least
  invasive hook: `run_grpo` builds the reward itself from `verifier=`, and the verifier only ever
  sees samples, after the parsing.
* The draw: each (task, language) has a deck holding each of its candidates once; a text draws
  the deck's next card, and an empty deck is refilled shuffled with the drawing text's SHA-256 as
  seed. So a given sequence of texts always gives the same candidates, and any run of
  len(deck) draws of a task covers all of them: correct and failing mixed in fixed proportion,
  even in a one-step smoke run. The code gets a last line `# episode <run tag>-<draw n>-<text
  hash>`, so no two candidates are the same source and no verdict comes from a store (CUDA
  builds still hit the build cache after the first time, the realistic RL case; `serve` also gets
  a store of its own per run, never the user's). Two equal texts in one turn would share one
  candidate (counted as `duplicate_texts`; a random model practically never repeats itself).
* The trainer's process initialises CUDA seeing only GPU 0 (`kernelmill.train.placement.
  pin_policy_gpu`, what `kernelmill train grpo` does itself for `reward.verify.gpus`), then gives
  CUDA_VISIBLE_DEVICES its old value back for its children: one process that sees two GPUs gets
  `nn.DataParallel` from `Trainer`, which TRL's GRPOTrainer refuses. The serve process and the
  verifier's workers see both GPUs, numbered as usual.
* `kernelmill.train.grpo.build_grpo_trainer` is wrapped to add one TrainerCallback: it times
  each step and, with `--max-seconds`, stops training cleanly (`should_training_stop`) before a
  step that would not fit in the run's share of the time; nothing else is changed.

**What is measured**, per run, into `--out` (JSON, written after each run, so a later failure
keeps what was measured): episodes, episodes/min (over the Trainer's `train_runtime` from
log_history.jsonl, as train_gpu.py), steps, mean turns per episode, seconds spent waiting for
verdicts (a timer around the verifier object passed to `run_grpo`) and their share of
`train_runtime`, step times, verdict status counts (episodes.jsonl), mean episode and turn
reward, wall time, the policy's peak GPU memory (torch.cuda.max_memory_allocated of this
process), and, where nvidia-smi exists, utilisation and memory per GPU sampled every 500 ms into
a CSV (the verifier runs in other processes, so this is where its GPU use shows).

**Fairness and time.** Before the runs the policy does one generate and one backward in this
process (the device's start-up is then paid by neither run), and on CUDA with CUDA/Triton
candidates a warm-up (`--warmup`, default on there) verifies each chosen compiled candidate once
on all GPUs, so their builds are in the build cache for both runs alike (else the first run alone
would pay the cold builds: ~40 s for the first, which builds the precompiled header, 8-18 s each
after it on H100/H200). Each run also reports its rate after the first step ("steady"), where a
run has 2 steps or more. A guarded candidate run takes about 3-7 s (docs/results/benchmarks_history.md), one at a
time per GPU, so a step of batch B x T turns costs about B*T*5 s of verification: ~40 s a step
with the defaults (batch 4 = 1 prompt x 4 generations, 2 turns). `--max-seconds` (default 180, 0
= none) is the whole invocation's budget: each run gets an equal share of what is left when it
starts and stops cleanly after the last step that fits; at least one step always runs, so a run
that starts past its share still does one step (and may overrun the budget by that step). When
`--max-seconds` stops the first run of `--mode both` after k steps, the second runs at most k
steps too, so both cover the same steps of the same seeded data. Expected time of the GPU
command: ~20 s start-up, ~45-60 s warm-up, then the two runs in the rest of the 180 s (about one
or two steps each). Raise `--max-seconds` and `--grpo-steps` (default 4, a ceiling) for a longer
comparison.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_gpu import recipe_text, versions  # noqa: E402
from train_two_process import free_port  # noqa: E402

from kernelmill.train.placement import pin_policy_gpu  # noqa: E402  (the product's own placement)

FAILING = ("incorrect", "runtime_error", "compile_error")  # expectations of failing candidates ("timeout" left out)
SYSTEM = "You write fast GPU kernels."
FEEDBACK_TOKENS = 1400  # room kept in max_completion_length per feedback turn (a 2000-char error message: ~1300 tokens)


# ----------------------------------------------------------------------------- candidates
def candidate_pool(languages: list[str], samples=None) -> dict[tuple[str, str], list]:
    """(task_id, language) -> its builtin candidates (ok and failing, no timeouts), for the
    pairs that have at least one correct and one failing candidate."""
    if samples is None:
        from kernelmill.tasks.builtin import builtin_samples

        samples = builtin_samples()
    pool: dict[tuple[str, str], list] = defaultdict(list)
    for s in samples:
        if s.language in languages and s.meta.get("expect") in ("ok",) + FAILING:
            pool[(s.task_id, s.language)].append(s)
    return {key: sorted(c, key=lambda s: (s.meta["expect"], s.sample_id)) for key, c in sorted(pool.items())
            if any(s.meta["expect"] == "ok" for s in c) and any(s.meta["expect"] in FAILING for s in c)}


class CandidateMap:
    """Turn texts to builtin candidates: deterministic, every code unique, expectations mixed
    (see the module docstring)."""

    def __init__(self, pool: dict[tuple[str, str], list], tag: str):
        self.pool = pool
        self.tag = tag
        self.decks: dict[tuple[str, str], list] = {}
        self.by_text: dict[str, str] = {}
        self.draws: list[dict[str, Any]] = []
        self.duplicate_texts = 0

    def assign(self, text: str, task_id: str, language: str) -> str:
        key = (task_id, language)
        if key not in self.pool:
            raise KeyError(f"no builtin candidates for task {task_id!r} in language {language!r}")
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        deck = self.decks.get(key)
        if not deck:
            deck = list(self.pool[key])
            random.Random(digest).shuffle(deck)
            self.decks[key] = deck
        sample = deck.pop(0)
        n = len(self.draws)
        code = sample.code.rstrip("\n") + f"\n# episode {self.tag}-{n}-{digest[:12]}\n"
        if text in self.by_text:
            self.duplicate_texts += 1
        self.by_text[text] = code
        self.draws.append({"task_id": task_id, "language": language, "sample_id": sample.sample_id,
                           "expect": sample.meta["expect"]})
        return code

    def extract_code(self, real):
        """A stand-in for `rewards.extract_code`: the drawn candidate, or the real parser's answer."""
        def extract_code(text: str) -> tuple[str, str | None]:
            code = self.by_text.get(text)
            return (code, None) if code is not None else real(text)

        return extract_code

    def expectations(self) -> dict[str, int]:
        return dict(Counter(d["expect"] for d in self.draws))


def reward_class(base, cmap: CandidateMap):
    """`KernelReward` whose `verify` draws each text's candidate, then runs the real `verify`."""

    class CandidateReward(base):
        def verify(self, texts, task_ids, languages, task_codes=None):
            for text, tid, lang in zip(texts, task_ids, languages):
                cmap.assign(text, tid, lang)
            return super().verify(texts, task_ids, languages, task_codes)

    return CandidateReward


class TimedVerifier:
    """The verifier object handed to `run_grpo`, with the seconds spent waiting for its verdicts."""

    def __init__(self, inner):
        self.inner = inner
        self.calls: list[dict[str, float]] = []

    def __call__(self, tasks, samples):
        t0 = time.perf_counter()
        try:
            return self.inner(tasks, samples)
        finally:
            self.calls.append({"seconds": time.perf_counter() - t0, "samples": len(samples)})

    @property
    def seconds(self) -> float:
        return sum(c["seconds"] for c in self.calls)


def step_clock(deadline: float | None):
    """A TrainerCallback: wall time of each step; with a deadline (time.monotonic()), stop
    cleanly before a step that would not fit (at least one step runs)."""
    from transformers import TrainerCallback

    class StepClock(TrainerCallback):
        def __init__(self):
            self.step_s: list[float] = []
            self.stopped_early = False
            self._t0: float | None = None

        def on_step_begin(self, args, state, control, **kw):
            self._t0 = time.monotonic()

        def on_step_end(self, args, state, control, **kw):
            now = time.monotonic()
            if self._t0 is not None:
                self.step_s.append(now - self._t0)
            if deadline is not None and state.global_step < state.max_steps and self.step_s:
                if now + sum(self.step_s) / len(self.step_s) > deadline:
                    control.should_training_stop = True
                    self.stopped_early = True

    return StepClock()


@contextlib.contextmanager
def patched(cmap: CandidateMap, clock):
    """The three hooks of the module docstring, undone afterwards."""
    import kernelmill.train.grpo as grpo
    import kernelmill.train.rewards as rewards

    saved = rewards.extract_code, grpo.KernelReward, grpo.build_grpo_trainer
    real_build = grpo.build_grpo_trainer

    def build_grpo_trainer(recipe, verifier=None):
        trainer, tok = real_build(recipe, verifier)
        trainer.add_callback(clock)
        return trainer, tok

    rewards.extract_code = cmap.extract_code(saved[0])
    grpo.KernelReward = reward_class(saved[1], cmap)
    grpo.build_grpo_trainer = build_grpo_trainer
    try:
        yield
    finally:
        rewards.extract_code, grpo.KernelReward, grpo.build_grpo_trainer = saved


# ----------------------------------------------------------------------------- data
def write_rows(root: Path, pool: dict[tuple[str, str], list]) -> tuple[Path, list[dict], list[str]]:
    """One GRPO row per (task, language): the task's code as prompt and task_code."""
    from kernelmill.chat import feedback_message, load_template
    from kernelmill.records import Sample, Verdict
    from kernelmill.tasks import load_tasks

    tasks = load_tasks("builtin").by_id()
    rows, texts = [], []
    for (tid, lang), cands in pool.items():
        task = tasks[tid]
        user = (f"Write a faster {lang} version of this PyTorch model as class ModelNew "
                f"(task {tid}).\n\n{task.code}")
        rows.append({"prompt": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                     "task_id": tid, "language": lang, "task_code": task.code})
        texts += [user] + [c.code for c in cands]
    tpl = load_template("feedback")  # feedback turns' words for the tokenizer (as tests/train/conftest.py)
    probe = Sample("s", "t", "torch", "pass")
    for v in (Verdict("s", "t", "compile_error", message="error: expected ';'"),
              Verdict("s", "t", "incorrect", compiled=True, message="output: 3 of 16 elements outside atol"),
              Verdict("s", "t", "ok", compiled=True, correct=True, speedup=1.2)):
        texts.append(feedback_message(tpl, probe, v, require="ModelNew")["content"])
    data = root / "grpo.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return data, rows, [SYSTEM] + texts


def reward_yaml(a: argparse.Namespace, gpu: int | None, url: str | None) -> str:
    lines = ["reward:", "  tasks: builtin"]
    if a.via == "serve":
        lines += ["  verifier: http", f"  url: {url}"]
    else:
        lines += ["  verifier: local", "  verify:"]
        lines += ["    device: cpu"] if gpu is None else ["    device: cuda", f"    gpus: [{gpu}]"]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- processes
def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH")) if p)
    return env


class ServeProcess:
    """`kernelmill serve` as a child in its own process group (its verify workers included), stopped
    with SIGINT (the server closes its spares), then SIGTERM, then SIGKILL."""

    def __init__(self, device: str, gpu: int | None, store: Path, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.cmd = [sys.executable, "-m", "kernelmill.cli", "serve", "--tasks", "builtin", "--port", str(self.port),
                    "--device", device, "--store", str(store)] + ([] if gpu is None else ["--gpus", str(gpu)])
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        fh = open(self.log, "w")
        try:
            self.proc = subprocess.Popen(self.cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=child_env(), cwd=str(REPO), start_new_session=True)
        finally:
            fh.close()

    def wait_ready(self, timeout: float) -> dict:
        end = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"kernelmill serve exited with {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=5) as resp:
                    return json.loads(resp.read())
            except (OSError, ValueError):
                pass
            if time.monotonic() > end:
                raise RuntimeError(f"kernelmill serve not healthy after {timeout:.0f} s:\n{self.tail()}")
            time.sleep(0.5)

    def health(self) -> dict | None:
        try:
            with urllib.request.urlopen(self.url + "/health", timeout=5) as resp:
                return json.loads(resp.read())
        except (OSError, ValueError):
            return None

    def tail(self, n: int = 3000) -> str:
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return ""

    def stop(self) -> dict:
        """Stop it and whatever is left of its process group; what happened, for the JSON."""
        if self.proc is None:
            return {}
        pgid, how = self.proc.pid, None
        for sig, wait in ((signal.SIGINT, 10), (signal.SIGTERM, 10), (signal.SIGKILL, 10)):
            if self.proc.poll() is not None:
                break
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, sig)
            how = sig.name
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait)
        # workers it left behind in its group (none after a clean SIGINT)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)
        return {"pid": self.proc.pid, "pgid": pgid, "returncode": self.proc.returncode, "stopped_with": how}


class GpuSampler:
    """nvidia-smi's utilisation and memory per GPU every 500 ms into a CSV (when nvidia-smi exists)."""

    QUERY = "index,utilization.gpu,memory.used"

    def __init__(self, path: Path, interval_ms: int = 500):
        self.path = path
        self.interval_ms = interval_ms
        self.proc: subprocess.Popen | None = None

    def start(self) -> bool:
        exe = shutil.which("nvidia-smi")
        if not exe:
            return False
        fh = open(self.path, "w")
        try:
            self.proc = subprocess.Popen([exe, f"--query-gpu={self.QUERY}", "--format=csv,noheader,nounits",
                                          "-lms", str(self.interval_ms)], stdout=fh, stderr=subprocess.DEVNULL,
                                         stdin=subprocess.DEVNULL)
        finally:
            fh.close()
        return True

    def stop(self) -> dict | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        return summarise_gpu_csv(self.path.read_text(errors="replace"))


def summarise_gpu_csv(text: str) -> dict[str, dict[str, float]]:
    """`index, utilization %, memory MiB` lines -> per GPU: samples, mean/max utilisation, max memory."""
    per: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            continue
        try:
            per[str(int(parts[0]))].append((float(parts[1]), float(parts[2])))
        except ValueError:
            continue  # "[N/A]", a header, a half-written last line
    return {gpu: {"samples": len(v), "util_mean": round(sum(u for u, _ in v) / len(v), 1),
                  "util_max": max(u for u, _ in v), "mem_max_mib": max(m for _, m in v)}
            for gpu, v in sorted(per.items(), key=lambda kv: int(kv[0]))}


def gpu_listing(pinned: dict[str, Any]) -> dict[str, Any]:
    """The GPUs as the verifier numbers them (what --gpus means), the policy's, and nvidia-smi's
    (whose index is the CSV's; the PCI bus ids tie them together)."""
    import torch

    out: dict[str, Any] = dict(pinned)
    out["policy_torch"] = [{"index": i, "name": torch.cuda.get_device_name(i),
                            "pci_bus_id": getattr(torch.cuda.get_device_properties(i), "pci_bus_id", None)}
                           for i in range(torch.cuda.device_count())]
    exe = shutil.which("nvidia-smi")
    if exe:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            res = subprocess.run([exe, "--query-gpu=index,name,pci.bus_id,memory.total", "--format=csv,noheader"],
                                 capture_output=True, text=True, timeout=30)
            out["nvidia_smi"] = res.stdout.strip().splitlines()
    out["CUDA_VISIBLE_DEVICES"] = os.environ.get("CUDA_VISIBLE_DEVICES")
    out["CUDA_DEVICE_ORDER"] = os.environ.get("CUDA_DEVICE_ORDER")
    return out


# ----------------------------------------------------------------------------- one run
def warm_up(pool: dict[tuple[str, str], list], tag: str, device: str = "cuda",
            languages: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Verify every compiled (non-torch) candidate once, on all GPUs, so their builds are cached for every run."""
    from kernelmill.records import Sample
    from kernelmill.tasks import load_tasks
    from kernelmill.train.rewards import LocalVerifier

    tasks = load_tasks("builtin").by_id()
    samples = [Sample(f"warmup-{i}", s.task_id, s.language, s.code.rstrip("\n") + f"\n# warm-up {tag}\n")
               for i, s in enumerate(c for (_, lang), cands in pool.items()
                                     if (lang in languages if languages else lang != "torch") for c in cands)]
    if not samples:
        return {"samples": 0, "seconds": 0.0}
    t0 = time.perf_counter()
    verifier = LocalVerifier({"device": device})
    try:
        verdicts = verifier(list({s.task_id: tasks[s.task_id] for s in samples}.values()), samples)
    finally:
        verifier.close()
    return {"samples": len(samples), "seconds": round(time.perf_counter() - t0, 1),
            "statuses": dict(Counter(v.status for v in verdicts))}


def warm_policy(model_dir: Path, device: str) -> float:
    """One generate and one backward of the policy in this process before any timed run, so the
    first run does not alone pay the device's start-up (CUDA context, cuBLAS, kernel loading)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    t0 = time.perf_counter()
    dev = "cuda:0" if device == "cuda" else "cpu"
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16 if device == "cuda" else torch.float32)
    model.to(dev)
    ids = tok("class ModelNew", return_tensors="pt").input_ids.to(dev)
    model.generate(ids, max_new_tokens=8, do_sample=True, pad_token_id=tok.pad_token_id)
    model(input_ids=ids, labels=ids).loss.backward()
    del model
    gc.collect()
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return round(time.perf_counter() - t0, 2)


def steady_rate(episodes: list[dict], step_times: list[float]) -> float | None:
    """Episodes/min over the steps after the first (whose start-up costs the runs may not share alike)."""
    if len(step_times) < 2:
        return None
    later = sum(1 for e in episodes if e.get("step", 0) >= 1)
    return 60 * later / sum(step_times[1:])


def run_one(result: dict[str, Any], a: argparse.Namespace, root: Path, model: Path, data: Path,
            pool: dict[tuple[str, str], list], deadline: float | None,
            max_steps: int | None = None) -> dict[str, Any]:
    """One training run, its figures filled into `result` (which keeps what was measured if it fails);
    `max_steps` lowers --grpo-steps (to the steps an earlier run of the comparison got through)."""
    import torch

    from kernelmill.train import load_recipe, run_grpo
    from kernelmill.train.rewards import make_verifier

    name = result["name"]
    cuda = a.device == "cuda"
    gpu = (1 if name == "other" else 0) if cuda else None
    run_dir = root / f"run-{name}"
    run_dir.mkdir()
    out_dir = run_dir / "grpo-out"
    result.update({"via": a.via, "verifier_device": f"cuda GPU {gpu}" if cuda else "cpu",
                   "policy_device": "cuda:0" if cuda else "cpu", "dir": str(run_dir)})
    if not cuda:
        result["note"] = "CPU run: policy and verifier both on the CPU; --verifier-gpu has no meaning here"
    serve = (ServeProcess(a.device, gpu, run_dir / "verdicts.sqlite", run_dir / "serve.log")
             if a.via == "serve" else None)
    sampler = GpuSampler(run_dir / "nvidia_smi.csv")
    t_wall = time.perf_counter()
    try:
        if serve is not None:
            serve.start()
            result["serve_pid"] = serve.proc.pid
            t0 = time.perf_counter()
            result["serve_health"] = serve.wait_ready(a.serve_timeout)
            result["serve_start_s"] = round(time.perf_counter() - t0, 1)
        cfg = run_dir / "grpo.yaml"
        cfg.write_text(recipe_text("grpo", model, data, out_dir, a) + reward_yaml(a, gpu, serve.url if serve else None))
        overrides = [f"training.max_completion_length={a.turns * a.turn_tokens + (a.turns - 1) * FEEDBACK_TOKENS}",
                     f"training.seed={a.seed}"] + ([f"training.max_steps={max_steps}"] if max_steps else [])
        recipe = load_recipe(cfg, kind="grpo", overrides=overrides)
        result["recipe"], result["overrides"] = str(cfg), overrides
        timed = TimedVerifier(make_verifier(recipe.reward))  # what run_grpo would build from the recipe, timed
        cmap = CandidateMap(pool, tag=f"{name}-{os.getpid()}-{int(time.time())}")
        clock = step_clock(deadline)
        if cuda:
            gc.collect()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(0)  # the policy's GPU only: touching GPU 1 would put a context there
        result["gpu_sampling"] = sampler.start()
        t0 = time.perf_counter()
        try:
            with patched(cmap, clock):
                grpo = run_grpo(recipe, resume=False, verifier=timed)
        finally:  # the in-process verifier's spares stop here, not in the next run
            getattr(timed.inner, "close", lambda: None)()
        train_wall = time.perf_counter() - t0
        gpu_use = sampler.stop()
        episodes = [json.loads(x) for x in (out_dir / "episodes.jsonl").read_text().splitlines()]
        hist = [json.loads(x) for x in (out_dir / "log_history.jsonl").read_text().splitlines()]
        runtime = next(h["train_runtime"] for h in hist if "train_runtime" in h)
        turns = [t for e in episodes for t in e["turns"]]
        step_times = [h["step_time"] for h in hist if "step_time" in h] or clock.step_s
        result.update({
            "steps": grpo["steps"], "stopped_early": clock.stopped_early, "episodes": len(episodes),
            "episodes_per_min": 60 * len(episodes) / runtime,
            "turns_per_episode": len(turns) / max(1, len(episodes)), "train_runtime_s": runtime,
            "train_wall_s": train_wall,
            "verifier_s": timed.seconds, "verifier_share": timed.seconds / runtime,
            "verifier_calls": len(timed.calls), "verified_samples": sum(c["samples"] for c in timed.calls),
            "verifier_call_s": [round(c["seconds"], 2) for c in timed.calls],
            "step_time_s": step_times, "step_time_mean_s": sum(step_times) / max(1, len(step_times)),
            "steady_episodes_per_min": steady_rate(episodes, step_times),
            "callback_step_s": [round(s, 2) for s in clock.step_s],
            "statuses": dict(Counter(t["status"] for t in turns)),
            "drawn_expectations": cmap.expectations(), "duplicate_texts": cmap.duplicate_texts,
            "reward_mean": sum(e["reward"] for e in episodes) / max(1, len(episodes)),
            "turn_reward_mean": sum(t["reward"] for t in turns) / max(1, len(turns)),
            "first_reward": grpo.get("first_reward"), "last_reward": grpo.get("last_reward"),
            "policy_peak_mem_gb": round(torch.cuda.max_memory_allocated(0) / 2**30, 3) if cuda else None,
            "gpu_use": gpu_use})
        if serve is not None:
            result["serve_health_end"] = serve.health()
    except BaseException as exc:
        result["error"] = f"{type(exc).__name__}: {exc}".strip()
        if serve is not None:
            result["serve_log_tail"] = serve.tail()
        raise
    finally:
        if sampler.proc is not None:
            result["gpu_use"] = sampler.stop()
        if serve is not None:
            result["serve_stop"] = serve.stop()
        result["wall_s"] = time.perf_counter() - t_wall
    return result


# ----------------------------------------------------------------------------- report
def table(runs: list[dict]) -> str:
    cols = [("run", lambda r: r["name"]), ("via", lambda r: r["via"]), ("verifier", lambda r: r["verifier_device"]),
            ("steps", lambda r: f"{r['steps']}{'*' if r['stopped_early'] else ''}"),
            ("episodes", lambda r: str(r["episodes"])), ("ep/min", lambda r: f"{r['episodes_per_min']:.1f}"),
            ("steady", lambda r: "-" if r.get("steady_episodes_per_min") is None
             else f"{r['steady_episodes_per_min']:.1f}"),
            ("turns/ep", lambda r: f"{r['turns_per_episode']:.2f}"),
            ("verifier s", lambda r: f"{r['verifier_s']:.1f}"), ("share", lambda r: f"{r['verifier_share']:.0%}"),
            ("step s", lambda r: f"{r['step_time_mean_s']:.1f}"),
            ("verdicts", lambda r: " ".join(f"{k}:{v}" for k, v in sorted(r["statuses"].items()))),
            ("reward", lambda r: f"{r['reward_mean']:+.2f}"), ("wall s", lambda r: f"{r['wall_s']:.0f}"),
            ("policy GB", lambda r: "-" if r.get("policy_peak_mem_gb") is None else f"{r['policy_peak_mem_gb']:.2f}"),
            ("GPU util% / max MiB", lambda r: "-" if not r.get("gpu_use") else
             " ".join(f"{g}:{u['util_mean']:.0f}/{u['mem_max_mib']:.0f}" for g, u in r["gpu_use"].items()))]
    done = [r for r in runs if "episodes" in r]
    rows = [[h for h, _ in cols]] + [[f(r) for _, f in cols] for r in done]
    widths = [max(len(row[i]) for row in rows) for i in range(len(cols))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    if any(r["stopped_early"] for r in done):
        lines.append("* stopped early by --max-seconds (compare the rates)")
    for r in runs:
        if "episodes" not in r:
            lines.append(f"{r['name']}: {r.get('error') or r.get('skipped') or 'no result'}")
    return "\n".join(lines)


def comparison(runs: list[dict]) -> dict[str, Any] | None:
    by = {r["name"]: r for r in runs if "episodes" in r}
    if "other" not in by or "same" not in by:
        return None
    o, s = by["other"], by["same"]
    steady = (o["steady_episodes_per_min"] / s["steady_episodes_per_min"]
              if o.get("steady_episodes_per_min") and s.get("steady_episodes_per_min") else None)
    return {"episodes_per_min_other_over_same": o["episodes_per_min"] / s["episodes_per_min"],
            "steady_episodes_per_min_other_over_same": steady,
            "step_time_other_over_same": o["step_time_mean_s"] / s["step_time_mean_s"],
            "verifier_s_per_sample": {k: r["verifier_s"] / max(1, r["verified_samples"]) for k, r in by.items()},
            "same_steps": o["steps"] == s["steps"]}


# ----------------------------------------------------------------------------- main
def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="the policy's device (and the verifier's on cpu)")
    p.add_argument("--via", default="serve", choices=["serve", "local"],
                   help="serve: a `kernelmill serve` process (reward.verifier http); "
                        "local: LocalVerifier in this process")
    p.add_argument("--verifier-gpu", default="other", choices=["other", "same"],
                   help="with --mode single: the verifier on GPU 1 (other) or on the policy's GPU 0 (same)")
    p.add_argument("--mode", default=None, choices=["both", "single"],
                   help="both: 'other' then 'same' in one invocation (default on cuda); single: --verifier-gpu only "
                        "(default on cpu)")
    p.add_argument("--languages", default=None, help="candidate languages (default torch,cuda on cuda, torch on cpu)")
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--vocab", type=int, default=4000)
    p.add_argument("--grpo-steps", type=int, default=4)
    p.add_argument("--grpo-batch", type=int, default=4)
    p.add_argument("--generations", type=int, default=4)
    p.add_argument("--turns", type=int, default=2)
    p.add_argument("--turn-tokens", type=int, default=64)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--warmup", default="auto", choices=["auto", "on", "off"],
                   help="verify the compiled candidates once before the runs (auto: on CUDA with non-torch languages)")
    p.add_argument("--max-seconds", type=float, default=180.0,
                   help="budget of the whole invocation; each run stops cleanly after the last step that fits its "
                        "share (0: no limit)")
    p.add_argument("--serve-timeout", type=float, default=180.0, help="seconds to wait for kernelmill serve's /health")
    p.add_argument("--keep", action="store_true", help="keep the work folder (printed) instead of deleting it")
    p.add_argument("--out", default=None, help="write the results as JSON here")
    a = p.parse_args(argv)
    a.mode = a.mode or ("both" if a.device == "cuda" else "single")
    a.languages = [x.strip() for x in (a.languages or ("torch,cuda" if a.device == "cuda" else "torch")).split(",")
                   if x.strip()]
    if a.turns < 1 or a.grpo_steps < 1 or a.grpo_batch % a.generations:
        p.error("--turns and --grpo-steps must be >= 1 and --grpo-batch a multiple of --generations")
    return a


def _interrupt(signum, frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: list[str] | None = None) -> int:
    a = parse_args(argv)
    start = time.monotonic()
    # a polite stop (SIGTERM, e.g. a timeout) unwinds like Ctrl-C, so the serve process is stopped
    signal.signal(signal.SIGTERM, _interrupt)

    cuda = a.device == "cuda"
    # before anything touches CUDA in this process: the policy on GPU 0, the verifier's view unchanged
    pinned = pin_policy_gpu() if cuda else None

    import torch

    if cuda and not (pinned["verifier_sees"] and torch.cuda.is_available()):
        sys.exit("no CUDA device: run on the GPU machine, or pass --device cpu for a smoke run")
    # run names say where the verifier is; on the CPU there is no such choice
    names = ["other", "same"] if a.mode == "both" else [a.verifier_gpu if cuda else "cpu"]
    if cuda and "other" in names and len(pinned["verifier_sees"]) < 2:
        sys.exit(f"--verifier-gpu other needs 2 GPUs; {len(pinned['verifier_sees'])} visible")
    if cuda and torch.cuda.device_count() != 1:
        sys.exit(f"this process should see one GPU (the policy's) but sees {torch.cuda.device_count()}: "
                 "something initialised CUDA before pin_policy_gpu()")
    from kernelmill.train import build_tiny_model

    pool = candidate_pool(a.languages)
    if not pool:
        sys.exit(f"no builtin task has both a correct and a failing candidate in {','.join(a.languages)}")
    root = Path(tempfile.mkdtemp(prefix="kernelmill-grpo2-"))
    results: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__, "args": vars(a),
        "versions": versions(), "work_dir": str(root),
        "tasks": {f"{t}:{lang}": [c.meta["expect"] for c in cands] for (t, lang), cands in pool.items()},
        "runs": []}
    if cuda:
        results["gpus"] = gpu_listing(pinned)

    def save() -> None:  # after every part, so a later failure keeps what was measured
        if a.out:
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.out).write_text(json.dumps(results, indent=2, default=str))

    print(f"work folder {root}; tasks {', '.join(results['tasks'])}", flush=True)
    if not cuda:
        print("CPU run: the policy and the verifier both run on the CPU (--verifier-gpu has no meaning here)",
              flush=True)
    code = 0
    try:
        t0 = time.perf_counter()
        data, rows, texts = write_rows(root, pool)
        model = build_tiny_model(root / "model", texts, hidden=a.hidden, layers=a.layers, vocab_size=a.vocab,
                                 max_positions=8192)
        results["setup_s"] = round(time.perf_counter() - t0, 1)
        results["policy_warmup_s"] = warm_policy(model, a.device)
        if a.warmup == "on" or (a.warmup == "auto" and cuda and any(lang != "torch" for lang in a.languages)):
            if not cuda:
                sys.exit("--warmup on needs --device cuda (CPU candidates here are torch: nothing to build)")
            print("warm-up: verifying the compiled candidates once (their builds then cached for every run)",
                  flush=True)
            try:
                results["warmup"] = warm_up(pool, tag=str(os.getpid()))
            except Exception as exc:  # the runs then pay the cold builds (the first more than the second)
                results["warmup"] = {"error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps({"warmup": results["warmup"]}), flush=True)
        save()
        cap = None  # in --mode both: the steps the first run got through, when --max-seconds stopped it
        for k, name in enumerate(names):
            deadline = None
            if a.max_seconds:  # an equal share of what is left (past it already: the run does one step)
                left = a.max_seconds - (time.monotonic() - start)
                deadline = time.monotonic() + left / (len(names) - k)
            run: dict[str, Any] = {"name": name}
            results["runs"].append(run)
            try:
                run_one(run, a, root, model, data, pool, deadline, max_steps=cap)
                if run.get("stopped_early") and cap is None:
                    cap = run["steps"]
            except Exception:  # keep going: the other run may still work; the error is in the JSON
                import traceback

                traceback.print_exc()
                code = 1
            results["comparison"] = comparison(results["runs"])
            save()
            if "episodes" in run:
                print(json.dumps({k: run[k] for k in ("name", "via", "verifier_device", "steps", "episodes",
                                                      "episodes_per_min", "verifier_s", "verifier_share",
                                                      "statuses", "wall_s")}, default=str), flush=True)
    finally:
        results["total_s"] = round(time.monotonic() - start, 1)
        save()
        if not a.keep:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(table(results["runs"]))
    if results.get("comparison"):
        c = results["comparison"]
        steady = c["steady_episodes_per_min_other_over_same"]
        print(f"episodes/min other/same: {c['episodes_per_min_other_over_same']:.2f}"
              + (f" (after the first step: {steady:.2f})" if steady else "")
              + f"   step time other/same: {c['step_time_other_over_same']:.2f}")
    if a.out:
        print(f"JSON: {a.out}")
    return code


if __name__ == "__main__":
    sys.exit(main())
