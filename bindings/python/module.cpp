#include "bind.h"

NB_MODULE(_core, m) {
  m.doc() = "ptocpu core: PyPTO tensor/tile operators on CPUs";
  // ptocpu adds PyPTO's Python-level Tensor methods to the Tensor type; they reference the module
  // and the type, a cycle that lives until exit, which nanobind would report as a leak.
  nb::set_leak_warnings(false);
  ptobind::bind_errors(m);
  ptobind::bind_dtype(m);
  ptobind::bind_tensor(m);
  ptobind::bind_runtime(m);
  ptobind::bind_index_select(m);
  ptobind::bind_strided_slice(m);
  ptobind::bind_interleave(m);
  ptobind::bind_kernel_model(m);
  ptobind::bind_scatter(m);
  ptobind::bind_gather(m);
  ptobind::bind_scatter_update(m);
  ptobind::bind_index_add(m);
  ptobind::bind_gathermask(m);
}
