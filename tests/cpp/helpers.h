// Builders and assertions shared by the C++ tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "ptocpu/ptocpu.h"

namespace test_helpers {

inline pto::Tensor arange_f32(const pto::Shape& shape, float start = 0.0f) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::FP32);
  std::iota(t.data_as<float>(), t.data_as<float>() + t.numel(), start);
  return t;
}

inline pto::Tensor arange_i32(const pto::Shape& shape) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::INT32);
  std::iota(t.data_as<int32_t>(), t.data_as<int32_t>() + t.numel(), 0);
  return t;
}

// An int64 index of the given shape (1-D of the values' length when no shape is given).
inline pto::Tensor index_i64(const pto::Shape& shape, std::initializer_list<int64_t> values) {
  pto::Tensor t = pto::Tensor::empty(shape, pto::DType::INT64);
  std::copy(values.begin(), values.end(), t.data_as<int64_t>());
  return t;
}
inline pto::Tensor index_i64(std::initializer_list<int64_t> values) {
  return index_i64({static_cast<int64_t>(values.size())}, values);
}

// Random bytes (BOOL elements kept to 0 / 1).
inline pto::Tensor random_bytes(const pto::Shape& shape, pto::DType dt, uint64_t seed) {
  pto::Tensor t = pto::Tensor::empty(shape, dt);
  std::mt19937_64 rng(seed);
  auto* p = static_cast<unsigned char*>(t.data());
  const size_t n = static_cast<size_t>(t.numel()) * t.itemsize();
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(rng());
  if (dt == pto::DType::BOOL)
    for (size_t i = 0; i < n; ++i) p[i] &= 1;
  return t;
}

// Random int32 / int64 index values in [0, bound).
inline pto::Tensor random_index(const pto::Shape& shape, pto::DType dt, int64_t bound, uint64_t seed) {
  pto::Tensor t = pto::Tensor::empty(shape, dt);
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int64_t v = static_cast<int64_t>(rng() % static_cast<uint64_t>(bound));
    if (dt == pto::DType::INT64) t.data_as<int64_t>()[i] = v;
    else t.data_as<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return t;
}

inline std::vector<float> values_f32(const pto::Tensor& t) {
  const pto::Tensor c = t.contiguous();
  return {c.data_as<float>(), c.data_as<float>() + c.numel()};
}

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The message of the E that f throws, or a text saying what happened instead.
template <class E>
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

// Runs f, expects an E whose message contains `text` and each of `parts`.
template <class E, class F>
void expect_error(F&& f, const std::string& text, std::initializer_list<std::string> parts = {}) {
  const std::string msg = message_of<E>(std::forward<F>(f));
  EXPECT_TRUE(contains(msg, text)) << "'" << text << "' not in: " << msg;
  for (const std::string& p : parts) EXPECT_TRUE(contains(msg, p)) << "'" << p << "' not in: " << msg;
}

}  // namespace test_helpers
