"""PyPTO kernels written as upstream's examples write them (docs/kernel_model.md#compiled-kernels).

Each module has the kernel, `make_inputs(shape, seed)` (the output last), `golden(...)` (torch) and
`main()`; `ptocpu bench --case KERNEL` times them compiled against the same kernel eager and torch.
Installed as `ptocpu.examples`.
"""
