// The machine the CPU backend compiles for, known without starting LLVM: part of every CPU cache
// key, so a process that finds its kernels in the disk cache never loads the compiler.
#pragma once

#include <string>

#include "backends/cpu/cpu_compiler.hpp"

namespace tack::cpu {

// What decides LLVM's answer about this CPU: the cpuid words that give its family, model and
// features, and the XCR0 register, as text (host_target.cpp says which, and why not the vendor).
// CPUs with equal signatures allow the same instructions, and get the same answer from LLVM unless
// their vendors differ (then only the CPU's name may). From what the C library read at start-up
// where it says (glibc 2.36 or later), executing no cpuid instruction but for AVX10's leaf 0x24,
// since each one traps in a virtual machine (12-29 us a process on the KVM guest measured);
// `from_c_library` false executes one for every leaf. Empty on a CPU that is not x86-64, where
// there is no such cheap reading.
std::string cpu_signature(bool from_c_library = true);

// Whether the C library is glibc of at least this version (false for another C library).
bool glibc_at_least(int major, int minor);

// Whether this process's dynamic loader can map a kernel object that it has nothing to write in:
// one whose dynamic section lies in a read-only segment. glibc reads such a section from 2.35 on;
// older ones adjust its addresses in place and fault. The linker then makes a kernel without
// outside calls one read-and-execute segment (shared_object_linker.hpp); part of the cache target,
// since a machine with an older glibc may share the cache directory.
inline bool loader_maps_read_only_objects() {
  return glibc_at_least(2, 35);
}

// The target in LLVM's terms (Compiler::host), once per process: from the disk cache's record of
// LLVM's answer for this CPU's signature, else asked of the compiler library and recorded for the
// next process. Throws DeviceError when it must be asked and the compiler library is missing.
const HostTarget& host_target();

// The disk cache's name and key for the record of LLVM's answer for `signature`.
inline constexpr const char* kHostRecordBackend = "cpu_host";
std::string host_record_key(const std::string& signature);

}  // namespace tack::cpu
