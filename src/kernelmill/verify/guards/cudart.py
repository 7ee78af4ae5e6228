"""A few CUDA runtime calls, made through the libcudart that is already loaded.

The guards need three facts torch does not expose: the error a kernel launch
left behind (an illegal launch configuration fails silently, item 21), and the
persisting-L2 limit and access-policy window a candidate may set so its data
survives the L2 flush between timed calls (item 16). They are read through
ctypes from every ``libcudart`` mapped into this process (/proc/self/maps), so
the answer comes from the same runtime the candidate's extension called; an
extension may resolve its own copy (another CUDA version) next to torch's,
hence "every". A cudart linked statically into an extension keeps its own
error state, which this cannot see.

Nothing here loads CUDA: with no runtime in the process (a CPU run) every
function returns None or does nothing. No torch import, so it is cheap to import
in any process.
"""

from __future__ import annotations

import ctypes
import os
import sys

# enum values from /usr/local/cuda-13.0/include/driver_types.h
CUDA_SUCCESS = 0  # cudaSuccess = 0
CUDA_LIMIT_PERSISTING_L2 = 0x06  # cudaLimitPersistingL2CacheSize = 0x06
CUDA_ATTR_ACCESS_POLICY_WINDOW = 1  # cudaLaunchAttributeAccessPolicyWindow = 1 (= cudaStreamAttributeAccessPolicyWindow)
CUDA_ACCESS_PROPERTY_PERSISTING = 2  # cudaAccessPropertyPersisting = 2

_cache: dict[str, ctypes.CDLL] = {}


class AccessPolicyWindow(ctypes.Structure):
    """struct cudaAccessPolicyWindow (driver_types.h)."""

    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t), ("hitRatio", ctypes.c_float),
                ("hitProp", ctypes.c_int), ("missProp", ctypes.c_int)]


class _AttrValue(ctypes.Union):
    """union cudaLaunchAttributeValue: 64 bytes ("char pad[64]"), of which we read the window."""

    _fields_ = [("pad", ctypes.c_char * 64), ("accessPolicyWindow", AccessPolicyWindow)]


def cudart_paths(maps_text: str) -> list[str]:
    """Paths of the libcudart shared objects in a /proc/<pid>/maps listing, in order of appearance."""
    paths: list[str] = []
    for line in maps_text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6:
            path = parts[5].strip()
            if os.path.basename(path).startswith("libcudart.so") and path not in paths:
                paths.append(path)
    return paths


_found: list[str] | None = None


def _cuda_started() -> bool:
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except AttributeError:  # a torch still importing
        return False


def runtimes(refresh: bool = False) -> list[ctypes.CDLL]:
    """The CUDA runtimes loaded in this process (empty without CUDA). dlopen of a
    path already mapped returns that library, so nothing new is loaded. The
    list is read from /proc/self/maps once (a torch process maps thousands of
    regions: reading it per call cost milliseconds) and again on `refresh`,
    which the candidate's process asks for after the candidate's own imports."""
    global _found
    # an empty list read before this process loaded CUDA is stale once it has: a process
    # that asked early (a check at import, a test's skip condition) would otherwise
    # never see its runtime, and every later call would answer None (found on the device)
    if _found is None or refresh or (not _found and _cuda_started()):
        try:
            with open("/proc/self/maps") as fh:
                _found = cudart_paths(fh.read())
        except OSError:
            _found = []
    paths = _found
    libs = []
    for path in paths:
        if path not in _cache:
            try:
                lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
            except OSError:
                continue
            lib.cudaGetErrorString.restype = ctypes.c_char_p
            lib.cudaGetErrorString.argtypes = [ctypes.c_int]
            lib.cudaDeviceSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
            lib.cudaDeviceGetLimit.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int]
            lib.cudaStreamGetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_AttrValue)]
            _cache[path] = lib
        libs.append(_cache[path])
    return libs


def last_error() -> str | None:
    """The error left by the last launch on this thread (cudaGetLastError, which
    also clears it): cudaGetErrorString's text and the code; None when every
    loaded runtime reports cudaSuccess, or none is loaded. Call it before the
    other functions here: a runtime call that fails also records its error."""
    found = None
    for lib in runtimes():
        code = lib.cudaGetLastError()
        if code != CUDA_SUCCESS and found is None:
            text = lib.cudaGetErrorString(code) or b"unknown error"
            found = f"{text.decode(errors='replace')} (cudaError {code})"
    return found


def persisting_l2_limit() -> int | None:
    """cudaDeviceGetLimit(cudaLimitPersistingL2CacheSize) of the current device,
    in bytes; None without a runtime or when the call fails (no device, no context)."""
    for lib in runtimes():
        value = ctypes.c_size_t(0)
        if lib.cudaDeviceGetLimit(ctypes.byref(value), CUDA_LIMIT_PERSISTING_L2) == CUDA_SUCCESS:
            return int(value.value)
    return None


def access_policy_window(stream: int) -> AccessPolicyWindow | None:
    """The access-policy window set on `stream` (a cudaStream_t as an int, e.g.
    ``torch.cuda.current_stream().cuda_stream``), or None when it has none
    (num_bytes 0), when the call fails, or without a runtime."""
    for lib in runtimes():
        value = _AttrValue()
        if lib.cudaStreamGetAttribute(ctypes.c_void_p(stream), CUDA_ATTR_ACCESS_POLICY_WINDOW,
                                      ctypes.byref(value)) == CUDA_SUCCESS:
            window = value.accessPolicyWindow
            return window if window.num_bytes else None
    return None


def reset_persisting_l2(limit: int = 0) -> None:
    """Evict persisting lines to normal (cudaCtxResetPersistingL2Cache) and set
    the persisting carve-out back to `limit` (the value the process started
    with), so nothing a candidate pinned survives."""
    for lib in runtimes():
        lib.cudaCtxResetPersistingL2Cache()
        lib.cudaDeviceSetLimit(CUDA_LIMIT_PERSISTING_L2, limit)
        break
