// Every op of the op table (ptocpu/op_table.h) as a Python function, Tensor method and Tensor
// operator, generated from its entry: the signature, the argument conversion by parameter kind,
// the dispatch point and the result. Nothing here knows an op by name.
//
// The dispatch point (docs/CONTRIBUTING.md#the-dispatch-point): each thread has a stack of
// handlers (a pypto.function recording, a trace, golden checks). A call made while the stack is
// not empty, and not from inside another dispatched call, goes to the top handler as an OpCall;
// its proceed() runs the next handler down, the last one runs the op. Nothing is swapped.
#include <Python.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <unordered_map>
#include <sstream>

#include "bind.h"
#include "core/inline_vector.h"
#include "ops/checks.h"
#include "program/program.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/platform.h"

namespace ptobind {
namespace {

// ---- handlers ----------------------------------------------------------------------------------

struct Handlers {
  std::vector<nb::object> stack;
  int depth = 0;  // > 0 while a dispatched call runs: calls made inside it go straight to the op
};
thread_local Handlers t_handlers;

class DepthScope {
 public:
  DepthScope() { ++t_handlers.depth; }
  ~DepthScope() { --t_handlers.depth; }
  DepthScope(const DepthScope&) = delete;
  DepthScope& operator=(const DepthScope&) = delete;
};

bool dispatching() { return !t_handlers.stack.empty() && t_handlers.depth == 0; }

// ---- parameters --------------------------------------------------------------------------------

const char* type_hint(const pto::Param& p) {
  if (p.type_hint) return p.type_hint;
  using K = pto::ParamKind;
  switch (p.kind) {
    case K::Tensor: case K::Memory: return "Tensor | ArrayLike";
    case K::TensorOrScalar: return "Tensor | ArrayLike | int | float | bool";
    case K::TensorList: return "collections.abc.Sequence[Tensor | ArrayLike]";
    case K::Parts: return "collections.abc.Sequence[tuple[Tensor | ArrayLike, collections.abc.Sequence[int]]]";
    case K::Scalar: return "int | float | bool";
    case K::Int: case K::Dim: return "int";
    case K::IntList: return "collections.abc.Sequence[int]";
    case K::Bool: return "bool";
    case K::DType: return "DType | str | typing.Any";
    case K::Str: return "str";
    case K::Index: return "typing.Any";
    case K::Dict: return "dict[str, typing.Any]";
  }
  return "typing.Any";
}

bool accepts_none(const pto::Param& p) { return p.default_value && std::string_view(p.default_value) == "None"; }

const pto::Value& default_value(const pto::Param& p);

// A Dict parameter's fields at their defaults.
const pto::Fields& dict_defaults(const pto::Param& p) { return std::get<pto::Fields>(default_value(p)); }

// A Dict parameter's value: each key converted by its field's kind (`each`), the others their
// defaults. ArgumentError for a key that is not a field, DTypeError for a value that is not a dict.
pto::Fields convert_fields(const pto::Param& p, nb::handle obj, const char* op,
                           const std::function<pto::Value(const pto::Param&, nb::handle)>& each) {
  if (obj.is_none()) return dict_defaults(p);
  if (!PyDict_Check(obj.ptr()))
    pto::fail<pto::DTypeError>(op, ": ", p.name, " must be a dict, got ", nb::type_name(obj.type()).c_str());
  std::vector<pto::Value> values = dict_defaults(p).args->values();
  for (auto [key, value] : nb::borrow<nb::dict>(obj)) {
    size_t i = 0;
    const bool named = PyUnicode_Check(key.ptr());
    while (named && i < p.fields.size() && nb::cast<std::string>(key) != p.fields[i].name) ++i;
    if (!named || i == p.fields.size()) {
      std::string keys;
      for (const pto::Param& f : p.fields) keys += (keys.empty() ? "'" : ", '") + std::string(f.name) + "'";
      pto::fail<pto::ArgumentError>(op, ": ", p.name, " has no key ", nb::repr(key).c_str(), "; allowed: ", keys);
    }
    values[i] = each(p.fields[i], value);
  }
  return pto::Fields{std::make_shared<const pto::Args>(std::move(values))};
}

// A default as the value the op receives, parsed from the table's text.
pto::Value parse_default(const pto::Param& p) {
  using K = pto::ParamKind;
  if (p.kind == K::Dict) {
    std::vector<pto::Value> values;
    for (const pto::Param& field : p.fields) values.push_back(default_value(field));
    return pto::Fields{std::make_shared<const pto::Args>(std::move(values))};
  }
  const std::string_view d = p.default_value;
  if (d == "None") return std::monostate{};
  if (d == "True" || d == "False") return d == "True";
  if (p.kind == K::Str) return std::string(d.substr(1, d.size() - 2));  // 'constant'
  if (p.kind == K::Int || p.kind == K::Dim) return static_cast<int64_t>(std::stoll(std::string(d)));
  if (p.kind == K::Scalar || p.kind == K::TensorOrScalar) {
    if (d.find_first_of(".e") != std::string_view::npos) return pto::Scalar::of_float(std::stod(std::string(d)));
    return pto::Scalar::of_int(std::stoll(std::string(d)));
  }
  if (p.kind == K::IntList) {  // "[]" or "[0, 1]"
    std::vector<int64_t> out;
    std::stringstream in{std::string(d.substr(1, d.size() - 2))};
    for (std::string item; std::getline(in, item, ',');)
      if (item.find_first_not_of(' ') != std::string::npos) out.push_back(std::stoll(item));
    return out;
  }
  if (p.kind == K::DType) return pto::dtype_from_name(d);
  throw std::logic_error("op table: default '" + std::string(d) + "' of " + p.name + " has no value");
}

// Parsed once per parameter, with the GIL held (a small call's defaults cost about as much to parse as
// its kernel takes: dtype names, numbers, a Dict's fields).
const pto::Value& default_value(const pto::Param& p) {
  static std::unordered_map<const pto::Param*, pto::Value> parsed;
  auto it = parsed.find(&p);
  if (it == parsed.end()) it = parsed.emplace(&p, parse_default(p)).first;
  return it->second;
}

// A tensor with dynamic dims (lang/tensor_spec.py marks a jit argument annotated pypto.DYNAMIC
// with `_dynamic_dims`) read by an op: refused as PyPTO refuses it, before anything runs. Only
// ptocpu tensors can carry the mark; a lookup that finds nothing raises nothing.
// `index` >= 0: item `index` of the list parameter (its src when `part`).
void refuse_dynamic(const pto::Param& p, nb::handle obj, const char* op, int index = -1, bool part = false) {
  if (exactly_tensor(obj)) {
    // The mark is an instance attribute: a Tensor (not a subclass) without an attribute dict, or
    // with an empty one, has none, and the attribute lookup (most of this check) is skipped.
    PyObject** dict = _PyObject_GetDictPtr(obj.ptr());
    if (!dict || !*dict || PyDict_GET_SIZE(*dict) == 0) return;
  } else if (!nb::isinstance<pto::Tensor>(obj)) {
    return;
  }
  static PyObject* const key = PyUnicode_InternFromString("_dynamic_dims");
  PyObject* dims = nullptr;
#if PY_VERSION_HEX >= 0x030D0000
  if (PyObject_GetOptionalAttr(obj.ptr(), key, &dims) < 0) throw nb::python_error();
#else
  if (_PyObject_LookupAttr(obj.ptr(), key, &dims) < 0) throw nb::python_error();
#endif
  if (!dims) return;
  nb::object owned = nb::steal(dims);
  std::string where = p.name;
  if (index >= 0) where += "[" + std::to_string(index) + "]" + (part ? " src" : "");
  const std::string shape = nb::str(nb::steal(PySequence_List(nb::object(obj.attr("shape")).ptr()))).c_str();  // a declaration shows its unknown dims
  if (p.dynamic_refusal)
    pto::fail<pto::ArgumentError>(p.dynamic_refusal, " (", op, ": ", where, " of shape ", shape, " has the dynamic dims ",
                                  nb::str(owned).c_str(), ")");
  pto::fail<pto::ArgumentError>(op, ": ", where, " of shape ", shape, " has the dynamic dims ", nb::str(owned).c_str(),
                                ". Dynamic shape tensors are not allowed as operation operands. Use view in pypto.loop "
                                "to get static shape tensors before computation");
}

pto::Value convert(const pto::Param& p, nb::handle obj, const char* op) {
  using K = pto::ParamKind;
  if (p.kind == K::Dict)
    return convert_fields(p, obj, op, [op](const pto::Param& f, nb::handle v) { return convert(f, v, op); });
  if (obj.is_none() && accepts_none(p)) return std::monostate{};
  const char* name = p.name;
  switch (p.kind) {
    case K::Tensor:
      refuse_dynamic(p, obj, op);
      return to_tensor(obj, op, name, Access::Read);
    case K::Memory: return to_tensor(obj, op, name, Access::Write);
    case K::TensorOrScalar:
      if (!exactly_tensor(obj))
        if (std::optional<pto::Scalar> s = to_scalar(obj)) return *s;
      refuse_dynamic(p, obj, op);
      return to_tensor(obj, op, name, Access::Read);
    case K::TensorList: {
      if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || nb::isinstance<pto::Tensor>(obj))
        pto::fail<pto::DTypeError>(op, ": ", name, " must be a sequence of tensors, got ", nb::type_name(obj.type()).c_str());
      std::vector<pto::Tensor> out;
      const Py_ssize_t count = PySequence_Size(obj.ptr());
      if (count > 0) out.reserve(static_cast<size_t>(count));
      else PyErr_Clear();
      size_t i = 0;
      for (nb::handle item : nb::iter(obj)) {
        refuse_dynamic(p, item, op, static_cast<int>(i));
        pto::Tensor* t = nullptr;
        if (nb::try_cast<pto::Tensor*>(item, t) && t && t->defined()) {  // no message to name it for
          out.push_back(*t);
          ++i;
          continue;
        }
        const std::string where = std::string(name) + "[" + std::to_string(i++) + "]";
        out.push_back(to_tensor(item, op, where.c_str(), Access::Read));
      }
      return out;
    }
    case K::Parts: {
      if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()))
        pto::fail<pto::DTypeError>(op, ": ", name, " must be a list of (tensor, offsets) pairs, got ",
                                   nb::type_name(obj.type()).c_str());
      std::vector<pto::TensorAt> out;
      size_t i = 0;
      for (nb::handle item : nb::iter(obj)) {
        const std::string where = std::string(name) + "[" + std::to_string(i++) + "]";
        if (!PySequence_Check(item.ptr()) || PySequence_Size(item.ptr()) != 2)
          pto::fail<pto::ArgumentError>(op, ": ", where, " must be a (tensor, offsets) pair, got ",
                                        nb::type_name(item.type()).c_str(), " ", nb::repr(item).c_str());
        nb::object t = nb::steal(PySequence_GetItem(item.ptr(), 0)), off = nb::steal(PySequence_GetItem(item.ptr(), 1));
        refuse_dynamic(p, t, op, static_cast<int>(i - 1), true);
        out.push_back({to_tensor(t, op, (where + " src").c_str()), to_int_list(off, op, (where + " offsets").c_str())});
      }
      return out;
    }
    case K::Scalar:
      if (std::optional<pto::Scalar> s = to_scalar(obj)) {
        // to_scalar gives an int past float64's range as an infinity; a parameter that is stored
        // or computed with (alpha, a fill value) must not take it for one.
        if (PyLong_Check(obj.ptr()) && !std::isfinite(s->f)) {
          const int64_t bits = nb::cast<int64_t>(obj.attr("bit_length")());
          pto::fail<pto::ArgumentError>(op, ": ", name, " ", s->f < 0 ? "-" : "", "2^", bits - 1, " or beyond (an integer of ",
                                        bits, " bits) is out of range: no dtype holds a value past float64's largest "
                                        "finite value (about 1.8e308)");
        }
        return *s;
      }
      if (p.number_from_str && PyUnicode_Check(obj.ptr())) {
        nb::object f = nb::steal(PyFloat_FromString(obj.ptr()));
        if (!f.is_valid()) {
          PyErr_Clear();
          pto::fail<pto::ArgumentError>(op, ": ", name, " ", nb::repr(obj).c_str(), " is not a number");
        }
        return pto::Scalar::of_float(PyFloat_AsDouble(f.ptr()));
      }
      pto::fail<pto::DTypeError>(op, ": ", name, " must be an int or a float, got ", nb::type_name(obj.type()).c_str(),
                                 " ", nb::repr(obj).c_str());
    case K::Int: return to_int(obj, op, name);
    case K::Dim: return to_dim(obj, op);
    case K::IntList: return to_int_list(obj, op, name);
    case K::Bool:
      if (PyBool_Check(obj.ptr())) return obj.ptr() == Py_True;
      if (nb::hasattr(obj, "dtype") && nb::hasattr(obj, "item") && std::string(nb::str(obj.attr("dtype")).c_str()) == "bool")
        return PyObject_IsTrue(obj.ptr()) == 1;
      pto::fail<pto::DTypeError>(op, ": ", name, " must be a bool, got ", nb::type_name(obj.type()).c_str(), " ",
                                 nb::repr(obj).c_str());
    case K::DType: return to_dtype(obj);
    case K::Str:
      if (PyUnicode_Check(obj.ptr())) return nb::cast<std::string>(obj);
      if (p.choices)
        pto::fail<pto::ArgumentError>(op, ": ", name, " ", nb::repr(obj).c_str(), " is not supported; allowed: ",
                                      p.choices);
      pto::fail<pto::DTypeError>(op, ": ", name, " must be a str, got ", nb::type_name(obj.type()).c_str());
    case K::Index: return to_index_key(obj);
    case K::Dict: break;  // above
  }
  throw std::logic_error("unreachable");
}

// A non-empty list of pairs whose first item is not a number: assemble's [(tensor, offsets), ...].
bool looks_like_parts(nb::handle seq) {
  if (PySequence_Size(seq.ptr()) <= 0) {
    PyErr_Clear();
    return false;
  }
  nb::object first = nb::steal(PySequence_GetItem(seq.ptr(), 0));
  if (!(PyList_Check(first.ptr()) || PyTuple_Check(first.ptr())) || PySequence_Size(first.ptr()) != 2) return false;
  nb::object head = nb::steal(PySequence_GetItem(first.ptr(), 0));
  return !PyLong_Check(head.ptr()) && !PyFloat_Check(head.ptr());  // a tensor, not a row of numbers
}

// Could obj be an argument of this kind? Only used to pick between an op's overloads.
bool plausible(const pto::Param& p, nb::handle obj) {
  using K = pto::ParamKind;
  const bool sequence = PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr());
  switch (p.kind) {
    case K::Parts: return sequence && looks_like_parts(obj);
    case K::Bool: return PyBool_Check(obj.ptr());
    case K::Tensor: case K::Memory: return !sequence || !looks_like_parts(obj);
    default: return true;
  }
}

// ---- binding a call ----------------------------------------------------------------------------

struct Bound {
  int overload = 0;
  pto::InlineVector<nb::handle, 12> slots;  // per parameter; invalid = not given (default)
  nb::object variadic;            // the list a variadic parameter's slot points at
};

// A call's keyword arguments: a dict, or as Python's vectorcall passes them (a tuple of names, the
// values after the positional arguments). None: no keywords.
struct Keywords {
  PyObject* dict = nullptr;
  PyObject* names = nullptr;
  PyObject* const* values = nullptr;

  Keywords() = default;
  // A dict (an empty one or an invalid handle: none).
  Keywords(nb::handle d) : dict(d.is_valid() && PyDict_GET_SIZE(d.ptr()) ? d.ptr() : nullptr) {}
  Keywords(PyObject* kwnames, PyObject* const* kwvalues)
      : names(kwnames && PyTuple_GET_SIZE(kwnames) ? kwnames : nullptr), values(kwvalues) {}

  // The next (name, value) from position pos (start at 0); false after the last.
  bool next(Py_ssize_t& pos, PyObject*& key, PyObject*& value) const {
    if (dict) return PyDict_Next(dict, &pos, &key, &value);
    if (!names || pos >= PyTuple_GET_SIZE(names)) return false;
    key = PyTuple_GET_ITEM(names, pos);
    value = values[pos++];
    return true;
  }
  // As a dict (the dispatch handlers' OpCall.kwargs): the one given, or a new one.
  nb::object as_dict() const {
    if (dict) return nb::borrow(dict);
    nb::dict d;
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (next(pos, key, value)) d[key] = nb::handle(value);
    return d;
  }
};

// Whether a keyword (a str) is this parameter's name. Most names differ in their first letter, which
// is looked at before the whole name (the str's UTF-8 form is cached in it).
bool is_named(nb::handle key, const pto::Param& p) {
  Py_ssize_t size = 0;
  const char* s = PyUnicode_AsUTF8AndSize(key.ptr(), &size);
  if (!s) {
    PyErr_Clear();
    return false;
  }
  return size > 0 && s[0] == p.name[0] && std::string_view(s, static_cast<size_t>(size)) == p.name;
}

// Binds positional args and keywords to one parameter list as Python would; false when they do
// not fit it (only then is the next overload tried). TypeError when `last` and they do not fit.
bool bind_to(const pto::OpDef& op, const std::vector<pto::Param>& params, const nb::handle* args, size_t nargs,
             const Keywords& kwargs, bool last, bool check_kinds, Bound& out) {
  const auto refuse = [&](const std::string& why) {
    if (last) throw nb::type_error((op.name + "() " + why).c_str());
    return false;
  };
  size_t positional = 0;
  while (positional < params.size() && !params[positional].keyword_only && !params[positional].variadic) ++positional;
  const bool variadic = positional < params.size() && params[positional].variadic;
  if (nargs > positional && !variadic)
    return refuse("takes " + std::to_string(positional) + " positional arguments but " + std::to_string(nargs) +
                  " were given");
  out.slots.assign(params.size(), nb::handle());
  for (size_t i = 0; i < std::min(nargs, positional); ++i) {
    if (check_kinds && !plausible(params[i], args[i])) return refuse("got an argument of the wrong kind");
    out.slots[i] = args[i];
  }
  if (variadic) {  // *name: the rest, or the one list / tuple given
    const size_t rest = nargs > positional ? nargs - positional : 0;
    if (rest == 1 && (PyList_Check(args[positional].ptr()) || PyTuple_Check(args[positional].ptr()))) {
      out.variadic = nb::borrow(args[positional]);
    } else {
      out.variadic = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(rest)));
      for (size_t i = 0; i < rest; ++i)
        PyTuple_SET_ITEM(out.variadic.ptr(), i, nb::borrow(args[positional + i]).release().ptr());
    }
    out.slots[positional] = out.variadic;
  }
  Py_ssize_t pos = 0;
  PyObject *key, *value;
  while (kwargs.next(pos, key, value)) {  // keyword names are always str
    size_t i = 0;
    while (i < params.size() && (params[i].variadic || !is_named(key, params[i])))
      ++i;
    const auto name = [&] { return std::string(nb::str(key).c_str()); };
    if (i == params.size()) return refuse("got an unexpected keyword argument '" + name() + "'");
    if (out.slots[i].is_valid()) return refuse("got multiple values for argument '" + name() + "'");
    out.slots[i] = value;
  }
  for (size_t i = 0; i < params.size(); ++i)
    if (!out.slots[i].is_valid() && !params[i].default_value)
      return refuse(std::string("missing required argument '") + params[i].name + "'");
  return true;
}

Bound bind(const pto::OpDef& op, const nb::handle* args, size_t nargs, const Keywords& kwargs) {
  Bound b;
  const size_t lists = 1 + op.overloads.size();
  for (size_t k = 0; k < lists; ++k) {
    const bool last = k + 1 == lists;
    if (bind_to(op, op.signature(static_cast<int>(k)), args, nargs, kwargs, last, lists > 1 && !last, b)) {
      b.overload = static_cast<int>(k);
      return b;
    }
  }
  return b;  // unreachable: the last list throws
}

// ---- running a call ----------------------------------------------------------------------------

nb::object result(const pto::OpDef& op, const Bound& b, pto::Outputs&& outputs) {
  for (const pto::Tensor& t : outputs) pin_torch_memory(t);  // a view or in-place result over torch memory
  if (op.in_place()) {
    const int w = op.param_index(op.written, b.overload);
    note_written(b.slots[w]);
    if (op.num_outputs == 0) return nb::none();
    return in_place_result(b.slots[w], std::move(outputs.at(0)));
  }
  if (op.num_outputs == 0) return nb::none();
  if (op.num_outputs == 1) return nb::cast(std::move(outputs.at(0)));
  nb::list out;
  for (pto::Tensor& t : outputs) out.append(nb::cast(std::move(t)));
  return nb::tuple(out);
}

pto::Args convert_all(const pto::OpDef& op, const Bound& b) {
  const std::vector<pto::Param>& params = op.signature(b.overload);
  std::vector<pto::Value> values;
  values.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i)
    // (Not one conditional expression: its type would be const Value, copied into the vector.)
    if (b.slots[i].is_valid()) values.push_back(convert(params[i], b.slots[i], op.name.c_str()));
    else values.push_back(default_value(params[i]));
  pto::Args a(std::move(values));
  a.overload = b.overload;
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i].dynamic_allowed && b.slots[i].is_valid() && !params[i].dynamic_allowed(a))
      refuse_dynamic(params[i], b.slots[i], op.name.c_str());
  return a;
}

// Whether a call may take long enough to let other Python threads run meanwhile: a call whose
// tensors, shapes and numbers are all small keeps the GIL (docs/tensors.md#threads), since
// releasing and taking it back costs more than such an op runs. Numbers count for the sizes
// they may give (arange's end, one_hot's classes); lists of tensors and index keys count as
// large; a Dict as its fields do.
bool releases_gil(const std::vector<pto::Value>& values) {
  constexpr int64_t kSmall = int64_t(1) << 14;  // elements
  for (const pto::Value& v : values) {
    if (const auto* t = std::get_if<pto::Tensor>(&v)) {
      if (t->numel() > kSmall) return true;
    } else if (const auto* number = std::get_if<int64_t>(&v)) {
      if (*number > kSmall || *number < -kSmall) return true;
    } else if (const auto* scalar = std::get_if<pto::Scalar>(&v)) {
      const bool large = scalar->kind == pto::Scalar::Kind::Float ? !(std::fabs(scalar->f) <= kSmall)
                                                                   : scalar->i > kSmall || scalar->i < -kSmall;
      if (large) return true;
    } else if (const auto* dims = std::get_if<std::vector<int64_t>>(&v)) {
      int64_t product = 1;
      for (const int64_t d : *dims)
        if (d > 0 && (product *= std::min(d, kSmall + 1)) > kSmall) return true;
    } else if (const auto* fields = std::get_if<pto::Fields>(&v)) {
      if (releases_gil(fields->args->values())) return true;
    } else if (std::holds_alternative<std::vector<pto::Tensor>>(v) ||
               std::holds_alternative<std::vector<pto::TensorAt>>(v) || std::holds_alternative<pto::IndexKey>(v)) {
      return true;
    }
  }
  return false;
}

// `outermost`: the user's call itself, not a call a handler makes on its own: only those are
// traced into a compiled program (docs/kernel_model.md#compiled-kernels).
nb::object run_op(const pto::OpDef& op, const nb::handle* args, size_t nargs, const Keywords& kwargs, bool outermost) {
  pto::require_offered(op);  // UnsupportedError before any argument is looked at (docs/errors.md)
  const Bound b = bind(op, args, nargs, kwargs);
  const pto::Args a = convert_all(op, b);
  pto::Outputs outputs;
  {
    ReleaseGil release(releases_gil(a.values()));
    outputs = pto::call_op(op, a);
  }
  if (outermost)
    if (pto::program::Tracer* tracer = pto::program::Tracer::active()) {
      pto::Args kept = a;  // the program keeps the call's tensors: torch memory among them stays put
      for (pto::Value& v : kept.values()) pto::program::for_each_tensor(v, pin_torch_memory);
      tracer->record(op, a, outputs);
    }
  return result(op, b, std::move(outputs));
}

nb::object run_op(const pto::OpDef& op, nb::handle args, nb::handle kwargs, bool outermost) {
  const size_t n = static_cast<size_t>(PyTuple_GET_SIZE(args.ptr()));
  return run_op(op, reinterpret_cast<const nb::handle*>(&PyTuple_GET_ITEM(args.ptr(), 0)), n, Keywords(kwargs),
                outermost);
}

// One call as a handler sees it.
struct OpCall {
  const pto::OpDef* op;
  nb::object args, kwargs;  // tuple, dict
  size_t level;

  nb::object proceed() const {
    if (level + 1 < t_handlers.stack.size()) {
      nb::handle next = t_handlers.stack[level + 1];
      return next(OpCall{op, args, kwargs, level + 1});
    }
    return run_op(*op, args, kwargs, true);
  }
};

nb::object dispatch(const pto::OpDef& op, nb::handle args, nb::handle kwargs) {
  if (!dispatching()) return run_op(op, args, kwargs, t_handlers.depth == 0);
  DepthScope inside;
  nb::object kw = kwargs.is_valid() ? nb::borrow(kwargs) : nb::object(nb::dict());
  return t_handlers.stack[0](OpCall{&op, nb::borrow(args), kw, 0});
}

nb::object dispatch(const pto::OpDef& op, const nb::handle* args, size_t nargs, const Keywords& kwargs) {
  if (!dispatching()) return run_op(op, args, nargs, kwargs, t_handlers.depth == 0);
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(nargs)));
  for (size_t i = 0; i < nargs; ++i) PyTuple_SET_ITEM(tuple.ptr(), i, nb::borrow(args[i]).release().ptr());
  return dispatch(op, tuple, kwargs.as_dict());
}

// The op functions' and methods' entry (op_function.cpp): Python's own argument array, no copies.
PyObject* vectorcall_entry(const pto::OpDef& op, PyObject* const* args, size_t nargs, PyObject* kwnames) {
  try {
    return dispatch(op, reinterpret_cast<const nb::handle*>(args), nargs, Keywords(kwnames, args + nargs))
        .release()
        .ptr();
  } catch (...) {
    set_python_error();
    return nullptr;
  }
}

// ---- the Tensor operators ----------------------------------------------------------------------

// A Dunder's recipe, e.g. "mul(reciprocal(self), other)": op calls over self and other.
struct Recipe {
  const pto::OpDef* op = nullptr;  // nullptr: a name (self / other)
  bool is_self = true;
  std::vector<Recipe> args;
};

Recipe parse_recipe(std::string_view& s) {
  const auto skip = [&] {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  };
  skip();
  size_t n = 0;
  while (n < s.size() && (std::isalnum(static_cast<unsigned char>(s[n])) || s[n] == '_')) ++n;
  const std::string_view ident = s.substr(0, n);
  s.remove_prefix(n);
  skip();
  Recipe r;
  if (s.empty() || s.front() != '(') {
    if (ident != "self" && ident != "other") throw std::logic_error("op table: recipe name " + std::string(ident));
    r.is_self = ident == "self";
    return r;
  }
  r.op = &pto::op_def(ident);
  s.remove_prefix(1);
  for (;;) {
    r.args.push_back(parse_recipe(s));
    skip();
    const char c = s.empty() ? ')' : s.front();
    s.remove_prefix(s.empty() ? 0 : 1);
    if (c == ')') break;
  }
  return r;
}

nb::object evaluate(const Recipe& r, nb::handle self, nb::handle other) {
  if (!r.op) return nb::borrow(r.is_self ? self : other);
  std::vector<nb::object> values;
  for (const Recipe& a : r.args) values.push_back(evaluate(a, self, other));
  std::vector<nb::handle> handles(values.begin(), values.end());
  return dispatch(*r.op, handles.data(), handles.size(), nb::handle());
}

// ---- signatures --------------------------------------------------------------------------------

std::deque<std::string> g_strings;  // nb::sig and docstrings need storage that outlives the module
const char* keep(std::string s) { return g_strings.emplace_back(std::move(s)).c_str(); }

std::string returns(const pto::OpDef& op) {
  if (op.num_outputs == 0) return "None";
  if (op.num_outputs == 1) return "Tensor";
  std::string t = "tuple[";
  for (int i = 0; i < op.num_outputs; ++i) t += i ? ", Tensor" : "Tensor";
  return t + "]";
}

std::string parameters(const std::vector<pto::Param>& params, bool method) {
  std::string out;
  bool star = false;
  for (size_t i = 0; i < params.size(); ++i) {
    const pto::Param& p = params[i];
    if (!out.empty()) out += ", ";
    if (method && i == 0) {
      out += "self";
      continue;
    }
    if (p.variadic) {
      out += std::string("*") + p.name + ": int | " + type_hint(p);
      star = true;
      continue;
    }
    if (p.keyword_only && !star) {
      out += "*, ";
      star = true;
    }
    out += std::string(p.name) + ": " + type_hint(p) + (accepts_none(p) ? " | None" : "");
    if (p.default_value) out += std::string(" = ") + p.default_value;
  }
  return out;
}

std::string signature(const pto::OpDef& op, const std::string& name, bool method) {
  if (!op.overloads.empty()) return "def " + name + "(" + (method ? "self, " : "") + "*args, **kwargs) -> " + returns(op);
  return "def " + name + "(" + parameters(op.params, method) + ") -> " + returns(op);
}

std::string docstring(const pto::OpDef& op) {
  std::string doc = op.doc;
  for (const std::vector<pto::Param>& list : op.overloads)
    doc = "Also " + op.name + "(" + parameters(list, false) + ").\n\n" + doc;
  if (*op.doc_page) doc += std::string("\n\nSee ") + op.doc_page + ".";
  return doc;
}

// ---- the table as data (docs, verify, torch, bench iterate it) ---------------------------------

const char* kind_name(pto::ParamKind k) {
  using K = pto::ParamKind;
  switch (k) {
    case K::Tensor: return "tensor";
    case K::Memory: return "memory";
    case K::TensorOrScalar: return "tensor_or_scalar";
    case K::TensorList: return "tensor_list";
    case K::Parts: return "parts";
    case K::Scalar: return "scalar";
    case K::Int: return "int";
    case K::Dim: return "dim";
    case K::IntList: return "int_list";
    case K::Bool: return "bool";
    case K::DType: return "dtype";
    case K::Str: return "str";
    case K::Index: return "index";
    case K::Dict: return "dict";
  }
  return "?";
}

nb::list param_rows(const std::vector<pto::Param>& params) {
  nb::list out;
  for (const pto::Param& p : params) {
    nb::dict d;
    d["name"] = p.name;
    d["kind"] = kind_name(p.kind);
    d["default"] = p.default_value ? nb::object(nb::str(p.default_value)) : nb::none();
    d["keyword_only"] = p.keyword_only;
    d["variadic"] = p.variadic;
    d["choices"] = p.choices ? nb::object(nb::str(p.choices)) : nb::none();
    d["fields"] = param_rows(std::vector<pto::Param>(p.fields.begin(), p.fields.end()));
    out.append(d);
  }
  return out;
}

nb::dict op_row(const pto::OpDef& op) {
  nb::dict d;
  d["name"] = op.name;
  d["params"] = param_rows(op.params);
  nb::list overloads;
  for (const auto& list : op.overloads) overloads.append(param_rows(list));
  d["overloads"] = overloads;
  d["function"] = (op.forms & pto::kFunction) != 0;
  d["method"] = (op.forms & pto::kMethod) != 0;
  nb::list dunders;
  for (const pto::Dunder& du : op.dunders) dunders.append(nb::make_tuple(du.name, du.recipe ? du.recipe : ""));
  d["dunders"] = dunders;
  d["num_outputs"] = op.num_outputs;
  d["written"] = op.written ? nb::object(nb::str(op.written)) : nb::none();
  d["principal"] = op.params[op.principal].name;
  d["doc"] = op.doc;
  d["doc_page"] = op.doc_page;
  d["submodule"] = op.submodule;
  d["tile_rule"] = op.tile_rule;
  d["torch_schema"] = op.torch_schema;
  d["signature"] = signature(op, op.name, false);
  d["has_infer"] = op.infer != nullptr;
  const std::string_view file = op.defined_in;  // from the source tree's root: src/ops/...
  const size_t src = file.rfind("src/");
  d["defined_in"] = std::string(src == std::string_view::npos ? file : file.substr(src));
  nb::dict limits;
  for (const pto::Platform& p : pto::all_platforms()) limits[p.name.c_str()] = limits_row(op.limits_on(p.id));
  d["limits"] = limits;
  return d;
}

// Shapes and dtypes only: tensors become storage-less metadata (torch fake tensors included).
pto::Args metadata_args(const pto::OpDef& op, nb::handle args, nb::handle kwargs) {
  const size_t n = static_cast<size_t>(PyTuple_GET_SIZE(args.ptr()));
  const Bound b = bind(op, reinterpret_cast<const nb::handle*>(&PyTuple_GET_ITEM(args.ptr(), 0)), n, Keywords(kwargs));
  const std::vector<pto::Param>& params = op.signature(b.overload);
  std::vector<pto::Value> values;
  for (size_t i = 0; i < params.size(); ++i) {
    const pto::Param& p = params[i];
    nb::handle v = b.slots[i];
    if (p.kind == pto::ParamKind::Dict) {  // its tensors as metadata too
      const char* name = op.name.c_str();
      values.push_back(convert_fields(p, v.is_valid() ? v : nb::none(), name, [name](const pto::Param& f, nb::handle x) {
        const bool tensor = (f.kind == pto::ParamKind::Tensor || f.kind == pto::ParamKind::Memory) && !x.is_none();
        return tensor ? pto::Value(to_metadata(x, name, f.name)) : convert(f, x, name);
      }));
      continue;
    }
    const bool tensor_kind = p.kind == pto::ParamKind::Tensor || p.kind == pto::ParamKind::Memory ||
                             (p.kind == pto::ParamKind::TensorOrScalar && v.is_valid() && !to_scalar(v));
    if (v.is_valid() && tensor_kind && !v.is_none()) values.push_back(to_metadata(v, op.name.c_str(), p.name));
    else if (v.is_valid()) values.push_back(convert(p, v, op.name.c_str()));
    else values.push_back(default_value(p));
  }
  pto::Args a(std::move(values));
  a.overload = b.overload;
  return a;
}

// PyPTO's indexing beyond the getitem / setitem ops (docs/tensors.md#indexing), wrapped around
// their dispatch: `op` runs the op with the call's arguments.

// A key of empty slices only (`:`, or a tuple of them): PyPTO's whole-tensor assignment.
bool whole_key(nb::handle key) {
  const auto empty_slice = [](nb::handle k) {
    if (!PySlice_Check(k.ptr())) return false;
    auto* s = reinterpret_cast<PySliceObject*>(k.ptr());
    return s->start == Py_None && s->stop == Py_None && s->step == Py_None;
  };
  if (!PyTuple_Check(key.ptr())) return empty_slice(key);
  for (nb::handle k : nb::borrow<nb::tuple>(key))
    if (!empty_slice(k)) return false;
  return true;
}

// `t[key] = value`: a Tensor() without storage assigned whole (`q = pypto.tensor()` then
// `q[:] = pypto.matmul(...)`) is rebound to value, PyPTO's move, and so is a kernel's tensor assigned
// whole a value of another shape (`cos[:] = pypto.view(cos, [4, 64], [r, 0])`: cos is that view from
// then on, as upstream's __setitem__ moves; docs/tensors.md#indexing); otherwise the setitem op. A
// kernel's dynamic tensor assigned a static value whole is static afterwards: PyPTO moves the value
// into it (`a[:] = pypto.view(a, [129, 128], [0, 0])`, then a is an operand like the view).
nb::object setitem_dunder(nb::handle self, nb::args args, const std::function<nb::object()>& op) {
  const bool whole = args.size() == 2 && nb::isinstance<pto::Tensor>(args[1]) && whole_key(args[0]);
  const auto& target = nb::cast<const pto::Tensor&>(self);
  if (whole && (!target.defined() ||
                (pto::in_kernel() && nb::cast<const pto::Tensor&>(args[1]).shape() != target.shape()))) {
    self.attr("move")(args[1]);
    return nb::none();
  }
  nb::object result = op();
  if (whole && nb::hasattr(self, "_dynamic_dims") && !nb::hasattr(args[1], "_dynamic_dims") &&
      nb::cast<const pto::Tensor&>(args[1]).shape() == nb::cast<const pto::Tensor&>(self).shape())
    nb::delattr(self, "_dynamic_dims");
  return result;
}

// What an int32 element read by t[i, j] becomes: SymbolicScalar, which lang/operators.py registers
// (the binding imports no ptocpu module); until then, the 0-d tensor.
nb::handle int32_element_type;

// `t[key]`: the getitem op; on a DT_INT32 tensor a key of one integer per dim gives the element as
// a SymbolicScalar, as PyPTO's GetTensorData (`pypto.loop(seq_lens[b])`). Reading it lets the value
// reach Python (a compiled kernel stays eager).
nb::object getitem_dunder(nb::handle, nb::args args, const std::function<nb::object()>& op) {
  nb::object result = op();
  if (!nb::isinstance<pto::Tensor>(result)) return result;
  const pto::Tensor& t = nb::cast<const pto::Tensor&>(result);
  if (!int32_element_type || t.dtype() != pto::DType::INT32 || t.ndim() != 0 || args.size() != 1) return result;
  static nb::handle integral = nb::object(nb::module_::import_("numbers").attr("Integral")).release();
  const auto integer = [](nb::handle k) {  // numpy's integer scalars too
    return !PyBool_Check(k.ptr()) && (PyLong_Check(k.ptr()) || PyObject_IsInstance(k.ptr(), integral.ptr()) == 1);
  };
  nb::handle key = args[0];
  bool all_integers = integer(key);
  if (PyTuple_Check(key.ptr())) {
    all_integers = PyTuple_GET_SIZE(key.ptr()) > 0;
    for (nb::handle k : nb::borrow<nb::tuple>(key)) all_integers = all_integers && integer(k);
  }
  if (!all_integers) return result;
  return int32_element_type(nb::int_(result.attr("numpy")()));
}

using DunderWrapper = nb::object (*)(nb::handle self, nb::args args, const std::function<nb::object()>& op);

DunderWrapper dunder_wrapper(std::string_view name) {
  if (name == "__setitem__") return setitem_dunder;
  if (name == "__getitem__") return getitem_dunder;
  return nullptr;
}

}  // namespace

nb::dict limits_row(const pto::OpLimits& l) {
  nb::dict row;
  row["offered"] = l.offered;
  row["dtypes"] = l.offered ? l.dtypes.to_string() : std::string();
  row["rank"] = nb::make_tuple(l.min_rank, l.max_rank);
  return row;
}

void bind_ops(nb::module_& m) {
  nb::handle cls = nb::type<pto::Tensor>();
  for (const pto::OpDef& op : pto::op_table()) {
    const pto::OpDef* def = &op;
    const char* doc = keep(docstring(op));
    // nanobind functions that are never called: they make the name, module, docs and signature
    // that the op functions show (help(), _core.pyi) as nanobind shows any function's.
    const auto uncalled = [](nb::args, nb::kwargs) {};
    if (op.forms & pto::kFunction)
      m.attr(op.name.c_str()) = make_op_function(
          op, vectorcall_entry,
          nb::cpp_function(uncalled, nb::name(op.name.c_str()), nb::scope(m), nb::sig(keep(signature(op, op.name, false))), doc),
          false);
    if (op.forms & pto::kMethod)
      cls.attr(op.name.c_str()) = make_op_function(
          op, vectorcall_entry,
          nb::cpp_function(uncalled, nb::is_method(), nb::name(op.name.c_str()), nb::scope(cls),
                           nb::sig(keep(signature(op, op.name, true))), doc),
          true);
    for (const pto::Dunder& du : op.dunders) {
      std::shared_ptr<Recipe> recipe;
      if (du.recipe) {
        std::string_view text = du.recipe;
        recipe = std::make_shared<Recipe>(parse_recipe(text));
      }
      const DunderWrapper wrapper = dunder_wrapper(du.name);
      const char* dunder_sig = keep(std::string("def ") + du.name + "(self, *args) -> " + returns(op));
      const char* dunder_doc =
          keep(std::string(du.recipe ? du.recipe : (op.name + "(self, ...)").c_str()) + "; see " + op.name);
      // The op itself on (self, other), plainly or as a recipe that says so (__radd__ of a commutative
      // add, __iadd__ making a new tensor as upstream's does): as its method.
      if (!wrapper && (!recipe || du.recipe == op.name + "(self, other)")) {
        cls.attr(du.name) = make_op_function(
            op, vectorcall_entry,
            nb::cpp_function(uncalled, nb::is_method(), nb::name(du.name), nb::scope(cls), nb::sig(dunder_sig), dunder_doc),
            true);
        continue;
      }
      cls.attr(du.name) = nb::cpp_function(
          [def, recipe, wrapper](nb::handle self, nb::args args) -> nb::object {
            if (recipe) return evaluate(*recipe, self, args.size() ? args[0] : nb::handle());
            const auto op = [&] {
              std::vector<nb::handle> all{self};
              for (nb::handle a : args) all.push_back(a);
              return dispatch(*def, all.data(), all.size(), nb::handle());
            };
            return wrapper(self, args, op);
          },
          nb::is_method(), nb::name(du.name), nb::scope(cls), nb::sig(dunder_sig), dunder_doc);
    }
  }

  nb::class_<OpCall>(m, "OpCall", "One op call as a dispatch handler sees it (docs/CONTRIBUTING.md#the-dispatch-point)")
      .def_prop_ro("op", [](const OpCall& c) { return c.op->name; }, "The op's name in the op table")
      .def_prop_ro("args", [](const OpCall& c) { return c.args; }, "The positional arguments as given")
      .def_prop_ro("kwargs", [](const OpCall& c) { return c.kwargs; }, "The keyword arguments as given")
      .def("proceed", &OpCall::proceed, "Runs the next handler down, or the op itself; returns the result")
      .def("bytes_moved",
           [](const OpCall& c, nb::handle result) -> int64_t {
             const pto::OpDef& op = *c.op;
             const size_t n = static_cast<size_t>(PyTuple_GET_SIZE(c.args.ptr()));
             const Bound b =
                 bind(op, reinterpret_cast<const nb::handle*>(&PyTuple_GET_ITEM(c.args.ptr(), 0)), n, Keywords(c.kwargs));
             const pto::Args a = convert_all(op, b);
             pto::Outputs outs;
             if (nb::isinstance<pto::Tensor>(result)) outs.push_back(nb::cast<pto::Tensor>(result));
             else if (nb::isinstance<nb::tuple>(result))
               for (nb::handle r : result) outs.push_back(nb::cast<pto::Tensor>(r));
             return op.bytes ? op.bytes(op, a, outs) : pto::bytes_read_written(op, a, outs);
           },
           nb::arg("result").none(), "The least bytes this call moves (docs/tracing.md), given its result");

  m.def("_set_int32_element_type", [](nb::handle cls) { int32_element_type = cls.inc_ref(); }, nb::arg("cls"),
        "What t[i, j] of a DT_INT32 tensor gives (lang/operators.py: SymbolicScalar)");
  m.def("_push_handler", [](nb::object h) { t_handlers.stack.insert(t_handlers.stack.begin(), std::move(h)); },
        nb::arg("handler"), "Puts a dispatch handler on top of this thread's stack");
  m.def("_pop_handler",
        [](nb::handle h) {
          auto& s = t_handlers.stack;
          for (auto it = s.begin(); it != s.end(); ++it)
            if (it->is(h)) {
              s.erase(it);
              return;
            }
        },
        nb::arg("handler"), "Removes a dispatch handler from this thread's stack");
  m.def("_handlers", [] { return nb::list(nb::cast(t_handlers.stack)); }, "This thread's dispatch handlers, top first");
  m.def("_call",
        [](const std::string& name, nb::tuple args, nb::dict kwargs) { return dispatch(pto::op_def(name), args, kwargs); },
        nb::arg("op"), nb::arg("args"), nb::arg("kwargs"), "Calls an op of the table by name (through the handlers)");
  m.def("op_table", [] {
    nb::list out;
    for (const pto::OpDef& op : pto::op_table()) out.append(op_row(op));
    return out;
  }, "Every op of the op table as a dict (name, params, forms, limits per platform, doc page, ...)");
  m.def("_infer",
        [](const std::string& name, nb::tuple args, nb::dict kwargs) {
          const pto::OpDef& op = pto::op_def(name);
          if (!op.infer) pto::fail<pto::UnsupportedError>(name, ": no shape inference");
          const pto::checks::EveryPlatformScope every_platform;
          nb::list out;
          for (const pto::OutputMeta& meta : op.infer(op, metadata_args(op, args, kwargs)))
            out.append(nb::make_tuple(to_tuple(meta.shape), meta.dtype));
          return out;
        },
        nb::arg("op"), nb::arg("args"), nb::arg("kwargs"),
        "Output (shape, dtype) pairs from shapes and dtypes alone, under every platform's rules (docs/torch.md)");
}

void notify_handlers(const char* event, nb::args args) {
  if (!dispatching()) return;
  DepthScope inside;
  for (const nb::object& h : std::vector<nb::object>(t_handlers.stack))
    if (nb::hasattr(h, event)) h.attr(event)(*args);
}

}  // namespace ptobind
