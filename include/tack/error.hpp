// The exceptions Tack throws. Each category maps to one Python exception type.
#pragma once

#include <stdexcept>
#include <string>

namespace tack {

// The base of every error Tack raises.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A kernel the language rejects. Carries where: the file, the kernel (or the device function the
// error is in), the 1-based line and column. what() is the full report: position, message, the
// source line with a caret, and the fix.
class CompileError : public Error {
 public:
  CompileError(std::string file, std::string kernel, int line, int col, std::string message,
               std::string hint, std::string source_line, const char* what = "kernel");

  const std::string& file() const { return file_; }
  const std::string& kernel() const { return kernel_; }
  int line() const { return line_; }
  int col() const { return col_; }
  // The message alone, without position or hint.
  const std::string& message() const { return message_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string file_, kernel_;
  int line_, col_;
  std::string message_, hint_;
};

// Arguments that do not match what the kernel or function needs (count, kind, dtype, rank, device).
class TypeError : public Error {
 public:
  using Error::Error;
};

// A call that breaks the launch contract (read-only output, an iteration count out of range...).
class ValueError : public Error {
 public:
  using Error::Error;
};

// A failure of a device, its runtime or the cache: missing library, failed allocation or launch.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// An out-of-bounds index caught in debug mode. The access itself was not performed.
class IndexError : public Error {
 public:
  using Error::Error;
};

}  // namespace tack
