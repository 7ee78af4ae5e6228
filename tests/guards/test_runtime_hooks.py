"""Items 28, 36, 23/29 and 25 (issue 42): what the candidate's process does, seen by an
audit hook (or, for 25, by the harness's functions compared before and after, code
included) whatever the code's spelling, refused and flagged; an honest subprocess is left alone."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from runtime_corpus import CONTROLS, HOSTILE_HOOKS, TASK, cand, plant_neighbour  # noqa: E402

from kernelmill.records import Sample, Task  # noqa: E402
from kernelmill.verify import VerifyConfig, verify_samples  # noqa: E402

# the corpus (tests/guards/runtime_corpus.py, shared with benchmarks/guards_catch.py): each
# hostile candidate with its flag, each control with none
CASES = {**HOSTILE_HOOKS, **{name: (code, None) for name, code in CONTROLS.items()}}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hooks")
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    samples = [Sample(name, task.task_id, "torch", code) for name, (code, _) in CASES.items()]
    cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp / "c"))
    plant_neighbour(tmp / "c")  # another run's candidate, still there
    return {v.sample_id: v for v in verify_samples({task.task_id: task}, samples, cfg)}


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_hooks(verdicts, name):
    v, flag = verdicts[name], CASES[name][1]
    if flag is None:
        assert v.status == "ok" and not v.flags, (v.flags, v.message)
    else:
        assert v.status == "rejected" and flag in v.flags, (v.status, v.flags, v.message[:300])
        assert "refused" not in v.message or flag in v.message


def test_the_stack_reader_is_the_first_frame_with_a_file_of_its_own():
    import collections
    import inspect
    import sys

    from kernelmill.verify.guards.audit_hook import stack_reader

    here = (__file__,)
    assert stack_reader(sys._getframe(0), here)  # this test's own code
    frames = []
    g = {"sys": sys, "frames": frames}
    exec("frames.append(sys._getframe(0))", g)  # exec'd code: its caller decides
    assert stack_reader(frames[0], here)
    frame = inspect.currentframe()
    assert stack_reader(frame, here)
    assert not stack_reader(sys._getframe(0), ("/elsewhere/",))
    # a library reading frames for itself stops the walk at its own file
    seen = []
    real = sys._getframe

    def spy(depth=0):
        seen.append(real(1))
        return real(depth + 1)

    sys._getframe = spy
    try:
        collections.namedtuple("P", "a")
    finally:
        sys._getframe = real
    assert seen and not stack_reader(seen[0], here)


@pytest.mark.parametrize("path, flagged", [
    ("/w/work/spare-a/job-2/candidate/x.py", False),   # its own job folder
    ("/w/work/spare-a/job-2", False),                  # that folder itself, listed
    ("/w/work/spare-a/.triton/cache/k/util.so", False),  # the spare's own caches
    ("/w/work/spare-a", False),
    ("/w/work/spare-a/job-1/candidate/x.py", True),    # an earlier job of the same resident
    ("/w/work/spare-b/job-7/out.pt", True),            # another spare's candidate
    ("/w/work/spare-b/.triton/cache/k/util.so", True), # another spare's caches
    ("/w/work", True),
    ("/dev/shm/answers", True),
    ("/tmp/elsewhere", False),
])
def test_which_paths_are_anothers(path, flagged):
    from kernelmill.verify.guards.audit_hook import reads_others

    assert reads_others(path, "/w/work/spare-a/job-2/", "/w/work/") is flagged
    assert reads_others(path, "/w/work/spare-a/job-2/", None) is path.startswith("/dev/shm/")


def test_nothing_was_written_into_the_package():
    import kernelmill.verify as kv
    from pathlib import Path

    assert not (Path(kv.__file__).parent / "x_patch.py").exists()


def test_a_patch_that_breaks_the_harness_still_rejects(tmp_path):
    # found by the regrade of an old store (docs/results/issue43/regrade_cpu): with timing on,
    # the patched Bench.round returned None, the timing loop broke, and the verdict read
    # runtime_error; the failed run's facts now carry what was rebound
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    (v,) = verify_samples({task.task_id: task}, [Sample("swap", task.task_id, "torch", CASES["h25_code_swapped_in_place"][0])],
                          VerifyConfig(device="cpu", trials=2, time=True, cache_dir=str(tmp_path / "c")))
    assert v.status == "rejected" and "harness_patched" in v.flags, (v.status, v.flags, v.message[:300])


def test_a_refusal_that_makes_the_candidate_fail_still_rejects_it(tmp_path):
    # the hook's PermissionError is often the run's failure itself: the trick outranks it
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    code = cand("import os, signal", "os.kill(os.getppid(), signal.SIGCONT)\n        return torch.relu(x)")
    (v,) = verify_samples({task.task_id: task}, [Sample("dies", task.task_id, "torch", code)],
                          VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp_path / "c")))
    assert v.status == "rejected" and "harness_tampering" in v.flags, (v.status, v.flags, v.message[:300])


@pytest.mark.gpu
def test_gpu_a_torch_compile_candidate_is_not_flagged(tmp_path):
    """cuda-l1's candidates call torch.compile: on the GPU inductor defines prims of its own and
    writes Triton kernels; 0.5.5-0.5.8 rejected five such rows as harness_patched (issue 39's
    0.5.8 run). The CPU control above covers the rule; this one the GPU path end to end."""
    from kernelmill.verify.guards import FLAGS

    code = CONTROLS["honest_torch_compile"]
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    cfg = VerifyConfig(device="cuda", trials=3, cache_dir=str(tmp_path / "c"))
    v, = verify_samples({task.task_id: task}, [Sample("honest_torch_compile", task.task_id, "torch", code)], cfg)
    assert v.status == "ok", (v.status, v.flags, v.message[:400])
    assert not [f for f in v.flags if f in FLAGS], (v.flags, v.message[:400])
    assert v.speedup is not None


def test_a_kernel_is_counted_for_an_operator_that_existed_before_and_for_any_without_the_list():
    from kernelmill.verify.guards.trace import kernel_op, kernels_for_known_ops

    assert kernel_op("aten/mul.Tensor/CPU") == "aten::mul.Tensor" and kernel_op("prims/fma/Meta") == "prims::fma"
    before = (frozenset({"aten/sin/CPU"}), frozenset({"aten::sin", "aten::mul.Tensor"}))
    now = frozenset({"aten/sin/CPU", "aten/mul.Tensor/CPU", "prims/fma/Meta"})
    assert kernels_for_known_ops(before, now) == ["aten/mul.Tensor/CPU"]  # prims::fma is new: not the harness's
    assert kernels_for_known_ops(before, frozenset()) == ["removed aten/sin/CPU"]
    # a torch that cannot list its operators: every new registration counts
    assert kernels_for_known_ops((before[0], None), now) == ["aten/mul.Tensor/CPU", "prims/fma/Meta"]


def test_a_relative_pythonpath_entry_is_not_another_candidates_folder(tmp_path, monkeypatch):
    """Found on the GPU (session of 2026-11-30): with `PYTHONPATH=src` (relative, as a user
    types it) the entry reached the workers as it was, resolved against their own folders; a
    torch.compile candidate's importlib.metadata scan of sys.path opened `work/zygote-run-*/src`
    and read as shared_answers. The harness resolves its PYTHONPATH where it was given."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", "src_of_the_user")
    code = cand("import importlib.metadata", "sum(1 for _ in importlib.metadata.distributions())\n"
                "        return torch.relu(x)")
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    (v,) = verify_samples({task.task_id: task}, [Sample("scans", task.task_id, "torch", code)],
                          VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp_path / "c")))
    assert v.status == "ok" and not v.flags, (v.status, v.flags, v.message[:300])


def test_the_environment_names_pythonpath_entries_where_the_harness_was_started(tmp_path, monkeypatch):
    import os

    from kernelmill.verify.sandbox import scrubbed_env

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["src", "", "/abs/lib"]))
    entries = scrubbed_env()["PYTHONPATH"].split(os.pathsep)
    assert entries[1:] == [str(tmp_path / "src"), str(tmp_path), "/abs/lib"], entries
