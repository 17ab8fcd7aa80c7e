// The op table (docs/CONTRIBUTING.md#adding-an-operator): every operator is one OpDef — its name,
// parameters, Python forms, outputs, the argument it writes, its per-platform limits, its tile
// rule, its bytes-moved formula, its doc page — plus its kernel. The Python functions and Tensor
// methods, the recorder, the trace, the torch registration, verify's coverage, the docs tables and
// the stub are generated from this table or iterate it.
#pragma once
#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ptocpu/dtype.h"
#include "ptocpu/scalar.h"
#include "ptocpu/tensor.h"

namespace pto {

// ---- parameters and argument values ---------------------------------------------------------

// What a parameter accepts. From Python: Tensor = anything asarray takes; Scalar = a Python or
// numpy int / float / bool; Int = an integer (DTypeError for bool and float); Dim = an Int whose
// out-of-int64 values are IndexOutOfRange; IntList = a sequence of integers (or one integer).
enum class ParamKind : uint8_t {
  Tensor,          // read: its valid part (docs/kernel_model.md)
  Memory,          // written in place or viewed: the caller's memory itself, whole, never a copy
  TensorOrScalar,  // a tensor (read), or a number (binary ops' other operand)
  TensorList,      // a sequence of tensors (read)
  Parts,           // a sequence of (tensor, offsets) pairs (assemble's list form)
  Scalar,
  Int,
  Dim,
  IntList,
  Bool,
  DType,
  Str,
  Index,           // a Python indexing key: ints, slices, None, Ellipsis, or dim:index_tensor
  Dict,            // a dict of named fields (Param::fields), each converted by its own kind; a key not
                   // among them is an ArgumentError, a missing one takes its default (matmul's extend_params)
};

class Args;

struct Param {
  const char* name;
  ParamKind kind;
  // The Python default as it is written in the signature ("0", "False", "None", "'constant'");
  // nullptr: required. "None" also makes None an accepted value.
  const char* default_value = nullptr;
  bool keyword_only = false;
  // A Str parameter's accepted values as the error lists them ("None, 'add', 'multiply'"): any
  // other value, or a non-string, is an ArgumentError naming them. The op checks the value.
  const char* choices = nullptr;
  const char* type_hint = nullptr;  // the stub's annotation when the kind's default does not fit
  // Python's *name (an IntList only, after the positional parameters): the remaining positional
  // arguments as one list; a single list or tuple argument is that list (zeros(2, 3) and
  // zeros([2, 3]) alike). Never passed by keyword.
  bool variadic = false;
  // A Scalar that also takes a str, read as Python's float(str) does ("-inf", "1e-3").
  bool number_from_str = false;
  // A Dict parameter's keys: each a Param of its own (name, kind, default). The op receives
  // them as one Fields value, in this order.
  std::span<const Param> fields = {};
  // A tensor read here that has dynamic dims (a jit argument annotated pypto.DYNAMIC; views of
  // it are static) is refused, as PyPTO refuses it: with these words when the op has its own
  // (PyPTO's), else with the general message (bindings/python/ops.cpp).
  const char* dynamic_refusal = nullptr;
  // Set on a Memory parameter (which is not refused otherwise): a dynamic tensor there is refused
  // with dynamic_refusal's words unless this says the call's other arguments allow it (reshape:
  // only inplace=True without a valid_shape takes a dynamic shape).
  bool (*dynamic_allowed)(const Args&) = nullptr;
};

// A (tensor, offsets) pair: one part of assemble's list form.
struct TensorAt {
  Tensor tensor;
  std::vector<int64_t> offsets;
};

// An indexing key (docs/tensors.md#indexing) as numpy's basic indexing has it, or PyPTO's
// t[dim:index] (gather / scatter along dim by an index tensor).
struct IndexItem {
  enum class Kind : uint8_t { Int, Slice, NewAxis, Ellipsis };
  Kind kind = Kind::Int;
  int64_t value = 0;                   // Int
  int64_t start = 0, stop = 0, step = 1;  // Slice, with has_start / has_stop false for None
  bool has_start = false, has_stop = false;
};
struct IndexKey {
  std::vector<IndexItem> items;
  bool by_index_tensor = false;  // t[dim:index]
  int64_t dim = 0;
  Tensor index;
};

class Args;
// A Dict argument: one value per Param::fields entry, in that order (defaults filled in). Shared and
// never changed in place: a Dict's defaults, parsed once, go to every call without a copy.
struct Fields {
  std::shared_ptr<const Args> args;
};
// One argument after conversion. The monostate is None.
using Value = std::variant<std::monostate, Tensor, Scalar, int64_t, std::vector<int64_t>, bool, DType, std::string,
                           std::vector<Tensor>, std::vector<TensorAt>, IndexKey, Fields>;

// The converted arguments of one call, in parameter order (defaults filled in).
class Args {
 public:
  Args() = default;
  explicit Args(std::vector<Value> values) : values_(std::move(values)) {}

  size_t size() const { return values_.size(); }
  bool is_none(size_t i) const { return std::holds_alternative<std::monostate>(values_[i]); }
  bool is_tensor(size_t i) const { return std::holds_alternative<Tensor>(values_[i]); }
  const Tensor& tensor(size_t i) const { return std::get<Tensor>(values_[i]); }
  const Scalar& scalar(size_t i) const { return std::get<Scalar>(values_[i]); }
  int64_t integer(size_t i) const { return std::get<int64_t>(values_[i]); }
  const std::vector<int64_t>& ints(size_t i) const { return std::get<std::vector<int64_t>>(values_[i]); }
  bool flag(size_t i) const { return std::get<bool>(values_[i]); }
  DType dtype(size_t i) const { return std::get<DType>(values_[i]); }
  const std::string& str(size_t i) const { return std::get<std::string>(values_[i]); }
  const std::vector<Tensor>& tensors(size_t i) const { return std::get<std::vector<Tensor>>(values_[i]); }
  const std::vector<TensorAt>& parts(size_t i) const { return std::get<std::vector<TensorAt>>(values_[i]); }
  const IndexKey& key(size_t i) const { return std::get<IndexKey>(values_[i]); }
  // A Dict argument's fields as Args of their own (the binding fills in every default, also for None).
  const Args& fields(size_t i) const { return *std::get<Fields>(values_[i]).args; }
  // Which of the op's parameter lists the call matched (OpDef::overloads; 0 = params).
  int overload = 0;
  const Value& operator[](size_t i) const { return values_[i]; }
  Value& operator[](size_t i) { return values_[i]; }
  std::vector<Value>& values() { return values_; }
  const std::vector<Value>& values() const { return values_; }

 private:
  std::vector<Value> values_;
};

// ---- per-platform limits ---------------------------------------------------------------------

// The platforms of docs/platforms.md, in table order.
enum class PlatformId : uint8_t { Cpu, Ascend950, AtlasA3, AtlasA2 };
inline constexpr int kNumPlatforms = 4;

// An op's row for one platform.
struct OpLimits {
  bool offered = true;
  DTypeSet dtypes = DTypeSet::all();  // of the principal input (params[0] unless the op says)
  int min_rank = 0, max_rank = 8;     // of the principal input
  int index_max_rank = 8;             // index_select: index rank
  int output_max_rank = 8;            // index_select: output rank
  // The dtypes whose results the device's AutoCast pass computes in fp32 and keeps in fp32
  // between such ops in a kernel (docs/kernel_model.md#compiled-kernels).
  DTypeSet autocast = {};
};

// Rows for every platform. Most ops differ only in the dtype lists: build them with platform_rows.
using PlatformRows = std::array<OpLimits, kNumPlatforms>;
// cpu: `cpu` (every dtype that makes sense for the op), ranks 0..8 unless given; the chips: their
// lists (empty: not offered there), ranks min_rank..max_rank.
PlatformRows platform_rows(DTypeSet cpu, DTypeSet ascend950, DTypeSet atlas_a3, DTypeSet atlas_a2, int min_rank = 1,
                           int max_rank = 4, int cpu_min_rank = 0, int cpu_max_rank = 8);
// The rows with `autocast` on every platform (OpLimits::autocast).
PlatformRows with_autocast(PlatformRows rows, DTypeSet autocast);

// ---- the entry ---------------------------------------------------------------------------------

// How Python reaches the op.
enum Form : unsigned {
  kFunction = 1,  // ptocpu.<name>(...)
  kMethod = 2,    // Tensor.<name>(...), params[0] is self
  kTorch = 4,     // torch.ops.ptocpu.<name>, its schema written from params (docs/torch.md)
};

// A Python operator of Tensor. Without a recipe it calls the op with self and its arguments
// (t.__add__(o) = add(t, o)); a recipe composes ops over `self` and `other` the way upstream's
// Tensor does, e.g. __rtruediv__ = "mul(reciprocal(self), other)".
struct Dunder {
  const char* name;
  const char* recipe = nullptr;
};

struct OpDef;
using Outputs = std::vector<Tensor>;
// The kernel: checks every argument, computes, returns the outputs (the written tensor itself for
// an in-place op). Runs with the GIL released.
using RunFn = Outputs (*)(const OpDef& op, const Args& args);
// The output shapes and dtypes from the arguments' shapes and dtypes alone, under the rules every
// platform shares (tensors may have no storage): what torch.compile's fake kernels ask.
struct OutputMeta {
  Shape shape;
  DType dtype;
};
using InferFn = std::vector<OutputMeta> (*)(const OpDef& op, const Args& args);
// The least bytes the op moves (docs/tracing.md): reads the result depends on plus writes.
using BytesFn = int64_t (*)(const OpDef& op, const Args& args, const Outputs& outputs);

struct OpDef {
  std::string name;  // as called: ptocpu.<name>
  std::vector<Param> params;
  // Further signatures of the same op (assemble's list form): a call binds to the first list
  // whose arity and argument kinds fit; Args::overload says which (1 = overloads[0]).
  std::vector<std::vector<Param>> overloads = {};
  unsigned forms = kFunction;
  std::vector<Dunder> dunders = {};
  int num_outputs = 1;  // 0: returns None
  // The parameter written in place (an in-place op returns that argument), or nullptr.
  const char* written = nullptr;
  int principal = 0;    // the parameter the platform rows' dtypes and ranks describe
  // The docstring: its first line says what the op computes; then the rules, the errors, an
  // example. help(), the stub and the docs' summaries show it. Written in the doc page, in the
  // region `<!-- begin docstring NAME -->` (the table fills it in; docs/CONTRIBUTING.md).
  const char* doc = "";
  const char* doc_page = "";   // docs/ops/<page>.md; "" for docs/ops/<name>.md
  // The PyPTO submodule that also offers the op, under the same name ("experimental":
  // pypto.experimental.<name>, python/ptocpu/experimental.py); "" for none.
  const char* submodule = "";
  std::string tile_rule;  // in words, for the docs and the trace
  // What the op is on the torch side (docs/torch.md): "" = not registered. With kTorch among
  // the forms the table writes it from params; an entry gives it only where that does not fit
  // (overloads).
  const char* torch_schema = "";
  PlatformRows limits = {};
  RunFn run = nullptr;
  InferFn infer = nullptr;
  BytesFn bytes = nullptr;  // nullptr: every input read once, every output written once
  // Where the entry is written (the docs' op index points there).
  const char* defined_in = __builtin_FILE();

  const OpLimits& limits_on(PlatformId p) const { return limits[static_cast<int>(p)]; }
  bool in_place() const { return written != nullptr; }
  // The parameter list of a call's overload (0: params).
  const std::vector<Param>& signature(int overload) const { return overload == 0 ? params : overloads[overload - 1]; }
  // The index of `param` in the overload's list, -1 when there is none.
  int param_index(std::string_view param, int overload = 0) const;
};

inline Outputs outputs_of(std::pair<Tensor, Tensor> two) { return {std::move(two.first), std::move(two.second)}; }

// Bytes of a tensor's elements (0 for an undefined one).
inline int64_t tensor_bytes(const Tensor& t) {
  return t.defined() ? t.numel() * static_cast<int64_t>(t.itemsize()) : 0;
}

// Every operator, in docs order.
const std::vector<OpDef>& op_table();
// The entry named `name` (ArgumentError listing the close names otherwise).
const OpDef& op_def(std::string_view name);
const OpDef* find_op(std::string_view name);

// Runs op with converted arguments (each op reads only the valid part of the tensors it reads,
// docs/kernel_model.md). C++ callers use this or the typed functions of ptocpu/ops.h.
Outputs call_op(const OpDef& op, const Args& args);
// The default bytes formula: every tensor argument read once, every output written once.
int64_t bytes_read_written(const OpDef& op, const Args& args, const Outputs& outputs);
// The same over the valid parts of the tensors read, the tensors among Dict fields included
// (matmul's and conv's extend_params).
int64_t bytes_of_valid_parts(const OpDef& op, const Args& args, const Outputs& outputs);

// UnsupportedError (naming the platforms that offer it) unless the current platform offers op;
// else its limits there. Every op calls this before it looks at any argument.
const OpLimits& require_offered(const OpDef& op);

}  // namespace pto
