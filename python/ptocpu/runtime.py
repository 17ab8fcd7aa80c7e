"""`pypto.runtime`: running a recorded `pypto.function` (see docs/running_pypto_programs.md).

There is no device: `_device_init` / `_device_fini` do nothing, and
`_device_run_once_data_from_host(*tensors)` runs the last recorded function on the given tensors
(made with `pypto.from_torch`, in the order the function declared its tensors), writing its
outputs into them.
"""
from __future__ import annotations

from .engine.record import run_program
from .frontend import RunMode

__all__ = ["RunMode", "_device_init", "_device_fini", "_device_run_once_data_from_host", "_device_synchronize"]


def _device_init(*args, **kwargs) -> None:
    """No device to open on the CPU."""


def _device_fini(*args, **kwargs) -> None:
    """No device to close on the CPU."""


def _device_synchronize(*args, **kwargs) -> None:
    """Runs are synchronous on the CPU."""


def _device_run_once_data_from_host(*tensors) -> None:
    """Runs the last recorded pypto.function with these tensors as its declared tensors."""
    run_program(*tensors)
