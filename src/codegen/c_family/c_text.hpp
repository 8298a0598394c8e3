// Small text helpers of the C-family printer's files (c_generator.cpp, c_prelude.cpp,
// c_atomics.cpp).
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "codegen/c_family/c_dialect.hpp"
#include "tack/dtype.hpp"

namespace tack::codegen {

// A dtype's name in helper names: tack_floordiv_i32.
inline std::string tag(DType t) {
  return std::string(dtype_name(t));
}

// "(x)" when the outer parentheses enclose the whole text, for conditions: `if (a < b)`.
inline std::string strip_parens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0 && i + 1 != s.size()) return s;
  }
  return s.substr(1, s.size() - 2);
}

inline std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? sep : "") + items[i];
  return out;
}

}  // namespace tack::codegen

// Spellings format as their text.
template <>
struct fmt::formatter<tack::codegen::Spelling> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const tack::codegen::Spelling& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.value, ctx);
  }
};
