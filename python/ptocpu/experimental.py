"""`pypto.experimental`: PyPTO's experimental names (upstream marks their interfaces unstable).

Every op of the op table whose entry names this submodule (`submodule = "experimental"`) is here
under its own name, the same function as `ptocpu.<name>`; beside them the operation options
(set_operation_options / get_operation_options). Experimental names PyPTO has and ptocpu does not
offer are an UnsupportedError naming them (lang/unsupported.py).
"""
from __future__ import annotations

from . import _core
from .lang.options import get_operation_options, set_operation_options
from .lang.unsupported import module_getattr as _module_getattr

_OPS = [row["name"] for row in _core.op_table() if row["submodule"] == "experimental"]
globals().update({name: getattr(_core, name) for name in _OPS})
__all__ = [*_OPS, "set_operation_options", "get_operation_options"]

# PyPTO's experimental names that the op table has no entry for yet (the others are in __all__).
_NOT_OFFERED = frozenset({"nop", "shmem_load", "shmem_store"})

__getattr__ = _module_getattr(__name__, lambda: _NOT_OFFERED - set(__all__))
