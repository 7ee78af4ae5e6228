"""Timed calls whose inputs give them away (issue 42, items 23 and 24).

A cache of answers keyed on the inputs' content up to a scale (item 23):
before 0.5.5 every timed input was one of two drawn sets times one scale, and a matmul
that remembered (A, B) -> A @ B answered (sA, sB) with s^2 (A @ B): 8.0x under standard,
7.0x under strict on a CPU, every check passed. Each element now gets its own factor
(measure/inputs.refill): the cache never hits, and the candidate is timed as what it is.

A checker-vs-timer dual path chosen by the inputs (item 24): until 0.5.5 the checked timed
calls got sets of their own, the task's plain draw (std 1), while the others were scaled;
a matmul computed only when the spread was 1 and read 10.0x under standard, every check
passed. The checked calls' sets are now timing sets refilled as any timed call's are."""

from __future__ import annotations

import pytest

from kernelmill.records import Sample, Task
from kernelmill.verify import VerifyConfig, verify_samples

TASK = Task("replay/matmul", '''
import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, a, b):
        return a @ b

def get_inputs():
    return [torch.randn(384, 384), torch.randn(384, 384)]

def get_init_inputs():
    return []
''', level=1)

REPLAY = '''
import torch
import torch.nn as nn

_seen = []  # (a's first and last elements, b's first, a @ b)


def _probe(t):
    f = t.reshape(-1)
    return f[:16].clone(), f[-16:].clone()


class ModelNew(nn.Module):
    def forward(self, a, b):
        pa, qa = _probe(a)
        pb = b.reshape(-1)[:16]
        for ka, kqa, kb, out in reversed(_seen[-8:]):
            s, t = pa[0] / ka[0], pb[0] / kb[0]
            if (torch.allclose(pa, ka * s, rtol=1e-5, atol=0) and torch.allclose(qa, kqa * s, rtol=1e-5, atol=0)
                    and torch.allclose(pb, kb * t, rtol=1e-5, atol=0)):
                return out * (s * t)  # (sA)(tB) = st (AB): a replay, not a matmul
        out = a @ b
        _seen.append((pa, qa, pb.clone(), out.clone()))
        return out
'''


SPREAD_TELLS = '''
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, a, b):
        if abs(float(a.std()) - 1.0) < 0.01:  # the task's own draw: a checked call
            return a @ b
        return a * b  # any other timed call: the shape, a fraction of the work
'''


def _verify(device: str, cache: str, code: str = REPLAY):
    samples = [Sample("replay", TASK.task_id, "torch", code)]
    return verify_samples({TASK.task_id: TASK}, samples, VerifyConfig(device=device, cache_dir=cache))[0]


def _assert_not_faster(v):
    assert v.status == "ok", (v.status, v.flags, v.message[:300])
    # an honest matmul plus its probes: no speedup to speak of (8x when the cache hit)
    assert v.speedup is not None and v.speedup < 1.5, v.speedup


def test_a_cache_up_to_a_scale_never_hits_on_timed_calls(shared_build_cache):
    _assert_not_faster(_verify("cpu", shared_build_cache))


@pytest.mark.gpu
def test_a_cache_up_to_a_scale_never_hits_on_timed_calls_gpu(shared_build_cache):
    _assert_not_faster(_verify("cuda", shared_build_cache))


def test_a_checked_call_cannot_be_told_by_its_inputs(shared_build_cache):
    v = _verify("cpu", shared_build_cache, SPREAD_TELLS)
    assert v.status == "incorrect" and "cached_output" in v.flags, (v.status, v.flags, v.message[:300])
