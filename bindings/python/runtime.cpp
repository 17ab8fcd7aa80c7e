// Platforms, tile shapes, threads and build information.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <condition_variable>
#include <mutex>

#include "bind.h"
#include "docstrings.h"
#include "ptocpu/build.h"
#include "ptocpu/error.h"
#include "ptocpu/parallel.h"
#include "ptocpu/platform.h"
#include "ptocpu/tiling.h"

namespace ptobind {
namespace {

// The Platform fields platform_table() shows, each under its own name.
#define PTO_PLATFORM_FIELDS(X)                                                                 \
  X(name) X(arch) X(aliases) X(ub_bytes) X(max_extent) X(empty_inputs_allowed)                \
  X(scatter_scalar_must_be_finite) X(l0a_bytes) X(l0b_bytes) X(l0c_bytes) X(l1_bytes)         \
  X(bias_table_bytes) X(fixpipe_bytes)

// Calls that have released the GIL, and whether the interpreter has begun to exit. The flag is
// written with the GIL held and read by ReleaseGil's constructor with the GIL held.
std::mutex g_released_mutex;
std::condition_variable g_released_done;
int g_released = 0;
bool g_exiting = false;

// Runs at exit (atexit, before the interpreter finalizes): from now on calls keep the GIL, and
// the calls that released it take it back while that is still allowed.
void wait_for_released_calls() {
  g_exiting = true;
  // Daemon threads still running keep their tensors: not leaks of the binding, so no report.
  if (nb::cast<int>(nb::module_::import_("threading").attr("active_count")()) > 1) nb::set_leak_warnings(false);
  nb::gil_scoped_release release;  // not finalizing yet: taking it back is safe
  std::unique_lock lock(g_released_mutex);
  g_released_done.wait(lock, [] { return g_released == 0; });
}

}  // namespace

ReleaseGil::ReleaseGil(bool release) {
  if (!release || g_exiting) return;
  {
    std::lock_guard lock(g_released_mutex);
    ++g_released;
  }
  saved_ = PyEval_SaveThread();
}

ReleaseGil::~ReleaseGil() {
  if (!saved_) return;
  PyEval_RestoreThread(saved_);
  std::lock_guard lock(g_released_mutex);
  if (--g_released == 0) g_released_done.notify_all();
}

void bind_runtime(nb::module_& m) {
  nb::module_::import_("atexit").attr("register")(nb::cpp_function(&wait_for_released_calls));
  m.def("_set_leak_warnings", [](bool on) { nb::set_leak_warnings(on); },
        "Whether nanobind reports ptocpu objects still alive when the interpreter ends (a host that keeps "
        "them until after ptocpu's module is torn down turns it off)");

  m.def("set_platform",
        [](nb::handle name) {
          if (!PyUnicode_Check(name.ptr()))
            pto::fail<pto::DTypeError>("set_platform: name must be a string, got ", nb::type_name(name.type()).c_str(),
                                       " ", nb::repr(name).c_str());
          pto::set_platform(nb::cast<std::string>(name));
        },
        nb::arg("name").none(), nb::sig(docs::set_platform.sig), docs::set_platform.text);
  m.def("get_platform", [] { return pto::current_platform().name; }, nb::sig(docs::get_platform.sig), docs::get_platform.text);
  m.def("platform_table", [] {
    nb::list out;
    for (const pto::Platform& p : pto::all_platforms()) {
      nb::dict d;
#define PTO_PUT_FIELD(field) d[#field] = p.field;
      PTO_PLATFORM_FIELDS(PTO_PUT_FIELD)
#undef PTO_PUT_FIELD
      nb::dict ops;
      for (const pto::OpDef& op : pto::op_table()) ops[op.name.c_str()] = limits_row(op.limits_on(p.id));
      d["ops"] = ops;
      out.append(d);
    }
    return out;
  }, nb::sig(docs::platform_table.sig), docs::platform_table.text);
  // Private hook for tracing (docs/tracing.md).
  m.def("_take_ub_use", []() -> nb::object {
    const pto::UbUse& use = pto::last_ub_use();
    if (use.op == nullptr) return nb::none();
    nb::list buffers;
    for (const pto::UbBuffer& b : use.buffers) buffers.append(nb::make_tuple(b.what, b.bytes));
    nb::dict d;
    d["op"] = use.op;
    d["limit"] = use.limit;
    d["total"] = use.total;
    d["buffers"] = buffers;
    pto::clear_ub_use();
    return d;
  }, nb::sig(docs::take_ub_use.sig), docs::take_ub_use.text);

  m.def("set_vec_tile_shapes", [](nb::args dims) {
    pto::set_vec_tile_shapes(to_int_list(dims, "set_vec_tile_shapes", "dims"));
  }, nb::sig(docs::set_vec_tile_shapes.sig), docs::set_vec_tile_shapes.text);
  m.def("get_vec_tile_shapes", [] { return nb::list(to_tuple(pto::get_vec_tile_shapes())); }, nb::sig(docs::get_vec_tile_shapes.sig), docs::get_vec_tile_shapes.text);
  m.def("reset_vec_tile_shapes", &pto::reset_vec_tile_shapes, nb::sig(docs::reset_vec_tile_shapes.sig), docs::reset_vec_tile_shapes.text);

  // The cube tile shape and matrix size: python/ptocpu/lang/options.py gives them PyPTO's faces.
  m.def("_set_cube_tile_shapes", [](nb::handle m_, nb::handle k, nb::handle n, bool split_k) {
    pto::set_cube_tile_shapes(to_int_list(m_, "set_cube_tile_shapes", "m"), to_int_list(k, "set_cube_tile_shapes", "k"),
                              to_int_list(n, "set_cube_tile_shapes", "n"), split_k);
  }, "set_cube_tile_shapes(m, k, n, enable_split_k) without the Python-side type checks");
  m.def("_get_cube_tile_shapes", [] {
    const pto::CubeTile& t = pto::get_cube_tile_shapes();
    return nb::make_tuple(nb::list(nb::cast(t.m)), nb::list(nb::cast(t.k)), nb::list(nb::cast(t.n)), t.enable_split_k);
  }, "(m, k, n, enable_split_k) as set (k with 3 entries), empty lists before");
  m.def("_reset_cube_tile_shapes", &pto::reset_cube_tile_shapes, "Forgets the cube tile shape");
  m.def("_restore_cube_tile_shapes", [](nb::handle state) {  // what _get_cube_tile_shapes returned
    nb::tuple s = nb::borrow<nb::tuple>(state);
    pto::restore_cube_tile_shapes({nb::cast<std::vector<int64_t>>(s[0]), nb::cast<std::vector<int64_t>>(s[1]),
                                   nb::cast<std::vector<int64_t>>(s[2]), nb::cast<bool>(s[3])});
  }, "Puts back a cube tile shape as _get_cube_tile_shapes returned it (empty lists: none)");
  // The conv tile shape: lang/options.py's set_conv_tile_shapes gives it PyPTO's TileL1Info / TileL0Info.
  m.def("_set_conv_tile_shapes", [](nb::handle l1, nb::handle l0) {
    pto::set_conv_tile_shapes(to_int_list(l1, "set_conv_tile_shapes", "tile_l1_info"),
                              to_int_list(l0, "set_conv_tile_shapes", "tile_l0_info"));
  }, "set_conv_tile_shapes(l1 (8 values), l0 (4 values, or empty: no L0 tile)) without the Python-side checks");
  m.def("_get_conv_tile_shapes", [] {
    const pto::ConvTile& t = pto::get_conv_tile_shapes();
    return nb::make_tuple(nb::list(nb::cast(t.l1)), nb::list(nb::cast(t.l0)), t.set_l0);
  }, "(l1, l0, set_l0) as set, empty lists before");
  m.def("_reset_conv_tile_shapes", &pto::reset_conv_tile_shapes, "Forgets the conv tile shape");
  m.def("_restore_conv_tile_shapes", [](nb::handle state) {  // what _get_conv_tile_shapes returned
    nb::tuple s = nb::borrow<nb::tuple>(state);
    pto::restore_conv_tile_shapes({nb::cast<std::vector<int64_t>>(s[0]), nb::cast<std::vector<int64_t>>(s[1]),
                                   nb::cast<bool>(s[2])});
  }, "Puts back a conv tile shape as _get_conv_tile_shapes returned it (empty lists: none)");
  m.def("_set_matrix_size", [](nb::handle size) { pto::set_matrix_size(to_int_list(size, "set_matrix_size", "size")); },
        "set_matrix_size([m, k, n])");
  m.def("_get_matrix_size", [] { return nb::list(nb::cast(pto::get_matrix_size())); }, "The matrix size as set");

  m.def("set_num_threads",
        [](nb::handle n) { pto::set_num_threads(to_int(n, "set_num_threads", "num_threads")); },
        nb::arg("n").none(), nb::sig(docs::set_num_threads.sig), docs::set_num_threads.text);
  m.def("get_num_threads", &pto::get_num_threads, nb::sig(docs::get_num_threads.sig), docs::get_num_threads.text);

  m.def("build_info", [] {
    nb::dict d;
    d["simd_targets_compiled"] = pto::simd_targets_compiled();
    d["simd_target_dispatched"] = pto::simd_target_dispatched();
#ifdef NDEBUG
    d["build_type"] = "release";
#else
    d["build_type"] = "debug";
#endif
    d["compiler"] = __VERSION__;
    return d;
  }, nb::sig(docs::build_info.sig), docs::build_info.text);
  // Private hook for tests and benchmarks (docs/kernels.md): the streaming threshold, ISA cap and stream prefetches.
  m.def("_set_kernel_tuning",
        [](int64_t stream_bytes, std::optional<std::string> isa, std::optional<bool> prefetch_streams) {
          pto::set_kernel_tuning(stream_bytes, isa ? isa->c_str() : nullptr, prefetch_streams ? int(*prefetch_streams) : -1);
        },
        nb::arg("stream_bytes") = -1, nb::arg("isa") = nb::none(), nb::arg("prefetch_streams") = nb::none(), nb::sig(docs::set_kernel_tuning.sig), docs::set_kernel_tuning.text);
  // Private hook for benchmarks (docs/benchmarks.md#timing): idle pool workers sleep now.
  m.def("_park_workers", [] { pto::park_workers(); },
        "For benchmarks: sends ptocpu's idle pool workers to sleep now rather than after their spin, so\n"
        "that they do not take a core from another library's timed call.");
}

}  // namespace ptobind
