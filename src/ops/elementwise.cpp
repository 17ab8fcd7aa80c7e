// The checks and shape rules every elementwise op shares (docs/ops/elementwise.md).
#include "ops/elementwise.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "ops/checks.h"
#include "ptocpu/platform.h"
#include "ptocpu/scalar.h"
#include "ptocpu/tiling.h"
#include "tiling/tile_rules.h"

namespace pto::elementwise {

Tensor operand(const OpDef& op, const OpLimits& limits, const Tensor& t, const char* param, DTypeSet allowed) {
  const char* name = op.name.c_str();
  checks::check_dtype(name, param, t.dtype(), allowed);
  checks::check_rank(name, param, t.ndim(), limits.min_rank, limits.max_rank);
  checks::check_extent(name, param, t.shape(), true);
  return t.valid_part();
}

Tensor offered_input(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  return operand(op, limits, a.tensor(0), op.params[0].name, limits.dtypes);
}

void same_dtype(const OpDef& op, const char* param, DType got, const char* other_param, DType want) {
  checks::check_same_dtype(op.name.c_str(), param, got, other_param, want);
}

DType compute_dtype(DType dt) {
  switch (dt) {
    case DType::FP16: case DType::BF16: case DType::FP8E4M3: case DType::FP8E5M2: case DType::FP8E8M0:
      return DType::FP32;
    default:
      return dt;
  }
}

Tensor scalar_operand(const OpDef& op, const Scalar& s, DType dt, ScalarAs as, bool floats_on_integers,
                      const char* param) {
  const bool float_tensor = is_floating(dt);
  if (s.dtype && *s.dtype != dt)
    fail<DTypeError>(op.name, ": ", param, " is an Element of ", dtype_name(*s.dtype), " but the tensor is ",
                     dtype_name(dt), " (data type inconsistent); give an Element of ", dtype_name(dt));
  if (s.kind == Scalar::Kind::Float && !s.dtype && !float_tensor && !floats_on_integers)
    fail<DTypeError>(op.name, ": ", param, " ", s.to_string(), " is a float but the tensor is ", dtype_name(dt),
                     "; an integer tensor takes integer scalars");
  // A float scalar allowed with an integer tensor is truncated into the tensor's dtype (range-checked).
  const DType held = as == ScalarAs::TensorDtype || !float_tensor ? dt : compute_dtype(dt);
  Tensor t = Tensor::empty({}, held);
  encode_scalar(s, held, t.data(), op.name.c_str(), param);
  return t;
}

Shape broadcast_shape(const OpDef& op, std::initializer_list<std::pair<const char*, const Shape&>> shapes) {
  size_t rank = 0;
  for (const auto& [param, shape] : shapes) rank = std::max(rank, shape.size());
  Shape out(rank, 1);
  for (const auto& [param, shape] : shapes) {
    const size_t lead = rank - shape.size();
    for (size_t d = 0; d < shape.size(); ++d) {
      int64_t& o = out[lead + d];
      if (shape[d] == o || shape[d] == 1) continue;
      if (o != 1) {
        std::string all;
        for (const auto& [p, s] : shapes) all += (all.empty() ? "" : ", ") + std::string(p) + " " + shape_to_string(s);
        fail<ArgumentError>(op.name, ": shapes do not broadcast (", all, "): at dim ", lead + d, " sizes ", o, " and ",
                            shape[d], " differ and neither is 1");
      }
      o = shape[d];
    }
  }
  return out;
}

Tensor broadcast_to(const Tensor& t, const Shape& shape) {
  if (t.shape() == shape) return t;
  const size_t lead = shape.size() - t.ndim();
  Strides strides(shape.size(), 0);
  for (int d = 0; d < t.ndim(); ++d)
    if (t.shape(d) == shape[lead + d]) strides[lead + d] = t.stride(d);
  return t.as_strided(shape, strides, 0);
}

void check_tile(const OpDef& op, const Shape& out_shape, DType out_dtype, const std::vector<Tensor>& inputs,
                const std::vector<tiling::Buffer>& temporaries) {
  const Shape& set = get_vec_tile_shapes();
  if (set.empty()) return;
  const char* name = op.name.c_str();
  const int rank = static_cast<int>(out_shape.size());
  if (rank == 0) return;  // a 0-d result takes no tile
  const Shape tile = tiling::leading_tile(name, set, rank, "output");
  // One tile per tensor input (a broadcast input's tile is clipped to its own extent) and one output tile.
  std::vector<tiling::Buffer> buffers;
  static const char* const kInputTiles[] = {"input tile", "other tile", "third input tile", "fourth input tile"};
  for (size_t k = 0; k < inputs.size() && k < 4; ++k) {
    if (inputs[k].ndim() == 0) continue;  // a scalar operand is a register value
    Shape extent(rank, 1);
    for (int d = 0; d < inputs[k].ndim(); ++d) extent[rank - inputs[k].ndim() + d] = inputs[k].shape(d);
    buffers.push_back({kInputTiles[k], extent, inputs[k].itemsize()});
  }
  buffers.push_back({"output tile", out_shape, dtype_size(out_dtype)});
  buffers.insert(buffers.end(), temporaries.begin(), temporaries.end());
  tiling::check_ub(name, tile, buffers);
}

namespace {
std::mutex g_kernels_mutex;
std::unordered_map<RunFn, KernelFn>& kernels() {
  static auto* map = new std::unordered_map<RunFn, KernelFn>();
  return *map;
}
}  // namespace

void register_kernel(RunFn run, KernelFn kernel) {
  std::lock_guard lock(g_kernels_mutex);
  kernels()[run] = kernel;
}

KernelFn kernel_of(RunFn run) {
  std::lock_guard lock(g_kernels_mutex);
  const auto it = kernels().find(run);
  return it == kernels().end() ? nullptr : it->second;
}

DType result_dtype(Result r, DType in) {
  switch (r) {
    case Result::Bool: return DType::BOOL;
    case Result::Fp32ForIntegers: return is_integer(in) || in == DType::BOOL ? DType::FP32 : in;
    default: return in;
  }
}

namespace {

// The compute dtype of an op: the output's, except for predicates (their inputs').
DType compute_of(Result r, DType in, DType out) { return r == Result::Bool ? compute_dtype(in) : compute_dtype(out); }

}  // namespace

Plan plan_binary(const OpDef& op, const Args& a, const BinaryRules& rules) {
  const OpLimits& limits = require_offered(op);
  const bool first_scalar = rules.scalar_first && !a.is_tensor(0);
  if (first_scalar && !a.is_tensor(1))
    fail<DTypeError>(op.name, ": input and other are both scalars; one of them must be a tensor");
  // The tensor operand (the first unless a scalar leads) sets the dtype.
  const int t = first_scalar ? 1 : 0, s = 1 - t;
  const char* tname = op.params[t].name;
  const char* sname = op.params[s].name;
  Tensor x = operand(op, limits, a.tensor(t), tname, limits.dtypes);
  Tensor y;
  if (a.is_tensor(s)) {
    y = operand(op, limits, a.tensor(s), sname, limits.dtypes);
    same_dtype(op, sname, y.dtype(), tname, x.dtype());
  } else {
    const Scalar& v = a.scalar(s);
    if (!rules.integer_scalars && v.kind != Scalar::Kind::Float)
      fail<DTypeError>(op.name, ": ", sname, " ", v.to_string(), " is an int; give a float (as upstream's ", op.name,
                       " takes)");
    const bool rounds = rules.scalar_rounds_on.contains(x.dtype());
    y = scalar_operand(op, v, x.dtype(), rounds ? ScalarAs::TensorDtype : ScalarAs::Compute, rules.floats_on_integers,
                       sname);
  }
  Plan p;
  const DType dtype = x.dtype();
  // Moved, not copied: each copy of a tensor is two atomic reference counts, and this runs per call.
  p.inputs.reserve(2);
  p.inputs.push_back(std::move(t == 0 ? x : y));
  p.inputs.push_back(std::move(t == 0 ? y : x));
  p.shape = broadcast_shape(op, {{op.params[0].name, p.inputs[0].shape()}, {op.params[1].name, p.inputs[1].shape()}});
  checks::check_extent(op.name.c_str(), "output", p.shape, false);
  p.dtype = result_dtype(rules.result, dtype);
  p.compute = compute_of(rules.result, dtype, p.dtype);
  check_tile(op, p.shape, p.dtype, p.inputs);
  return p;
}

Plan plan_unary(const OpDef& op, const Args& a, Result result) {
  Plan p;
  const Tensor& x = p.inputs.emplace_back(offered_input(op, a));  // in place, as plan_binary's
  p.shape = x.shape();
  p.dtype = result_dtype(result, x.dtype());
  p.compute = compute_of(result, x.dtype(), p.dtype);
  check_tile(op, p.shape, p.dtype, p.inputs);
  return p;
}

}  // namespace pto::elementwise
