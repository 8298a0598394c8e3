// Loading a GPU vendor's library at run time (dlopen): each backend's API table (cl_api, cu_api,
// hip_api, ze_api) binds its functions with these. A library is never closed: modules and buffers
// may outlive any owner that could close it.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <string>

namespace tack::backends {

// The library to open: the environment's `variable` when set (the user's choice), else `name`.
inline std::string library_path(const char* variable, const char* name) {
  const char* chosen = std::getenv(variable);
  return chosen && *chosen ? chosen : name;
}

// Resolves `symbol` of `lib` into `fn`; a symbol the library lacks is appended to the
// comma-separated `missing`.
template <typename Fn>
void bind_symbol(void* lib, Fn& fn, const std::string& symbol, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(lib, symbol.c_str()));
  if (!fn) missing += (missing.empty() ? "" : ", ") + symbol;
}

}  // namespace tack::backends
