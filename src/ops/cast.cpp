// cast (docs/ops/cast.md) and Tensor.astype (docs/dtypes.md#conversions): the pairs of dtypes each
// chip converts, the rounding modes each pair honours and its default, which pairs honour the
// saturation mode, then the conversions of kernels/cast.h.
#include "kernels/cast.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ops/checks.h"
#include "ops/elementwise.h"
#include "ops/families.h"
#include "ptocpu/error.h"
#include "ptocpu/modes.h"
#include "ptocpu/platform.h"
#include "ptocpu/scalar.h"

namespace pto {
namespace {

using D = DType;
namespace kc = kernels::cast;

// What a pair of dtypes does.
enum class Kind : uint8_t {
  Rounds,     // a value may fall between two of the target's: the modes of `modes` apply
  Widens,     // every value converts exactly (no mode)
  Saturates,  // integer narrowing: only the saturation mode applies
  Packs,      // bf16 <-> the X2 pairs of 4-bit values: to nearest even, saturating
};

// Bit masks of Round values.
constexpr unsigned bit(Round r) { return 1u << static_cast<unsigned>(r); }
constexpr unsigned kFive = bit(Round::NearestEven) | bit(Round::NearestAway) | bit(Round::Down) | bit(Round::Up) |
                           bit(Round::TowardZero);
constexpr unsigned kSix = kFive | bit(Round::ToOdd);
constexpr unsigned kAway = bit(Round::NearestAway);

struct Pair {
  D from, to;
  Kind kind;
  unsigned modes = 0;                // Rounds: the modes honoured; any other falls back to `fallback`
  Round fallback = Round::NearestEven;
  bool satmode_honoured = true;      // false: the chip saturates whatever satmode says
};

constexpr Pair rounds(D from, D to, unsigned modes, Round fallback, bool satmode = true) {
  return {from, to, Kind::Rounds, modes, fallback, satmode};
}
constexpr Pair widens(D from, D to) { return {from, to, Kind::Widens}; }
constexpr Pair narrows(D from, D to, bool satmode = true) { return {from, to, Kind::Saturates, 0, Round::TowardZero, satmode}; }
constexpr Pair packs(D from, D to) { return {from, to, Kind::Packs}; }

constexpr Round kRint = Round::NearestEven, kTrunc = Round::TowardZero;

// Atlas A2 / A3 (docs/ops/cast.md#pairs): the requested satmode counts on the pairs marked so; the
// chip's other float -> integer and integer narrowings always saturate.
const std::vector<Pair>& a2_a3_pairs() {
  static const std::vector<Pair> pairs = {
      rounds(D::FP32, D::FP16, kSix, kRint),          rounds(D::FP32, D::FP32, kFive, kRint),
      rounds(D::FP32, D::BF16, kFive, kRint),         rounds(D::FP32, D::INT64, kFive, kTrunc, false),
      rounds(D::FP32, D::INT32, kFive, kTrunc, false), rounds(D::FP32, D::INT16, kFive, kTrunc),
      widens(D::FP16, D::FP32),                       rounds(D::FP16, D::INT32, kFive, kTrunc, false),
      rounds(D::FP16, D::INT16, kFive, kTrunc),       rounds(D::FP16, D::INT8, kFive, kTrunc),
      rounds(D::FP16, D::UINT8, kFive, kTrunc),       rounds(D::FP16, D::INT4, kFive, kTrunc, false),
      widens(D::BF16, D::FP32),                       rounds(D::BF16, D::INT32, kFive, kTrunc, false),
      rounds(D::INT32, D::FP32, kFive, kRint),        widens(D::INT32, D::INT64),
      narrows(D::INT32, D::INT16),                    rounds(D::INT32, D::FP16, 0, kRint),  // "deq", scale 1
      rounds(D::INT16, D::FP32, kFive, kRint),        rounds(D::INT16, D::FP16, kFive, kRint),
      rounds(D::INT64, D::FP32, kFive, kRint),        narrows(D::INT64, D::INT32),
      widens(D::UINT8, D::FP16),                      widens(D::INT8, D::FP16),
      widens(D::INT4, D::FP16),
  };
  return pairs;
}

// Ascend 950: every pair honours satmode.
const std::vector<Pair>& ascend950_pairs() {
  static const std::vector<Pair> pairs = {
      rounds(D::FP32, D::FP32, kFive, kRint),    rounds(D::FP32, D::FP16, kSix, kRint),
      rounds(D::FP32, D::BF16, kFive, kRint),    rounds(D::FP32, D::INT64, kFive, kTrunc),
      rounds(D::FP32, D::INT32, kFive, kTrunc),  rounds(D::FP32, D::INT16, kFive, kTrunc),
      rounds(D::FP32, D::FP8E4M3, kFive, kRint), rounds(D::FP32, D::FP8E5M2, kFive, kRint),
      rounds(D::FP32, D::HF8, kAway, Round::NearestAway),
      widens(D::FP16, D::FP32),                  rounds(D::FP16, D::INT32, kFive, kTrunc),
      rounds(D::FP16, D::INT16, kFive, kTrunc),  rounds(D::FP16, D::INT8, kFive, kTrunc),
      rounds(D::FP16, D::UINT8, kFive, kTrunc),  rounds(D::FP16, D::HF8, kAway, Round::NearestAway),
      widens(D::BF16, D::FP32),                  rounds(D::BF16, D::INT32, kFive, kTrunc),
      rounds(D::BF16, D::FP16, kFive, kRint),
      widens(D::UINT8, D::FP16),                 widens(D::UINT8, D::UINT16),
      widens(D::INT8, D::FP16),                  widens(D::INT8, D::INT16),
      widens(D::INT8, D::INT32),
      narrows(D::INT16, D::UINT8),               rounds(D::INT16, D::FP16, kFive, kRint),
      widens(D::INT16, D::FP32),                 widens(D::INT16, D::UINT32),
      widens(D::INT16, D::INT32),
      rounds(D::INT32, D::FP32, kFive, kRint),   narrows(D::INT32, D::INT16),
      narrows(D::INT32, D::UINT16),              widens(D::INT32, D::INT64),
      narrows(D::INT32, D::UINT8),               rounds(D::INT32, D::FP16, 0, kRint),  // "deq", scale 1
      narrows(D::UINT32, D::UINT8),              narrows(D::UINT32, D::UINT16),
      narrows(D::UINT32, D::INT16),
      rounds(D::INT64, D::FP32, kFive, kRint),   narrows(D::INT64, D::INT32),
      widens(D::FP8E4M3, D::FP32),               widens(D::FP8E5M2, D::FP32),
      widens(D::HF8, D::FP32),
      packs(D::BF16, D::FP4_E2M1X2),             packs(D::BF16, D::FP4_E1M2X2),
      packs(D::FP4_E2M1X2, D::BF16),             packs(D::FP4_E1M2X2, D::BF16),
  };
  return pairs;
}

DTypeSet sources(const std::vector<Pair>& pairs) {
  DTypeSet s;
  for (const Pair& p : pairs) s = s.with({p.from});
  return s;
}

bool integer_valued(D dt) { return is_integer(dt) || dt == D::BOOL; }

// The cpu converts every dtype to every other (the X2 pairs to and from the floats), each with
// every mode; the defaults are the chips': float -> integer toward zero, HF8 ties away, else to
// nearest even.
std::optional<Pair> cpu_pair(D from, D to) {
  if (is_packed_pair(from) || is_packed_pair(to)) {
    const D other = is_packed_pair(from) ? to : from;
    if (!is_floating(other) || is_packed_pair(other)) return std::nullopt;
    return packs(from, to);
  }
  if (to == D::HF8) return rounds(from, to, kAway, Round::NearestAway);
  return rounds(from, to, kSix, integer_valued(to) && !integer_valued(from) ? kTrunc : kRint);
}

std::optional<Pair> find_pair(D from, D to) {
  switch (current_platform().id) {
    case PlatformId::Cpu: return cpu_pair(from, to);
    case PlatformId::Ascend950: break;
    default: {
      for (const Pair& p : a2_a3_pairs())
        if (p.from == from && p.to == to) return p;
      return std::nullopt;
    }
  }
  for (const Pair& p : ascend950_pairs())
    if (p.from == from && p.to == to) return p;
  return std::nullopt;
}

std::string targets_of(D from) {
  std::string out;
  for (int i = 0; i < kNumDTypes; ++i) {
    const D to = static_cast<D>(i);
    if (to != from && find_pair(from, to)) out += (out.empty() ? "" : ", ") + std::string(dtype_name(to));
  }
  return out.empty() ? "nothing" : out;
}

Round round_of(CastMode m) {
  switch (m) {
    case CastMode::CAST_ROUND: return Round::NearestAway;
    case CastMode::CAST_FLOOR: return Round::Down;
    case CastMode::CAST_CEIL: return Round::Up;
    case CastMode::CAST_TRUNC: return Round::TowardZero;
    case CastMode::CAST_ODD: return Round::ToOdd;
    default: return Round::NearestEven;
  }
}

struct CastPlan {
  Tensor input;           // its valid part
  D to;
  Shape out_shape;
  bool returns_input = false;  // a same-dtype cast with CAST_NONE / CAST_RINT does nothing
  Kind kind = Kind::Rounds;
  kc::Rule rule;
};

CastPlan plan_cast(const OpDef& op, const Args& a) {
  const OpLimits& limits = require_offered(op);
  const char* name = op.name.c_str();
  CastPlan p;
  p.to = a.dtype(1);
  const int64_t mode = a.integer(2), satmode = a.integer(3);
  if (mode < 0 || mode > 6)
    fail<ArgumentError>(name, ": mode ", mode, " is not a CastMode; allowed: CAST_NONE (0), CAST_RINT (1), CAST_ROUND (2), "
                        "CAST_FLOOR (3), CAST_CEIL (4), CAST_TRUNC (5), CAST_ODD (6)");
  if (satmode != 0 && satmode != 1)
    fail<ArgumentError>(name, ": satmode ", satmode, " is not a SaturationMode; allowed: ON (0), OFF (1)");
  p.input = elementwise::operand(op, limits, a.tensor(0), "input", limits.dtypes);
  const D from = p.input.dtype();
  const auto cast_mode = static_cast<CastMode>(mode);
  p.out_shape = p.input.shape();
  // Any dtype casts to itself; with CAST_NONE / CAST_RINT the input comes back unchanged, with
  // another mode a float rounds to an integral value (an integer is copied).
  p.returns_input = from == p.to && (cast_mode == CastMode::CAST_NONE || cast_mode == CastMode::CAST_RINT);
  std::optional<Pair> pair = find_pair(from, p.to);
  if (!pair && from == p.to) pair = rounds(from, from, kSix, kRint);
  if (!pair)
    fail<DTypeError>(name, ": platform ", current_platform().name, " does not cast ", dtype_name(from), " to ",
                     dtype_name(p.to), "; from ", dtype_name(from), " it casts to ", targets_of(from));
  p.kind = pair->kind;
  const Round requested = round_of(cast_mode);
  const bool honoured = cast_mode != CastMode::CAST_NONE && (pair->modes & bit(requested));
  p.rule.round = pair->kind == Kind::Rounds && honoured ? requested : pair->fallback;
  p.rule.saturate = satmode == 0 || !pair->satmode_honoured;
  p.rule.to_integral = from == p.to && is_floating(from);
  if (p.kind == Kind::Packs) {
    const bool packing = is_packed_pair(p.to);
    if (p.input.ndim() == 0)
      fail<ArgumentError>(name, ": a 0-d ", dtype_name(from), " tensor has no last dim to ", packing ? "pack" : "unpack");
    int64_t& last = p.out_shape.back();
    if (packing && last % 2 != 0)
      fail<ArgumentError>(name, ": input shape ", shape_to_string(p.input.shape()), " has an odd last dim (", last, "); ",
                          dtype_name(p.to), " holds the values two to a byte, so the last dim must be even");
    last = packing ? last / 2 : last * 2;
    checks::check_extent(name, "output", p.out_shape, false);
  }
  elementwise::check_tile(op, p.out_shape, p.to, {p.input});
  return p;
}

Outputs run_cast(const OpDef& op, const Args& a) {
  const CastPlan p = plan_cast(op, a);
  if (p.returns_input) return {a.tensor(0)};
  Tensor out = Tensor::empty(p.out_shape, p.to);
  if (p.input.dtype() == p.to && !p.rule.to_integral) copy_into(out, p.input, "cast");  // an integer (or pair) to itself
  else if (p.kind == Kind::Packs && is_packed_pair(p.to)) kc::pack_pairs(p.input, out);
  else if (p.kind == Kind::Packs) kc::unpack_pairs(p.input, out);
  else kc::convert(p.input, out, p.rule);
  return {out};
}

std::vector<OutputMeta> infer_cast(const OpDef& op, const Args& a) {
  const CastPlan p = plan_cast(op, a);
  return {{p.returns_input ? a.tensor(0).shape() : p.out_shape, p.to}};
}

}  // namespace

Tensor astype(const Tensor& t, DType to) {
  if (is_packed_pair(t.dtype()) || is_packed_pair(to))
    fail<DTypeError>("astype: ", dtype_name(is_packed_pair(to) ? to : t.dtype()),
                     " holds two 4-bit values per element; cast to or from DT_BF16 packs and unpacks them");
  if (!is_floating(t.dtype()) && !is_floating(to))
    fail<DTypeError>("astype: ", dtype_name(t.dtype()), " to ", dtype_name(to),
                     " is not supported; one of the two dtypes must be floating");
  Tensor out = Tensor::empty(t.shape(), to);
  // Floats round to nearest (even; HF8 ties away); float -> integer truncates and saturates.
  const bool to_integer = !is_floating(to);
  kc::convert(t, out, {to_integer ? Round::TowardZero : Round::NearestEven, to_integer});
  return out;
}

void families::add_cast(std::vector<OpDef>& table) {
  const DTypeSet cpu = DTypeSet::all().with(DTypeSet::storage_formats());
  table.push_back(OpDef{
      .name = "cast",
      .params = {{"input", ParamKind::Tensor},
                 {"dtype", ParamKind::DType},
                 {"mode", ParamKind::Int, "0", false, nullptr, "CastMode | int"},
                 {"satmode", ParamKind::Int, "1", false, nullptr, "SaturationMode | int"}},
      .forms = kFunction | kMethod,
      .tile_rule = "TileShape has at least the output's rank (its leading dims tile it); the UB holds an input tile and an output tile",
      .limits = platform_rows(cpu, sources(ascend950_pairs()), sources(a2_a3_pairs()), sources(a2_a3_pairs())),
      .run = run_cast,
      .infer = infer_cast,
  });
}

}  // namespace pto
