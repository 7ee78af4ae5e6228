"""Tensors between the supervisor and the candidate's process without host copies (CUDA IPC).

A guarded run hands the candidate its input sets and takes back its outputs. Through files
that is a device-to-host copy, a write, a read and a host-to-device copy of every byte on
each side: for full-size tasks gigabytes per candidate, the largest guard cost measured
(docs/results/benchmarks_history.md, issue 14). Here the sender packs every tensor of the exchange into one
device allocation of its own and sends a small JSON description with that allocation's IPC
handle; the receiver maps it, copies each tensor into memory of its own (device to device),
and unmaps it.

Written by hand, not with `torch.multiprocessing`: torch shares a CUDA tensor through its
caching allocator, whose IPC handle maps the whole cached segment, other tensors of the
sender included (the supervisor's segments hold the reference's outputs), and its rebuild
trusts the sizes the other side sends. Here the shared allocation holds the exchange and
nothing else (one `cuMemAlloc`), and the receiver checks every offset against the mapped
allocation's real size (`cuMemGetAddressRange`) before it reads, because the candidate's
description is untrusted input.

The layout and its checks are plain Python over a byte tensor (`layout`, `pack_into`,
`unpack`), so they are tested on the CPU; only `export`/`receive` need a GPU.
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Any

import torch

ALIGN = 256  # every tensor starts at a multiple of this (covers every dtype's alignment)
HANDLE_BYTES = 64  # sizeof(CUipcMemHandle)
_LEAF = "__kernelmill_tensor__"
_TUPLE = "__kernelmill_tuple__"  # a tuple in the skeleton (JSON has lists only)
_DTYPES = {str(d).removeprefix("torch."): d for d in (
    torch.float64, torch.float32, torch.float16, torch.bfloat16, torch.complex64, torch.complex128,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
    getattr(torch, "float8_e4m3fn", None), getattr(torch, "float8_e5m2", None)) if d is not None}


class Unsupported(ValueError):
    """An exchange this module does not carry (the caller falls back to files)."""


class BadDescription(ValueError):
    """A description that does not describe tensors inside its allocation."""


# -- layout: pure Python, no GPU ------------------------------------------------------------


def layout(tree: Any) -> tuple[Any, list[dict], list[torch.Tensor], int]:
    """(skeleton, leaf descriptions, the tensors in leaf order, total bytes) of `tree`.

    Lists stay lists and tuples tuples (as the file exchange's `inputs_to_cpu` keeps them: a
    candidate may test `isinstance(x, tuple)`); tensors become contiguous ranges at
    ALIGN-aligned offsets; ints, floats, bools, strings and None stay as they are. Anything
    else raises Unsupported."""
    leaves: list[dict] = []
    tensors: list[torch.Tensor] = []
    offset = 0

    def walk(obj: Any) -> Any:
        nonlocal offset
        if isinstance(obj, torch.Tensor):
            if type(obj) is not torch.Tensor or obj.layout != torch.strided or obj.is_sparse:
                raise Unsupported(f"a {type(obj).__name__} with layout {obj.layout}")
            name = str(obj.dtype).removeprefix("torch.")
            if name not in _DTYPES:
                raise Unsupported(f"dtype {obj.dtype}")
            leaves.append({"offset": offset, "dtype": name, "shape": list(obj.shape), "cpu": obj.device.type == "cpu"})
            tensors.append(obj)
            offset += -(-obj.numel() * obj.element_size() // ALIGN) * ALIGN
            return {_LEAF: len(leaves) - 1}
        if isinstance(obj, tuple):
            return {_TUPLE: [walk(o) for o in obj]}
        if isinstance(obj, list):
            return [walk(o) for o in obj]
        if isinstance(obj, dict):
            if not all(isinstance(k, str) for k in obj) or _LEAF in obj or _TUPLE in obj:
                raise Unsupported("a dict with keys that are not plain strings (or that are this exchange's markers)")
            return {k: walk(v) for k, v in obj.items()}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return obj
        raise Unsupported(f"a {type(obj).__name__} among the tensors")

    skeleton = walk(tree)
    return skeleton, leaves, tensors, offset


def pack_into(buf: torch.Tensor, leaves: list[dict], tensors: list[torch.Tensor]) -> None:
    """Copy `tensors` into the byte tensor `buf` at their leaves' offsets."""
    for leaf, t in zip(leaves, tensors):
        n = t.numel() * t.element_size()
        buf[leaf["offset"]:leaf["offset"] + n].view(t.dtype).view(t.shape).copy_(t)


def _check(desc: dict, size: int) -> tuple[Any, list[dict]]:
    """The skeleton and leaves of an untrusted description, every leaf inside `size` bytes."""
    if not isinstance(desc, dict) or not isinstance(desc.get("leaves"), list):
        raise BadDescription("no leaf list")
    leaves = desc["leaves"]
    for i, leaf in enumerate(leaves):
        if not isinstance(leaf, dict) or leaf.get("dtype") not in _DTYPES:
            raise BadDescription(f"leaf {i}: no known dtype")
        off, shape = leaf.get("offset"), leaf.get("shape")
        if (type(off) is not int or off < 0 or off % ALIGN or not isinstance(shape, list)
                or not all(type(s) is int and 0 <= s < 2**40 for s in shape)):
            raise BadDescription(f"leaf {i}: offset {off!r} or shape {shape!r} is not valid")
        n = math.prod(shape) * _DTYPES[leaf["dtype"]].itemsize
        if off + n > size:
            raise BadDescription(f"leaf {i}: bytes {off}-{off + n} lie outside the {size}-byte allocation")

    def check_tree(obj: Any, depth: int) -> None:
        if depth > 64:
            raise BadDescription("the skeleton nests deeper than 64")
        if isinstance(obj, list):
            for o in obj:
                check_tree(o, depth + 1)
        elif isinstance(obj, dict):
            if _LEAF in obj:
                if len(obj) != 1 or type(obj[_LEAF]) is not int or not 0 <= obj[_LEAF] < len(leaves):
                    raise BadDescription(f"a tensor reference {obj!r} names no leaf")
            elif _TUPLE in obj:
                if len(obj) != 1 or not isinstance(obj[_TUPLE], list):
                    raise BadDescription(f"a tuple {str(obj)[:80]} holds no list of its own")
                for o in obj[_TUPLE]:
                    check_tree(o, depth + 1)
            else:
                for v in obj.values():
                    check_tree(v, depth + 1)
        elif not (obj is None or isinstance(obj, (bool, int, float, str))):
            raise BadDescription(f"a {type(obj).__name__} in the skeleton")

    check_tree(desc.get("tree"), 0)
    return desc.get("tree"), leaves


def unpack(desc: dict, buf: torch.Tensor, device: torch.device | str, keep_cpu: bool = True) -> Any:
    """The tree `desc` describes, each tensor copied out of the byte tensor `buf` into new
    memory on `device` (with `keep_cpu`, on the CPU where the sender's tensor was a CPU
    tensor: init inputs stay where `get_init_inputs` made them)."""
    tree, leaves = _check(desc, buf.numel())
    device = torch.device(device)
    out = []
    for leaf in leaves:
        dtype = _DTYPES[leaf["dtype"]]
        n = math.prod(leaf["shape"]) * dtype.itemsize
        view = buf[leaf["offset"]:leaf["offset"] + n].view(dtype).view(leaf["shape"])
        out.append(view.to("cpu" if keep_cpu and leaf.get("cpu") else device, copy=True))

    def build(obj: Any) -> Any:
        if isinstance(obj, list):
            return [build(o) for o in obj]
        if isinstance(obj, dict):
            if _LEAF in obj:
                return out[obj[_LEAF]]
            if _TUPLE in obj:
                return tuple(build(o) for o in obj[_TUPLE])
            return {k: build(v) for k, v in obj.items()}
        return obj

    return build(tree)


# -- the CUDA driver: one allocation per exchange ----------------------------------------------


class _Handle(ctypes.Structure):
    # unsigned bytes, not c_char: a c_char array field reads back cut at its first NUL
    _fields_ = [("reserved", ctypes.c_ubyte * HANDLE_BYTES)]


_driver: list = []


def _cuda() -> ctypes.CDLL:
    if not _driver:
        lib = ctypes.CDLL("libcuda.so.1")
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuIpcGetMemHandle.argtypes = [ctypes.POINTER(_Handle), ctypes.c_uint64]
        lib.cuIpcOpenMemHandle_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), _Handle, ctypes.c_uint]
        lib.cuIpcCloseMemHandle.argtypes = [ctypes.c_uint64]
        lib.cuMemGetAddressRange_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_size_t),
                                                ctypes.c_uint64]
        _driver.append(lib)
    return _driver[0]


def _ok(code: int, what: str) -> None:
    if code != 0:
        raise RuntimeError(f"{what} failed with CUDA driver error {code}")


class _Bytes:
    """Device memory at `ptr` as a uint8 tensor (__cuda_array_interface__, zero-copy)."""

    def __init__(self, ptr: int, size: int):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "stream": None}


def _as_tensor(ptr: int, size: int, device: torch.device) -> torch.Tensor:
    if size == 0:
        return torch.empty(0, dtype=torch.uint8, device=device)
    return torch.as_tensor(_Bytes(ptr, size), device=device)


def _context(device: torch.device) -> torch.device:
    """Make `device`'s primary context current on this thread (the driver calls need it)."""
    device = torch.device(device)
    if device.type != "cuda":
        raise Unsupported("CUDA IPC needs a CUDA device")
    index = device.index if device.index is not None else torch.cuda.current_device()
    torch.cuda.set_device(index)
    torch.cuda.current_stream(index).synchronize()
    return torch.device("cuda", index)


@dataclass
class Export:
    """One allocation holding an exchange; `description` goes to the other process as JSON."""

    ptr: int
    description: dict

    def free(self) -> None:
        """Release the allocation (once the other process has copied what it needs, or is gone)."""
        if self.ptr:
            _cuda().cuMemFree_v2(self.ptr)
            self.ptr = 0


def export(tree: Any, device: torch.device | str) -> Export:
    """Pack `tree` into a new allocation on `device` and describe it, handle included."""
    device = _context(torch.device(device))
    skeleton, leaves, tensors, total = layout(tree)
    lib, ptr = _cuda(), ctypes.c_uint64(0)
    _ok(lib.cuMemAlloc_v2(ctypes.byref(ptr), max(total, ALIGN)), "cuMemAlloc")
    exp = Export(ptr.value, {})
    try:
        pack_into(_as_tensor(ptr.value, total, device), leaves, tensors)
        torch.cuda.synchronize(device)  # the copies are done before the other side reads
        handle = _Handle()
        _ok(lib.cuIpcGetMemHandle(ctypes.byref(handle), ptr.value), "cuIpcGetMemHandle")
        exp.description = {"handle": bytes(handle.reserved).hex(), "size": total,
                           "leaves": leaves, "tree": skeleton}
        return exp
    except BaseException:
        exp.free()
        raise


def receive(desc: dict, device: torch.device | str, to: torch.device | str | None = None,
            keep_cpu: bool = True) -> Any:
    """The tree an `export` in another process described, copied into this process's own
    memory (on `to`, default `device`; `keep_cpu` as in `unpack`); the mapping is closed
    before this returns."""
    device = _context(torch.device(device))
    if not isinstance(desc, dict) or not isinstance(desc.get("handle"), str):
        raise BadDescription("no IPC handle")
    try:
        raw = bytes.fromhex(desc["handle"])
    except ValueError:
        raise BadDescription("the IPC handle is not hex") from None
    if len(raw) != HANDLE_BYTES:
        raise BadDescription(f"an IPC handle of {len(raw)} bytes")
    lib, ptr = _cuda(), ctypes.c_uint64(0)
    handle = _Handle()
    ctypes.memmove(ctypes.addressof(handle), raw, HANDLE_BYTES)
    _ok(lib.cuIpcOpenMemHandle_v2(ctypes.byref(ptr), handle, 1), "cuIpcOpenMemHandle")  # lazy peer access
    try:
        base, size = ctypes.c_uint64(0), ctypes.c_size_t(0)
        _ok(lib.cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ptr.value), "cuMemGetAddressRange")
        size_ok = int(size.value) - (ptr.value - base.value)  # what the mapping really holds
        tree = unpack(desc, _as_tensor(ptr.value, size_ok, device), to if to is not None else device, keep_cpu)
        torch.cuda.synchronize(device)  # every copy is done before the mapping goes
        return tree
    finally:
        lib.cuIpcCloseMemHandle(ptr.value)


def available(device: torch.device | str) -> bool:
    """Whether this process can export on `device` (a CUDA device and the driver library)."""
    try:
        return torch.device(device).type == "cuda" and torch.cuda.is_available() and bool(_cuda())
    except OSError:
        return False
