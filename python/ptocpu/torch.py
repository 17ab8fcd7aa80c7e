"""ptocpu's operators as torch operators: `import ptocpu.torch` registers torch.ops.ptocpu.<op> for
every op of the op table that has a torch schema (see docs/torch.md).

Each op is defined with torch.library.Library from its table entry: the schema says what it
mutates; the CPU kernel hands the torch tensors to the core (which wraps their memory zero-copy)
and takes the core's result back through DLPack (zero-copy); the fake kernel asks the core for the
output shapes and dtypes from shapes and dtypes alone (`_core._infer`), so torch.compile traces
the ops into its graph. The fake follows the rules every platform shares and raises what the
real kernel raises for arguments that break them; platform and tile rules are checked when the
op runs, so a compiled graph behaves like eager under whatever set_platform /
set_vec_tile_shapes is current. (torch.library.custom_op would do the same, but runs its
autograd and aliasing wrappers on every call: some 20 microseconds more per call.)
"""
import torch

from . import _core

_lib = torch.library.Library("ptocpu", "DEF")
_from_capsule = getattr(torch._C, "_from_dlpack", None)


def _torch_tensor(t) -> torch.Tensor:
    """A torch tensor over the core's result (zero-copy). torch.from_dlpack spends several
    microseconds in Python around the C import it ends in; call that import when torch has it."""
    return _from_capsule(t.__dlpack__()) if _from_capsule else torch.from_dlpack(t)


def _torch_dtypes() -> dict:
    found = {}
    for value in vars(torch).values():
        if isinstance(value, torch.dtype):
            try:
                found.setdefault(_core.dtype(value), value)
            except _core.Error:  # a torch dtype ptocpu does not have
                pass
    return found


_TORCH_DTYPES = _torch_dtypes()


def _register(row: dict, schema: str) -> None:
    name = row["name"]
    op_name = schema.split("(")[0]  # may carry an overload name after a dot
    in_place = row["written"] is not None
    outputs = row["num_outputs"]

    def kernel(*args, **kwargs):
        result = _core._call(name, args, kwargs)
        if in_place:
            return None
        return tuple(_torch_tensor(t) for t in result) if outputs > 1 else _torch_tensor(result)

    def fake(*args, **kwargs):
        if in_place:
            return None
        like = args[0]
        made = tuple(like.new_empty(shape, dtype=_TORCH_DTYPES[dt]) for shape, dt in _core._infer(name, args, kwargs))
        return made if outputs > 1 else made[0]

    _lib.define(schema, tags=(torch.Tag.pt2_compliant_tag,))
    _lib.impl(op_name, kernel, "CPU")
    torch.library.register_fake(f"ptocpu::{op_name}", fake, lib=_lib)


for _row in _core.op_table():
    for _schema in filter(None, _row["torch_schema"].split(";")):  # overloads, e.g. scatter_.src / .value
        _register(_row, _schema.strip())
