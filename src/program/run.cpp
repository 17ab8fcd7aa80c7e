// Running a Program (docs/kernel_model.md#compiled-kernels): each node's tensors are made from
// their refs (root base + offset + the loops' steps), its moving integers set, and its op run;
// the outputs become the roots they define.
#include <chrono>
#include <exception>
#include <mutex>
#include <sstream>

#include "kernels/elementwise.h"
#include "program/program.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/parallel.h"

namespace pto::program {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Frame {
  const Program& program;
  std::vector<Tensor> slots;   // each root's tensor now
  std::vector<int64_t> index;  // each enclosing loop's iteration
  std::vector<Span>* spans;
  bool in_parallel = false;    // an iteration of a parallel loop: loops inside run serially
  SettingScope* setting = nullptr;  // this thread's platform and tile shape
};

Tensor materialize(const Frame& f, const Ref& r) {
  const Tensor& root = f.slots[r.root];
  int64_t offset = r.offset;
  for (size_t l = 0; l < r.step.size(); ++l) offset += f.index[l] * r.step[l];
  std::byte* data = static_cast<std::byte*>(root.data()) + offset;
  Tensor t = Tensor::from_blob(data, r.shape, r.strides, r.dtype, root.owner());
  if (root.read_only()) t = t.as_read_only();
  return r.valid == r.shape ? t : t.with_valid_shape(r.valid);
}

void set_int(Args& args, const MovingInt& m, const std::vector<int64_t>& index) {
  int64_t v = m.value;
  for (size_t l = 0; l < m.step.size(); ++l) v += index[l] * m.step[l];
  if (m.item < 0) {
    args[m.arg] = v;
  } else if (auto* key = std::get_if<IndexKey>(&args[m.arg])) {
    IndexItem& it = key->items[m.item / 3];
    (m.item % 3 == 0 ? it.value : m.item % 3 == 1 ? it.start : it.stop) = v;
  } else {
    std::get<std::vector<int64_t>>(args[m.arg])[m.item] = v;
  }
}

// What went wrong where: the program, the op, the loop iterations.
[[noreturn]] void rethrow_in(const Frame& f, const Node& n) {
  std::ostringstream where;
  where << "kernel " << f.program.name << ", " << (n.op ? n.op->name : n.fused ? "fused elementwise ops" : "zeros");
  if (!f.index.empty()) {
    where << " at loop iteration";
    for (size_t l = 0; l < static_cast<size_t>(n.depth) && l < f.index.size(); ++l) where << (l ? ", " : " ") << f.index[l];
  }
  try {
    throw;
  } catch (const DTypeError& e) {
    fail<DTypeError>(e.what(), " (", where.str(), ")");
  } catch (const ArgumentError& e) {
    fail<ArgumentError>(e.what(), " (", where.str(), ")");
  } catch (const IndexError& e) {
    fail<IndexError>(e.what(), " (", where.str(), ")");
  } catch (const TileError& e) {
    fail<TileError>(e.what(), " (", where.str(), ")");
  } catch (const UnsupportedError& e) {
    fail<UnsupportedError>(e.what(), " (", where.str(), ")");
  }
}

// ---- fused chains ---------------------------------------------------------------------------------

using kernels::ew::kBlock;

// A fused chain's row over buffers of its compute type T: per block, each input loaded once, each
// op run, each op's result rounded where the device rounds it, the outputs stored.
template <class T>
struct FusedRows {
  const Fused* fused = nullptr;
  int outputs = 0;
  kernels::ew::LoadFn<T> load[kernels::ew::kMaxOperands] = {};
  kernels::ew::StoreFn<T> store[kernels::ew::kMaxOperands] = {};
  kernels::ew::StoreFn<T> narrow[Fused::kMaxBuffers] = {};  // per op: into its rounding dtype, or null
  kernels::ew::LoadFn<T> widen[Fused::kMaxBuffers] = {};
  int64_t narrow_size[Fused::kMaxBuffers] = {};

  static void row(void* ctx, std::byte* const* ptrs, const int64_t* strides, int64_t n) {
    const auto& self = *static_cast<const FusedRows*>(ctx);
    const Fused& f = *self.fused;
    const int inputs = static_cast<int>(f.inputs.size());
    const int outputs = self.outputs;
    alignas(64) T buffers[Fused::kMaxBuffers][kBlock];
    alignas(64) std::byte rounded[kBlock * sizeof(T)];
    const T* value[Fused::kMaxBuffers];
    for (int i = 0; i < inputs; ++i)  // a stride-0 input is the same in every block: filled once
      if (strides[outputs + i] == 0) value[i] = self.load[i](ptrs[outputs + i], 0, n < kBlock ? n : kBlock, buffers[i]);
    for (int64_t j = 0; j < n; j += kBlock) {
      const int64_t m = n - j < kBlock ? n - j : kBlock;
      for (int i = 0; i < inputs; ++i) {
        const int k = outputs + i;
        if (strides[k] != 0) value[i] = self.load[i](ptrs[k] + j * strides[k], strides[k], m, buffers[i]);
      }
      for (size_t o = 0; o < f.ops.size(); ++o) {
        const Fused::Op& op = f.ops[o];
        T* out = buffers[inputs + o];
        const void* in[3] = {value[op.in[0]], value[op.in[1]], value[op.in[2]]};
        op.apply(out, in, m);
        if (self.narrow[o]) {
          self.narrow[o](out, rounded, self.narrow_size[o], m);
          self.widen[o](rounded, self.narrow_size[o], m, out);
        }
        value[inputs + o] = out;
      }
      for (int o = 0; o < outputs; ++o)
        self.store[o](value[f.outputs[o].value], ptrs[o] + j * strides[o], strides[o], m);
    }
  }
};

// The tensor a fused input reads (a scalar constant, or a view) or an output writes (a Produced
// root's buffer, made once per frame and reused by later iterations).
Tensor& slot_of(Frame& f, int root) {
  Tensor& slot = f.slots[root];
  if (!slot.defined()) {
    const Tensor& like = f.program.roots[root].tensor;
    slot = Tensor::empty(like.shape(), like.dtype());
  }
  return slot;
}

Tensor materialize(Frame& f, const Ref& r, const Tensor& constant) {
  if (r.root < 0) return constant;
  slot_of(f, r.root);
  return materialize(static_cast<const Frame&>(f), r);
}

std::byte* address(Frame& f, const Ref& r, void* constant = nullptr) {
  if (r.root < 0) return static_cast<std::byte*>(constant);
  auto* p = static_cast<std::byte*>(slot_of(f, r.root).data()) + r.offset;
  for (size_t l = 0; l < r.step.size(); ++l) p += f.index[l] * r.step[l];
  return p;
}

// The loop was planned at compile time (prepare); a run only says where the operands are.
void run_fused(Frame& f, const Fused& fused) {
  std::byte* data[kernels::ew::kMaxOperands];
  int k = 0;
  for (const Fused::Output& o : fused.outputs) data[k++] = address(f, o.target);
  for (const Fused::Input& in : fused.inputs) data[k++] = address(f, in.ref, in.constant.data());
  kernels::ew::run_rows(fused.loop, fused.row, const_cast<void*>(fused.rows.get()), data);
}

}  // namespace

void prepare(Fused& fused) {
  // The operands' geometry without memory: outputs first, then inputs (each at its valid shape).
  const auto geometry = [](const Ref& r, const Tensor& constant) {
    return r.root < 0 ? constant : Tensor::from_blob(nullptr, r.shape, r.strides, r.dtype, nullptr);
  };
  std::vector<Tensor> operands;
  for (const Fused::Output& o : fused.outputs) operands.push_back(geometry(o.target, Tensor()));
  for (const Fused::Input& in : fused.inputs) operands.push_back(geometry(in.ref, in.constant));
  const Tensor* rest[kernels::ew::kMaxOperands];
  for (size_t k = 1; k < operands.size(); ++k) rest[k - 1] = &operands[k];
  fused.loop = kernels::ew::make_loop(operands[0], rest, static_cast<int>(operands.size()) - 1);
  const int outputs = static_cast<int>(fused.outputs.size());
  visit_dtype(fused.compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, kernels::ew::compute_t<T>>) {
      auto rows = std::make_shared<FusedRows<T>>();
      rows->fused = &fused;
      rows->outputs = outputs;
      for (int o = 0; o < outputs; ++o) rows->store[o] = kernels::ew::storer<T>(operands[o].dtype());
      for (size_t i = 0; i < fused.inputs.size(); ++i)
        rows->load[i] = kernels::ew::loader<T>(operands[outputs + i].dtype());
      for (size_t o = 0; o < fused.ops.size(); ++o) {
        if (fused.ops[o].round == fused.compute) continue;
        rows->narrow[o] = kernels::ew::storer<T>(fused.ops[o].round);
        rows->widen[o] = kernels::ew::loader<T>(fused.ops[o].round);
        rows->narrow_size[o] = static_cast<int64_t>(dtype_size(fused.ops[o].round));
      }
      fused.row = &FusedRows<T>::row;
      fused.rows = std::move(rows);
    } else {
      fail<Error>("internal: no fused loop in ", dtype_name(fused.compute));
    }
  });
}

namespace {

void run_node(Frame& f, const Node& n) {
  if (n.fused) {
    const int64_t start = f.spans ? now_ns() : 0;
    try {
      run_fused(f, *n.fused);
    } catch (const Error&) {
      rethrow_in(f, n);
    }
    if (f.spans) {
      Span span{n.fused->name, start, now_ns(), 0, {}, {}, {}, n.setting};
      for (const Fused::Input& in : n.fused->inputs) {
        span.inputs.push_back(materialize(f, in.ref, in.constant));
        span.bytes += shape_numel(in.ref.shape) * static_cast<int64_t>(dtype_size(in.ref.dtype));
      }
      for (const Fused::Output& o : n.fused->outputs) {
        span.outputs.push_back(materialize(f, o.target, Tensor()));
        span.bytes += shape_numel(o.target.shape) * static_cast<int64_t>(dtype_size(o.target.dtype));
      }
      f.spans->push_back(std::move(span));
    }
    return;
  }
  if (n.created >= 0) {
    const Tensor& like = f.program.roots[n.created].tensor;
    f.slots[n.created] = Tensor::zeros(like.shape(), like.dtype());
    return;
  }
  if (n.alias) {  // a view: nothing to do but show it in a trace
    if (!f.spans) return;
    for (const Ref& r : n.refs)
      if (!f.slots[r.root].defined()) return;
  }
  f.setting->apply(n.setting);
  Args args = n.args;
  size_t k = 0;
  for (Value& v : args.values()) for_each_tensor(v, [&](Tensor& t) { t = materialize(f, n.refs[k++]); });
  for (const MovingInt& m : n.ints) set_int(args, m, f.index);
  if (f.spans) clear_ub_use();
  const int64_t start = f.spans ? now_ns() : 0;
  Outputs outputs;
  try {
    outputs = call_op(*n.op, args);
  } catch (const Error&) {
    rethrow_in(f, n);
  }
  if (f.spans) {
    Span span{n.op->name, start, now_ns(), 0, {}, outputs, last_ub_use(), n.setting};
    span.bytes = n.op->bytes ? n.op->bytes(*n.op, args, outputs) : bytes_read_written(*n.op, args, outputs);
    for (Value& v : args.values()) for_each_tensor(v, [&](Tensor& t) { span.inputs.push_back(t); });
    f.spans->push_back(std::move(span));
  }
  for (size_t i = 0; i < n.outputs.size() && i < outputs.size(); ++i)
    if (n.outputs[i] >= 0) f.slots[n.outputs[i]] = std::move(outputs[i]);
}

void run_steps(Frame& f, const std::vector<Step>& steps);

// Elements of work below which a loop's threads cost more than they save.
constexpr int64_t kParallelElements = 32 * 1024;

// A parallel loop's iterations in contiguous ranges on the thread pool, each range with its own
// frame (its own tensors for the roots the body defines). The range with the last iteration
// hands those back, as the serial order would leave them. Iterations are independent
// (compile.cpp), so every thread count gives the same bytes.
bool run_parallel(Frame& f, const Loop& loop) {
  if (!loop.parallel || f.in_parallel || f.spans || get_num_threads() < 2 ||
      loop.count * loop.elements_per_iteration < kParallelElements)
    return false;
  std::mutex mutex;
  int64_t failed_at = loop.count;
  std::exception_ptr error;
  const int64_t min_chunk = std::max<int64_t>(1, kParallelElements / std::max<int64_t>(1, loop.elements_per_iteration));
  parallel_for(loop.count, min_chunk, [&](int64_t begin, int64_t end) {
    const KernelScope kernel;  // as the body ran (docs/kernel_model.md)
    SettingScope setting(Setting::current());
    Frame local{f.program, f.slots, f.index, nullptr, true, &setting};
    for (int root : loop.defined) local.slots[root] = Tensor();
    local.index.push_back(0);
    try {
      for (int64_t i = begin; i < end; ++i) {
        local.index.back() = i;
        run_steps(local, loop.body);
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (begin < failed_at) {
        failed_at = begin;
        error = std::current_exception();
      }
      return;
    }
    if (end == loop.count)
      for (int root : loop.defined) f.slots[root] = std::move(local.slots[root]);
  });
  if (error) std::rethrow_exception(error);
  return true;
}

void run_steps(Frame& f, const std::vector<Step>& steps) {
  for (const Step& s : steps) {
    if (s.node) {
      run_node(f, *s.node);
      continue;
    }
    if (run_parallel(f, *s.loop)) continue;
    f.index.push_back(0);
    for (int64_t i = 0; i < s.loop->count; ++i) {
      f.index.back() = i;
      run_steps(f, s.loop->body);
    }
    f.index.pop_back();
  }
}

}  // namespace

void run(const Program& program, const std::vector<Tensor>& inputs, std::vector<Span>* spans) {
  if (static_cast<int>(inputs.size()) != program.inputs)
    fail<ArgumentError>("kernel ", program.name, ": the program takes ", program.inputs, " tensors, got ", inputs.size());
  const KernelScope kernel;
  SettingScope setting(Setting::current());
  Frame f{program, std::vector<Tensor>(program.roots.size()), {}, spans, false, &setting};
  f.index.reserve(program.depth);
  for (size_t r = 0; r < program.roots.size(); ++r) {
    const Root& root = program.roots[r];
    if (root.kind == RootKind::Input) f.slots[r] = inputs[root.input];
    else if (root.kind == RootKind::Constant) f.slots[r] = root.tensor;
  }
  run_steps(f, program.steps);
  for (const auto& [input, ref] : program.copy_back) {
    const Tensor value = materialize(f, ref);
    assemble(value.with_valid_shape(value.shape()), Shape(value.ndim(), 0), inputs[input]);
  }
}

}  // namespace pto::program
