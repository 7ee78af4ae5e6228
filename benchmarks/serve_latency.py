"""Latency of one new candidate through `kernelmill serve`, its build cached:
the long-lived verifier (warm spares, reference profiles, build cache kept
between requests) against a fresh verifier per request (the service before).

Each request carries one candidate nobody verified before (a builtin correct
candidate with a new comment, so its store key is new and its extension, if
any, is already in the build cache). Requests go one at a time over loopback
HTTP, as a GRPO reward sends them.

    python benchmarks/serve_latency.py --device cpu --requests 12 --standby 1
    python benchmarks/serve_latency.py --device cuda --requests 20
    python benchmarks/serve_latency.py --device cuda --sample builtin/level1/01_ReLU/cuda__ok --build-standby 0

Prints p50/p90 per mode and writes JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kernelmill.records import Sample  # noqa: E402
from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402
from kernelmill.verify.client import VerifyClient  # noqa: E402
from kernelmill.verify.service import ServiceConfig, VerifyService, make_server  # noqa: E402


def new_candidates(base: Sample, n: int, tag: str) -> list[Sample]:
    return [replace(base, sample_id=f"{tag}-{i}", code=f"# request {tag}-{i}\n" + base.code) for i in range(n)]


class FreshVerifierService(VerifyService):
    """The service as it was: a new verifier (spares, reference profiles) per request."""

    def _run(self, task_map, samples):
        return verify_samples(task_map, samples, self.verify_config, store=self.store, progress=False)


def run_mode(mode: str, base: Sample, tasks: dict, config: VerifyConfig, n: int, store: str) -> list[float]:
    cls = FreshVerifierService if mode == "fresh" else VerifyService
    service = cls(config, ServiceConfig(port=0), store=store, tasks=tasks)
    server = make_server(service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = VerifyClient(f"http://127.0.0.1:{server.server_address[1]}", timeout=600)
    lat = []
    try:
        # one warm-up request (first start-up, reference profile), not counted
        client.verify([], new_candidates(base, 1, f"{mode}-warm"))
        for s in new_candidates(base, n, mode):
            t0 = time.perf_counter()
            (v,) = client.verify([], [s])
            lat.append(time.perf_counter() - t0)
            ph = v.phases or {}
            print(f"{mode:6s} {s.sample_id:12s} {v.status:10s} {lat[-1]:.2f} s  build process "
                  f"{ph.get('build_wall_s', '-')} s, run process {ph.get('run_wall_s', '-')} s, spare wait "
                  f"{ph.get('spare_wait_s', '-')} s", flush=True)
    finally:
        server.shutdown()
        server.server_close()
        service.close()
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--requests", type=int, default=12)
    ap.add_argument("--sample", default="builtin/level1/01_ReLU/torch__ok", help="builtin candidate to vary")
    ap.add_argument("--standby", type=int, default=-1, help="spare run workers kept warm (-1: the default)")
    ap.add_argument("--build-standby", type=int, default=-1,
                    help="spare build workers kept warm (VerifyConfig.build_standby; -1: the default)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--modes", default="long-lived,fresh")
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()
    tasks = load_tasks("builtin").by_id()
    base = next(s for s in builtin_samples() if s.sample_id == args.sample)
    out = {"device": args.device, "sample": args.sample, "requests": args.requests, "standby": args.standby,
           "build_standby": args.build_standby}
    with tempfile.TemporaryDirectory(prefix="km-serve-lat-") as tmp:
        config = VerifyConfig(device=args.device, trials=args.trials, cache_dir=str(Path(tmp) / "cache"),
                              standby=args.standby, build_standby=args.build_standby)
        for mode in args.modes.split(","):
            lat = run_mode(mode, base, tasks, config, args.requests, str(Path(tmp) / f"{mode}.sqlite"))
            q = statistics.quantiles(lat, n=10) if len(lat) >= 2 else lat * 9
            out[mode] = {"p50_s": statistics.median(lat), "p90_s": q[-1], "latencies_s": lat}
            print(f"{mode}: p50 {statistics.median(lat):.2f} s, p90 {q[-1]:.2f} s over {len(lat)} requests")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
