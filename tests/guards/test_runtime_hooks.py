"""Items 28, 36, 23/29 and 25 (issue 42): what the candidate's process does, seen by an
audit hook (or, for 25, by the harness's functions compared before and after, code
included) whatever the code's spelling, refused and flagged; an honest subprocess is left alone."""

from __future__ import annotations

import textwrap

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples

TASK = textwrap.dedent("""
    import torch
    import torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    def get_inputs():
        return [torch.randn(64, 64)]

    def get_init_inputs():
        return []
""")


def cand(prelude: str, body: str = "return torch.relu(x)") -> str:
    return ("import torch\nimport torch.nn as nn\n" + textwrap.dedent(prelude) +
            "\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        " + body + "\n")


CASES = {
    # a package manager started by a name built at run time (static scans see no "subprocess.Popen")
    "pip_at_import": (cand("""
        import importlib, sys
        sp = importlib.import_module("sub" + "process")
        try:
            getattr(sp, "ru" + "n")([sys.executable, "-m", "pi" + "p", "install", "fastkernels"], capture_output=True)
        except Exception:
            pass
    """), "runtime_install"),
    "fetch_weights": (cand("""
        import urllib.request
        try:
            urllib.request.urlopen("http://10.255.255.1/answers.pt", timeout=1)
        except Exception:
            pass
    """), "runtime_install"),
    "signal_the_supervisor": (cand("""
        import os, signal
        try:
            os.kill(os.getppid(), signal.SIGCONT)
        except Exception:
            pass
    """), "harness_tampering"),
    "patch_kernelmill_on_disk": (cand("""
        import os, kernelmill.verify as kv
        try:
            open(os.path.join(os.path.dirname(kv.__file__), "x_patch.py"), "w").write("pass")
        except Exception:
            pass
    """), "harness_tampering"),
    # answers left in shared memory by an earlier run (item 23's replay channel)
    "replay_from_shm": (cand("""
        import glob, os
        for p in glob.glob("/dev/shm/km_answers_*"):
            open(p, "rb").read()
        try:
            open("/dev/shm/km_answers_relu", "wb").write(b"0")
        except Exception:
            pass
    """), "shared_answers"),
    # a neighbour's folder under the harness's work folder (item 29)
    "read_a_neighbour": (cand("""
        import glob, os
        work = os.path.dirname(os.path.dirname(os.path.realpath(os.environ["HOME"])))
        for p in glob.glob(os.path.join(work, "*", "*", "candidate", "candidate.py")):
            if not os.path.realpath(p).startswith(os.path.realpath(os.environ["HOME"])):
                try:
                    open(p).read()
                except Exception:
                    pass
    """), "shared_answers"),
    # item 25: a harness function patched in place (the same object, another code)
    "code_swapped_in_place": (cand("""
        import sys
        _t = sys.modules["kernelmill.verify.measure." + "timing"]

        def _fast(self, n, check=None):
            return None

        _t.Bench.round.__code__ = _fast.__code__
    """), "harness_patched"),
    # what Triton does in a spare (found on the GPU: every Triton candidate was flagged): its
    # own job folder listed, a driver cache under the folder its process was started in
    "honest_own_folder_and_cache": (cand("""
        import os
        home = os.path.realpath(os.environ["HOME"])
        os.listdir(home)
        cache = os.path.join(os.path.dirname(home), ".triton-like", "cache")
        os.makedirs(cache, exist_ok=True)
        with open(os.path.join(cache, "util.so"), "wb") as f:
            f.write(b"0")
        open(os.path.join(cache, "util.so"), "rb").read()
    """), None),
    # item 24 spelled past the static scan (26): who called? the checker gets the answer,
    # anything else (the timer) gets an empty tensor
    "dual_path_by_stack": (cand("""
        import importlib
        _s = importlib.import_module("s" + "ys")

        def _caller():
            return getattr(_s, "_get" + "frame")(2).f_code.co_name
    """, "return torch.relu(x) if 'check' in _caller() else torch.empty_like(x)"), "harness_introspection"),
    "dual_path_by_exec": (cand("""
        def _caller():
            g = {}
            exec("import sys as s\\nname = s._get" + "frame(3).f_code.co_name", g)
            return g["name"]
    """, "return torch.relu(x) if 'check' in _caller() else torch.empty_like(x)"), "harness_introspection"),
    # item 27 spelled past the static scan: a global precision switch flipped at import; the
    # reference and the comparison run in the supervisor's process, which it cannot reach,
    # and the flag is read from the candidate's process after its calls
    "precision_flag_by_getattr": (cand("""
        getattr(torch, "set_float32_matmul_" + "precision")("med" + "ium")
    """), "precision_downgrade"),
    # libraries that read frames for themselves, called by an honest candidate
    "honest_libraries_that_read_frames": (cand("""
        import collections, logging, typing
        Pair = collections.namedtuple("Pair", "a b")
        T = typing.TypeVar("T")
        logging.getLogger("honest").debug("loaded")
    """, "Pair(1, 2)\n        return torch.relu(x)"), None),
    "honest_subprocess": (cand("""
        import subprocess
        subprocess.run(["true"])
    """), None),
}


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hooks")
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    samples = [Sample(name, task.task_id, "torch", code) for name, (code, _) in CASES.items()]
    cfg = VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp / "c"))
    neighbour = tmp / "c" / "work" / "spare-other" / "job-1" / "candidate"  # another run's candidate, still there
    neighbour.mkdir(parents=True)
    (neighbour / "candidate.py").write_text("ANSWER = 42\n")
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
    (v,) = verify_samples({task.task_id: task}, [Sample("swap", task.task_id, "torch", CASES["code_swapped_in_place"][0])],
                          VerifyConfig(device="cpu", trials=2, time=True, cache_dir=str(tmp_path / "c")))
    assert v.status == "rejected" and "harness_patched" in v.flags, (v.status, v.flags, v.message[:300])


def test_a_refusal_that_makes_the_candidate_fail_still_rejects_it(tmp_path):
    # the hook's PermissionError is often the run's failure itself: the trick outranks it
    task = Task(task_id="t/relu", code=TASK, name="relu", level=1)
    code = cand("import os, signal", "os.kill(os.getppid(), signal.SIGCONT)\n        return torch.relu(x)")
    (v,) = verify_samples({task.task_id: task}, [Sample("dies", task.task_id, "torch", code)],
                          VerifyConfig(device="cpu", trials=2, time=False, cache_dir=str(tmp_path / "c")))
    assert v.status == "rejected" and "harness_tampering" in v.flags, (v.status, v.flags, v.message[:300])
