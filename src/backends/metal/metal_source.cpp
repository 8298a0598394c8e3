#include "backends/metal/metal_source.hpp"

#include <fmt/format.h>

#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::metal {

std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& o) {
  try {
    return codegen::generate_source(k, "metal", o.symbol_prefix);
  } catch (const CompileError&) {
    throw;
  } catch (const Error& e) {
    // f64 and what the MSL generator does not support yet: refused before compiling.
    throw DeviceError(fmt::format("the Metal backend cannot run this kernel: {}", e.what()));
  }
}

bool is_msl_source(const std::string& artifact) {
  return artifact.find("#include <metal_stdlib>") != std::string::npos &&
         artifact.find("kernel void") != std::string::npos &&
         artifact.find('\0') == std::string::npos;
}

}  // namespace tack::metal
