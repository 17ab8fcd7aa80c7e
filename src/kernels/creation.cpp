// The creation family's kernels (kernels/creation.h). Every output is produced in chunks of
// kChunk elements: each thread takes a contiguous range of chunks, builds each one in an L1
// stage (or fills it in place) and writes it out, with non-temporal stores once the output
// reaches kernel_tuning().stream_bytes. Every element depends on its index alone (arange's
// sequential rounding chain is replayed, not split), so results do not depend on the thread
// count; no FMA contraction and IEEE operations only, so they do not depend on the ISA either.
#include "kernels/creation.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>

#include "copy/simd.h"
#include "copy/stream.h"
#include "core/half.h"
#include "ptocpu/parallel.h"

#if PTO_X86
#include <immintrin.h>
#endif

namespace pto::kernels::creation {
namespace {

constexpr int64_t kChunk = 1024;                         // elements per stage
constexpr int64_t kMinThreadBytes = int64_t(1) << 18;    // output bytes worth waking a thread for
// Chunks worth waking a thread for where producing them costs far more than writing them: a chunk
// of normal's Box-Muller takes ~4 us (docs/ops/random.md#speed), a thread's wake-up a few.
constexpr int64_t kMinComputedChunks = 1;

bool streams(int64_t bytes) { return PTO_HAVE_STREAM_LINES && bytes >= kernel_tuning().stream_bytes; }

// dst[0, bytes) = src[0, bytes), past the caches when `stream`.
void emit(std::byte* dst, const std::byte* src, int64_t bytes, bool stream) {
  if (!stream) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  switch (kernel_tuning().isa) {
    case Isa::Avx512: stream_copy<Isa::Avx512>(dst, src, bytes); break;
    case Isa::Avx2: stream_copy<Isa::Avx2>(dst, src, bytes); break;
    default: stream_copy<Isa::Baseline>(dst, src, bytes); break;
  }
}

// Writes n elements of `item` bytes at out, chunk by chunk on every thread: produce(first, count,
// stage) builds elements [first, first + count) and returns where they are (the stage, or any
// buffer holding them). A thread takes at least min_chunks (default: kMinThreadBytes' worth).
template <class Produce>
void produce_chunks(std::byte* out, int64_t n, int64_t item, Produce&& produce, int64_t min_chunks = 0) {
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  const bool stream = streams(n * item);
  if (min_chunks <= 0) min_chunks = std::max<int64_t>(1, kMinThreadBytes / (kChunk * item));
  parallel_for(chunks, min_chunks, [&](int64_t c0, int64_t c1) {
    alignas(64) std::byte stage[kChunk * 8];
    for (int64_t c = c0; c < c1; ++c) {
      const int64_t first = c * kChunk, count = std::min(kChunk, n - first);
      emit(out + first * item, produce(first, count, stage), count * item, stream);
    }
    if (stream) stream_fence();
  });
}

template <int Bytes>
struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

template <class W>
void fill_words(const Tensor& out, W value) {
  W* data = out.data_as<W>();
  const int64_t n = out.numel();
  if (streams(n * int64_t(sizeof(W)))) {
    alignas(64) W pattern[kChunk];
    std::fill_n(pattern, kChunk, value);
    produce_chunks(reinterpret_cast<std::byte*>(data), n, sizeof(W),
                   [&](int64_t, int64_t, std::byte*) { return reinterpret_cast<const std::byte*>(pattern); });
    return;
  }
  const int64_t min_items = std::max<int64_t>(1, kMinThreadBytes / int64_t(sizeof(W)));
  parallel_for(n, min_items, [&](int64_t b, int64_t e) { std::fill(data + b, data + e, value); });
}

// ---- arange ------------------------------------------------------------------------------------

constexpr int64_t kBlockLanes = 8;  // the device's first block: 32 bytes of fp32
constexpr int64_t kRowLanes = 64;   // then whole repeats of 8 blocks

// Row 0 of a tile of `count` elements starting at base: the scalar block, then blocks from the one before.
void first_row(float base, float step, int64_t count, float* row) {
  const int64_t m = std::min(count, kRowLanes);
  for (int64_t j = 0; j < std::min(m, kBlockLanes); ++j) row[j] = base + step * static_cast<float>(j);
  const float block_step = step * static_cast<float>(kBlockLanes);
  for (int64_t j = kBlockLanes; j < m; ++j) row[j] = row[j - kBlockLanes] + block_step;
  std::fill(row + m, row + kRowLanes, 0.0f);
}

PTO_SIMD_CLONES void advance_rows(float* row, float row_step, int64_t rows) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < kRowLanes; ++k) row[k] += row_step;
}

// ---- Philox4x32-10 -----------------------------------------------------------------------------

constexpr uint32_t kMul0 = 0xD2511F53, kMul1 = 0xCD9E8D57;     // round multipliers
constexpr uint32_t kWeyl0 = 0x9E3779B9, kWeyl1 = 0xBB67AE85;   // key schedule increments
constexpr int kRounds = 10;
constexpr int kLanes = 16;  // blocks generated side by side

// 16 consecutive blocks from block b0: words[4 * i + w] = word w of block b0 + i. The rounds run
// inside the loop over blocks, which the compiler vectorises across blocks.
PTO_SIMD_CLONES void philox_blocks(const Stream& s, uint64_t b0, uint32_t* __restrict words) {
  uint32_t key0[kRounds], key1[kRounds];
  key0[0] = static_cast<uint32_t>(s.key);
  key1[0] = static_cast<uint32_t>(s.key >> 32);
  for (int r = 1; r < kRounds; ++r) {
    key0[r] = key0[r - 1] + kWeyl0;
    key1[r] = key1[r - 1] + kWeyl1;
  }
  const uint32_t offset_lo = static_cast<uint32_t>(s.offset), offset_hi = static_cast<uint32_t>(s.offset >> 32);
  for (int i = 0; i < kLanes; ++i) {
    const uint64_t b = b0 + static_cast<uint64_t>(i);
    uint32_t c0 = static_cast<uint32_t>(b), c1 = static_cast<uint32_t>(b >> 32), c2 = offset_lo, c3 = offset_hi;
    for (int r = 0; r < kRounds; ++r) {
      const uint64_t p0 = uint64_t(kMul0) * c0, p1 = uint64_t(kMul1) * c2;
      c0 = static_cast<uint32_t>(p1 >> 32) ^ c1 ^ key0[r];
      c1 = static_cast<uint32_t>(p1);
      c2 = static_cast<uint32_t>(p0 >> 32) ^ c3 ^ key1[r];
      c3 = static_cast<uint32_t>(p0);
    }
    words[4 * i] = c0;
    words[4 * i + 1] = c1;
    words[4 * i + 2] = c2;
    words[4 * i + 3] = c3;
  }
}

#if PTO_X86
// The high and the low 32 bits of the products of a's lanes with m (its even lanes, then its odd).
PTO_TARGET_AVX2 inline void product(__m256i a, __m256i m, __m256i& high, __m256i& low) {
  const __m256i even = _mm256_mul_epu32(a, m), odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  high = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
  low = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

// philox_blocks on AVX2, the same words: word w of eight blocks in one register (block b0 + j in
// lane j), a round's 32 x 32 -> 64-bit products by one vpmuludq for the even lanes and one for the
// odd; the compiler's vectorisation of the loop above took ~3 ns a word on an AMD EPYC (Zen 3).
PTO_TARGET_AVX2 void philox_blocks_avx2(const Stream& s, uint64_t b0, uint32_t* __restrict words) {
  const __m256i mul0 = _mm256_set1_epi64x(kMul0), mul1 = _mm256_set1_epi64x(kMul1);
  for (int group = 0; group < kLanes / 8; ++group) {
    alignas(32) uint32_t counter_lo[8], counter_hi[8];
    for (int j = 0; j < 8; ++j) {
      const uint64_t b = b0 + static_cast<uint64_t>(8 * group + j);
      counter_lo[j] = static_cast<uint32_t>(b);
      counter_hi[j] = static_cast<uint32_t>(b >> 32);
    }
    __m256i c0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(counter_lo));
    __m256i c1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(counter_hi));
    __m256i c2 = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(s.offset)));
    __m256i c3 = _mm256_set1_epi32(static_cast<int>(static_cast<uint32_t>(s.offset >> 32)));
    uint32_t key0 = static_cast<uint32_t>(s.key), key1 = static_cast<uint32_t>(s.key >> 32);
    for (int r = 0; r < kRounds; ++r, key0 += kWeyl0, key1 += kWeyl1) {
      __m256i high0, low0, high1, low1;
      product(c0, mul0, high0, low0);
      product(c2, mul1, high1, low1);
      c0 = _mm256_xor_si256(_mm256_xor_si256(high1, c1), _mm256_set1_epi32(static_cast<int>(key0)));
      c1 = low1;
      c2 = _mm256_xor_si256(_mm256_xor_si256(high0, c3), _mm256_set1_epi32(static_cast<int>(key1)));
      c3 = low0;
    }
    // Blocks in lanes -> four words a block, one after another (a 4 x 8 transpose).
    const __m256i t0 = _mm256_unpacklo_epi32(c0, c1), t1 = _mm256_unpackhi_epi32(c0, c1);
    const __m256i t2 = _mm256_unpacklo_epi32(c2, c3), t3 = _mm256_unpackhi_epi32(c2, c3);
    const __m256i b04 = _mm256_unpacklo_epi64(t0, t2), b15 = _mm256_unpackhi_epi64(t0, t2);
    const __m256i b26 = _mm256_unpacklo_epi64(t1, t3), b37 = _mm256_unpackhi_epi64(t1, t3);
    __m256i* out = reinterpret_cast<__m256i*>(words + 32 * group);
    _mm256_storeu_si256(out, _mm256_permute2x128_si256(b04, b15, 0x20));
    _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(b26, b37, 0x20));
    _mm256_storeu_si256(out + 2, _mm256_permute2x128_si256(b04, b15, 0x31));
    _mm256_storeu_si256(out + 3, _mm256_permute2x128_si256(b26, b37, 0x31));
  }
}
#endif

// The fp32 uniform of a word: 1.m - 1 with the word's low 23 bits as m (exact).
PTO_SIMD_CLONES void uniform_f32(const uint32_t* words, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::bit_cast<float>(0x3F800000u | (words[i] & 0x7FFFFFu)) - 1.0f;
}
// fp16 keeps 10 mantissa bits, bf16 7: (w & mask) * 2^-bits, exact in fp32 and in the dtype.
PTO_SIMD_CLONES void uniform_f16(const uint32_t* words, fp16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = half::to_fp16(static_cast<float>(words[i] & 0x3FFu) * 0x1p-10f);
}
PTO_SIMD_CLONES void uniform_bf16(const uint32_t* words, bf16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = half::to_bf16(static_cast<float>(words[i] & 0x7Fu) * 0x1p-7f);
}

// ---- the transcendental steps of Box-Muller, in double, for fp32 arguments --------------------
// Each returns the function of an fp32 value to about 2^-52 relative, so the fp32 rounding that
// follows is the correctly rounded result (wrong only where the exact value lies within ~2^-50 of
// a rounding boundary). Plain double operations in a fixed order: the same bits on every ISA,
// vectorised by the compiler; measured 4-5x faster than glibc's scalar logf / sincosf here.

// fdlibm's split constants: the high parts have trailing zero bits, so k * hi is exact.
constexpr double kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
constexpr double kTwoOverPi = 6.36619772367581382433e-01;
constexpr double kPio2Hi = 1.57079632673412561417e+00, kPio2Mid = 6.07710050630396597660e-11,
                 kPio2Lo = 2.02226624879595063154e-21;
constexpr double kRoundMagic = 0x1.8p52;  // x + kRoundMagic rounds x to an integer (|x| < 2^51)

// Branch-free selections (integer operations) keep the Box-Muller loop vectorisable.
inline double select(bool pick_b, double a, double b) {
  const uint64_t mask = 0 - static_cast<uint64_t>(pick_b);
  return std::bit_cast<double>((std::bit_cast<uint64_t>(a) & ~mask) | (std::bit_cast<uint64_t>(b) & mask));
}
inline double negate_if(bool negate, double v) {
  return std::bit_cast<double>(std::bit_cast<uint64_t>(v) ^ (static_cast<uint64_t>(negate) << 63));
}

// Series coefficients, highest power first: 1/19 .. 1/3 (atanh), +-1/17! .. -1/3! (sin), -1/18! .. 1/4! (cos).
constexpr double kAtanhSeries[] = {1.0 / 19, 1.0 / 17, 1.0 / 15, 1.0 / 13, 1.0 / 11, 1.0 / 9, 1.0 / 7, 1.0 / 5, 1.0 / 3};
constexpr double kSinSeries[] = {1.0 / 355687428096000.0, -1.0 / 1307674368000.0, 1.0 / 6227020800.0,
                                 -1.0 / 39916800.0,       1.0 / 362880.0,          -1.0 / 5040.0,
                                 1.0 / 120.0,             -1.0 / 6.0};
constexpr double kCosSeries[] = {-1.0 / 6402373705728000.0, 1.0 / 20922789888000.0, -1.0 / 87178291200.0,
                                 1.0 / 479001600.0,         -1.0 / 3628800.0,       1.0 / 40320.0,
                                 -1.0 / 720.0,              1.0 / 24.0};

template <size_t N>
inline double horner(double z, const double (&coefficients)[N]) {
  double p = coefficients[0];
  for (size_t i = 1; i < N; ++i) p = p * z + coefficients[i];
  return p;
}

// ln x for a normal positive fp32 x: x = 2^e m with m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(s) = 2 (s + s^3/3 + ... + s^19/19), s = (m - 1) / (m + 1), |s| < 0.172.
inline double log_of_float(float x) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t mantissa = (bits & 0x7FFFFFu) | 0x3F800000u;          // m in [1, 2)
  const uint32_t high = mantissa > 0x3FB504F3u ? 1u : 0u;               // m > sqrt(2): halve it
  const double m = std::bit_cast<float>(mantissa - (high << 23));
  const double e = static_cast<double>(static_cast<int32_t>(bits >> 23) - 127 + static_cast<int32_t>(high));
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  return e * kLn2Hi + (e * kLn2Lo + 2.0 * (s + s * z * horner(z, kAtanhSeries)));
}

// sin x and cos x for x in [0, 2 pi]: x = k pi/2 + r, |r| <= pi/4 (three-part pi/2), Taylor
// series of sin r to r^17 and cos r to r^18, then the quadrant k mod 4.
inline void sincos_of_float(float x_f, double& sin_x, double& cos_x) {
  const double x = x_f;
  const double shifted = x * kTwoOverPi + kRoundMagic;
  const double k = shifted - kRoundMagic;
  const uint64_t quadrant = std::bit_cast<uint64_t>(shifted) & 3;
  const double r = ((x - k * kPio2Hi) - k * kPio2Mid) - k * kPio2Lo;
  const double z = r * r;
  const double sin_r = r + r * z * horner(z, kSinSeries);
  const double cos_r = (1.0 - 0.5 * z) + z * z * horner(z, kCosSeries);
  // quadrant 0: (s, c); 1: (c, -s); 2: (-s, -c); 3: (-c, s)
  const bool odd = (quadrant & 1) != 0;
  sin_x = negate_if((quadrant & 2) != 0, select(odd, sin_r, cos_r));
  cos_x = negate_if(((quadrant + 1) & 2) != 0, select(odd, cos_r, sin_r));
}

constexpr float kMinUniform = 1.0e-7f;          // max(u, 1e-7) keeps ln finite
constexpr float kTwoPi = 6.28318530717958647692f;  // 2 pi as the device's fp32 scalar

PTO_SIMD_CLONES void box_muller_pairs(const float* __restrict u, float* __restrict out, int64_t pairs) {
  for (int64_t k = 0; k < pairs; ++k) {
    // max(u, 1e-7) on the bits (u >= 0 orders like its bits): no branch for the compiler to split on
    const uint32_t u_bits = std::bit_cast<uint32_t>(u[2 * k]);
    const float u1 = std::bit_cast<float>(std::max(u_bits, std::bit_cast<uint32_t>(kMinUniform)));
    const float angle = u[2 * k + 1] * kTwoPi;
    const float log_u1 = static_cast<float>(log_of_float(u1));
    const float radius = std::sqrt(log_u1 * -2.0f);
    double sin_a, cos_a;
    sincos_of_float(angle, sin_a, cos_a);
    out[2 * k] = static_cast<float>(sin_a) * radius;
    out[2 * k + 1] = static_cast<float>(cos_a) * radius;
  }
}

template <class T>
PTO_SIMD_CLONES void narrow_floats(const float* src, T* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_same_v<T, fp16_t>) dst[i] = half::to_fp16(src[i]);
    else dst[i] = half::to_bf16(src[i]);
  }
}

template <class F>
decltype(auto) visit_width(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(Word<1>{});
    case 2: return f(Word<2>{});
    case 4: return f(Word<4>{});
    default: return f(Word<8>{});
  }
}

}  // namespace

void fill(const Tensor& out, const void* value) {
  visit_width(out.itemsize(), [&](auto word) {
    using W = typename decltype(word)::type;
    W v;
    std::memcpy(&v, value, sizeof(W));
    fill_words<W>(out, v);
  });
}

void arange_f32(const Tensor& out, float start, float step, int64_t tile) {
  const int64_t n = out.numel();
  if (n == 0) return;
  float* data = out.data_as<float>();
  tile = std::min(tile, n);
  const int64_t rows_per_tile = (tile + kRowLanes - 1) / kRowLanes;
  const int64_t tiles = (n + tile - 1) / tile;
  const int64_t last = n - (tiles - 1) * tile;
  const int64_t rows = (tiles - 1) * rows_per_tile + (last + kRowLanes - 1) / kRowLanes;
  const bool stream = streams(n * 4);
  const float row_step = step * static_cast<float>(kRowLanes);
  const int64_t min_rows = std::max<int64_t>(1, kMinThreadBytes / (kRowLanes * 4));
  parallel_for(rows, min_rows, [&](int64_t g0, int64_t g1) {
    constexpr int64_t kStageRows = kChunk / kRowLanes;
    alignas(64) float stage[kChunk];
    alignas(64) float row[kRowLanes];
    int64_t staged = 0;
    float* dst = nullptr;
    const auto flush = [&] {
      emit(reinterpret_cast<std::byte*>(dst), reinterpret_cast<const std::byte*>(stage), staged * 4, stream);
      dst += staged;
      staged = 0;
    };
    for (int64_t g = g0; g < g1;) {
      const int64_t t = g / rows_per_tile, r = g % rows_per_tile;
      const int64_t t0 = t * tile, count = std::min(tile, n - t0);
      const int64_t r_end = std::min((count + kRowLanes - 1) / kRowLanes, r + (g1 - g));
      if (!dst) dst = data + t0 + r * kRowLanes;
      first_row(start + step * static_cast<float>(t0), step, count, row);
      advance_rows(row, row_step, r);  // a range that starts inside a tile replays the rows before it
      for (int64_t i = r; i < r_end; ++i) {
        const int64_t m = std::min(kRowLanes, count - i * kRowLanes);
        if (staged + m > kStageRows * kRowLanes) flush();
        std::copy(row, row + m, stage + staged);
        staged += m;
        advance_rows(row, row_step, 1);
      }
      g += r_end - r;
    }
    flush();
    if (stream) stream_fence();
  });
}

void arange_i32(const Tensor& out, int64_t start, int64_t step) {
  produce_chunks(static_cast<std::byte*>(out.data()), out.numel(), 4, [&](int64_t first, int64_t count, std::byte* stage) {
    auto* values = reinterpret_cast<int32_t*>(stage);
    const int64_t base = start + first * step;
    for (int64_t j = 0; j < count; ++j) values[j] = static_cast<int32_t>(base + j * step);
    return stage;
  });
}

int64_t first_outside(const Tensor& index, int64_t bound) {
  return visit_dtype(index.dtype(), [&](auto tag) -> int64_t {
    using I = typename decltype(tag)::type;
    if constexpr (!std::is_integral_v<I> || std::is_same_v<I, bool>) {
      return -1;
    } else {
      const I* values = index.data_as<I>();
      const int64_t n = index.numel();
      // One unsigned compare catches negatives too (they convert to huge values).
      const auto outside = [bound](I v) { return static_cast<uint64_t>(v) >= static_cast<uint64_t>(bound); };
      bool any = false;
      for (int64_t i = 0; i < n; ++i) any |= outside(values[i]);
      if (!any) return -1;
      for (int64_t i = 0; i < n; ++i)
        if (outside(values[i])) return i;
      return -1;
    }
  });
}

void one_hot(const Tensor& index, const Tensor& out) {
  const int64_t classes = out.shape(out.ndim() - 1);
  visit_dtype(index.dtype(), [&](auto tag) {
    using I = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<I> && !std::is_same_v<I, bool>) {
      const I* values = index.data_as<I>();
      produce_chunks(static_cast<std::byte*>(out.data()), out.numel(), 8,
                     [&](int64_t first, int64_t count, std::byte* stage) {
                       auto* row = reinterpret_cast<int64_t*>(stage);
                       std::fill_n(row, count, int64_t(0));
                       for (int64_t p = first / classes; p * classes < first + count; ++p) {
                         const int64_t at = p * classes + static_cast<int64_t>(values[p]) - first;
                         if (at >= 0 && at < count) row[at] = 1;
                       }
                       return stage;
                     });
    }
  });
}

std::array<uint32_t, 4> philox4x32_10(std::array<uint32_t, 4> c, std::array<uint32_t, 2> key) {
  for (int r = 0; r < kRounds; ++r) {
    const uint64_t p0 = uint64_t(kMul0) * c[0], p1 = uint64_t(kMul1) * c[2];
    c = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kWeyl0;
    key[1] += kWeyl1;
  }
  return c;
}

void philox_words(const Stream& stream, int64_t first, int64_t n, uint32_t* words) {
  constexpr int64_t kGroup = 4 * kLanes;
  auto* blocks = &philox_blocks;
#if PTO_X86
  if (kernel_tuning().isa != Isa::Baseline) blocks = &philox_blocks_avx2;
#endif
  uint64_t block = static_cast<uint64_t>(first / 4);
  int64_t j = 0;
  for (; j + kGroup <= n; j += kGroup, block += kLanes) blocks(stream, block, words + j);
  if (j < n) {
    uint32_t rest[kGroup];
    blocks(stream, block, rest);
    std::copy(rest, rest + (n - j), words + j);
  }
}

void uniform(const Tensor& out, const Stream& stream) {
  const DType dt = out.dtype();
  produce_chunks(static_cast<std::byte*>(out.data()), out.numel(), static_cast<int64_t>(out.itemsize()),
                 [&](int64_t first, int64_t count, std::byte* stage) {
                   alignas(64) uint32_t words[kChunk];
                   philox_words(stream, first, count, words);
                   if (dt == DType::FP32) uniform_f32(words, reinterpret_cast<float*>(stage), count);
                   else if (dt == DType::FP16) uniform_f16(words, reinterpret_cast<fp16_t*>(stage), count);
                   else uniform_bf16(words, reinterpret_cast<bf16_t*>(stage), count);
                   return stage;
                 });
}

void box_muller(const float* uniforms, float* out, int64_t pairs) { box_muller_pairs(uniforms, out, pairs); }

void normal(const Tensor& out, const Stream& stream) {
  const DType dt = out.dtype();
  produce_chunks(static_cast<std::byte*>(out.data()), out.numel(), static_cast<int64_t>(out.itemsize()),
                 [&](int64_t first, int64_t count, std::byte* stage) {
                   // first is even (a chunk boundary): pairs never straddle two chunks.
                   const int64_t pairs = (count + 1) / 2;
                   alignas(64) uint32_t words[kChunk];
                   alignas(64) float uniforms[kChunk], values[kChunk];
                   philox_words(stream, first, 2 * pairs, words);
                   uniform_f32(words, uniforms, 2 * pairs);
                   float* result = dt == DType::FP32 ? reinterpret_cast<float*>(stage) : values;
                   box_muller_pairs(uniforms, result, pairs);
                   if (dt == DType::FP16) narrow_floats(values, reinterpret_cast<fp16_t*>(stage), count);
                   else if (dt == DType::BF16) narrow_floats(values, reinterpret_cast<bf16_t*>(stage), count);
                   return stage;
                 }, kMinComputedChunks);
}

}  // namespace pto::kernels::creation
