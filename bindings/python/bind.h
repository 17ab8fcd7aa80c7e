// The Python binding: each file binds one area and only converts arguments and forwards.
#pragma once
#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <vector>

#include "ptocpu/scalar.h"
#include "ptocpu/tensor.h"

namespace nb = nanobind;

namespace ptobind {

void bind_errors(nb::module_& m);
void bind_dtype(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_runtime(nb::module_& m);  // platforms, tile shapes, threads, build info
void bind_index_select(nb::module_& m);
void bind_strided_slice(nb::module_& m);
void bind_interleave(nb::module_& m);
void bind_kernel_model(nb::module_& m);  // view, assemble, loop, jit checks (docs/kernel_model.md)
void bind_scatter(nb::module_& m);
void bind_gather(nb::module_& m);
void bind_scatter_update(nb::module_& m);
void bind_index_add(nb::module_& m);
void bind_gathermask(nb::module_& m);

// How an op uses a tensor argument: only read (a copy of an awkward layout is fine), or
// written in place (must be the caller's memory: no copy, else ArgumentError).
enum class Access { Read, Write };
// A ptocpu.Tensor as is; anything else through ptocpu.asarray (numpy, torch, DLPack, lists).
// Errors name the op and the parameter; None and strings are DTypeErrors.
pto::Tensor to_tensor(nb::handle obj, const char* op, const char* param, Access access = Access::Read);
// Keeps a Python object alive while a tensor views its memory; safe to release from any thread.
std::shared_ptr<void> keep_python_alive(nb::handle owner);
// DT_* constants, numpy / ml_dtypes / torch dtypes and names.
pto::DType to_dtype(nb::handle obj);
// A Python int or numpy integer; anything else is a DTypeError naming op and param.
int64_t to_int(nb::handle obj, const char* op, const char* param);
std::vector<int64_t> to_int_list(nb::handle obj, const char* op, const char* param);
// A Python int / float / bool or numpy scalar, else nullopt.
std::optional<pto::Scalar> to_scalar(nb::handle obj);
nb::tuple to_tuple(const std::vector<int64_t>& v);

// Tensor() is only an annotation placeholder for jit kernels: using it as data is a DTypeError.
const pto::Tensor& require_storage(const pto::Tensor& t, const char* what);
// DLPack (dlpack.cpp): export as a capsule (legacy or versioned by max_version), import zero-copy.
nb::object to_dlpack(const pto::Tensor& t, nb::handle max_version, nb::handle copy);
pto::Tensor from_dlpack(nb::handle obj);
// Basic indexing (indexing.cpp): t[key] as a view; t[key] = value.
pto::Tensor basic_index(const pto::Tensor& t, nb::handle key);
pto::Tensor get_item(const pto::Tensor& t, nb::handle key);  // basic indexing, or t[dim:index] as gather
void assign(const pto::Tensor& t, nb::handle key, nb::handle value);

}  // namespace ptobind
