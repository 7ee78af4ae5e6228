"""The fork server (verify/pools/zygote.py): a forked worker gets its own session,
folder, environment and streams, its exit status comes back as Popen's would, it
dies with the zygote, and verification through forked spares gives the verdicts
fresh processes give."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

from kernelmill.tasks import load_tasks
from kernelmill.tasks.builtin import builtin_samples
from kernelmill.verify import VerifyConfig, verify_samples
from kernelmill.verify.sandbox import Sandbox, scrubbed_env
from kernelmill.verify.pools.zygote import Zygote, ZygoteError

# a module the zygote can run (its folder is on the zygote's PYTHONPATH): it says
# what its process looks like, then reads one line of stdin and exits with argv[1]
PROBE = '''
import json, os, sys
print(json.dumps({"pid": os.getpid(), "sid": os.getsid(0), "pgid": os.getpgid(0), "cwd": os.getcwd(),
                  "env": dict(os.environ), "argv": sys.argv, "torch_loaded": "torch" in sys.modules}), flush=True)
line = sys.stdin.readline()
print("stderr:" + line.strip(), file=sys.stderr, flush=True)
sys.exit(int(sys.argv[1]))
'''


@pytest.fixture()
def zygote(tmp_path):
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "km_probe.py").write_text(PROBE)
    env = scrubbed_env({"KM_ONLY_IN_ZYGOTE": "1"}, home=str(tmp_path))
    env["PYTHONPATH"] = str(tmp_path / "mods") + os.pathsep + env["PYTHONPATH"]
    z = Zygote("build", env, tmp_path / "zygote")
    yield z
    z.close()


def _start(sandbox, zygote, folder: Path, code: int):
    folder.mkdir()
    env = {"PATH": os.environ.get("PATH", ""), "KM_CHILD": "yes"}
    return sandbox.start_forked(zygote, [str(code)], folder, env, stdin_pipe=True, module="km_probe")


def test_a_forked_process_has_its_own_session_folder_environment_and_streams(zygote, tmp_path):
    sandbox = Sandbox(4, 64, 100_000, limit_address_space=False)
    proc = _start(sandbox, zygote, tmp_path / "w", 3)
    proc.stdin.write(b"hello\n")
    proc.stdin.close()
    res = sandbox.watch(proc, timeout=60)
    assert res.returncode == 3 == proc.returncode
    facts = json.loads(res.stdout.splitlines()[0])
    assert facts["pid"] == proc.pid == facts["sid"] == facts["pgid"]  # a session and group of its own
    assert facts["cwd"] == str(tmp_path / "w")
    assert facts["env"]["KM_CHILD"] == "yes" and "KM_ONLY_IN_ZYGOTE" not in facts["env"]  # exactly its own
    assert facts["argv"][1:] == ["3"]
    assert facts["torch_loaded"]  # imported once, in the zygote
    assert "stderr:hello" in res.stderr


def test_exit_statuses_and_a_kill_come_back_as_popen_would_say(zygote, tmp_path):
    sandbox = Sandbox(4, 64, 100_000, limit_address_space=False)
    ok = _start(sandbox, zygote, tmp_path / "a", 0)
    ok.stdin.close()
    assert ok.wait(timeout=60) == 0
    hung = _start(sandbox, zygote, tmp_path / "b", 0)  # waits on stdin
    time.sleep(0.3)
    assert hung.poll() is None
    sandbox.discard(hung)  # the group kill, then wait
    assert hung.returncode == -signal.SIGKILL


def test_children_die_with_the_zygote(zygote, tmp_path):
    sandbox = Sandbox(4, 64, 100_000, limit_address_space=False)
    proc = _start(sandbox, zygote, tmp_path / "w", 0)
    zygote.proc.kill()
    assert proc.wait(timeout=30) == -signal.SIGKILL
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the forked process outlived its zygote")
    with pytest.raises(ZygoteError):
        _start(sandbox, zygote, tmp_path / "later", 0)


def test_a_zygote_that_cannot_start_says_where_to_look(tmp_path):
    env = scrubbed_env({}, home=str(tmp_path))
    env["PYTHONHOME"] = str(tmp_path / "nowhere")  # the interpreter itself cannot start
    with pytest.raises(ZygoteError, match="zygote.stderr.txt"):
        Zygote("build", env, tmp_path / "z")


IDS = ["builtin/level1/01_ReLU/cpp__ok", "builtin/level1/01_ReLU/torch__ok", "builtin/level1/06_Sum/torch__incorrect"]


@pytest.mark.slow
def test_verdicts_through_forked_spares_are_those_of_fresh_processes(tmp_path, shared_build_cache):
    tasks = load_tasks("builtin").by_id()
    samples = [s for s in builtin_samples() if s.sample_id in IDS]
    got = {}
    for fork in (True, False):
        cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=shared_build_cache, build_standby=2,
                           standby=1, fork_workers=fork)
        got[fork] = verify_samples(tasks, samples, cfg)
    assert [v.status for v in got[True]] == [v.status for v in got[False]] == [s.meta["expect"] for s in samples]
    for v in got[True]:  # every run (and the C++ build) in a forked worker
        assert v.phases.get("spare_forked") == 1, v.phases
        assert v.phases.get("build_spare_forked") == (1 if v.sample_id.endswith("cpp__ok") else None), v.phases
    for v in got[False]:
        assert "spare_forked" not in v.phases and "build_spare_forked" not in v.phases
    for a, b in zip(got[True], got[False]):
        assert a.max_abs_err == b.max_abs_err


def test_the_zygote_says_whether_its_children_can_use_cuda(zygote):
    # nothing it imported asked torch for a device (on this machine there is none to ask)
    assert zygote.cuda_fork_safe is True and zygote.why_not_cuda == ""


GPU_IDS = ["builtin/level1/01_ReLU/cuda__ok", "builtin/level1/01_ReLU/cuda__runtime_error",
           "builtin/level1/01_ReLU/triton__ok", "builtin/level1/01_ReLU/torch__ok"]


@pytest.mark.gpu
@pytest.mark.parametrize("resident", ["off", "auto"])
def test_forked_spares_and_candidate_processes_on_the_gpu(tmp_path, shared_build_cache, resident):
    # on CUDA the run spare is forked by a zygote that left torch.utils.cpp_extension out
    # (after it, a forked child cannot open a CUDA context), and it forks the candidate's
    # process before its own imports (launch.prestart); both open their own contexts.
    # With residents (a GPU's default, pools/resident.py) the resident is the zygote's
    # fork and its launcher forks the candidates' processes whether or not workers are forked
    tasks = load_tasks("builtin").by_id()
    samples = [s for s in builtin_samples() if s.sample_id in GPU_IDS]
    got = {}
    for fork in (True, False):
        cfg = VerifyConfig(device="cuda", trials=2, cache_dir=shared_build_cache, standby=2, fork_workers=fork,
                           resident=resident)
        got[fork] = verify_samples(tasks, samples, cfg)
    assert [v.status for v in got[True]] == [v.status for v in got[False]] == [s.meta["expect"] for s in samples], \
        [(v.sample_id, v.status, v.message[:200]) for v in got[True]]
    for v in got[True]:
        if v.sample_id.split("/")[-1].startswith("cuda"):
            assert v.phases.get("build_spare_forked") == 1, v.phases
        if v.status == "ok":
            assert v.phases.get("spare_forked") == 1 and v.phases.get("cand_forked") == 1, v.phases
            assert v.speedup is not None and v.measurement["exchange"] == "cuda_ipc"
            assert ("resident_jobs" in v.phases) == (resident == "auto"), v.phases
    for v in got[False]:
        assert "spare_forked" not in v.phases
        if resident == "off":
            assert "cand_forked" not in v.phases
        elif v.status == "ok":
            assert v.phases.get("cand_forked") == 1 and "resident_jobs" in v.phases, v.phases


def _wait_dead(proc, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return True
        time.sleep(0.05)
    return False


def test_a_gpu_verifier_starts_its_zygotes_before_it_probes_the_gpus(tmp_path, monkeypatch):
    # runner.Verifier: the run and build zygotes import torch while the GPUs are probed
    # (a process importing torch too); the spares then fork from those very zygotes
    from kernelmill.verify import runner
    from kernelmill.verify.pools import standby

    order = []
    started = standby.start_zygote
    monkeypatch.setattr(runner, "start_zygote", lambda mode, *a: order.append(mode) or started(mode, *a))
    fake = ({"index": 0, "name": "Fake GPU", "capability": "9.0", "memory_gb": 80.0},)
    monkeypatch.setattr(runner, "cuda_devices", lambda: order.append("probe") or fake)
    monkeypatch.setattr(runner, "device_name", lambda device: "Fake GPU")
    verifier = runner.Verifier(VerifyConfig(device="cuda", cache_dir=tmp_path, fork_workers=True), None)
    try:
        assert order[:3] == ["run", "build", "probe"]
        zygotes = []
        for sb in (verifier.standby, verifier.build_standby):
            z = sb._zygote_future.result(timeout=180)  # it started
            zygotes.append(z)
            assert sb._zygote_here({}) is z  # the standby forks from it, starts no other
    finally:
        verifier.close()
    assert all(_wait_dead(z.proc) for z in zygotes)


def test_early_zygotes_go_when_the_probe_finds_no_gpu(tmp_path, monkeypatch):
    from kernelmill.verify import runner
    from kernelmill.verify.pools import standby

    futures = []
    started = standby.start_zygote
    monkeypatch.setattr(runner, "start_zygote", lambda *a: futures.append(started(*a)) or futures[-1])
    from kernelmill.verify import devices

    for module in (runner, devices):  # and device_name raises: no GPU visible
        monkeypatch.setattr(module, "cuda_devices", lambda: ())
    with pytest.raises(RuntimeError, match="no CUDA GPU"):
        runner.Verifier(VerifyConfig(device="cuda", cache_dir=tmp_path, fork_workers=True), None)
    assert len(futures) == 2
    assert all(_wait_dead(f.result(timeout=180).proc) for f in futures)
    # a CPU run starts none (nothing of it is forked on a GPU)
    futures.clear()
    runner.Verifier(VerifyConfig(device="cpu", cache_dir=tmp_path, fork_workers=True), None).close()
    assert futures == []
