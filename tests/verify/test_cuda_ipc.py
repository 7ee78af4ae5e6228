"""The tensor exchange of a guarded run through CUDA IPC (verify/process/cuda_ipc.py).

On the CPU: the layout, the checks an untrusted description must pass, the fallbacks to
files, and the option. With `-m gpu`: a real exchange between two processes, a lying
description refused without harm, and guarded verdicts equal with either exchange."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import types

import pytest

from kernelmill.verify.measure.settings import TimingConfig
import torch
from typer.testing import CliRunner

from kernelmill.cli import app
from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.config import ConfigError
from kernelmill.verify.guards import FLAGS
from kernelmill.verify.process import cuda_ipc
from kernelmill.verify.process.candidate import _finish
from kernelmill.verify.process.job import CandidateJob
from kernelmill.verify.process.supervisor import _exchange_mode, _receive_outputs, _shapes_only


def tree():
    return {
        "trials": [[torch.randn(3, 5), torch.arange(7, dtype=torch.int64), 4, None],
                   (torch.ones(2, 2, dtype=torch.bool), 2.5, "word")],
        "checks": [[torch.randn(4, dtype=torch.float64).to(torch.bfloat16)], [torch.empty(0, 3)]],
        "init": [torch.full((2,), 3.0, dtype=torch.float16), 17],
    }


def nested(depth: int) -> list:
    out: list = []
    for _ in range(depth):
        out = [out]
    return out


def roundtrip(obj):
    skeleton, leaves, tensors, total = cuda_ipc.layout(obj)
    buf = torch.zeros(max(total, 1), dtype=torch.uint8)
    cuda_ipc.pack_into(buf, leaves, tensors)
    desc = json.loads(json.dumps({"tree": skeleton, "leaves": leaves}))  # what crosses the pipe
    return cuda_ipc.unpack(desc, buf, "cpu"), desc, buf


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(b) is type(a) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def test_a_tree_crosses_as_json_and_one_byte_buffer():
    original = tree()
    back, desc, buf = roundtrip(original)
    assert same(original, back)  # tuples arrive as tuples, as through files (loading.inputs_to_cpu)
    assert all(leaf["offset"] % cuda_ipc.ALIGN == 0 for leaf in desc["leaves"])
    # copies, not views of the shared buffer: the sender may free it at once
    buf.fill_(0)
    assert same(original, back)


def test_objects_it_does_not_carry_say_so():
    for obj in ([torch.randn(2).to_sparse()], [object()], {1: torch.zeros(1)}):
        with pytest.raises(cuda_ipc.Unsupported):
            cuda_ipc.layout(obj)


@pytest.mark.parametrize("change, match", [
    (lambda d: d["leaves"][0].update(offset=10**9), "outside"),
    (lambda d: d["leaves"][0].update(offset=3), "not valid"),
    (lambda d: d["leaves"][0].update(dtype="object"), "dtype"),
    (lambda d: d["leaves"][0].update(shape=[-1, 5]), "not valid"),
    (lambda d: d["leaves"][1].update(shape=[10**6]), "outside"),
    (lambda d: d.update(tree={"__kernelmill_tensor__": 99}), "names no leaf"),
    (lambda d: d.update(tree={"__kernelmill_tensor__": 0, "x": 1}), "names no leaf"),
    (lambda d: d.update(tree=nested(70)), "deeper"),
    (lambda d: d.update(leaves="all"), "no leaf list"),
])
def test_an_untrusted_description_is_checked_against_the_real_size(change, match):
    _, desc, buf = roundtrip(tree())
    change(desc)
    with pytest.raises(cuda_ipc.BadDescription, match=match):
        cuda_ipc.unpack(desc, buf, "cpu")


def test_the_option_is_checked_and_reaches_the_cli():
    assert VerifyConfig(device="cpu").exchange == "auto"  # its GPU tests passed on an H100
    with pytest.raises(ConfigError, match="exchange"):
        VerifyConfig(device="cpu", exchange="pigeon")
    assert "--exchange" in CliRunner().invoke(app, ["verify", "--help"], terminal_width=200).output
    # the way tensors travel never changes a verdict, so it is not part of the answer key
    assert VerifyConfig(device="cpu", exchange="auto").answer_key("cpu") == VerifyConfig(device="cpu").answer_key("cpu")


def test_files_on_a_cpu_or_when_asked():
    sets = {"trials": [[torch.zeros(4)]]}
    assert _exchange_mode(types.SimpleNamespace(exchange="auto"), torch.device("cpu"), sets) == "file"
    assert _exchange_mode(types.SimpleNamespace(exchange="file"), torch.device("cuda"), sets) == "file"
    meta = _shapes_only({"timing": [[torch.zeros(3, 2), 5]]})
    assert meta["timing"][0][0].device.type == "meta" and meta["timing"][0][0].shape == (3, 2)


def candidate_job(tmp_path, exchange):
    return CandidateJob(candidate="c.py", inputs=str(tmp_path / "in"), outputs=str(tmp_path / "outputs.pt"),
                        device="cpu", weight_seed=0, message_limit=500, rlimits={}, time=False, timing=TimingConfig(),
                        guards="standard", exchange=exchange)


def test_a_candidate_that_cannot_share_its_outputs_writes_them(tmp_path):
    sent = []
    report = types.SimpleNamespace(send=sent.append)
    outputs = {"trials": [[torch.arange(4.0), torch.ones(2)]]}
    _finish(candidate_job(tmp_path, "cuda_ipc"), outputs, {"phases": {}}, report)
    facts = sent[-1]["facts"]
    assert "ipc_outputs" not in facts and "CUDA" in facts["ipc_error"]
    got = torch.load(tmp_path / "outputs.pt", weights_only=True)
    assert torch.equal(got["trials"][0][0], torch.arange(4.0))


def test_a_bad_description_from_the_candidate_is_an_error_and_it_is_released():
    said = []
    launched = types.SimpleNamespace(send=said.append)
    final = {"status": "ran", "ipc_outputs": {"handle": "zz", "leaves": []}}
    got = _receive_outputs(final, launched, torch.device("cpu"), torch.device("cpu"))
    assert isinstance(got, Exception) and "ipc_outputs" not in final
    assert said == [{"cmd": "released"}]
    assert _receive_outputs({"status": "ran"}, launched, torch.device("cpu"), torch.device("cpu")) is None
    assert len(said) == 1


# -- on a GPU ------------------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import json, sys, torch
    from kernelmill.verify.process import cuda_ipc
    desc = json.loads(sys.stdin.readline())
    got = cuda_ipc.receive(desc, "cuda")
    x = got["trials"][0][0]
    assert x.device.type == "cuda" and got["init"][0].device.type == "cpu", (x.device, got["init"][0].device)
    back = cuda_ipc.export({"sum": x.double().sum().reshape(1), "doubled": x * 2}, "cuda")
    print(json.dumps(back.description), flush=True)
    sys.stdin.readline()  # the parent copied them
    back.free()
""")


@pytest.mark.gpu
def test_gpu_two_processes_exchange_without_host_copies():
    x = torch.randn(1 << 20, device="cuda")
    exp = cuda_ipc.export({"trials": [[x]], "init": [torch.ones(3)]}, "cuda")
    try:
        child = subprocess.Popen([sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True)
        child.stdin.write(json.dumps(exp.description) + "\n")
        child.stdin.flush()
        back = cuda_ipc.receive(json.loads(child.stdout.readline()), "cuda")
        child.stdin.write("done\n")
        child.stdin.flush()
        assert child.wait(timeout=120) == 0
    finally:
        exp.free()
    assert torch.equal(back["doubled"], x * 2)
    assert back["sum"].item() == pytest.approx(x.double().sum().item())


@pytest.mark.gpu
def test_gpu_a_lying_description_is_refused_and_cuda_still_works():
    exp = cuda_ipc.export({"t": [torch.randn(1000, device="cuda")]}, "cuda")
    desc = json.loads(json.dumps(exp.description))
    desc["leaves"][0]["shape"] = [1 << 30]  # 4 GB from a 4 KB allocation
    code = ("import json,sys,torch\nfrom kernelmill.verify.process import cuda_ipc\n"
            "d=json.loads(sys.stdin.read())\n"
            "try:\n    cuda_ipc.receive(d,'cuda')\nexcept cuda_ipc.BadDescription as e:\n    print('refused', e)\n"
            "print(torch.ones(4,device='cuda').sum().item())\n")
    try:
        out = subprocess.run([sys.executable, "-c", code], input=json.dumps(desc), capture_output=True, text=True,
                             timeout=120)
    finally:
        exp.free()
    assert out.returncode == 0, out.stderr
    assert "refused" in out.stdout and "outside" in out.stdout and out.stdout.strip().endswith("4.0")


@pytest.mark.gpu
def test_gpu_verdicts_agree_through_ipc_and_files(tmp_path):
    tasks = load_tasks("builtin").by_id()
    wanted = {"builtin/level1/01_ReLU/torch__ok", "builtin/level1/01_ReLU/cuda__runtime_error",
              "builtin/level2/01_Gemm_Bias_ReLU/cuda__incorrect", "builtin/level2/01_Gemm_Bias_ReLU/torch__ok"}
    samples = [s for s in builtin_samples() if s.sample_id in wanted]
    by = {}
    for exchange in ("auto", "file"):
        config = VerifyConfig(device="cuda", trials=2, exchange=exchange, cache_dir=str(tmp_path / "cache"))
        by[exchange] = {v.sample_id: v for v in verify_samples(tasks, samples, config, store=None)}
    for sid in wanted:
        a, b = by["auto"][sid], by["file"][sid]
        # the guards' flags agree; a measurement's notes (kernelbench_host_bound on a launch-bound
        # ReLU near its threshold, events_disagree, clocks_moved) may differ between two runs
        guard_flags = lambda v: sorted(f for f in v.flags if f in FLAGS)  # noqa: E731
        assert (a.status, guard_flags(a)) == (b.status, guard_flags(b)), (sid, a, b)
        assert a.status == sid.rsplit("__", 1)[1], (sid, a.status, a.message)
        if a.status == "ok":
            assert a.measurement["exchange"] == "cuda_ipc" and b.measurement["exchange"] == "file"


def test_a_handle_with_zero_bytes_survives_the_struct():
    import ctypes

    raw = bytes([7, 0, 0, 9] + [0] * 40 + list(range(1, 21)))
    h = cuda_ipc._Handle()
    ctypes.memmove(ctypes.addressof(h), raw, cuda_ipc.HANDLE_BYTES)
    assert bytes(h.reserved) == raw  # a c_char array would read back b"\x07"


def test_outputs_all_land_where_the_supervisor_compares():
    obj = {"checks": [[torch.ones(3)]]}
    skeleton, leaves, tensors, total = cuda_ipc.layout(obj)
    assert leaves[0]["cpu"]
    buf = torch.zeros(total, dtype=torch.uint8)
    cuda_ipc.pack_into(buf, leaves, tensors)
    got = cuda_ipc.unpack({"tree": skeleton, "leaves": leaves}, buf, "meta", keep_cpu=False)
    assert got["checks"][0][0].device.type == "meta"
    kept = cuda_ipc.unpack({"tree": skeleton, "leaves": leaves}, buf, "meta")
    assert kept["checks"][0][0].device.type == "cpu"
