"""Item 15's bound counts only the input a correct kernel must read
(guards/speed.py input_reach): a causal mask's upper triangle need not be read."""

from __future__ import annotations

import torch

from kernelmill.verify.guards.speed import input_reach, needed_bytes


def causal_softmax(x):
    n = x.shape[-1]
    mask = torch.ones(n, n, dtype=torch.bool).triu(1)
    return torch.softmax(x.masked_fill(mask, float("-inf")), dim=-1)


def test_a_causal_mask_needs_about_half_of_its_input():
    x = torch.randn(2, 64, 64)
    (share,) = input_reach(causal_softmax, [x], samples=64, seed=1)
    assert 0.2 < share < 0.75  # about half the elements matter; the lower end of the interval
    assert torch.isfinite(x).all()  # the probe put every element back


def test_every_element_of_an_elementwise_input_is_needed():
    x = torch.randn(1000)
    assert input_reach(torch.relu, [x]) == [1.0]  # NaN passes through ReLU: every probe mattered


def test_an_ignored_input_counts_little_and_integers_count_whole():
    def first_only(a, b, idx):
        return a * 2 + idx.sum()

    a, b, idx = torch.randn(100), torch.randn(100), torch.arange(4)
    ra, rb, ri = input_reach(first_only, [a, b, idx])
    assert ra == 1.0 and rb == 0.0 and ri == 1.0
    nb = needed_bytes([a, b, idx], [ra, rb, ri])
    assert nb == a.numel() * 4 + idx.numel() * 8
    assert needed_bytes([a, b, idx], None) == nb + b.numel() * 4  # no probe: every byte


def test_a_random_reference_is_taken_as_needing_everything():
    def noisy(x):
        return x + torch.rand_like(x)

    assert input_reach(noisy, [torch.randn(50)]) == [1.0]
