"""The warm-up steps that launch the harness's own kernels once (measure/inputs.py:
`warm_draws` for a supervisor, `warm_checks` for a candidate's process): they run on
every dtype they name, and drawing after them gives the draws a run would get."""

import torch

from kernelmill.verify.measure import inputs as inp


class _Task:
    n = 64

    @staticmethod
    def get_inputs():
        return [torch.randn(_Task.n, 3), torch.randint(0, 5, (_Task.n,)), torch.randn(2, dtype=torch.float16)]


def test_warm_steps_leave_the_draws_unchanged():
    device = torch.device("cpu")
    before = [inp.draw_inputs(_Task, 7, name) for name in inp.DISTRIBUTIONS]
    inp.warm_draws(device)
    inp.warm_checks(device)
    after = [inp.draw_inputs(_Task, 7, name) for name in inp.DISTRIBUTIONS]
    for a, b in zip(before, after):
        assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert torch.randn is inp._REAL_RANDN  # no distribution left installed
