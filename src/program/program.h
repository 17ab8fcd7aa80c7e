// Compiled kernels (docs/kernel_model.md#compiled-kernels): a jit kernel's or a pypto.function's
// body, traced once while it runs, becomes a Program of op nodes over resolved views (which
// tensor each argument lives in, at which byte offset, with which shape / strides / valid shape),
// checked once, and then runs in C++ with no Python between ops. Loops over tiles (pypto.loop)
// stay loops whose views move by a fixed byte step per iteration; chains of elementwise ops over
// the same tile run fused (and, as the device's AutoCast pass does, keep fp16 / bf16 chains in fp32);
// iterations that write disjoint parts of their outputs run on the thread pool.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise.h"
#include "ptocpu/op_table.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"

namespace pto::program {

// What a root tensor is: a kernel argument, a tensor the body makes with Tensor(shape, dtype)
// (zero-filled each run), an op's output, or data captured at trace time (a list or an array the
// body built, kept as it was).
enum class RootKind : uint8_t { Input, Created, Produced, Constant };

struct Root {
  RootKind kind;
  int input = -1;  // Input: the argument's position
  Tensor tensor;   // the trace-time tensor (Constant: the data kept; others: shape, dtype, strides)
};

// Where a tensor argument lives: `offset` bytes past its root's first element, plus step[l] bytes
// per iteration of the l-th enclosing loop (outermost first).
struct Ref {
  int root = -1;
  int64_t offset = 0;
  std::vector<int64_t> step;
  Shape shape;
  Strides strides;  // elements
  Shape valid;      // the valid shape (== shape when fully valid)
  DType dtype = DType::FP32;
};

// An integer argument that moves with the loops: value + step[l] per iteration of loop l
// (a view's offsets, a slice's bounds). `path` says where in the node's Args it sits.
struct MovingInt {
  int arg = 0;    // the argument's index
  int item = -1;  // its entry in an int list (-1: the argument is an int); in an index key,
                  // 3 * item + (0: the int, 1: the slice start, 2: the slice stop)
  int64_t value = 0;
  std::vector<int64_t> step;
};

// A chain of elementwise ops over one iteration shape, run together block by block (compile.cpp):
// each external input is loaded once per block into a buffer of the compute type, each op's
// functor runs over buffers, and only the values used after the chain are stored. Between two ops
// a value is rounded to its op's output dtype, except where the device's AutoCast keeps it in fp32.
struct Fused {
  static constexpr int kMaxBuffers = 24;  // inputs + ops (a block of each stays in L1)
  DType compute = DType::FP32;  // every buffer's type (the ops' shared compute type)
  Shape shape;                  // the iteration space
  struct Input {
    Ref ref;          // root -1: `constant` (a scalar operand the plan made)
    Tensor constant;
  };
  std::vector<Input> inputs;    // buffers 0 .. inputs-1
  struct Op {
    void (*apply)(void* out, const void* const* in, int64_t m);
    int arity;
    int in[3];
    DType round = DType::FP32;  // the dtype its result is rounded to (the compute dtype: none)
  };
  std::vector<Op> ops;          // op k's result is buffer inputs + k
  struct Output {
    int value;  // the buffer stored
    Ref target;
  };
  std::vector<Output> outputs;
  std::string name;  // its ops, "add+mul+exp" (spans, describe)
  // Planned once (prepare): the loop over the operands' geometry (a run sets where they are) and
  // the row function with its loads, stores and roundings.
  kernels::ew::Loop loop{};
  kernels::ew::RowFn row = nullptr;
  std::shared_ptr<const void> rows;
};
// Plans a fused node's loop and row function (its inputs, ops and outputs are final).
void prepare(Fused& fused);

// The platform and the vector, cube and conv tile shapes a node ran under (all per thread): a run
// sets them around the node as the body had them, since the ops' checks and tile rules read them.
struct Setting {
  const Platform* platform = nullptr;
  std::vector<int64_t> tile;
  CubeTile cube;
  ConvTile conv;
  static Setting current();
  bool operator==(const Setting&) const = default;
};
// Puts a setting in force on this thread for its lifetime (nothing when it is already).
class SettingScope {
 public:
  explicit SettingScope(const Setting& s);
  ~SettingScope();
  SettingScope(const SettingScope&) = delete;
  SettingScope& operator=(const SettingScope&) = delete;
  void apply(const Setting& s);  // the next node's

 private:
  Setting saved_;
};

struct Node {
  const OpDef* op = nullptr;
  Setting setting;
  std::unique_ptr<Fused> fused;  // set by compile(): the node runs a fused chain (op is then null)
  int depth = 0;               // the loops around it (the length of its refs' and ints' steps)
  Args args;                   // the trace-time values; their tensors are replaced from refs at run
  std::vector<Ref> refs;       // the tensors of args, in the order for_each_tensor visits them
  std::vector<MovingInt> ints;
  std::vector<int> outputs;    // the root each output defines (-1: an alias of an argument, nothing to keep)
  bool alias = false;          // only makes views of known memory (view, t[...]): runs for traces only
  int created = -1;            // a Created root zero-filled here (then op is null)
};

struct Loop;
struct Step {
  std::unique_ptr<Node> node;
  std::unique_ptr<Loop> loop;
};
struct Loop {
  int64_t count = 0;
  std::vector<Step> body;
  bool parallel = false;  // iterations write disjoint bytes and read nothing another writes
  std::vector<int> defined;        // roots the body defines: each iteration's own
  int64_t elements_per_iteration = 0;  // roughly, the work of one iteration (whether threads pay)
};

struct Program {
  Program() = default;
  Program(const Program&) = delete;  // steps own their nodes
  Program& operator=(const Program&) = delete;

  std::string name;
  std::vector<Root> roots;
  std::vector<Step> steps;
  int inputs = 0;
  int depth = 0;  // the deepest loop nesting
  // Declared tensors a body rebound with move(): their final value is copied back into the input.
  std::vector<std::pair<int, Ref>> copy_back;
  // A fused chain keeps an AutoCast op's result in fp32 for a later op, where eager execution
  // (the traced first call) rounded it: the program's results may differ from that call's.
  bool keeps_fp32 = false;

  std::string describe() const;  // nodes and loops, one per line (tests and `ptocpu run --explain`)
  size_t node_count() const;
};

// Every tensor inside a value (a tensor, a list of tensors, assemble's parts, an index key's
// index, a dict's fields), in a fixed order.
void for_each_tensor(Value& v, const std::function<void(Tensor&)>& f);

// ---- tracing -----------------------------------------------------------------------------------

// Records the op calls of a body run on this thread. Inputs are the kernel's tensor arguments.
class Tracer {
 public:
  Tracer(std::string name, std::vector<Tensor> inputs);
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;

  // The tracer recording on this thread, or null.
  static Tracer* active();

  void record(const OpDef& op, const Args& args, const Outputs& outputs);
  void created(const Tensor& t);
  void loop_begin(int64_t count);
  void loop_next();
  void loop_end();
  // The body let tensor values reach Python (Tensor.numpy() and the like): its control flow may
  // depend on them, so the trace cannot stand for other calls. The trace stops recording and lets
  // go of every tensor it kept (an eager body may make many more).
  void taint(const std::string& why);
  const std::string& tainted() const { return tainted_; }

  // The program; `moved[i]` is input i's current value when the body rebound it with move().
  std::unique_ptr<Program> finish(const std::vector<Tensor>& moved);

 private:
  void check_budget();  // taints the trace past the byte budget (set_trace_budget)

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string tainted_;
  Tracer* previous_ = nullptr;
};

// A trace keeps every tensor the body makes alive until it ends (their bytes must not be reused
// under another name). Past this many bytes it gives up (the body stays eager) rather than hold
// them all; the previous value is returned. Default 4 GiB.
int64_t set_trace_budget(int64_t bytes);

// ---- compiling -----------------------------------------------------------------------------------

// Turns chains of elementwise nodes into fused nodes, writes a chain's result straight into the
// tensor an assemble copied it to, and marks loops whose iterations are independent parallel.
// Within a chain, results of dtypes in an op's autocast row stay fp32 (the device's AutoCast).
void compile(Program& program);

// ---- running -----------------------------------------------------------------------------------

// One op's span while a trace recording is open (docs/tracing.md).
struct Span {
  std::string_view name;  // the op's, or a fused chain's
  int64_t start_ns, end_ns, bytes;
  std::vector<Tensor> inputs;  // the tensors it read and wrote, as the trace shows them
  Outputs outputs;
  UbUse ub;                    // ub.op null: no UB rule ran
  Setting setting;
};

// Runs the program on `inputs` (the kernel's tensor arguments, as at trace time). Errors name the
// program, the op and the loop iterations. spans: filled when not null.
void run(const Program& program, const std::vector<Tensor>& inputs, std::vector<Span>* spans = nullptr);

}  // namespace pto::program
