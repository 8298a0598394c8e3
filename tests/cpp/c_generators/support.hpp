// What the C-family generator tests share (tests/cpp/c_generators): files and processes, every
// kernel of tests/kernels and examples/kernels.py with the argument types it is specialized for,
// and each target's real offline compiler, defined in that target's test file. A test whose
// compiler is not installed is skipped with the reason.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <initializer_list>
#include <ostream>
#include <string>
#include <vector>

#include "ir/ir.hpp"

namespace tack::cgen_test {

namespace fs = std::filesystem;

// ---- files and processes ----

std::string read_text(const fs::path& p);
void write_text(const fs::path& p, const std::string& text);
// A directory for this process's files, removed at exit.
const fs::path& scratch();

struct Output {
  int status = -1;
  std::string text;
};
// Runs a shell command, its stderr with its stdout.
Output run(const std::string& command);
std::string quote(const std::string& s);
// The first of `names` found on PATH, or "".
std::string find_program(std::initializer_list<const char*> names);
// Source with line numbers, for failure messages.
std::string numbered(const std::string& source);

// ---- the kernels ----

struct Variant {
  const char* file;  // in tests/kernels or examples
  const char* kernel;
  const char* args;
  bool debug = false;
  std::string name;  // for the test's name
};
void PrintTo(const Variant& v, std::ostream* os);

// Every kernel of the suites, specialized for several argument types, and in debug mode.
std::vector<Variant> variants();
ir::Kernel specialize(const Variant& v);
// The source of kernel `k` of `src` for `target`.
std::string source_of(const char* src, const std::string& args, const std::string& target,
                      bool debug = false);
extern const char* const kSaxpy;

// Every variant compiled by every target's compiler (Kernels/Compile.<Compiler>/<variant>).
class Compile : public ::testing::TestWithParam<Variant> {};

// ---- the compilers, one per target file ----

void compile_cuda(const std::string& source, const std::string& name);          // NVRTC, ptxas
void compile_hip(const std::string& source, const std::string& name);           // hipRTC
void compile_opencl_ocloc(const std::string& source, const std::string& name);  // ocloc
void compile_opencl_clang(const std::string& source, const std::string& name);  // clang -x cl
void compile_metal(const std::string& source, const std::string& name);         // the MSL shim

}  // namespace tack::cgen_test
