"""Load test of `kernelmill serve` on loopback: cached-verdict requests per second
from concurrent clients, and that every request gets its own verdict back.

    python benchmarks/serve_load.py --requests 2000 --clients 16
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from kernelmill.tasks import load_tasks  # noqa: E402
from kernelmill.tasks.builtin import builtin_samples  # noqa: E402
from kernelmill.verify import VerifyConfig  # noqa: E402
from kernelmill.verify.client import VerifyClient  # noqa: E402
from kernelmill.verify.service import ServiceConfig, VerifyService, make_server  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--clients", type=int, default=16)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="km-serve-"))
    service = VerifyService(VerifyConfig(device="cpu", trials=1, cache_dir=str(tmp / "cache")),
                            ServiceConfig(port=0), store=str(tmp / "v.sqlite"), tasks=load_tasks("builtin").by_id())
    server = make_server(service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    client = VerifyClient(f"http://127.0.0.1:{server.server_address[1]}")
    seeds = [s for s in builtin_samples() if s.language == "torch" and s.meta.get("expect") != "timeout"][:4]
    t = time.monotonic()
    first = client.verify([], seeds)  # computed once, then served from the store
    fill_s = time.monotonic() - t

    def one(i: int):
        s = seeds[i % len(seeds)]
        v = client.verify([], [replace(s, sample_id=f"r{i}")])[0]
        return v.sample_id, v.status, s.sample_id

    t = time.monotonic()
    with ThreadPoolExecutor(args.clients) as pool:
        got = list(pool.map(one, range(args.requests)))
    wall = time.monotonic() - t
    want = {s.sample_id: v.status for s, v in zip(seeds, first)}
    lost = args.requests - len({g[0] for g in got})
    wrong = sum(1 for _sid, status, seed in got if status != want[seed])
    print(json.dumps({"requests": args.requests, "clients": args.clients, "wall_s": round(wall, 2),
                      "requests_per_s": round(args.requests / wall, 1), "lost": lost, "wrong": wrong,
                      "first_verify_s": round(fill_s, 1), "health": service.health()}, indent=1))
    server.shutdown()


if __name__ == "__main__":
    main()
