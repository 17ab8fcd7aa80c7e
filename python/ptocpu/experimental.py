"""`pypto.experimental`: PyPTO's experimental surface. ptocpu offers its operation options here
(set_operation_options / get_operation_options); its experimental operators that ptocpu does
not offer are an UnsupportedError naming them (lang/unsupported.py)."""
from __future__ import annotations

from .lang.options import get_operation_options, set_operation_options
from .lang.unsupported import module_getattr as _module_getattr

__all__ = ["set_operation_options", "get_operation_options"]

# PyPTO's experimental names ptocpu does not offer yet.
_UPSTREAM = frozenset({"gather_in_l1", "gather_in_ub", "nop", "online_softmax", "online_softmax_update",
                       "shmem_load", "shmem_store", "transposed_batchmatmul"})

__getattr__ = _module_getattr(__name__, lambda: _UPSTREAM)
