// lld, used as a library: a kernel's object code to the shared object the disk cache stores.
// Part of the compiler library.
#pragma once

#include <string>

namespace tack::cpu {

// Links `object` (an ELF relocatable object of this machine) into a shared object, in memory: no
// file is written and no program is run. The C math and C library functions the code calls are
// bound to the libraries of this process (libm, libc), which the shared object names as its
// dependencies, so that it loads in any process; such an object has a writable segment for the
// addresses of those functions, read-only once they are bound (RELRO). One that calls nothing is
// one read-and-execute segment where the loader allows it (loader_maps_read_only_objects). Throws
// std::runtime_error with lld's message.
std::string link_shared_object(const std::string& object);

}  // namespace tack::cpu
