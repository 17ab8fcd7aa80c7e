// Compiled kernels (docs/kernel_model.md#compiled-kernels): the tracer a body runs under, and the
// program it becomes. ptocpu.engine.compile drives them.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "bind.h"
#include "program/program.h"

namespace ptobind {
namespace {

using pto::program::Program;
using pto::program::Tracer;

// A tracer as a Python object: created active on this thread, closed by finish() or close().
struct PyTracer {
  std::unique_ptr<Tracer> tracer;

  Tracer& get() {
    if (!tracer) throw nb::value_error("the trace is closed");
    return *tracer;
  }
};

std::vector<pto::Tensor> tensors_of(nb::handle list, const char* what) {
  std::vector<pto::Tensor> out;
  for (nb::handle h : nb::iter(list)) {
    if (h.is_none()) {
      out.emplace_back();
      continue;
    }
    out.push_back(require_storage(nb::cast<const pto::Tensor&>(h), what));
  }
  return out;
}

// The bytes each writable tensor spans, saved: a kernel's first call runs again from its inputs
// when its program rounds otherwise (python/ptocpu/engine/compile.py).
class Snapshot {
 public:
  explicit Snapshot(const std::vector<pto::Tensor>& tensors) {
    for (const pto::Tensor& t : tensors) {
      if (!t.defined() || t.read_only()) continue;
      const auto [lo, hi] = t.byte_span();
      saved_.push_back({const_cast<std::byte*>(lo), std::vector<std::byte>(lo, hi)});
    }
  }

  void restore() const {
    for (const auto& [at, bytes] : saved_) std::memcpy(at, bytes.data(), bytes.size());
  }

 private:
  std::vector<std::pair<std::byte*, std::vector<std::byte>>> saved_;
};

}  // namespace

void trace_created(const pto::Tensor& t) {
  if (Tracer* tr = Tracer::active()) tr->created(t);
}

void trace_taint(const char* why) {
  if (Tracer* tr = Tracer::active()) tr->taint(why);
}

void bind_program(nb::module_& m) {
  nb::class_<PyTracer>(m, "_Tracer", "Records the op calls of a kernel body run on this thread into a program")
      .def("__init__",
           [](PyTracer* self, const std::string& name, nb::handle inputs) {
             new (self) PyTracer{std::make_unique<Tracer>(name, tensors_of(inputs, "trace"))};
           },
           nb::arg("name"), nb::arg("inputs"))
      .def("loop", [](PyTracer& t, const std::string& event, int64_t count) {
             if (event == "begin") t.get().loop_begin(count);
             else if (event == "next") t.get().loop_next();
             else t.get().loop_end();
           },
           nb::arg("event"), nb::arg("count") = 0, "pypto.loop's iterations: 'begin' (with the count), 'next', 'end'")
      .def_prop_ro("tainted", [](PyTracer& t) { return t.get().tainted(); },
                   "Why the body's values reached Python ('' when they did not)")
      .def("finish",
           [](PyTracer& t, nb::handle current) {
             std::unique_ptr<Program> p = t.get().finish(tensors_of(current, "trace"));
             t.tracer.reset();
             return std::shared_ptr<Program>(std::move(p));
           },
           nb::arg("current"),
           "Ends the trace: the program. current[i]: input i's value now when the body moved it, else None")
      .def("close", [](PyTracer& t) { t.tracer.reset(); }, "Ends the trace without a program");

  nb::class_<Program>(m, "_Program", "A traced kernel body that runs in C++ (docs/kernel_model.md#compiled-kernels)")
      .def("run",
           [](const Program& p, nb::handle inputs, bool spans) -> nb::object {
             const std::vector<pto::Tensor> in = tensors_of(inputs, "kernel");
             std::vector<pto::program::Span> out;
             {
               ReleaseGil release;
               pto::program::run(p, in, spans ? &out : nullptr);
             }
             if (!spans) return nb::none();
             nb::list rows;
             for (auto& s : out) {
               nb::object ub = nb::none();
               if (s.ub.op) {
                 nb::list buffers;
                 for (const pto::UbBuffer& b : s.ub.buffers) buffers.append(nb::make_tuple(b.what, b.bytes));
                 nb::dict d;
                 d["op"] = s.ub.op;
                 d["limit"] = s.ub.limit;
                 d["total"] = s.ub.total;
                 d["buffers"] = buffers;
                 ub = d;
               }
               nb::list inputs, outputs;
               for (pto::Tensor& t : s.inputs) inputs.append(nb::cast(std::move(t)));
               for (pto::Tensor& t : s.outputs) outputs.append(nb::cast(std::move(t)));
               rows.append(nb::make_tuple(std::string(s.name), s.start_ns, s.end_ns, s.bytes, nb::tuple(inputs),
                                          outputs, ub, s.setting.platform->name,
                                          nb::cast(s.setting.tile)));
             }
             return rows;
           },
           nb::arg("inputs"), nb::arg("spans") = false,
           "Runs on the kernel's tensor arguments; with spans, returns per op run (op, start ns, end ns, bytes, "
           "inputs, outputs, UB use or None, platform, tile shape)")
      .def_prop_ro("keeps_fp32", [](const Program& p) { return p.keeps_fp32; },
                   "A fused chain keeps an AutoCast result in fp32 where the eager first call rounded it")
      .def("describe", &Program::describe)
      .def_prop_ro("nodes", &Program::node_count)
      .def_prop_ro("name", [](const Program& p) { return p.name; });
  nb::class_<Snapshot>(m, "_Snapshot", "The bytes of some tensors, to put back later")
      .def("__init__", [](Snapshot* self, nb::handle tensors) { new (self) Snapshot(tensors_of(tensors, "snapshot")); },
           nb::arg("tensors"))
      .def("restore", &Snapshot::restore, "Writes the saved bytes back");
  m.def("_set_trace_budget", &pto::program::set_trace_budget, nb::arg("bytes"),
        "Bytes of the tensors a body makes that a trace keeps alive before the body stays eager; returns the old value");
  m.def("_tracing", [] { return Tracer::active() != nullptr; }, "True while a kernel body is being traced on this thread");
}

}  // namespace ptobind
