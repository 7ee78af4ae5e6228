"""Throughput and overhead of the `generate` client against a local scripted
OpenAI-compatible server (no model): samples/s at several concurrencies and
server latencies, and the client's own CPU cost per sample.

The server runs in its own process, so `client CPU/sample` (process time of
this process divided by samples) is what our client costs: prompt rendering,
HTTP, JSON, parsing, the JSONL append. A bare httpx loop at the same
concurrency (no prompts, no parsing, no file) is measured as the floor.

    python benchmarks/generate_throughput.py --requests 1000 --concurrency 1 16 64 --latency 0 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from kernelmill.generate import GenerateConfig, SamplingParams, generate_async, load_template, make_backend, prompt_inputs
from kernelmill.tasks import load_tasks


def start_server(latency: float) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "kernelmill.generate.fake_server", "--latency", str(latency)],
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    return proc, url


async def bare_httpx(url: str, n: int, concurrency: int) -> float:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": "x"}], "max_tokens": 16}
    async with httpx.AsyncClient(limits=httpx.Limits(max_connections=concurrency)) as client:
        queue = list(range(n))

        async def worker():
            while queue:
                queue.pop()
                r = await client.post(f"{url}/chat/completions", json=body)
                r.json()

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return time.perf_counter() - t0


async def ours(url: str, n: int, concurrency: int, out: Path) -> tuple[float, int]:
    tasks = load_tasks("builtin").tasks
    per_task = -(-n // len(tasks))
    tpl = load_template("cuda")
    cfg = GenerateConfig(n=per_task, params=SamplingParams(max_tokens=16, seed=0))
    inputs = prompt_inputs(tasks, tpl, cfg)
    backend = make_backend("openai", "fake-model", base_url=url, concurrency=concurrency)
    t0 = time.perf_counter()
    summary = await generate_async(inputs, backend, tpl, out, cfg)
    dt = time.perf_counter() - t0
    await backend.aclose()
    return dt, summary.written


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64])
    ap.add_argument("--latency", type=float, nargs="+", default=[0.0])
    args = ap.parse_args()
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print("| latency s | concurrency | samples/s (ours) | ideal samples/s | client CPU ms/sample | bare httpx req/s | bare httpx CPU ms/req |")
    print("|---|---|---|---|---|---|---|")
    for latency in args.latency:
        proc, url = start_server(latency)
        try:
            for c in args.concurrency:
                n = args.requests if latency == 0 else min(args.requests, int(c / latency * 5) or c)
                with tempfile.TemporaryDirectory() as d:
                    cpu0 = time.process_time()
                    dt, written = asyncio.run(ours(url, n, c, Path(d) / "s.jsonl"))
                    cpu = time.process_time() - cpu0
                cpu1 = time.process_time()
                bare_dt = asyncio.run(bare_httpx(url, written, c))
                bare_cpu = time.process_time() - cpu1
                ideal = f"{c / latency:,.0f}" if latency else "-"
                print(f"| {latency} | {c} | {written / dt:,.0f} | {ideal} | {1000 * cpu / written:.2f} | "
                      f"{written / bare_dt:,.0f} | {1000 * bare_cpu / written:.2f} |", flush=True)
        finally:
            proc.terminate()
            proc.wait()


if __name__ == "__main__":
    main()
