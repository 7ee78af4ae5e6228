"""Failed pair records of one unit: one pair_id each (issue 44)."""

from __future__ import annotations


def test_each_missing_kernel_gets_a_pair_id_of_its_own():
    # issue 44: the failed records of one unit shared one pair_id (69 duplicates on external code)
    from types import SimpleNamespace

    from kernelmill.ptx.pairs import _missing_kernels

    kernels = [SimpleNamespace(name=n, text=f"template <int N> __global__ void {n}() {{}}", template="int N")
               for n in ("a", "b")]
    unit = SimpleNamespace(kernels=kernels, dropped={}, unresolved={})
    out = _missing_kernels(unit, [], "", "u1", "src", "sm_90", [], "x.cu")
    assert [p.pair_id for p in out] == ["u1:failed:a", "u1:failed:b"]
    assert len({p.pair_id for p in out}) == 2 and not hasattr(out[0], "id")
