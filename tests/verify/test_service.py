"""`kernelmill serve` over loopback: verdicts out, bad requests get 4xx, no request lost."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

import pytest

from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig
from kernelmill.verify.client import ServiceError, VerifyClient
from kernelmill.verify.service import ServiceConfig, VerifyService, make_server

TOKEN = "s3cret"


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    tasks = load_tasks("builtin").by_id()
    service = VerifyService(VerifyConfig(device="cpu", trials=1, cache_dir=str(tmp / "cache")),
                            ServiceConfig(port=0, max_body_bytes=200_000, max_samples=50, token=TOKEN),
                            store=str(tmp / "verdicts.sqlite"), tasks=tasks)
    server = make_server(service)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    samples = {s.sample_id: s for s in builtin_samples() if s.language == "torch"}
    yield {"url": url, "service": service, "tasks": tasks, "samples": samples}
    server.shutdown()


def _post(url: str, body: bytes, token: str | None = TOKEN) -> tuple[int, dict]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data=body, headers=headers), timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_verify_by_task_id_and_inline_task(served):
    client = VerifyClient(served["url"], token=TOKEN)
    ok = served["samples"]["builtin/level1/01_ReLU/torch__ok"]
    bad = served["samples"]["builtin/level1/06_Sum/torch__incorrect"]
    verdicts = client.verify([], [ok, bad])  # tasks from the service's source
    assert [v.status for v in verdicts] == ["ok", "incorrect"]
    assert [v.sample_id for v in verdicts] == [ok.sample_id, bad.sample_id]
    # inline task code under a name the service does not know
    task = replace(served["tasks"][ok.task_id], task_id="mine/relu")
    [v] = client.verify([task], [replace(ok, sample_id="inline", task_id="mine/relu")])
    assert v.status == "ok" and v.task_id == "mine/relu" and v.sample_id == "inline"


def test_cached_verdicts_under_concurrent_clients_lose_nothing(served):
    client = VerifyClient(served["url"], token=TOKEN)
    ok = served["samples"]["builtin/level1/01_ReLU/torch__ok"]
    client.verify([], [ok])  # in the store now

    def one(i: int):
        return client.verify([], [replace(ok, sample_id=f"c{i}")])[0]

    with ThreadPoolExecutor(8) as pool:
        verdicts = list(pool.map(one, range(60)))
    assert sorted(v.sample_id for v in verdicts) == sorted(f"c{i}" for i in range(60))
    assert all(v.status == "ok" and v.cached for v in verdicts)
    assert served["service"].health()["served_cached"] >= 60


@pytest.mark.parametrize("body, status, words", [
    (b"{not json", 400, "not valid JSON"),
    (b'{"tasks": []}', 400, "samples"),
    (b'{"samples": [{"sample_id": "a"}]}', 400, "samples[0]"),
    (b'{"samples": ["x"]}', 400, "samples[0]"),
    (json.dumps({"samples": [{"sample_id": str(i), "task_id": "t", "language": "torch", "code": ""}
                             for i in range(51)]}).encode(), 413, "limit is 50"),
    (b'{"samples": [], "pad": "' + b"x" * 300_000 + b'"}', 413, "limit is 200000"),
])
def test_bad_requests_get_4xx_with_a_message(served, body, status, words):
    code, data = _post(served["url"] + "/verify", body)
    assert code == status and words in data["error"]


def test_token_and_paths(served):
    assert _post(served["url"] + "/verify", b'{"samples": []}', token=None)[0] == 401
    assert _post(served["url"] + "/verify", b'{"samples": []}', token="wrong")[0] == 401
    assert _post(served["url"] + "/nope", b"{}")[0] == 404
    with pytest.raises(ServiceError) as exc:
        VerifyClient(served["url"], token="wrong").verify([], [])
    assert exc.value.status == 401
    assert VerifyClient(served["url"]).health()["ok"] is True


def test_unknown_task_is_a_verdict_not_an_error(served):
    ok = served["samples"]["builtin/level1/01_ReLU/torch__ok"]
    [v] = VerifyClient(served["url"], token=TOKEN).verify([], [replace(ok, task_id="no/such")])
    assert v.status == "runtime_error" and "unknown_task" in v.flags
