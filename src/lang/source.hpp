// Source text and positions in it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tack {

// A 1-based line and column. Column counts characters from the start of the line.
struct SourceLoc {
  int line = 0;
  int col = 0;
};

class SourceFile {
 public:
  // `column_offset` is the indentation removed from a definition taken out of a larger file
  // (Module::from_function), added back when positions are reported.
  SourceFile(std::string name, std::string text, int column_offset = 0);

  const std::string& name() const { return name_; }
  int column_offset() const { return column_offset_; }
  const std::string& text() const { return text_; }
  // The text of a 1-based line without its newline; empty when out of range.
  std::string_view line(int number) const;

 private:
  std::string name_;
  std::string text_;
  int column_offset_ = 0;
  std::vector<size_t> line_starts_;
};

}  // namespace tack
