// What every elementwise op shares (docs/ops/elementwise.md): operand checks against the op's
// platform rows, scalar operands, numpy broadcasting, the tile rule and UB budget, and the run of a
// functor on the engine of kernels/elementwise.h with the compute type of the device's rules.
//
// A functor F has a static apply over compute types (fp32 for fp16 / bf16 / fp8 / fp32, fp64,
// the integer types, bool) and says which it takes:
//   template <class T> static constexpr bool takes = ...;       // compute types it is defined for
//   template <class T> using out = T;                          // its result type (bool for predicates)
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "kernels/elementwise.h"
#include "ptocpu/error.h"
#include "ptocpu/op_table.h"
#include "tiling/tile_rules.h"

namespace pto::elementwise {

// A tensor operand: its valid part (docs/kernel_model.md), checked against the op's row on the
// current platform: dtype in `allowed`, rank, extent. `param` names it in errors.
Tensor operand(const OpDef& op, const OpLimits& limits, const Tensor& t, const char* param, DTypeSet allowed);
// The first argument, a tensor, as operand() checks it against the op's dtypes on the current
// platform (UnsupportedError where the op is not offered there).
Tensor offered_input(const OpDef& op, const Args& a);
// DTypeError unless got == want (ops without type promotion).
void same_dtype(const OpDef& op, const char* param, DType got, const char* other_param, DType want);

// How a Python scalar operand becomes a 0-d tensor next to a tensor of dtype `dt`:
enum class ScalarAs {
  Compute,     // the compute type's precision: fp32 for fp16 / bf16 / fp32 tensors (the device's fp32 literal
               // in an op AutoCast runs in fp32), fp64 for fp64, the integer dtype itself
  TensorDtype, // rounded to the tensor's dtype first (native fp16 / bf16 instructions take the scalar so)
};
// A float scalar with an integer or bool tensor is a DTypeError unless floats_on_integers; an
// integer outside an integer dtype's range is an ArgumentError (docs/ops/elementwise.md#scalars).
Tensor scalar_operand(const OpDef& op, const Scalar& s, DType dt, ScalarAs as, bool floats_on_integers = false,
                      const char* param = "other");

// numpy broadcasting of the operands' shapes (ArgumentError naming both otherwise).
// The shapes by reference: a call per op, where copying them cost allocations.
Shape broadcast_shape(const OpDef& op, std::initializer_list<std::pair<const char*, const Shape&>> shapes);
// t seen at `shape` (stride 0 along the dims it broadcasts over).
Tensor broadcast_to(const Tensor& t, const Shape& shape);

// The tile rule of elementwise ops: TileShape has at least the output's rank (its leading dims tile
// it, as the device's tiling loops read them); the UB holds one tile of each
// tensor input (clipped to its extent) and of the output, plus the op's `temporaries` (its working
// buffers on the device). Nothing when no tile shape is set.
void check_tile(const OpDef& op, const Shape& out_shape, DType out_dtype, const std::vector<Tensor>& inputs,
                const std::vector<tiling::Buffer>& temporaries = {});

// The storage dtype whose compute type holds `dt`'s values: FP32 for the small floats, else dt.
DType compute_dtype(DType dt);

// The output dtype of an op from its (first) input's dtype.
enum class Result {
  Same,              // the input's
  Bool,              // predicates
  Fp32ForIntegers,   // integer inputs give fp32 (true division, exp2 of an integer)
};
DType result_dtype(Result r, DType in);

// What distinguishes one binary op's operand rules from another's (docs/ops/elementwise.md).
struct BinaryRules {
  // Tensor dtypes whose native instruction takes a scalar in the tensor's own dtype (rounded to
  // it first); elsewhere a scalar takes the compute type (fp32 for fp16 / bf16).
  DTypeSet scalar_rounds_on = {};
  bool floats_on_integers = false;  // a float scalar with an integer tensor is truncated, not refused
  bool integer_scalars = true;      // false: an int scalar is a DTypeError (upstream's comparisons)
  bool scalar_first = false;        // the first operand may be the scalar (maximum, minimum)
  Result result = Result::Same;
};

struct Plan {
  std::vector<Tensor> inputs;  // valid parts (scalars as 0-d tensors)
  Shape shape;                 // broadcast
  DType dtype;                 // of the output
  DType compute;               // whose compute type the functor runs in
};
// Every check of a binary op (input, other: tensor or scalar), touching no data.
Plan plan_binary(const OpDef& op, const Args& a, const BinaryRules& rules);
// Every check of a unary op (input: a tensor).
Plan plan_unary(const OpDef& op, const Args& a, Result result);

// A large unary op from a 16-bit input into a 16-bit output whose functor calls the vector math
// library (a block form: the transcendentals) depends only on the input's 65536 codes. Each code's
// result is computed once per functor and dtype pair, through the same rows (so the same bits),
// and then looked up (docs/kernels.md#elementwise).
inline constexpr int64_t kTableFrom = int64_t(1) << 20;  // elements: below, the table is not worth it
// A block form whose work is a few instructions an element (floor's rounding) says kTabulated =
// false: a lookup per element is slower than that (floor of 16M fp16: 6.0 ms by table).
template <class F>
constexpr bool tabulated() {
  if constexpr (requires { F::kTabulated; }) return F::kTabulated;
  else return true;
}
// Elements per thread for the vector math library's functions (erf: about 2 ns an element, so 2K is 4 us).
inline constexpr int64_t kVectorMathMinChunk = int64_t(1) << 11;
template <class F>
constexpr int64_t block_min_chunk() {
  if constexpr (requires { F::kMinChunk; })
    if (F::kMinChunk > 0) return F::kMinChunk;
  return kVectorMathMinChunk;
}

template <class Rows>
bool run_by_table(Rows& rows, const Tensor& in, const Tensor& out) {
  if (in.itemsize() != 2 || out.itemsize() != 2 || out.numel() < kTableFrom || !in.is_contiguous() ||
      !out.is_contiguous() || in.shape() != out.shape())
    return false;
  constexpr size_t kPairs = static_cast<size_t>(kNumDTypes) * kNumDTypes;
  static std::array<std::once_flag, kPairs> once;
  static std::array<std::vector<uint16_t>, kPairs> tables;
  const size_t pair = static_cast<size_t>(in.dtype()) * kNumDTypes + static_cast<size_t>(out.dtype());
  std::call_once(once[pair], [&] {
    const Tensor codes = Tensor::empty({65536}, in.dtype()), results = Tensor::empty({65536}, out.dtype());
    uint16_t* c = codes.data_as<uint16_t>();
    for (int i = 0; i < 65536; ++i) c[i] = static_cast<uint16_t>(i);
    const std::array<const Tensor*, 1> from{&codes};
    kernels::ew::run_rows(kernels::ew::make_loop(results, from.data(), 1), &Rows::row, rows.context());
    tables[pair].assign(results.data_as<uint16_t>(), results.data_as<uint16_t>() + 65536);
  });
  kernels::ew::look_up(out.data_as<uint16_t>(), in.data_as<uint16_t>(), tables[pair].data(), out.numel());
  return true;
}

// Sets what of an engine does not depend on its functor for out and inputs: loads and stores, and
// whether it prefetches and streams (functor-free, so built once per type, not per op).
template <class Tout, class Tin, int N>
void prepare(kernels::ew::Engine<Tout, Tin, N>& rows, const Tensor& out,
             const std::array<const Tensor*, static_cast<size_t>(N)>& inputs) {
  const auto stores_as = [](DType dtype, auto type) {
    return visit_dtype(dtype, [](auto o) { return kernels::ew::kSameBits<decltype(type), typename decltype(o)::type>; });
  };
  for (int k = 0; k < N; ++k) {
    rows.load[k] = kernels::ew::loader<Tin>(inputs[k]->dtype());
    rows.in_native[k] = stores_as(inputs[k]->dtype(), Tin{});
    rows.in_size[k] = static_cast<int>(inputs[k]->itemsize());
  }
  rows.store = kernels::ew::storer<Tout>(out.dtype());
  rows.out_native = stores_as(out.dtype(), Tout{});
  if (!rows.store) fail<Error>("internal: no store of the compute type into ", dtype_name(out.dtype()));
  // Only where some input is read along the rows (not broadcast along them), and not for an
  // update in place: there the flag only kept the rows off the in-place path, and reading the
  // other input ahead cost more than it saved (on a Xeon with AVX-512 FP16, [4096, 4096] fp32:
  // axpy_ by a column 1.40 -> 1.17 ms, by a matrix 3.25 -> 2.80 ms).
  const auto along_rows = [&](const Tensor* t) {
    return t->ndim() > 0 && t->shape(t->ndim() - 1) == out.shape(out.ndim() - 1);
  };
  rows.updates_input = std::any_of(inputs.begin(), inputs.end(), [&](const Tensor* t) { return t->data() == out.data(); });
  rows.prefetch = kernels::kernel_tuning().prefetch_streams &&
                  out.numel() * static_cast<int64_t>(out.itemsize()) >= kernels::ew::kPrefetchFromBytes &&
                  std::any_of(inputs.begin(), inputs.end(), along_rows) && !rows.updates_input;
  // Streamed: a large contiguous output that no input shares (an in-place update has read the
  // line it writes, so it has no write-allocate read to save; streaming it measured slower).
  const int64_t out_bytes = out.numel() * static_cast<int64_t>(out.itemsize());
  rows.stream = PTO_HAVE_STREAM_LINES && DTypeSet::all().contains(out.dtype()) && out.is_contiguous() &&
                out_bytes >= kernels::kernel_tuning().stream_bytes &&
                std::none_of(inputs.begin(), inputs.end(), [&](const Tensor* t) { return out.may_overlap(*t); });
  rows.stream_split_lines = out_bytes >= 2 * kernels::kernel_tuning().stream_bytes;  // stream_bytes: half the LLC
}

// Runs a prepared engine over out and inputs; min_chunk: elements per thread, 0 for the loop's default.
template <class Tout, class Tin, int N>
void run_prepared(kernels::ew::Engine<Tout, Tin, N>& rows, const Tensor& out,
                  const std::array<const Tensor*, static_cast<size_t>(N)>& inputs, int64_t min_chunk) {
  kernels::ew::Loop loop = kernels::ew::make_loop(out, inputs.data(), N);
  if (min_chunk > 0) loop.min_chunk = min_chunk;
  // Short rows read ahead only for a functor that costs more than its memory traffic (a vector
  // math call, pow, atan2: the kind that is not streamed), not updating an input in place
  // (kernels/elementwise.cpp's kShortRowBytes).
  loop.short_rows_ahead = !rows.streams && !rows.updates_input;
  using E = kernels::ew::Engine<Tout, Tin, N>;
  kernels::ew::run_rows(loop, &E::row, rows.context(), nullptr, &E::batch, &E::run);
}

// Runs F into out over inputs (each broadcasting to out's shape), computing in `compute`'s type.
template <class F, size_t N>
void run(const Tensor& out, const std::array<const Tensor*, N>& inputs, DType compute) {
  visit_dtype(compute_dtype(compute), [&](auto tag) {
    using Tin = kernels::ew::kernel_t<F, kernels::ew::compute_t<typename decltype(tag)::type>>;
    if constexpr (F::template takes<Tin>) {
      using Rows = kernels::ew::Rows<F, typename F::template out<Tin>, Tin, static_cast<int>(N)>;
      Rows rows;
      prepare(rows, out, inputs);
      std::array<DType, N> input_dtypes;
      for (size_t k = 0; k < N; ++k) input_dtypes[k] = inputs[k]->dtype();
      rows.fuse(out.dtype(), input_dtypes);
      if constexpr (N == 1 && Rows::kBlockForm && tabulated<F>())
        if (run_by_table(rows, *inputs[0], out)) return;
      run_prepared(rows, out, inputs, Rows::kBlockForm ? block_min_chunk<F>() : 0);
    } else {
      fail<Error>("internal: elementwise functor has no ", dtype_name(compute), " form");
    }
  });
}

// ---- compiled programs ---------------------------------------------------------------------------

// What a compiled program (docs/kernel_model.md#compiled-kernels) needs to run an elementwise
// op inside a fused loop: the op's checked plan and its functor's block function over compute types.
struct Kernel {
  Plan plan;
  int arity = 0;
  DType in_compute = DType::FP32;   // the storage dtype of the functor's input type
  DType out_compute = DType::FP32;  // ... and of its result type
  void (*apply)(void* out, const void* const* in, int64_t m) = nullptr;
};
using KernelFn = bool (*)(const OpDef& op, const Args& a, Kernel& k);
// The kernel function of an op whose run is an elementwise template below (nullptr otherwise).
// Each such run registers itself on its first call, so every op a trace recorded is known.
KernelFn kernel_of(RunFn run);
void register_kernel(RunFn run, KernelFn kernel);

template <class F, size_t N>
bool fill_kernel(const Plan& p, Kernel& k) {
  return visit_dtype(compute_dtype(p.compute), [&](auto tag) {
    using Tin = kernels::ew::compute_t<typename decltype(tag)::type>;
    if constexpr (F::template takes<Tin>) {
      using Tout = typename F::template out<Tin>;
      k.plan = p;
      k.arity = static_cast<int>(N);
      k.in_compute = dtype_of<Tin>();
      k.out_compute = dtype_of<Tout>();
      k.apply = [](void* out, const void* const* in, int64_t m) {  // in the same bits' kernel type
        using Kin = kernels::ew::kernel_t<F, Tin>;
        using Kout = typename F::template out<Kin>;
        kernels::ew::Rows<F, Kout, Kin, static_cast<int>(N)>::block(static_cast<Kout*>(out),
                                                                      reinterpret_cast<const Kin* const*>(in), m);
      };
      return true;
    }
    return false;
  });
}

// The table entry's run and infer for a plan and a functor.
template <class F, size_t N>
Outputs run_plan(const Plan& p) {
  Outputs outputs;  // the output made in place: a copy is two atomic reference counts per call
  const Tensor& out = outputs.emplace_back(Tensor::empty(p.shape, p.dtype));
  std::array<const Tensor*, N> inputs;
  for (size_t k = 0; k < N; ++k) inputs[k] = &p.inputs[k];
  run<F, N>(out, inputs, p.compute);
  return outputs;
}

template <class F, const BinaryRules& R>
bool binary_kernel(const OpDef& op, const Args& a, Kernel& k) { return fill_kernel<F, 2>(plan_binary(op, a, R), k); }
template <class F, const BinaryRules& R>
Outputs binary(const OpDef& op, const Args& a) {
  static const bool registered = (register_kernel(&binary<F, R>, &binary_kernel<F, R>), true);
  (void)registered;
  return run_plan<F, 2>(plan_binary(op, a, R));
}
template <const BinaryRules& R>
std::vector<OutputMeta> binary_infer(const OpDef& op, const Args& a) {
  const Plan p = plan_binary(op, a, R);
  return {{p.shape, p.dtype}};
}

template <class F, Result R = Result::Same>
bool unary_kernel(const OpDef& op, const Args& a, Kernel& k) { return fill_kernel<F, 1>(plan_unary(op, a, R), k); }
template <class F, Result R = Result::Same>
Outputs unary(const OpDef& op, const Args& a) {
  static const bool registered = (register_kernel(&unary<F, R>, &unary_kernel<F, R>), true);
  (void)registered;
  return run_plan<F, 1>(plan_unary(op, a, R));
}
template <Result R = Result::Same>
std::vector<OutputMeta> unary_infer(const OpDef& op, const Args& a) {
  const Plan p = plan_unary(op, a, R);
  return {{p.shape, p.dtype}};
}

}  // namespace pto::elementwise
