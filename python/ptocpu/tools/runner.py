"""Running PyPTO scripts and test files unchanged (see docs/running_pypto_programs.md).

`ptocpu run SCRIPT.py [ARGS]` and `ptocpu test [PYTEST ARGS]` (the pytest plugin
`ptocpu.tools.pytest_plugin`) call `install()` first. In that process only:
  - `import pypto` (and `import pypto.x`) gives ptocpu (and ptocpu.x): a finder on sys.meta_path,
    nothing installed under that name; a `pypto*` module imported before is dropped;
  - torch's NPU plumbing maps to the CPU: `torch.npu.set_device / synchronize / ...` do nothing,
    device strings "npu" / "npu:N" mean "cpu" in torch calls, `Tensor.npu()` returns the tensor,
    `import torch_npu` gives a stand-in whose soc version and device name are the selected
    platform's (PLATFORM_SOC);
  - `TILE_FWK_DEVICE_ID` is "0" unless set (PyPTO's examples do nothing without it);
  - the platform is `ascend950` unless `--platform` (or PTOCPU_PLATFORM) names another.
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

# What torch_npu reports for each platform: the soc version number (upstream's conftest keeps
# soc("950") tests for 260 and soc("910") tests for any other) and the device name.
PLATFORM_SOC = {
    "ascend950": (260, "Ascend950"),
    "atlas_a3": (250, "Ascend910_9391"),
    "atlas_a2": (220, "Ascend910B1"),
    "cpu": (220, "Ascend910B1"),  # the host profile has no chip: answer as the common 910 one
}


# PyPTO modules whose name is also an attribute of the package (pypto.symbolic_scalar is the
# SymbolicScalar class, `from pypto.symbolic_scalar import SymInt` the module).
MODULE_ALIASES = {"pypto.symbolic_scalar": "ptocpu.lang.symbolic"}
# PyPTO packages that are modules in ptocpu (pypto.frontend holds pypto.frontend.parser).
PACKAGES = ("ptocpu.frontend",)


class _PyptoAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`pypto` and `pypto.<sub>` resolve to `ptocpu` and `ptocpu.<sub>`; a submodule ptocpu does
    not have is an UnsupportedError (also a ModuleNotFoundError) naming it."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "pypto" or fullname.startswith("pypto."):
            return importlib.util.spec_from_loader(fullname, self, is_package=fullname == "pypto")
        return None

    def create_module(self, spec):
        target = "ptocpu" + spec.name[len("pypto"):]
        try:
            return importlib.import_module(target)
        except ModuleNotFoundError as e:
            if e.name != target:
                raise
            from ..lang.unsupported import unsupported_module
            raise unsupported_module(spec.name) from None

    def exec_module(self, module):
        pass  # already executed as ptocpu.*


def _is_npu(device) -> bool:
    return isinstance(device, str) and (device == "npu" or device.startswith("npu:"))


def _is_index(device) -> bool:
    """A bare device index (device=0), which means the accelerator: the NPU under torch_npu."""
    return isinstance(device, int) and not isinstance(device, bool)


def _soc() -> tuple:
    import ptocpu
    return PLATFORM_SOC.get(ptocpu.get_platform(), PLATFORM_SOC["cpu"])


class _Stream:
    """torch.npu.current_stream(): work on the CPU is done when the call returns."""

    def synchronize(self) -> None:
        pass

    def wait_stream(self, other) -> None:
        pass


def _npu_module(torch) -> types.ModuleType:
    npu = types.ModuleType("torch.npu")
    for name in ("set_device", "synchronize", "empty_cache", "init", "reset_peak_memory_stats"):
        setattr(npu, name, lambda *a, **k: None)
    npu.current_device = lambda: 0
    npu.device_count = lambda: 1
    npu.is_available = lambda: True
    npu.is_initialized = lambda: False  # no device context: cleanup hooks have nothing to release
    npu.memory_reserved = lambda *a, **k: 0
    npu.memory_allocated = lambda *a, **k: 0
    npu.current_stream = lambda *a, **k: _Stream()
    npu.get_device_name = lambda *a, **k: _soc()[1]
    npu.get_soc_version = lambda: _soc()[0]
    npu.config = types.SimpleNamespace(allow_internal_format=False)
    return npu


# torch_npu's storage formats: every tensor is row-major (ND) on the CPU, so a cast to another
# format (NZ = 29) is the tensor itself.
_FORMAT_ND = 2


def _trans_quant_param(scale, offset=None):
    """torch_npu.npu_trans_quant_param: fp32 scales packed as the cube unit reads them, an int64 per
    scale holding the fp32 bits with the low 13 mantissa bits cleared."""
    import torch
    if offset is not None:
        from ptocpu import UnsupportedError
        raise UnsupportedError("torch_npu.npu_trans_quant_param: an offset is not offered by ptocpu's stand-in")
    bits = scale.detach().to(torch.float32).contiguous().view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return bits & 0xFFFFE000


_FRACTAL_NZ = 29


def _format_cast(tensor, acl_format, *args, **kwargs):
    """torch_npu.npu_format_cast: NZ (29) pads the last two axes with zeros to the fractal (outer
    axis to 16, inner axis to 32 bytes), the extent an NZ operand has in a PyPTO kernel (the CPU
    stores it row-major); other formats give the tensor itself."""
    if acl_format != _FRACTAL_NZ or tensor.dim() < 2:
        return tensor
    import torch.nn.functional as functional
    rows, cols = tensor.shape[-2:]
    per_32_bytes = max(1, 32 // tensor.element_size())
    pad_rows, pad_cols = -rows % 16, -cols % per_32_bytes
    if not (pad_rows or pad_cols):
        return tensor
    return functional.pad(tensor, (0, pad_cols, 0, pad_rows))


def _torch_npu_module(torch) -> types.ModuleType:
    torch_npu = types.ModuleType("torch_npu")
    torch_npu.npu = torch.npu
    torch_npu.npu_format_cast = _format_cast
    torch_npu.get_npu_format = lambda tensor: _FORMAT_ND
    torch_npu.npu_trans_quant_param = _trans_quant_param
    return torch_npu


def _install_npu_on_cpu() -> None:
    try:
        import torch
        from torch.overrides import TorchFunctionMode
    except ImportError:
        return

    class NpuIsCpu(TorchFunctionMode):
        """Device strings "npu" / "npu:N" given to any torch call mean the CPU."""

        def __torch_function__(self, func, types_, args=(), kwargs=None):
            # Most calls (every tensor method and property in the process) name no device: they
            # pass straight through.
            if not kwargs and str not in map(type, args) and not (len(args) > 1 and _is_index(args[1])):
                return func(*args)
            args = tuple("cpu" if _is_npu(a) else a for a in args)
            kwargs = {k: ("cpu" if _is_npu(v) or (k == "device" and _is_index(v)) else v)
                      for k, v in (kwargs or {}).items()}
            if getattr(func, "__name__", "") == "to" and len(args) > 1 and _is_index(args[1]):
                args = (args[0], "cpu", *args[2:])  # tensor.to(0): device 0, the NPU with torch_npu
            return func(*args, **kwargs)

    if not hasattr(torch, "npu"):
        torch.npu = _npu_module(torch)
        sys.modules["torch.npu"] = torch.npu
    if "torch_npu" not in sys.modules:  # `import torch_npu` (the NPU extension) finds the stand-in
        sys.modules["torch_npu"] = _torch_npu_module(torch)
    if not hasattr(torch.Tensor, "npu"):
        torch.Tensor.npu = lambda self, *a, **k: self
        torch.nn.Module.npu = lambda self, *a, **k: self
    NpuIsCpu().__enter__()  # for the rest of the process


_installed = False


def install_alias() -> None:
    """`import pypto` gives ptocpu from now on in this process; a real PyPTO imported before is
    forgotten (pytest imports a conftest's `import pypto` before any plugin hook runs)."""
    global _installed
    if _installed:
        return
    for name in [n for n in sys.modules if n == "pypto" or n.startswith("pypto.")]:
        if not getattr(sys.modules[name], "__name__", "").startswith("ptocpu"):
            del sys.modules[name]
    sys.meta_path.insert(0, _PyptoAlias())
    for name, target in MODULE_ALIASES.items():  # registered, so importing them rebinds no attribute
        sys.modules[name] = importlib.import_module(target)
    for name in PACKAGES:  # so that `import pypto.frontend.parser` reaches the finder, which names it
        module = importlib.import_module(name)
        if not hasattr(module, "__path__"):
            module.__path__ = []
    _install_npu_on_cpu()
    os.environ.setdefault("TILE_FWK_DEVICE_ID", "0")
    _installed = True


def install(platform: str | None = None) -> None:
    """Makes `import pypto` give ptocpu, maps NPU devices to the CPU and selects the platform."""
    import ptocpu
    install_alias()
    ptocpu.set_platform(platform or os.environ.get("PTOCPU_PLATFORM") or DEFAULT_PLATFORM)


def run_script(script: str, args: list[str], platform: str | None = None) -> int:
    """`ptocpu run SCRIPT.py [ARGS]`: the script as __main__ with sys.argv = [SCRIPT, *ARGS]; the
    exit status is the script's, as python's would be (sys.exit("text") prints text, status 1)."""
    install(platform)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)
        return 1
    return 0


def run_tests(args: list[str], platform: str | None = None, report: str | None = None) -> int:
    """`ptocpu test [PYTEST ARGS]`: pytest with the ptocpu plugin; files that fail to import are
    reported as errors and the rest still run (--continue-on-collection-errors)."""
    import pytest
    if platform:
        os.environ["PTOCPU_PLATFORM"] = platform
    extra = ["--continue-on-collection-errors"]
    if report:
        extra += ["--ptocpu-report", report]
    return int(pytest.main(["-p", "ptocpu.tools.pytest_plugin", *extra, *args]))
