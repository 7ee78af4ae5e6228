"""try_fallback (item 7) decides by what the try body calls: the candidate's own kernel (an
extension from load_inline/load, held in a global, a local, or on self; a Triton launch; a
module function or method that does one of these), with PyTorch computing in the handler, or
after the try when the handler falls through. Tensor methods (x.contiguous()) are no kernel.
The patterns are cuda-l1's (benchmarks/corpus/external_flags.json, issue 42's audit)."""

from __future__ import annotations

import textwrap

import pytest

from kernelmill.verify.guards import check_source

HEAD = ("import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.utils.cpp_extension import load_inline\n\nSRC = 'torch::Tensor relu(torch::Tensor x);'\n")


def _cls(init: str, methods: str, prelude: str = "") -> str:
    return (HEAD + prelude + "\n\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
            + textwrap.indent(textwrap.dedent(init), " " * 8) + "\n"
            + textwrap.indent(textwrap.dedent(methods), " " * 4))


def _tries(code: str, language: str = "cuda") -> list[int]:
    return [f.line for f in check_source(code, "standard", language) if f.flag == "try_fallback"]


FLAGGED = {
    # l40-L1-51: the extension built in __init__ and held on self
    "self_attribute_from_load_inline": _cls(
        "self.argmax_cuda = load_inline(name='a', cpp_sources=SRC, functions=['argmax_cuda'])",
        """
        def forward(self, x):
            try:
                return self.argmax_cuda.argmax_cuda(x, 1)
            except Exception as e:
                return torch.argmax(x, dim=1)
        """),
    # l40-L1-95: the handler calls a method that computes with torch
    "handler_calls_a_torch_method": _cls(
        "self.cuda_module = load_inline(name='a', cpp_sources=SRC, functions=['relu'])",
        """
        def _forward_native(self, x):
            return F.relu(x)

        def forward(self, x):
            try:
                return self.cuda_module.relu(x)
            except Exception as e:
                print(e)
                return self._forward_native(x)
        """),
    # a100-L1-83: the extension from a factory method, the handler falls through to torch code
    "factory_and_fall_through": _cls(
        "self.cuda_extension = self._load()",
        """
        def _load(self):
            try:
                return load_inline(name='a', cpp_sources=SRC, functions=['relu'])
            except Exception:
                return None

        def forward(self, x):
            if self.cuda_extension is not None:
                try:
                    w = x.view(-1)
                    return self.cuda_extension.relu(x)
                except Exception:
                    pass
            # fallback to PyTorch
            return torch.relu(x)
        """),
    # a100-L3-49: the kernel called through a method of the candidate's own
    "kernel_through_a_method": _cls(
        "self.cuda_kernel = load_inline(name='a', cpp_sources=SRC, functions=['relu'])",
        """
        def forward_cuda(self, x):
            out = torch.empty_like(x)
            return self.cuda_kernel.relu(x)

        def forward_pytorch(self, x):
            return torch.relu(x)

        def forward(self, x):
            try:
                return self.forward_cuda(x)
            except Exception as e:
                return self.forward_pytorch(x)
        """),
    # l40-L1-31: a module-level extension
    "module_level_extension": _cls("pass", """
        def forward(self, x):
            try:
                return elu_cuda.forward(x)
            except Exception:
                return F.elu(x)
        """, prelude="elu_cuda = load_inline(name='e', cpp_sources=SRC, functions=['forward'])"),
    # a100-L1-3: kept on the class
    "class_attribute": _cls("if ModelNew._mod is None:\n    ModelNew._mod = load_inline(name='m', cpp_sources=SRC)", """
        _mod = None

        def forward(self, x):
            try:
                return ModelNew._mod.relu(x)
            except Exception as e:
                return torch.relu(x)
        """),
    # a100-L1-2: a function of the extension kept on self
    "bound_function": _cls("mod = load_inline(name='m', cpp_sources=SRC, functions=['relu'])\nself.fn = mod.relu", """
        def forward(self, x):
            try:
                return self.fn(x)
            except Exception as e:
                return torch.relu(x)
        """),
    # a lazily built global, got through a module function
    "lazy_global_factory": _cls("pass", """
        def forward(self, x):
            try:
                return _ext().relu(x)
            except RuntimeError:
                return torch.relu(x)
        """, prelude="_EXT = None\n\ndef _ext():\n    global _EXT\n    if _EXT is None:\n"
                     "        _EXT = load_inline(name='l', cpp_sources=SRC, functions=['relu'])\n    return _EXT\n"),
}

NOT_FLAGGED = {
    # a100-L1-19 / l40-L1-52 before the fix: only tensor methods and torch in the try body
    "tensor_methods_only": _cls("pass", """
        def forward(self, x):
            try:
                x = x.contiguous()
                y = x.view(-1).clone()
                return y.view_as(x)
            except Exception as e:
                return torch.relu(x)
        """),
    # the handler re-raises: the kernel's error reaches the harness
    "handler_reraises": _cls("self.ext = load_inline(name='a', cpp_sources=SRC, functions=['relu'])", """
        def forward(self, x):
            try:
                return self.ext.relu(x)
            except RuntimeError as e:
                torch.cuda.synchronize()
                raise RuntimeError(f"kernel failed: {e}")
        """),
    # the handler retries with another kernel of its own (allocating with torch)
    "handler_retries_own_kernel": _cls("self.ext = load_inline(name='a', cpp_sources=SRC, functions=['fast', 'slow'])", """
        def _slow(self, x):
            out = torch.empty_like(x)
            self.ext.slow(x, out)
            return out

        def forward(self, x):
            try:
                return self.ext.fast(x)
            except RuntimeError:
                return self._slow(x)
        """),
    # the build is what is tried; the handler leaves the extension unset (torch_fallback's to judge at run time)
    "build_in_try": _cls("""
        try:
            self.ext = load_inline(name='a', cpp_sources=SRC, functions=['relu'])
        except Exception:
            self.ext = None
            self.w = torch.ones(3)
        """, """
        def forward(self, x):
            return self.ext.relu(x)
        """),
    # the try body does not return: the code after the try runs in both cases
    "post_processing_after_try": _cls("self.ext = load_inline(name='a', cpp_sources=SRC, functions=['relu'])", """
        def forward(self, x):
            y = None
            try:
                y = self.ext.relu(x)
            except RuntimeError:
                pass
            return torch.cat([y, y])
        """),
    # an unknown name is no extension of the candidate's
    "unbound_name": _cls("pass", """
        def forward(self, x):
            try:
                return helper.relu(x)
            except NameError:
                return torch.relu(x)
        """),
}


@pytest.mark.parametrize("name", sorted(FLAGGED))
def test_custom_call_with_torch_fallback_is_flagged(name):
    assert len(_tries(FLAGGED[name])) == 1, FLAGGED[name]


@pytest.mark.parametrize("name", sorted(NOT_FLAGGED))
def test_no_own_kernel_or_no_torch_fallback_is_not_flagged(name):
    assert _tries(NOT_FLAGGED[name]) == [], NOT_FLAGGED[name]


def test_triton_launch_through_a_helper():
    code = ("import torch\nimport triton\nimport triton.language as tl\n\n@triton.jit\ndef k(x_ptr, n):\n    pass\n\n"
            "def launch(x):\n    k[(1,)](x, x.numel())\n    return x\n\n"
            "def forward(x):\n    try:\n        return launch(x)\n    except Exception:\n        return torch.relu(x)\n\n"
            "def forward2(x):\n    try:\n        return x.contiguous()\n    except Exception:\n        return torch.relu(x)\n")
    assert _tries(code, "triton") == [14]


def test_torch_language_and_message():
    code = FLAGGED["self_attribute_from_load_inline"]
    assert _tries(code, "torch") == []
    [f] = [f for f in check_source(code, "standard", "cuda") if f.flag == "try_fallback"]
    assert "self.argmax_cuda.argmax_cuda()" in f.detail and "torch" in f.detail
