// Building CompileErrors that point at a place in a kernels file.
#pragma once

#include <string>

#include "lang/source.hpp"
#include "tack/error.hpp"

namespace tack {

// Throws a CompileError at `loc` in `file`. `kernel` names the kernel or function being compiled
// ("<module>" outside any), and `what` says which it is. `hint` says what to write instead.
[[noreturn]] void throw_compile_error(const SourceFile& file, const std::string& kernel,
                                      SourceLoc loc, const std::string& message,
                                      const std::string& hint = "", const char* what = "kernel");

}  // namespace tack
