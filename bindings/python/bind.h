// The Python binding: each file binds one area and only converts arguments and forwards.
#pragma once
#include <nanobind/nanobind.h>

#include <optional>
#include <string>
#include <vector>

#include "ptocpu/op_table.h"
#include "ptocpu/scalar.h"
#include "ptocpu/tensor.h"

namespace nb = nanobind;

namespace ptobind {

void bind_errors(nb::module_& m);
void bind_dtype(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_enums(nb::module_& m);         // PyPTO's mode enums (ptocpu/modes.h)
void bind_runtime(nb::module_& m);       // platforms, tile shapes, threads, build info
void bind_kernel_model(nb::module_& m);  // loop, kernel scopes, jit checks (docs/kernel_model.md)
void bind_ops(nb::module_& m);           // every op of the op table, and the dispatch handlers
// Inside a catch block: the exception in flight as the Python error nanobind raises for it
// (docs/errors.md's classes for ptocpu's errors).
void set_python_error() noexcept;
// An op's call from Python's vectorcall: the positional args, then the values of the keywords
// kwnames names (a tuple of str, or null); a new reference, or null with a Python error set.
using OpEntry = PyObject* (*)(const pto::OpDef& op, PyObject* const* args, size_t nargs, PyObject* kwnames);
// op's function (method: its Tensor method) as a Python object that calls entry. described_by: a
// nanobind function made from op's signature and docstring; the object takes its name, module,
// docs and __nb_signature__ (op_function.cpp).
nb::object make_op_function(const pto::OpDef& op, OpEntry entry, nb::handle described_by, bool method);
void bind_program(nb::module_& m);       // compiled kernels: the tracer and the program
// A kernel body being traced (program.cpp): a tensor it made, and values that reached Python.
void trace_created(const pto::Tensor& t);
void trace_taint(const char* why);

// How an op uses a tensor argument: only read (a copy of an awkward layout is fine), or
// written in place (must be the caller's memory: no copy, else ArgumentError).
enum class Access { Read, Write };
// A ptocpu.Tensor as is (whole: each op reads the valid part it needs); anything else through
// asarray (numpy, torch, DLPack, lists). Errors name the op and the parameter; None and strings
// are DTypeErrors.
pto::Tensor to_tensor(nb::handle obj, const char* op, const char* param, Access access = Access::Read);
// ptocpu.asarray (docs/tensors.md): zero-copy where the layout allows; copy=false refuses what
// would need a copy (ArgumentError); dtype converts (a copy).
pto::Tensor asarray(nb::handle obj, std::optional<bool> copy, std::optional<pto::DType> dtype = std::nullopt);
// A numpy array (numpy's dtypes and ml_dtypes') as a tensor over its memory, strides as numpy
// has them; byte-swapped data or odd byte strides are copied unless copy is false (ArgumentError).
pto::Tensor from_numpy(nb::handle a, std::optional<bool> copy);
// The numpy (or ml_dtypes) dtype object of a dtype.
nb::object numpy_dtype(pto::DType dt);
// A torch CPU tensor as a zero-copy tensor over its memory, read from its attributes in C
// (convert.cpp); false for anything it does not cover, which ptocpu.asarray then handles.
bool torch_fast_path(nb::handle obj, Access access, pto::Tensor& out);
// Keeps a Python object alive while a tensor views its memory; safe to release from any thread.
std::shared_ptr<void> keep_python_alive(nb::handle owner);
// An instance of torch.Tensor (false when torch is not imported).
bool is_torch_tensor(nb::handle obj);
// A ptocpu Tensor itself (not a subclass): one pointer comparison, where nanobind's isinstance
// looks the type up (the checks every op call makes of its tensor arguments).
bool exactly_tensor(nb::handle obj);
// The owner of an import of torch memory: keeps the torch storage alive (and `also`), so that the
// import outlives a later x.set_(other) that points the torch tensor at other memory.
std::shared_ptr<void> own_torch_storage(nb::handle storage, std::shared_ptr<void> also = nullptr);
// A tensor over torch memory (own_torch_storage) that outlives the call importing it (returned
// to Python, kept by a compiled program) makes that storage non-resizable, as torch's x.numpy()
// does, so that its owner cannot grow it into other memory (x.resize_(n)). Others: nothing.
void pin_torch_memory(const pto::Tensor& t);
// What an in-place op (scatter_, scatter_update, index_add_) returns: the very object it was
// given when that is a ptocpu.Tensor, else `written`, a tensor over the caller's memory.
nb::object in_place_result(nb::handle input, pto::Tensor written);
// After an in-place write into obj: a torch tensor's version counter is bumped, as torch's own
// in-place ops do, so autograd notices a saved tensor that changed.
void note_written(nb::handle obj);
// An op's limits on one platform as the op table and platform_table() show them: offered,
// dtypes (names, "" where not offered) and rank (min, max).
nb::dict limits_row(const pto::OpLimits& l);
// A shape as ptocpu.Shape: a tuple that also equals the list PyPTO returns.
nb::object to_shape(const std::vector<int64_t>& dims);
// The shape and dtype of anything that has them (torch fake tensors, numpy arrays, ptocpu
// tensors) as a tensor without storage, for the output_shape functions, which read no data.
pto::Tensor to_metadata(nb::handle obj, const char* op, const char* param);
// DT_* constants, numpy / ml_dtypes / torch dtypes and names.
pto::DType to_dtype(nb::handle obj);
// A Python int or numpy integer; anything else is a DTypeError naming op and param.
int64_t to_int(nb::handle obj, const char* op, const char* param);
// A dim argument: as to_int, but a value beyond int64 is an IndexOutOfRange like any
// out-of-range dim (docs/errors.md).
int64_t to_dim(nb::handle obj, const char* op, const char* param = "dim");
std::vector<int64_t> to_int_list(nb::handle obj, const char* op, const char* param);
// A Python int / float / bool or a real numpy scalar, else nullopt (complex numbers are not
// scalars here: the caller's tensor conversion then names them as a dtype without a ptocpu dtype).
std::optional<pto::Scalar> to_scalar(nb::handle obj);
// PyPTO's Element class (lang/element.py), registered by the package at import
// (_register_tensor_hooks): to_scalar reads its instances as scalars of their dtype.
extern PyObject* g_element_type;
nb::tuple to_tuple(const std::vector<int64_t>& v);

// Releases the GIL around a call into the core, like nb::gil_scoped_release, except once the
// interpreter has begun to exit: a daemon thread that took the GIL back after that would be
// ended by Python inside this destructor, which aborts the process. So the exit waits for the
// calls that released it (runtime.cpp), and later calls keep it (docs/tensors.md, threads).
class ReleaseGil {
 public:
  explicit ReleaseGil(bool release = true);
  ~ReleaseGil();
  ReleaseGil(const ReleaseGil&) = delete;
  ReleaseGil& operator=(const ReleaseGil&) = delete;

 private:
  PyThreadState* saved_ = nullptr;
};

// True for an instance of ptocpu.Error (errors.cpp).
bool is_ptocpu_error(nb::handle exception);

// Tensor() is only an annotation placeholder for jit kernels: using it as data is a DTypeError.
const pto::Tensor& require_storage(const pto::Tensor& t, const char* what);
// DLPack (dlpack.cpp): export as a capsule (legacy or versioned by max_version), import zero-copy.
nb::object to_dlpack(const pto::Tensor& t, nb::handle max_version, nb::handle dl_device, nb::handle copy);
pto::Tensor from_dlpack(nb::handle obj);
// Tells this thread's dispatch handlers (ops.cpp) of an event that is not an op call:
// "created" (tensor, shape, dtype: Tensor(shape, dtype) made it), "moved" (tensor, other).
void notify_handlers(const char* event, nb::args args);
// A Python indexing key (indexing.cpp) as the core's IndexKey (docs/tensors.md#indexing).
pto::IndexKey to_index_key(nb::handle key);

}  // namespace ptobind
