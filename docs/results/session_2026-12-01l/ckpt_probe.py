"""Session 29's probe (one device call): can a supervisor keep a candidate's process off the GPU
while another run is timed, with the driver's checkpoint lock (cuCheckpointProcessLock), and
what does it cost?  Questions:
  1. does the lock return only once the process's submitted GPU work is done (a 1 s sleep kernel)?
  2. does the process's CPU side go on while locked (a heartbeat every 5 ms)?
  3. does it work on a process that dropped CAP_SYS_PTRACE and is not dumpable (our candidates)?
  4. on a process that received CUDA IPC memory (closed again), and one mid torch.compile?
  5. what does a process without CUDA answer?
  6. can a timing process see another context's work by the latency of an empty kernel?
Writes one JSON line per case to stdout. Imports kernelmill only for the IPC case."""
import ctypes
import json
import os
import subprocess
import sys
import time

import torch


class LockArgs(ctypes.Structure):
    _fields_ = [("timeoutMs", ctypes.c_uint), ("reserved0", ctypes.c_uint), ("reserved1", ctypes.c_uint64 * 7)]


def lib():
    c = ctypes.CDLL("libcuda.so.1")
    for name in ("cuCheckpointProcessLock", "cuCheckpointProcessUnlock", "cuCheckpointProcessGetState"):
        getattr(c, name).restype = ctypes.c_int
    return c


def probe_latency(n=30):
    """median/max wall of an empty-ish kernel + synchronize, in us"""
    x = torch.zeros(1, device="cuda")
    out = []
    for _ in range(n):
        t = time.perf_counter()
        x.add_(1)
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t) * 1e6)
    out.sort()
    return round(out[len(out) // 2], 1), round(out[-1], 1)


def child(mode):
    if mode == "nocuda":
        print("ready", flush=True)
        time.sleep(5)
        return
    if mode == "nodump":
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(4, 0)  # PR_SET_DUMPABLE 0
        sys.path.insert(0, os.environ["KM_SRC"])
        from kernelmill.verify.process.candidate import drop_ptrace
        drop_ptrace()
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    if mode == "ipc":
        sys.path.insert(0, os.environ["KM_SRC"])
        from kernelmill.verify.process import cuda_ipc
        got = cuda_ipc.receive(json.loads(open(os.environ["KM_DESC"]).read()), "cuda")
        assert float(got["x"][0].sum()) == 1024.0
    t_start = time.perf_counter()
    beats, gpu_done = [], []
    if mode == "compile":
        f = torch.compile(lambda a: (a.sin() * a.cos() + a).relu().sum(dim=-1))
        a = torch.randn(256, 256, device="cuda")
        print("ready", flush=True)
        t = time.perf_counter()
        f(a)
        torch.cuda.synchronize()
        print(json.dumps({"compile_s": time.perf_counter() - t, "t_start": t_start}), flush=True)
        return
    # ~1 s of one kernel (H200 ~1.98 GHz): submitted, then the CPU carries on
    torch.cuda._sleep(int(2.0e9))
    print("ready", flush=True)
    t_end = time.perf_counter() + 4.0
    next_gpu = time.perf_counter() + 0.1
    while time.perf_counter() < t_end:
        beats.append(time.perf_counter())
        time.sleep(0.005)
        if time.perf_counter() >= next_gpu:
            t = time.perf_counter()
            torch.ones(1, device="cuda").add_(1)
            torch.cuda.synchronize()
            gpu_done.append((t, time.perf_counter()))
            next_gpu = time.perf_counter() + 0.1
    gaps = [b - a for a, b in zip(beats, beats[1:])]
    print(json.dumps({"beats": len(beats), "max_beat_gap_s": max(gaps), "t_start": t_start,
                      "gpu_calls": [(round(a, 4), round(b, 4)) for a, b in gpu_done]}), flush=True)


def case(mode, hold_s=1.0, delay_s=0.05):
    c = lib()
    env = dict(os.environ)
    exp = None
    if mode == "ipc":
        sys.path.insert(0, env["KM_SRC"])
        from kernelmill.verify.process import cuda_ipc
        exp = cuda_ipc.export({"x": [torch.ones(1024, device="cuda")]}, "cuda")
        path = "/tmp/km_desc.json"
        open(path, "w").write(json.dumps(exp.description))
        env["KM_DESC"] = path
    p = subprocess.Popen([sys.executable, __file__, "child", mode], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "ready"
    time.sleep(delay_s)
    st = ctypes.c_int(-1)
    rc_state = c.cuCheckpointProcessGetState(p.pid, ctypes.byref(st))
    args = LockArgs(timeoutMs=10000)
    t0 = time.perf_counter()
    rc_lock = c.cuCheckpointProcessLock(p.pid, ctypes.byref(args))
    t_lock = time.perf_counter() - t0
    lat_locked = probe_latency()
    st2 = ctypes.c_int(-1)
    c.cuCheckpointProcessGetState(p.pid, ctypes.byref(st2))
    time.sleep(max(0.0, hold_s - (time.perf_counter() - t0)))
    t1 = time.perf_counter()
    rc_unlock = c.cuCheckpointProcessUnlock(p.pid, None) if rc_lock == 0 else None
    t_unlock = time.perf_counter() - t1
    out = p.stdout.read()
    p.wait()
    rec = {"case": mode, "rc_state": rc_state, "state": st.value, "rc_lock": rc_lock, "lock_s": round(t_lock, 4),
           "state_locked": st2.value, "rc_unlock": rc_unlock, "unlock_s": round(t_unlock, 4),
           "lat_locked_us": lat_locked, "t_lock_at": round(t0, 4), "t_unlock_at": round(t1, 4),
           "child": out.strip()[-2000:], "child_rc": p.returncode}
    print(json.dumps(rec), flush=True)
    if exp is not None:
        exp.free()


def busy_detect():
    """without any lock: the latency of our empty kernel while another process runs a 1 s kernel"""
    idle = probe_latency()
    p = subprocess.Popen([sys.executable, __file__, "child", "plain"], stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "ready"
    busy = probe_latency(10)
    p.stdout.read()
    p.wait()
    print(json.dumps({"case": "busy_detect", "idle_us": idle, "beside_1s_kernel_us": busy}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2])
    else:
        torch.zeros(1, device="cuda")
        print(json.dumps({"driver": torch.cuda.driver_version() if hasattr(torch.cuda, "driver_version") else None,
                          "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}), flush=True)
        busy_detect()
        for mode in ("plain", "nodump", "ipc", "compile", "nocuda"):
            try:
                case(mode, hold_s=2.0 if mode == "compile" else 1.0, delay_s=0.3 if mode == "compile" else 0.05)
            except Exception as exc:  # noqa: BLE001
                print(json.dumps({"case": mode, "error": repr(exc)}), flush=True)
        # an unlocked compile, for the compile case's figure
        p = subprocess.Popen([sys.executable, __file__, "child", "compile"], stdout=subprocess.PIPE, text=True)
        p.stdout.readline()
        print(json.dumps({"case": "compile_unlocked", "child": p.stdout.read().strip()}), flush=True)
        p.wait()
