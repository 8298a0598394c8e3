// Semantic analysis's entry point: specialize(), and the argument-type text format.
#include <fmt/format.h>
#include <cctype>

#include "ir/passes.hpp"
#include "ir/verifier.hpp"
#include "sema/lowerer.hpp"
#include "tack/error.hpp"

namespace tack::sema {

std::vector<ArgType> parse_arg_types(const std::string& text) {
  std::vector<ArgType> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    // Commas inside brackets belong to the rank: f32[,] has rank 2.
    size_t bracket = text.find('[', pos);
    if (bracket != std::string::npos && bracket < end) end = text.find(']', bracket) + 1;
    if (end == std::string::npos || end == 0) end = text.size();
    std::string item = text.substr(pos, end - pos);
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item == "tex2d" || item == "tex3d" || item == "tex2d_exact" || item == "tex3d_exact") {
      out.push_back(ArgType::texture_of(item[3] - '0', item.size() > 5));
      pos = end;
      if (pos < text.size() && text[pos] == ',') ++pos;
      continue;
    }
    size_t b = item.find('[');
    auto dt = dtype_from_name(item.substr(0, b));
    if (!dt)
      throw TypeError(
          fmt::format("'{}' is not an argument type: write f32, i64[], f32[,], tex3d", item));
    if (b == std::string::npos) {
      out.push_back(ArgType::scalar(*dt));
    } else {
      int rank = 1;
      for (size_t i = b; i < item.size(); ++i) rank += item[i] == ',';
      // A digit before the closing bracket gives the last extent of an array of vectors.
      size_t close = item.find(']', b);
      int lanes = close != std::string::npos && close > b + 1 && std::isdigit(item[close - 1])
                      ? item[close - 1] - '0'
                      : 0;
      if (lanes && (rank < 2 || lanes < 2 || lanes > 4))
        throw TypeError(
            fmt::format("'{}': only the last of two or more dimensions may be given, "
                        "as 2, 3 or 4: write f32[,3]",
                        item));
      out.push_back(ArgType::array(*dt, rank, lanes));
    }
    pos = end;
    if (pos < text.size() && text[pos] == ',') ++pos;
  }
  return out;
}

std::string to_string(std::span<const ArgType> args, std::string_view separator) {
  std::string s;
  for (const ArgType& a : args) {
    if (!s.empty()) s += separator;
    if (a.texture) {
      s += fmt::format("tex{}d{}", a.rank, a.exact ? "_exact" : "");
      continue;
    }
    s += dtype_name(a.dtype);
    if (a.kind == ArgType::Kind::Array) {
      s += '[';
      s.append(a.rank - 1, ',');
      if (a.lanes) s += std::to_string(a.lanes);
      s += ']';
    }
  }
  return s;
}

ir::Kernel specialize(const lang::ResolvedModule& module, const std::string& kernel,
                      std::span<const ArgType> args, const TargetRules& target) {
  ir::Kernel k = Lowerer(module, module.kernel(kernel), args, target).run();
  ir::fold_constants(k);
  ir::verify(k, "constant folding");
  return k;
}

}  // namespace tack::sema
