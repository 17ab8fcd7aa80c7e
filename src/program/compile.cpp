// Compiling a traced Program (docs/kernel_model.md#compiled-kernels): chains of elementwise ops
// over one iteration shape fuse into one loop, a chain's result goes straight where an assemble
// copied it, and loops whose iterations touch disjoint bytes run in parallel.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "ops/elementwise.h"
#include "program/program.h"
#include "ptocpu/platform.h"

namespace pto::program {
namespace {

constexpr int kMaxBuffers = Fused::kMaxBuffers;
constexpr int kMaxOperands = kernels::ew::kMaxOperands;

// How often each root is read anywhere in the program.
void count_reads(const std::vector<Step>& steps, std::map<int, int>& reads) {
  for (const Step& s : steps) {
    if (s.loop) {
      count_reads(s.loop->body, reads);
      continue;
    }
    if (!s.node->alias)
      for (const Ref& r : s.node->refs) ++reads[r.root];
  }
}

// The elementwise kernel of a node whose op is elementwise and computes in one type.
std::optional<elementwise::Kernel> kernel_of(const Node& n) {
  if (!n.op || n.created >= 0) return std::nullopt;
  const elementwise::KernelFn fn = elementwise::kernel_of(n.op->run);
  if (!fn) return std::nullopt;
  elementwise::Kernel k;
  const SettingScope setting(n.setting);
  try {  // the trace's tensors are metadata: planning reads shapes and dtypes only
    if (!fn(*n.op, n.args, k) || k.in_compute != k.out_compute) return std::nullopt;
  } catch (const Error&) {
    return std::nullopt;
  }
  return k;
}

// The op that rounds a value AutoCast kept in fp32 (Op::round does the rounding).
void copy_fp32(void* out, const void* const* in, int64_t m) { std::memcpy(out, in[0], m * sizeof(float)); }

// What assemble(src, offsets, dst) writes: dst's bytes at the offsets, over src's valid shape
// (the offsets may move with the loops). Nothing for any other node.
std::optional<Ref> assemble_target(const Node& a) {
  if (!a.op || a.op->name != "assemble" || a.args.overload != 0 || a.refs.size() != 2) return std::nullopt;
  const Ref& src = a.refs[0];
  const Ref& dst = a.refs[1];
  if (dst.valid != dst.shape) return std::nullopt;
  Ref target = dst;
  target.shape = src.valid;
  target.valid = src.valid;
  const std::vector<int64_t>& offsets = a.args.ints(1);
  const auto item = static_cast<int64_t>(dtype_size(dst.dtype));
  for (size_t d = 0; d < offsets.size(); ++d) target.offset += offsets[d] * dst.strides[d] * item;
  for (const MovingInt& m : a.ints) {
    if (m.arg != 1 || m.item < 0) return std::nullopt;
    for (size_t l = 0; l < m.step.size(); ++l) target.step[l] += m.step[l] * dst.strides[m.item] * item;
  }
  return target;
}

// A chain being built: its fused loop, and which buffer holds the value of each root it made.
struct Chain {
  std::unique_ptr<Fused> fused = std::make_unique<Fused>();
  std::map<int, int> value_of_root;
  std::map<int, DType> unrounded;  // buffers AutoCast keeps in fp32 -> the dtype the device would round to
  std::vector<int> produced;  // in order
  const Platform* platform = nullptr;  // AutoCast rows are the platform's
  int nodes = 0;
  bool took_assemble = false;  // the chain stores into the assemble after it
  bool keeps_fp32 = false;     // an op reads a value AutoCast kept in fp32 (Program::keeps_fp32)

  int buffers() const { return static_cast<int>(fused->inputs.size() + fused->ops.size()); }

  // The buffer an input ref loads into (one per distinct view).
  int input(const Ref& ref, const Tensor& constant) {
    if (const auto it = value_of_root.find(ref.root); ref.root >= 0 && it != value_of_root.end()) return it->second;
    for (size_t k = 0; k < fused->inputs.size(); ++k) {
      const Fused::Input& in = fused->inputs[k];
      const Ref& r = in.ref;
      if (ref.root < 0 ? in.constant.data() == constant.data()
                       : r.root == ref.root && r.offset == ref.offset && r.step == ref.step && r.shape == ref.shape &&
                             r.strides == ref.strides && r.dtype == ref.dtype)
        return static_cast<int>(k);
    }
    // Inputs come first: the op results' buffers move up by one.
    const int k = static_cast<int>(fused->inputs.size());
    for (Fused::Op& op : fused->ops)
      for (int& in : op.in)
        if (in >= k) ++in;
    for (auto& [root, value] : value_of_root) ++value;
    std::map<int, DType> moved;
    for (const auto& [value, dtype] : unrounded) moved[value + 1] = dtype;
    unrounded = std::move(moved);
    fused->inputs.push_back({ref, constant});
    return k;
  }
};

// May node n join the chain? The same iteration shape and compute type, room for its buffers,
// and the chain's own values read whole (a view into a value the chain holds only in a buffer
// cannot be loaded).
bool joins(const Chain& c, const Node& n, const elementwise::Kernel& k) {
  // at most: one input per operand, one rounding per operand, the result
  if (c.buffers() + 2 * k.arity + 1 > kMaxBuffers) return false;
  if (c.nodes == 0) return true;
  if (k.in_compute != c.fused->compute || k.plan.shape != c.fused->shape) return false;
  if (!(n.setting.platform == c.platform)) return false;
  for (const Ref& r : n.refs)
    if (c.value_of_root.count(r.root) && (r.offset != 0 || r.valid != r.shape || r.shape != c.fused->shape))
      return false;
  return true;
}

void append(Chain& c, const Node& n, const elementwise::Kernel& k) {
  Fused& f = *c.fused;
  if (c.nodes == 0) {
    f.compute = k.in_compute;
    f.shape = k.plan.shape;
    c.platform = n.setting.platform;
  }
  // Rounded to the op's output dtype between ops, unless the device's AutoCast keeps it in fp32.
  const DType out = k.plan.dtype;
  const DTypeSet autocast = n.op->limits_on(n.setting.platform->id).autocast;
  Fused::Op op{k.apply, k.arity, {0, 0, 0}, autocast.contains(out) ? k.out_compute : out};
  // The plan's inputs are the node's tensors (valid parts, in order) and the 0-d scalars the plan
  // made, which have data (the trace's tensors are metadata).
  std::vector<std::pair<Ref, Tensor>> operands;
  size_t ref = 0;
  for (int j = 0; j < k.arity; ++j) {
    const Tensor& t = k.plan.inputs[j];
    if (t.data() == nullptr && ref < n.refs.size()) {
      Ref r = n.refs[ref++];
      r.shape = r.valid;
      operands.emplace_back(std::move(r), Tensor());
    } else {
      Ref constant;
      constant.shape = t.shape();
      constant.strides = t.strides();
      constant.valid = t.shape();
      constant.dtype = t.dtype();
      constant.step.assign(n.depth, 0);
      operands.emplace_back(std::move(constant), t);
    }
  }
  // New inputs shift the value buffers: take them all first, then look each one up.
  for (const auto& [r, constant] : operands) c.input(r, constant);
  for (int j = 0; j < k.arity; ++j) {
    op.in[j] = c.input(operands[j].first, operands[j].second);
    // An fp32 value an AutoCast op kept meets an op the device runs in its own dtype: the value
    // leaves the chain there, rounded once.
    const auto pending = c.unrounded.find(op.in[j]);
    if (pending != c.unrounded.end() && !autocast.contains(pending->second)) {
      f.ops.push_back({&copy_fp32, 1, {op.in[j], 0, 0}, pending->second});
      op.in[j] = c.buffers() - 1;
    } else if (pending != c.unrounded.end()) {
      c.keeps_fp32 = true;
    }
  }
  f.ops.push_back(op);
  f.name += (f.name.empty() ? "" : "+") + n.op->name;
  if (op.round != out) c.unrounded[c.buffers() - 1] = out;
  if (!n.outputs.empty() && n.outputs[0] >= 0) {
    c.value_of_root[n.outputs[0]] = c.buffers() - 1;
    c.produced.push_back(n.outputs[0]);
  }
  ++c.nodes;
}

class Compiler {
 public:
  explicit Compiler(Program& p) : p_(p) {
    count_reads(p.steps, reads_);
    for (const auto& [input, ref] : p.copy_back) ++reads_[ref.root];
  }

  void run() { fuse(p_.steps); }

 private:
  Program& p_;
  std::map<int, int> reads_;

  // A Produced root's whole memory as a ref.
  Ref root_ref(int root, int depth) const {
    const Tensor& t = p_.roots[root].tensor;
    Ref r;
    r.root = root;
    r.step.assign(depth, 0);
    r.shape = t.shape();
    r.strides = t.strides();
    r.valid = t.shape();
    r.dtype = t.dtype();
    return r;
  }

  void fuse(std::vector<Step>& list) {
    for (Step& s : list)
      if (s.loop) fuse(s.loop->body);
    std::vector<Step> out;
    for (size_t i = 0; i < list.size();) {
      // The longest chain from i; aliases inside it (they do nothing at run) go ahead of it.
      Chain chain;
      std::vector<size_t> members, aliases;
      size_t j = i;
      for (; j < list.size() && list[j].node; ++j) {
        if (list[j].node->alias) {
          aliases.push_back(j);
          continue;
        }
        const std::optional<elementwise::Kernel> k = kernel_of(*list[j].node);
        if (!k || !joins(chain, *list[j].node, *k)) break;
        append(chain, *list[j].node, *k);
        members.push_back(j);
      }
      if (members.empty()) {
        out.push_back(std::move(list[i++]));
        continue;
      }
      std::unique_ptr<Node> fused = close(chain, list, members, j);
      if (chain.fused) {  // the chain cannot fuse: its nodes stay as they are
        for (; i < j; ++i) out.push_back(std::move(list[i]));
        continue;
      }
      for (size_t a : aliases) out.push_back(std::move(list[a]));
      p_.keeps_fp32 |= fused && chain.keeps_fp32;
      if (fused) out.push_back({std::move(fused), nullptr});
      i = j + (chain.took_assemble ? 1 : 0);
    }
    list = std::move(out);
  }

  // The fused node of a chain (null when nothing reads what it computes). Its stored values are
  // those read after it; a value read only by the assemble right after the chain (list[next]) is
  // stored at the assemble's destination instead (chain.took_assemble). chain.fused stays set when
  // the chain cannot fuse.
  std::unique_ptr<Node> close(Chain& c, const std::vector<Step>& list, const std::vector<size_t>& members,
                              size_t next) {
    Fused& f = *c.fused;
    const int depth = list[members.front()].node->depth;
    for (int root : c.produced) {
      int later = reads_[root];
      for (size_t m : members)
        for (const Ref& r : list[m].node->refs) later -= r.root == root;
      if (later == 0) continue;
      if (later == 1 && !c.took_assemble && next < list.size() && store_into_assemble(c, list[next], root)) {
        c.took_assemble = true;
        continue;
      }
      f.outputs.push_back({c.value_of_root[root], root_ref(root, depth)});
    }
    if (f.outputs.empty()) {
      c.fused.reset();
      return nullptr;
    }
    if (f.outputs.size() + f.inputs.size() > static_cast<size_t>(kMaxOperands)) {
      c.took_assemble = false;
      return nullptr;
    }
    auto node = std::make_unique<Node>();
    node->depth = depth;
    node->setting = list[members.front()].node->setting;
    node->fused = std::move(c.fused);
    prepare(*node->fused);
    return node;
  }

  // assemble(root, offsets, dst) of the chain's whole value, into a dst the chain does not read.
  bool store_into_assemble(Chain& c, const Step& next, int root) {
    if (!next.node) return false;
    const std::optional<Ref> target = assemble_target(*next.node);
    const Node& a = *next.node;
    if (!target || a.refs[0].root != root || a.refs[0].offset != 0) return false;
    const Ref& src = a.refs[0];
    if (src.valid != src.shape || src.shape != c.fused->shape || src.dtype != target->dtype) return false;
    for (const Fused::Input& in : c.fused->inputs)
      if (in.ref.root == target->root) return false;
    c.fused->outputs.push_back({c.value_of_root[root], *target});
    return true;
  }
};

// ---- parallel loops -------------------------------------------------------------------------------

// Bytes an iteration writes: a box moved by `step` bytes per iteration of the loop.
struct Box {
  int root;
  int64_t offset;
  int64_t step;
  Shape shape;
  Strides strides;
  int64_t item;
};

Box box_of(const Ref& r, int level) {
  return {r.root, r.offset, r.step[level], r.shape, r.strides, static_cast<int64_t>(dtype_size(r.dtype))};
}

// Two iterations' boxes never meet when the step moves the box along one dim by at least its
// extent there (row tiles, column tiles, blocks).
bool disjoint_iterations(const Box& b) {
  if (b.step == 0) return false;
  for (size_t d = 0; d < b.shape.size(); ++d) {
    const int64_t stride = b.strides[d] * b.item;
    if (stride == 0 || b.step % stride != 0) continue;
    if (std::abs(b.step / stride) >= b.shape[d]) return true;
  }
  return false;
}

// What a loop body touches: roots it defines (private to an iteration), boxes it writes in other
// roots, refs it reads, and the elements it works on.
struct Effects {
  std::set<int> defined;
  std::vector<Box> writes;
  std::vector<Ref> reads;
  int64_t elements = 0;
  bool opaque = false;  // an op whose written box moves with its integers: not analysed
};

void scan(const Program& p, const std::vector<Step>& body, int level, Effects& e) {
  for (const Step& s : body) {
    if (s.loop) {
      const int64_t elements = e.elements;
      scan(p, s.loop->body, level, e);
      e.elements = elements + (e.elements - elements) * s.loop->count;
      continue;
    }
    const Node& n = *s.node;
    if (n.alias) continue;
    if (n.created >= 0) e.defined.insert(n.created);
    for (int out : n.outputs)
      if (out >= 0) e.defined.insert(out);
    if (n.fused) {
      e.elements += shape_numel(n.fused->shape) * static_cast<int64_t>(n.fused->ops.size());
      for (const Fused::Output& o : n.fused->outputs) {
        if (p.roots[o.target.root].kind == RootKind::Produced) e.defined.insert(o.target.root);
        e.writes.push_back(box_of(o.target, level));
      }
      for (const Fused::Input& in : n.fused->inputs)
        if (in.ref.root >= 0) e.reads.push_back(in.ref);
      continue;
    }
    if (!n.op) continue;
    if (const std::optional<Ref> target = assemble_target(n)) {
      e.writes.push_back(box_of(*target, level));
      e.reads.push_back(n.refs[0]);
      e.elements += shape_numel(target->shape);
      continue;
    }
    const int written = n.op->in_place() ? n.op->param_index(n.op->written, n.args.overload) : -1;
    if (written >= 0 && !n.ints.empty()) e.opaque = true;
    // refs follow the args' tensors in order
    size_t k = 0;
    Args args = n.args;
    for (size_t arg = 0; arg < args.size(); ++arg) {
      for_each_tensor(args[arg], [&](Tensor&) {
        const Ref& r = n.refs[k++];
        e.elements += shape_numel(r.shape);
        if (static_cast<int>(arg) == written) e.writes.push_back(box_of(r, level));
        else e.reads.push_back(r);
      });
    }
  }
}

void mark_parallel(const Program& p, std::vector<Step>& steps, int level) {
  for (Step& s : steps) {
    if (!s.loop) continue;
    Loop& loop = *s.loop;
    Effects e;
    scan(p, loop.body, level, e);
    bool independent = !e.opaque;
    for (const Box& w : e.writes) {
      if (e.defined.count(w.root)) continue;
      independent = independent && disjoint_iterations(w);
      // another root's bytes are read only where the same iteration writes them
      for (const Ref& r : e.reads)
        if (r.root == w.root && !(r.offset == w.offset && r.step[level] == w.step && r.shape == w.shape))
          independent = false;
    }
    loop.parallel = independent && loop.count > 1;
    loop.defined.assign(e.defined.begin(), e.defined.end());
    loop.elements_per_iteration = e.elements;
    mark_parallel(p, loop.body, level + 1);
  }
}

}  // namespace

void compile(Program& program) {
  Compiler(program).run();
  mark_parallel(program, program.steps, 0);
}

}  // namespace pto::program
