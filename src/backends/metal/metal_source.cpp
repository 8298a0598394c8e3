// What is built of the Metal backend on every platform: its artifact and its declared info.
#include "backends/metal/metal_source.hpp"

#include <fmt/format.h>

#include "backends/gpu/artifact.hpp"
#include "backends/metal/metal_backend.hpp"
#include "codegen/c_family/c_generator.hpp"
#include "tack/error.hpp"

namespace tack::metal {

std::string compile_artifact(const ir::Kernel& k, const detail::CompileOptions& o) {
  // f64 and what the MSL generator does not support yet: refused before compiling.
  return backends::generated_source(k, "metal", "Metal", o.symbol_prefix);
}

BackendInfo declared_info() {
  return detail::declared("metal", "Metal", {"metal"});
}

bool is_msl_source(const std::string& artifact) {
  return artifact.find("#include <metal_stdlib>") != std::string::npos &&
         artifact.find("kernel void") != std::string::npos &&
         artifact.find('\0') == std::string::npos;
}

}  // namespace tack::metal
