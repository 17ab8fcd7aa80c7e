"""pypto.experimental: PyPTO's experimental names (upstream marks their interfaces unstable).

Every op of the op table whose entry names this submodule (`submodule = "experimental"`) is here
under its own name, the same function as `ptocpu.<name>`; names that are not ops (option
setters, helpers) are defined in this module beside them.
"""
from . import _core

__all__ = [row["name"] for row in _core.op_table() if row["submodule"] == "experimental"]
globals().update({name: getattr(_core, name) for name in __all__})
