#include "lang/source.hpp"

namespace tack {

SourceFile::SourceFile(std::string name, std::string text, int column_offset)
    : name_(std::move(name)), text_(std::move(text)), column_offset_(column_offset) {
  line_starts_.push_back(0);
  // find() is memchr, many bytes a step: a kernels file is read at a new process's first call.
  for (size_t i = text_.find('\n'); i != std::string::npos; i = text_.find('\n', i + 1))
    line_starts_.push_back(i + 1);
}

std::string_view SourceFile::line(int number) const {
  if (number < 1 || static_cast<size_t>(number) > line_starts_.size()) return {};
  size_t begin = line_starts_[number - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

}  // namespace tack
