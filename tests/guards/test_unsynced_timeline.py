"""Item 3 from the profiler's timeline (`trace.after_the_marker`): work on a
stream the timed stream never waited for, with fake kineto events (the real
ones come from a GPU run: tests/guards/test_gpu_corpus.py)."""

from __future__ import annotations

from kernelmill.verify.guards.trace import after_the_marker


class Ev:
    def __init__(self, name, stream, start_us, end_us, corr):
        self._n, self._s, self._a, self._b, self._c = name, stream, start_us * 1000, end_us * 1000, corr

    def device_type(self):
        return "DeviceType.CUDA"

    def name(self):
        return self._n

    def device_resource_id(self):
        return self._s

    def start_ns(self):
        return self._a

    def end_ns(self):
        return self._b

    def duration_ns(self):
        return self._b - self._a

    def correlation_id(self):
        return self._c


class Results:
    def __init__(self, events):
        self._e = events

    def events(self):
        return self._e


MARK = "at::cuda::(anonymous namespace)::spin_kernel(long)"


def test_a_side_stream_kernel_still_running_at_the_marker_is_named():
    evs = [Ev("relu_kernel", 7, 0, 3, 1), Ev("spin_relu_kernel", 13, 1, 80, 2), Ev(MARK, 7, 4, 5, 3)]
    late = after_the_marker(Results(evs))
    assert len(late) == 1 and "spin_relu_kernel on stream 13" in late[0]


def test_joined_side_streams_and_the_timed_stream_itself_pass():
    # the side kernel ended before the marker (the timed stream waited for it);
    # the timed stream's own kernels never count; a candidate's own earlier spin is not the marker
    evs = [Ev(MARK, 13, 0, 1, 1), Ev("gemm", 13, 1, 40, 2), Ev("epilogue", 7, 41, 60, 3),
           Ev("tail_on_timed_stream", 7, 60, 90, 4), Ev(MARK, 7, 90, 91, 5)]
    assert after_the_marker(Results(evs)) == []


def test_no_marker_or_no_results_says_nothing():
    assert after_the_marker(None) == []
    assert after_the_marker(Results([Ev("k", 7, 0, 1, 1)])) == []
