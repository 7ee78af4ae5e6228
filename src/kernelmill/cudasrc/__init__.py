"""CUDA source tools on tree-sitter: structure, host stripping, readability refactoring."""

from .check import RefactorResult, StepResult, normalize_ptx, normalize_symbol, refactor_cuda, same_ptx
from .cse import extract_index_cse
from .device import DeviceUnit, device_unit, strip_host
from .parens import remove_redundant_parens
from .ptx_equiv import equivalent_ptx
from .python_src import CudaExtractError, cuda_sources_from_python
from .tsparse import CudaFunction, LaunchSite, disable_unrolling, functions, kernel_source, launch_sites
from .value_cse import extract_value_cse

__all__ = [
    "RefactorResult", "StepResult", "normalize_ptx", "normalize_symbol", "refactor_cuda", "same_ptx",
    "DeviceUnit", "device_unit",
    "equivalent_ptx", "extract_index_cse", "extract_value_cse", "remove_redundant_parens",
    "CudaExtractError", "cuda_sources_from_python",
    "CudaFunction", "LaunchSite", "disable_unrolling", "functions", "kernel_source",
    "launch_sites", "strip_host",
]
