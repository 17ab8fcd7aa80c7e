"""The golden reference of seed 003 (cann-bench strided_slice, section 5 "standard Golden code").

Copied verbatim; only the Chinese comments and docstring are translated to English. The seed
text as stored lost its operator characters in extraction (`<`, `=`, `+=`, `&`, `<<`, `->`);
they are restored here in the only way that makes the code run. SPEC 5.5: for positive strides
and in-range values ptocpu's strided_slice equals this (torch slicing rejects negative steps).
"""
import torch


def strided_slice(
    x: torch.Tensor,
    begin: list,
    end: list,
    strides: list,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    shrink_axis_mask: int = 0,
    new_axis_mask: int = 0
) -> torch.Tensor:
    """
    Slices the input tensor along several dims with strides, matching TensorFlow strided_slice.

    Args:
        x: input tensor
        begin: array of slice start positions
        end: array of slice end positions
        strides: array of slice steps (negative steps are supported)
        begin_mask: bit mask; bit 1 means this dim starts from 0
        end_mask: bit mask; bit 1 means this dim runs to the end
        ellipsis_mask: bit mask; bit 1 marks an ellipsis
        shrink_axis_mask: bit mask; bit 1 shrinks this dim (takes a single element)
        new_axis_mask: bit mask; bit 1 inserts a new dim

    Returns:
        the output tensor (the slice result)
    """
    ndim = x.dim()
    shape = x.shape

    # handle ellipsis_mask
    ellipsis_pos = None
    for i in range(32):
        if ellipsis_mask & (1 << i):
            ellipsis_pos = i
            break

    # count the new axes
    num_new_axis = 0
    for i in range(len(begin) if begin else 0):
        if new_axis_mask & (1 << i):
            num_new_axis += 1

    indices = []
    input_dim_idx = 0
    param_idx = 0

    if ellipsis_pos is not None:
        num_params = len(begin) if begin else 0
        num_ellipsis_dims = ndim - (num_params - num_new_axis - 1)
        if num_ellipsis_dims < 0:
            num_ellipsis_dims = 0

    while input_dim_idx < ndim or param_idx < (len(begin) if begin else 0):
        if param_idx < len(begin) and (new_axis_mask & (1 << param_idx)):
            indices.append(None)
            param_idx += 1
            continue

        if ellipsis_pos is not None and param_idx == ellipsis_pos:
            for _ in range(num_ellipsis_dims):
                indices.append(slice(None, None, None))
                input_dim_idx += 1
            param_idx += 1
            continue

        if input_dim_idx < ndim and param_idx < len(begin):
            dim_size = shape[input_dim_idx]
            b = begin[param_idx] if param_idx < len(begin) else 0
            e = end[param_idx] if param_idx < len(end) else dim_size
            s = strides[param_idx] if param_idx < len(strides) else 1

            if b < 0:
                b = b + dim_size
            if e < 0:
                e = e + dim_size

            if begin_mask & (1 << param_idx):
                b = 0 if s > 0 else dim_size - 1
            if end_mask & (1 << param_idx):
                e = dim_size if s > 0 else -1

            if shrink_axis_mask & (1 << param_idx):
                indices.append(b)
            else:
                indices.append(slice(b, e, s))
            input_dim_idx += 1
            param_idx += 1
        elif input_dim_idx < ndim:
            indices.append(slice(None, None, None))
            input_dim_idx += 1
        else:
            if param_idx < len(begin) and (new_axis_mask & (1 << param_idx)):
                indices.append(None)
            param_idx += 1

    return x[tuple(indices)]
