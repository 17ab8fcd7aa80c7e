"""Running PyPTO scripts and test files unchanged (see docs/running_pypto_programs.md).

`ptocpu run SCRIPT.py [ARGS]` and `ptocpu test [PYTEST ARGS]` (the pytest plugin
`ptocpu.pytest_plugin`) call `install()` first. In that process only:
  - `import pypto` (and `import pypto.x`) gives ptocpu (and ptocpu.x): a finder on sys.meta_path,
    nothing installed under that name;
  - torch's NPU plumbing maps to the CPU: `torch.npu.set_device / synchronize / ...` do nothing,
    device strings "npu" / "npu:N" mean "cpu" in torch calls, `Tensor.npu()` returns the tensor,
    `import torch_npu` gives a stand-in: `npu_format_cast(t, 29)` (FRACTAL_NZ) gives t padded with
    zeros to the NZ fractal (outer axis to 16, inner axis to 32 bytes), the extent an NZ operand has
    in a PyPTO kernel (the CPU stores it row-major), other formats t itself; `npu_trans_quant_param`
    packs fp32 scales as matmul's scale_tensor reads them;
  - the platform is `ascend950` unless `--platform` (or PTOCPU_PLATFORM) names another;
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import runpy
import sys
import types

DEFAULT_PLATFORM = "ascend950"


class _PyptoAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`pypto` and `pypto.<sub>` resolve to `ptocpu` and `ptocpu.<sub>`."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "pypto" or fullname.startswith("pypto."):
            return importlib.util.spec_from_loader(fullname, self, is_package=fullname == "pypto")
        return None

    def create_module(self, spec):
        return importlib.import_module("ptocpu" + spec.name[len("pypto"):])

    def exec_module(self, module):
        pass  # already executed as ptocpu.*


def _is_npu(device) -> bool:
    return isinstance(device, str) and (device == "npu" or device.startswith("npu:"))


def _install_npu_on_cpu() -> None:
    try:
        import torch
        from torch.overrides import TorchFunctionMode
    except ImportError:
        return

    class NpuIsCpu(TorchFunctionMode):
        """Device strings "npu" / "npu:N" given to any torch call mean the CPU."""

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            args = tuple("cpu" if _is_npu(a) else a for a in args)
            kwargs = {k: ("cpu" if _is_npu(v) else v) for k, v in (kwargs or {}).items()}
            return func(*args, **kwargs)

    if not hasattr(torch, "npu"):
        npu = types.ModuleType("torch.npu")
        for name in ("set_device", "synchronize", "empty_cache", "init", "reset_peak_memory_stats"):
            setattr(npu, name, lambda *a, **k: None)
        npu.current_device = lambda: 0
        npu.device_count = lambda: 1
        npu.is_available = lambda: True
        torch.npu = npu
        sys.modules["torch.npu"] = npu
    if "torch_npu" not in sys.modules:  # `import torch_npu` (the NPU extension) finds nothing to load
        torch_npu = types.ModuleType("torch_npu")
        torch_npu.npu = torch.npu
        torch_npu.npu_format_cast = _format_cast
        torch_npu.npu_trans_quant_param = _trans_quant_param
        sys.modules["torch_npu"] = torch_npu
    if not hasattr(torch.Tensor, "npu"):
        torch.Tensor.npu = lambda self, *a, **k: self
    NpuIsCpu().__enter__()  # for the rest of the process


_FRACTAL_NZ = 29  # the ACL format id of NZ


def _format_cast(tensor, acl_format, *args, **kwargs):
    """torch_npu.npu_format_cast: NZ pads the last two axes to the fractal with zeros."""
    if acl_format != _FRACTAL_NZ or tensor.dim() < 2:
        return tensor
    import torch.nn.functional as functional
    rows, cols = tensor.shape[-2:]
    per_32_bytes = max(1, 32 // tensor.element_size())
    pad_rows, pad_cols = -rows % 16, -cols % per_32_bytes
    if not (pad_rows or pad_cols):
        return tensor
    return functional.pad(tensor, (0, pad_cols, 0, pad_rows))


def _trans_quant_param(scale, offset=None, *args, **kwargs):
    """torch_npu.npu_trans_quant_param(scale): fp32 scales as int64 whose low 32 bits are the
    scale's fp32 bits cut to the fixpipe's 19 (sign, exponent, 10 mantissa bits), the part
    matmul's scale_tensor reads (docs/ops/matmul.md#scale); offsets are not modelled."""
    import torch
    bits = scale.to(torch.float32).contiguous().view(torch.int32).to(torch.int64) & 0xFFFFE000
    return bits.reshape(scale.shape)


_installed = False


def install(platform: str | None = None) -> None:
    """Makes `import pypto` give ptocpu, maps NPU devices to the CPU and selects the platform."""
    global _installed
    import ptocpu
    if not _installed:
        sys.meta_path.insert(0, _PyptoAlias())
        _install_npu_on_cpu()
        _installed = True
    ptocpu.set_platform(platform or os.environ.get("PTOCPU_PLATFORM") or DEFAULT_PLATFORM)


def run_script(script: str, args: list[str], platform: str | None = None) -> int:
    """`ptocpu run SCRIPT.py [ARGS]`: the script as __main__ with sys.argv = [SCRIPT, *ARGS]."""
    install(platform)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return 0


def run_tests(args: list[str], platform: str | None = None) -> int:
    """`ptocpu test [PYTEST ARGS]`: pytest with the ptocpu plugin."""
    import pytest
    if platform:
        os.environ["PTOCPU_PLATFORM"] = platform
    return int(pytest.main(["-p", "ptocpu.tools.pytest_plugin", *args]))
