// Tracing a body into a Program (docs/kernel_model.md#compiled-kernels): each op call becomes a
// node whose tensor arguments are resolved to (root, byte offset, geometry); pypto.loop's
// iterations that differ only by fixed byte and integer steps fold into one Loop.
#include <algorithm>
#include <atomic>
#include <bit>
#include <map>
#include <sstream>
#include <string>

#include "program/program.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/tiling.h"

namespace pto::program {

Setting Setting::current() {
  return {&current_platform(), get_vec_tile_shapes(), get_cube_tile_shapes(), get_conv_tile_shapes()};
}

SettingScope::SettingScope(const Setting& s) : saved_(Setting::current()) { apply(s); }
SettingScope::~SettingScope() { apply(saved_); }

void SettingScope::apply(const Setting& s) {
  if (s.platform && s.platform != &current_platform()) set_platform(s.platform->name);
  if (s.tile != get_vec_tile_shapes()) {
    if (s.tile.empty()) reset_vec_tile_shapes();
    else set_vec_tile_shapes(s.tile);
  }
  if (s.cube != get_cube_tile_shapes()) restore_cube_tile_shapes(s.cube);
  if (s.conv != get_conv_tile_shapes()) restore_conv_tile_shapes(s.conv);
}

void for_each_tensor(Value& v, const std::function<void(Tensor&)>& f) {
  if (auto* t = std::get_if<Tensor>(&v)) {
    if (t->defined()) f(*t);
  } else if (auto* list = std::get_if<std::vector<Tensor>>(&v)) {
    for (Tensor& t : *list) f(t);
  } else if (auto* parts = std::get_if<std::vector<TensorAt>>(&v)) {
    for (TensorAt& p : *parts) f(p.tensor);
  } else if (auto* key = std::get_if<IndexKey>(&v)) {
    if (key->by_index_tensor) f(key->index);
  } else if (auto* fields = std::get_if<Fields>(&v)) {
    auto changed = std::make_shared<Args>(*fields->args);  // copy on write: others share the fields
    for (Value& field : changed->values()) for_each_tensor(field, f);
    fields->args = std::move(changed);
  }
}

namespace {

thread_local Tracer* t_active = nullptr;

// Bytes [lo, hi) a tensor's elements can touch (its whole extent, not only the valid part).
std::pair<const std::byte*, const std::byte*> span_of(const Tensor& t) { return t.byte_span(); }

// One level of loops being traced: each iteration's steps.
struct LoopRecord {
  int64_t count;
  std::vector<std::vector<Step>> iterations;
};

// An iteration flattened for comparison: a key of everything that must be equal between
// iterations (ops, geometry, roots, non-integer arguments) and the numbers that may move by a
// fixed step (byte offsets, integer arguments), in the same traversal order.
struct Flat {
  std::string key;
  std::vector<int64_t> numbers;
  std::vector<int> produced;  // roots the iteration defines, in order
};

void put(std::string& key, int64_t v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void flatten(const std::vector<Step>& steps, int level, Flat& f);

// The root as the key sees it: an iteration's own roots by their order, others by their index.
void put_root(Flat& f, int root) {
  const auto it = std::find(f.produced.begin(), f.produced.end(), root);
  if (it != f.produced.end()) {
    f.key += 'L';
    put(f.key, it - f.produced.begin());
  } else {
    f.key += 'G';
    put(f.key, root);
  }
}

void put_value(Flat& f, const Value& v) {
  f.key += static_cast<char>('a' + v.index());
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t>) {
          f.numbers.push_back(x);
        } else if constexpr (std::is_same_v<X, std::vector<int64_t>>) {
          put(f.key, static_cast<int64_t>(x.size()));
          f.numbers.insert(f.numbers.end(), x.begin(), x.end());
        } else if constexpr (std::is_same_v<X, Scalar>) {
          put(f.key, static_cast<int64_t>(x.kind));
          put(f.key, static_cast<int64_t>(x.i));
          put(f.key, static_cast<int64_t>(x.i >> 64));
          put(f.key, std::bit_cast<int64_t>(x.f));
        } else if constexpr (std::is_same_v<X, bool> || std::is_same_v<X, DType>) {
          put(f.key, static_cast<int64_t>(x));
        } else if constexpr (std::is_same_v<X, std::string>) {
          f.key += x;
          f.key += '\0';
        } else if constexpr (std::is_same_v<X, std::vector<TensorAt>>) {  // must not move
          for (const TensorAt& p : x)
            for (int64_t o : p.offsets) put(f.key, o);
          f.key += '|';
        } else if constexpr (std::is_same_v<X, IndexKey>) {  // ints and slice bounds may move
          put(f.key, x.by_index_tensor);
          put(f.key, x.dim);
          for (const IndexItem& it : x.items) {
            for (int64_t v : {static_cast<int64_t>(it.kind), int64_t(it.has_start * 2 + it.has_stop), it.step})
              put(f.key, v);
            f.numbers.insert(f.numbers.end(), {it.value, it.start, it.stop});
          }
        } else if constexpr (std::is_same_v<X, std::vector<Tensor>>) {
          put(f.key, static_cast<int64_t>(x.size()));
        } else if constexpr (std::is_same_v<X, Fields>) {  // must not move: integers go to the key
          for (const Value& field : x.args->values()) {
            if (const auto* i = std::get_if<int64_t>(&field)) put(f.key, *i);
            else if (const auto* list = std::get_if<std::vector<int64_t>>(&field))
              for (int64_t e : *list) put(f.key, e);
            else put_value(f, field);
          }
          f.key += '|';
        }
      },
      v);
}

void flatten_node(const Node& n, int level, Flat& f) {
  f.key += n.op ? 'N' : 'C';
  put(f.key, reinterpret_cast<intptr_t>(n.op));
  put(f.key, reinterpret_cast<intptr_t>(n.setting.platform));
  for (int64_t d : n.setting.tile) put(f.key, d);
  f.key += '|';
  for (const auto* dims : {&n.setting.cube.m, &n.setting.cube.k, &n.setting.cube.n})
    for (int64_t d : *dims) put(f.key, d);
  put(f.key, n.setting.cube.enable_split_k);
  f.key += '|';
  for (const auto* dims : {&n.setting.conv.l1, &n.setting.conv.l0})
    for (int64_t d : *dims) put(f.key, d);
  f.key += '|';
  if (n.created >= 0) f.produced.push_back(n.created);
  for (const Ref& r : n.refs) {
    put_root(f, r.root);
    for (int64_t v : r.shape) put(f.key, v);
    for (int64_t v : r.strides) put(f.key, v);
    for (int64_t v : r.valid) put(f.key, v);
    put(f.key, static_cast<int64_t>(r.dtype));
    for (size_t l = level + 1; l < r.step.size(); ++l) put(f.key, r.step[l]);
    f.numbers.push_back(r.offset);
  }
  put(f.key, n.args.overload);
  for (const Value& v : n.args.values()) put_value(f, v);
  for (const MovingInt& m : n.ints)
    for (size_t l = level + 1; l < m.step.size(); ++l) put(f.key, m.step[l]);
  for (int out : n.outputs) {
    put(f.key, out >= 0);
    if (out >= 0) f.produced.push_back(out);
  }
}

void flatten(const std::vector<Step>& steps, int level, Flat& f) {
  for (const Step& s : steps) {
    if (s.node) {
      flatten_node(*s.node, level, f);
    } else {
      f.key += 'L';
      put(f.key, s.loop->count);
      flatten(s.loop->body, level, f);
      f.key += 'E';
    }
  }
}

// Sets the steps of iteration `steps` at `level` from the per-number deltas, in flatten's order.
void set_steps(std::vector<Step>& steps, int level, const std::vector<int64_t>& delta, size_t& at) {
  for (Step& s : steps) {
    if (!s.node) {
      set_steps(s.loop->body, level, delta, at);
      continue;
    }
    Node& n = *s.node;
    for (Ref& r : n.refs) r.step.at(level) = delta[at++];
    for (size_t k = 0; k < n.args.size(); ++k) {
      const auto moving = [&](int item, int64_t value) {
        const int64_t d = delta[at++];
        auto it = std::find_if(n.ints.begin(), n.ints.end(),
                               [&](const MovingInt& m) { return m.arg == static_cast<int>(k) && m.item == item; });
        if (d == 0 && it == n.ints.end()) return;
        if (it == n.ints.end()) {
          n.ints.push_back({static_cast<int>(k), item, value, std::vector<int64_t>(n.depth, 0)});
          it = n.ints.end() - 1;
        }
        it->step.at(level) = d;
      };
      Value& v = n.args[k];
      if (const auto* i = std::get_if<int64_t>(&v)) {
        moving(-1, *i);
      } else if (const auto* list = std::get_if<std::vector<int64_t>>(&v)) {
        for (size_t j = 0; j < list->size(); ++j) moving(static_cast<int>(j), (*list)[j]);
      } else if (const auto* key = std::get_if<IndexKey>(&v)) {
        for (size_t j = 0; j < key->items.size(); ++j) {
          const IndexItem& it = key->items[j];
          for (int field = 0; field < 3; ++field)
            moving(static_cast<int>(3 * j) + field, field == 0 ? it.value : field == 1 ? it.start : it.stop);
        }
      }
    }
  }
}

// Steps of a loop iteration that did not fold move out to the loop's parent: the loop at
// `level` no longer encloses them.
void unnest(std::vector<Step>& steps, int level) {
  for (Step& s : steps) {
    if (s.loop) {
      unnest(s.loop->body, level);
      continue;
    }
    Node& n = *s.node;
    --n.depth;
    for (Ref& r : n.refs) r.step.erase(r.step.begin() + level);
    for (MovingInt& m : n.ints) m.step.erase(m.step.begin() + level);
  }
}

}  // namespace

struct Tracer::Impl {
  std::unique_ptr<Program> program = std::make_unique<Program>();
  // Where each root's bytes are. Inputs may overlap one another (checked first, in order); the
  // tensors the body makes are fresh allocations kept alive (`keep`), so their spans never overlap
  // and a map by first byte finds them in log time (a kernel makes thousands).
  struct Span {
    const std::byte *lo, *hi;
    int root;
  };
  std::vector<Span> input_spans;
  std::map<const std::byte*, Span> made_spans;
  std::vector<Tensor> keep;  // every tensor seen stays alive: its bytes cannot be reused by another
  int64_t kept_bytes = 0;    // of the tensors the body made
  std::vector<LoopRecord> loops;
  std::vector<Step> top;

  std::vector<Step>& current() { return loops.empty() ? top : loops.back().iterations.back(); }
  int depth() const { return static_cast<int>(loops.size()); }

  int add_root(RootKind kind, const Tensor& t, int input = -1) {
    program->roots.push_back({kind, input, t});
    const int r = static_cast<int>(program->roots.size()) - 1;
    renamed.push_back(r);
    const auto [lo, hi] = span_of(t);
    if (lo != hi) {
      if (kind == RootKind::Input) input_spans.push_back({lo, hi, r});
      else made_spans[lo] = {lo, hi, r};
      if (kind != RootKind::Input) kept_bytes += hi - lo;
    }
    keep.push_back(t);
    return r;
  }

  // The root holding t's bytes, or -1.
  int root_of(const Tensor& t) const {
    const auto [lo, hi] = span_of(t);
    for (const Span& s : input_spans)
      if (lo >= s.lo && hi <= s.hi && lo < s.hi) return s.root;
    auto it = made_spans.upper_bound(lo);
    if (it == made_spans.begin()) return -1;
    const Span& s = (--it)->second;
    return lo >= s.lo && hi <= s.hi && lo < s.hi ? current_name(s.root) : -1;
  }

  // Roots renamed: a folded loop's later iterations' roots are its first one's.
  std::vector<int> renamed;  // root -> the root it became (itself when not renamed)

  void rename_roots(const std::map<int, int>& same) {
    for (const auto& [from, to] : same) renamed[from] = to;
  }

  int current_name(int root) const {
    while (renamed[root] != root) root = renamed[root];
    return root;
  }

  Ref ref(const Tensor& t) {
    int r = root_of(t);
    if (r < 0) r = add_root(RootKind::Constant, t);  // data the body built itself: kept as it is
    const Tensor& base = program->roots[r].tensor;
    Ref ref;
    ref.root = r;
    ref.offset = static_cast<const std::byte*>(t.data()) - static_cast<const std::byte*>(base.data());
    ref.step.assign(depth(), 0);
    ref.shape = t.shape();
    ref.strides = t.strides();
    ref.valid = t.valid_shape();
    ref.dtype = t.dtype();
    return ref;
  }
};

Tracer::Tracer(std::string name, std::vector<Tensor> inputs) : impl_(std::make_unique<Impl>()) {
  impl_->program->name = std::move(name);
  impl_->program->inputs = static_cast<int>(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) impl_->add_root(RootKind::Input, inputs[i], static_cast<int>(i));
  previous_ = t_active;
  t_active = this;
}

Tracer::~Tracer() { t_active = previous_; }

Tracer* Tracer::active() { return t_active; }

namespace {
std::atomic<int64_t> g_trace_budget{int64_t(4) << 30};
}  // namespace

int64_t set_trace_budget(int64_t bytes) { return g_trace_budget.exchange(bytes); }

void Tracer::check_budget() {
  const int64_t budget = g_trace_budget.load();
  if (impl_->kept_bytes > budget)
    taint("the trace would keep more than " + std::to_string(budget >> 20) +
          " MiB of the tensors the body makes alive (a program needs them all at once)");
}

void Tracer::record(const OpDef& op, const Args& args, const Outputs& outputs) {
  if (!tainted_.empty()) return;
  if (op.name == "setitem" && args.is_tensor(2)) {
    // A block assignment is an assemble (upstream's __setitem__ is one): recorded as such, its
    // loops fold and run in parallel like assemble's and a chain before it writes into its target.
    if (const std::optional<AssemblePart> block = block_assignment(args.tensor(0), args.key(1), args.tensor(2))) {
      static const OpDef* const assemble_op = find_op("assemble");
      Args as_assemble({block->src, block->offsets, args.tensor(0), false});
      return record(*assemble_op, as_assemble, outputs);
    }
  }
  auto node = std::make_unique<Node>();
  node->op = &op;
  node->setting = Setting::current();
  node->depth = impl_->depth();
  node->args = args;
  for (Value& v : node->args.values())
    for_each_tensor(v, [&](Tensor& t) { node->refs.push_back(impl_->ref(t)); });
  for (const Tensor& out : outputs) {
    if (!out.defined() || out.numel() == 0 || impl_->root_of(out) >= 0) {
      node->outputs.push_back(-1);  // a view of memory the program already knows
      continue;
    }
    node->outputs.push_back(impl_->add_root(RootKind::Produced, out));
  }
  impl_->current().push_back({std::move(node), nullptr});
  check_budget();
}

void Tracer::created(const Tensor& t) {
  if (!tainted_.empty()) return;
  auto node = std::make_unique<Node>();
  node->depth = impl_->depth();
  node->created = impl_->add_root(RootKind::Created, t);
  impl_->current().push_back({std::move(node), nullptr});
  check_budget();
}

void Tracer::loop_begin(int64_t count) {
  if (!tainted_.empty()) return;
  LoopRecord record;
  record.count = count;
  record.iterations.emplace_back();
  impl_->loops.push_back(std::move(record));
}

void Tracer::loop_next() {
  if (!tainted_.empty()) return;
  if (!impl_->loops.empty() && !impl_->loops.back().iterations.back().empty())
    impl_->loops.back().iterations.emplace_back();
}

void Tracer::loop_end() {
  if (!tainted_.empty() || impl_->loops.empty()) return;
  LoopRecord record = std::move(impl_->loops.back());
  impl_->loops.pop_back();
  auto& its = record.iterations;
  if (!its.empty() && its.back().empty()) its.pop_back();
  const int level = impl_->depth();  // this loop's level: the loops still open enclose it
  std::vector<Step>& parent = impl_->current();
  // Fold the longest prefix of iterations that repeat the first with fixed steps: their keys
  // are equal and their numbers move by the same delta each iteration.
  size_t folded = 0;
  std::vector<Flat> flat(its.size());
  for (size_t i = 0; i < its.size(); ++i) flatten(its[i], level, flat[i]);
  std::vector<int64_t> delta;
  if (its.size() >= 2 && flat[1].key == flat[0].key && flat[1].numbers.size() == flat[0].numbers.size()) {
    delta.resize(flat[0].numbers.size());
    for (size_t k = 0; k < delta.size(); ++k) delta[k] = flat[1].numbers[k] - flat[0].numbers[k];
    folded = 2;
    for (; folded < its.size(); ++folded) {
      const Flat& f = flat[folded];
      if (f.key != flat[0].key) break;
      bool affine = true;
      for (size_t k = 0; affine && k < delta.size(); ++k)
        affine = f.numbers[k] == flat[0].numbers[k] + static_cast<int64_t>(folded) * delta[k];
      if (!affine) break;
    }
  }
  if (folded >= 2) {
    // The roots later iterations produced are the first iteration's, overwritten each time.
    std::map<int, int> same;
    for (size_t i = 1; i < folded; ++i)
      for (size_t k = 0; k < flat[i].produced.size(); ++k) same[flat[i].produced[k]] = flat[0].produced[k];
    impl_->rename_roots(same);
    size_t at = 0;
    set_steps(its[0], level, delta, at);
    auto loop = std::make_unique<Loop>();
    loop->count = static_cast<int64_t>(folded);
    loop->body = std::move(its[0]);
    parent.push_back({nullptr, std::move(loop)});
  } else {
    folded = 0;
  }
  for (size_t i = folded; i < its.size(); ++i) {
    unnest(its[i], level);
    for (Step& s : its[i]) parent.push_back(std::move(s));
  }
}

void Tracer::taint(const std::string& why) {
  if (!tainted_.empty()) return;
  tainted_ = why;
  impl_ = std::make_unique<Impl>();  // what was recorded, and the tensors it kept, go
}

namespace {

// A tensor's shape, strides, valid shape and dtype without its memory (plans read the valid shape:
// an op over a tile's valid part iterates over that part).
Tensor metadata(const Tensor& t) {
  return Tensor::from_blob(nullptr, t.shape(), t.strides(), t.dtype(), nullptr).with_valid_shape(t.valid_shape());
}

// The trace's tensors let go of the memory they saw (refs say where things are; constants stay),
// and nodes that only made views of known memory (view, t[...]) are aliases: their outputs are
// refs now, so they run only for a trace recording's spans.
void forget_data(std::vector<Step>& steps) {
  for (Step& s : steps) {
    if (s.node && s.node->op && !s.node->op->in_place())
      s.node->alias = std::none_of(s.node->outputs.begin(), s.node->outputs.end(), [](int out) { return out >= 0; });
  }
  for (Step& s : steps) {
    if (s.loop) {
      forget_data(s.loop->body);
      continue;
    }
    for (Value& v : s.node->args.values()) for_each_tensor(v, [](Tensor& t) { t = metadata(t); });
  }
}

}  // namespace

std::unique_ptr<Program> Tracer::finish(const std::vector<Tensor>& moved) {
  if (!tainted_.empty()) throw std::logic_error("trace: a tainted trace has no program (" + tainted_ + ")");
  while (!impl_->loops.empty()) loop_end();
  Program& p = *impl_->program;
  p.steps = std::move(impl_->top);
  for (size_t i = 0; i < moved.size(); ++i)
    if (moved[i].defined()) p.copy_back.emplace_back(static_cast<int>(i), impl_->ref(moved[i]));
  forget_data(p.steps);
  for (Root& r : p.roots)
    if (r.kind != RootKind::Constant) r.tensor = metadata(r.tensor);
  const std::function<int(const std::vector<Step>&, int)> deepest = [&](const std::vector<Step>& steps, int d) {
    int m = d;
    for (const Step& s : steps)
      if (s.loop) m = std::max(m, deepest(s.loop->body, d + 1));
    return m;
  };
  p.depth = deepest(p.steps, 0);
  compile(p);
  return std::move(impl_->program);
}

size_t Program::node_count() const {
  const std::function<size_t(const std::vector<Step>&)> count = [&](const std::vector<Step>& steps) {
    size_t n = 0;
    for (const Step& s : steps) n += s.node ? 1 : count(s.loop->body);
    return n;
  };
  return count(steps);
}

std::string Program::describe() const {
  std::ostringstream os;
  const std::function<void(const std::vector<Step>&, int)> show = [&](const std::vector<Step>& steps, int indent) {
    for (const Step& s : steps) {
      os << std::string(2 * indent, ' ');
      if (s.loop) {
        os << "loop " << s.loop->count << (s.loop->parallel ? " parallel" : "") << "\n";
        show(s.loop->body, indent + 1);
      } else if (s.node->fused) {
        const Fused& f = *s.node->fused;
        os << "fused " << f.name << " over " << shape_to_string(f.shape) << " (" << f.inputs.size() << " inputs ->";
        for (const Fused::Output& o : f.outputs) {
          os << " root " << o.target.root << "+" << o.target.offset;
          for (int64_t st : o.target.step) os << (st ? "+i*" + std::to_string(st) : "");
        }
        os << ")\n";
      } else if (s.node->alias) {
        os << s.node->op->name << " (a view)\n";
      } else if (s.node->created >= 0) {
        os << "zeros -> root " << s.node->created << "\n";
      } else {
        os << s.node->op->name << "(";
        for (size_t i = 0; i < s.node->refs.size(); ++i) {
          const Ref& r = s.node->refs[i];
          os << (i ? ", " : "") << "root " << r.root << "+" << r.offset << shape_to_string(r.shape);
          for (int64_t st : r.step) os << (st ? "+i*" + std::to_string(st) : "");
        }
        os << ")";
        for (int out : s.node->outputs) os << (out >= 0 ? " -> root " + std::to_string(out) : "");
        os << "\n";
      }
    }
  };
  show(steps, 0);
  return os.str();
}

}  // namespace pto::program
