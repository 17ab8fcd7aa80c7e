#include <nanobind/stl/string.h>

#include "bind.h"

NB_MODULE(_core, m) {
  m.doc() = "ptocpu core: PyPTO tensor/tile operators on CPUs";
  ptobind::bind_errors(m);
  ptobind::bind_dtype(m);
  ptobind::bind_tensor(m);
  ptobind::bind_enums(m);
  ptobind::bind_runtime(m);
  ptobind::bind_kernel_model(m);
  ptobind::bind_ops(m);  // after the Tensor class: ops become its methods and operators
  ptobind::bind_program(m);
  // `from ._core import *` in the package (and the stub's readers) take every public name.
  nanobind::list names;
  for (nanobind::handle name : m.attr("__dict__"))
    if (nanobind::cast<std::string>(name)[0] != '_') names.append(name);
  m.attr("__all__") = names;
}
