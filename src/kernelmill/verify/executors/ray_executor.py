"""The Ray executor: builds as CPU tasks, runs as GPU tasks, on a Ray cluster.

Ray is the cluster layer (scheduling, node failure, retries); this module only
maps a candidate onto two tasks. The build task needs one CPU; the run task one
GPU (or one CPU for CPU runs) and prefers the node that built the candidate, so
the run finds the extension in that node's build cache (elsewhere it rebuilds
it: slower, same verdict). A task whose worker process or node dies is retried
by Ray (`max_retries`, bounded); the verdict is written once, by the harness
process, when the task's result arrives, so a retry never duplicates one.
Each node needs kernelmill and its dependencies installed; `config.cache_dir`
is a path on each node.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

from ...records import Sample, Task, Verdict, from_dict, to_dict

MAX_RETRIES = 2


def _require_ray():
    try:
        import ray
    except ImportError:
        raise RuntimeError("the ray executor needs Ray: pip install 'kernelmill[ray]'") from None
    return ray


def _node_verifier(config_dict: dict):
    from ..config import VerifyConfig
    from ..runner import Verifier

    return Verifier(VerifyConfig.from_dict(config_dict, "the Ray driver's verify settings"), None)


def _job(key: str, task: dict, sample: dict):
    from ..runner import RunnerJob

    return RunnerJob(key, from_dict(Task, task), from_dict(Sample, sample))


def _build_task(config_dict: dict, key: str, task: dict, sample: dict) -> dict:
    """On a node: build one candidate. Returns {'node', 'build'} or {'verdict'}."""
    import ray

    verifier = _node_verifier(config_dict)
    job = _job(key, task, sample)
    t0 = time.monotonic()
    try:
        verdict = verifier.build(job)
    finally:
        verifier.cleanup(job)
    out = {"node": ray.get_runtime_context().get_node_id(), "build_s": time.monotonic() - t0}
    if verdict is not None:
        out["verdict"] = to_dict(verdict)
    else:
        out["build"] = job.build
    return out


def _run_task(config_dict: dict, key: str, task: dict, sample: dict, build: dict | None) -> dict:
    verifier = _node_verifier(config_dict)
    job = _job(key, task, sample)
    gpu = 0 if verifier.device == "cuda" else None  # Ray made exactly one GPU visible
    t0 = time.monotonic()
    try:
        verifier._prepare(job)
        job.build = build
        verdict = verifier.run(job, gpu)
    finally:
        verifier.cleanup(job)
    return {"verdict": to_dict(verdict), "start": t0, "end": time.monotonic()}


class RayExecutor:
    name = "ray"

    def __init__(self, address: str | None = None):
        self.address = address
        self.ray = _require_ray()

    def _init(self) -> None:
        if not self.ray.is_initialized():
            self.ray.init(address=self.address, ignore_reinit_error=True, log_to_driver=False)

    def prepare(self, config):
        """Resolve `device=auto` from the cluster's resources, not this machine's."""
        self._init()
        if config.device == "auto":
            has_gpu = self.ray.cluster_resources().get("GPU", 0) > 0
            config = dataclasses.replace(config, device="cuda" if has_gpu else "cpu")
        return config

    def execute(self, verifier, jobs: list, on_done: Callable, accounting) -> None:
        ray = self.ray
        self._init()
        cfg = dataclasses.asdict(verifier.config)
        cfg["standby"] = 0  # a node's verifier lives for one task: no spares to keep warm
        gpu_run = verifier.device == "cuda"
        build_fn = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_build_task)
        run_fn = ray.remote(num_cpus=1, num_gpus=1 if gpu_run else 0, max_retries=MAX_RETRIES)(_run_task)
        by_ref: dict = {}
        for job in jobs:
            ref = build_fn.remote(cfg, job.key, to_dict(job.task), to_dict(job.sample))
            by_ref[ref] = ("build", job)
        try:
            while by_ref:
                ready, _ = ray.wait(list(by_ref), num_returns=1, timeout=0.5)
                for ref in ready:
                    stage, job = by_ref.pop(ref)
                    try:
                        out = ray.get(ref)
                    except Exception as exc:  # noqa: BLE001 - retries exhausted or our bug
                        on_done(job, exc)
                        continue
                    if stage == "build":
                        accounting.note_build(out["build_s"], (out.get("build") or {}).get("build_info"))
                        if "verdict" in out:
                            on_done(job, from_dict(Verdict, out["verdict"]))
                            continue
                        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

                        strategy = NodeAffinitySchedulingStrategy(
                            node_id=out["node"], soft=True)
                        ref2 = run_fn.options(scheduling_strategy=strategy).remote(
                            cfg, job.key, to_dict(job.task), to_dict(job.sample), out["build"])
                        by_ref[ref2] = ("run", job)
                    else:
                        accounting.note_run("ray", out["start"], out["end"])
                        on_done(job, from_dict(Verdict, out["verdict"]))
        except BaseException:
            for ref in by_ref:
                ray.cancel(ref, force=True)
            raise
