// An op's doc assembled from parts: the forms of one op (in place / out of place, copy / view)
// share their paragraphs once. OpDef::doc is a const char*, so the text is kept for the
// program's life (the table is built once).
#pragma once
#include <deque>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>

namespace pto {

inline const char* joined_doc(std::initializer_list<std::string_view> parts) {
  static std::mutex lock;
  static std::deque<std::string> kept;  // a deque: earlier texts never move
  std::string text;
  for (const std::string_view part : parts) text += part;
  const std::lock_guard<std::mutex> guard(lock);
  return kept.emplace_back(std::move(text)).c_str();
}

}  // namespace pto
