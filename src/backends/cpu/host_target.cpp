#include "backends/cpu/host_target.hpp"

#include <charconv>
#include <mutex>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "runtime/disk_cache.hpp"
#include "runtime/hex.hpp"
#include "runtime/source_id.hpp"
#include "tack/runtime.hpp"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#endif
#if defined(__GLIBC__)
#include <gnu/libc-version.h>
#endif

namespace tack::cpu {
namespace {

#if defined(__x86_64__) && defined(__linux__)

struct Leaf {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

// glibc's record of the cpuid leaves it read at start-up (<sys/platform/x86.h>): the leaf's
// registers, then the features it found usable.
struct GlibcLeaf {
  unsigned cpuid[4];
  unsigned active[4];
};
using GlibcLeafFn = const void* (*)(unsigned index);
// Its indices (CPUID_INDEX_*), all present from glibc 2.36 on.
enum GlibcIndex : unsigned {
  kIndex1 = 0,
  kIndex7 = 1,
  kIndex80000001 = 2,
  kIndexD1 = 3,
  kIndex80000008 = 5,
  kIndex7_1 = 6,
  kIndex19 = 7,
  kIndex14 = 8,
  kNoIndex = ~0u,
};

}  // namespace
}  // namespace tack::cpu

// Declared weak, so that libtack also loads with a C library that lacks it (null there); bound
// when libtack is loaded, not looked up by name (dlsym) at the first kernel call.
extern "C" const void* __x86_get_cpuid_feature_leaf(unsigned index) __attribute__((weak));

namespace tack::cpu {
namespace {

GlibcLeafFn glibc_leaves() {
  return glibc_at_least(2, 36) ? __x86_get_cpuid_feature_leaf : nullptr;
}

// The words that decide what LLVM's host detection answers (llvm::sys::getHostCPUName and
// getHostCPUFeatures): family, model and features (1), the feature leaves 7, 7.1, 0xd.1, 0x14,
// 0x19, 0x24 (AVX10) and 0x80000001, 0x80000008, and XCR0, the state the OS saves. Not leaf 1's
// EBX, which holds the APIC ID of whichever core ran the read. Not the vendor (leaf 0) either,
// which glibc does not record: reading it takes a cpuid instruction, which traps in a virtual
// machine (12-29 us a process on the KVM guest measured), and it only picks which of LLVM's tables
// names the CPU, which sets how code is scheduled. The instructions LLVM may use follow from the
// feature words alone (the compiler library passes every feature on or off explicitly,
// cpu_compiler.cpp), so two CPUs that differed in nothing else would share code correct on both.
// Leaf 0x24, which glibc does not record either, does change the features: it is read on the CPUs
// that have it, with one trap.
std::string x86_signature(bool use_glibc) {
  const GlibcLeafFn glibc = use_glibc ? glibc_leaves() : nullptr;
  unsigned max_basic = 0, max_extended = 0, b = 0, c = 0, d = 0;
  if (!glibc) {
    __cpuid(0, max_basic, b, c, d);
    __cpuid(0x80000000, max_extended, b, c, d);
  }
  // A leaf the CPU does not have reads as zeros, as glibc leaves it.
  const auto leaf = [&](unsigned n, unsigned sub, GlibcIndex index) {
    Leaf l;
    if (glibc && index != kNoIndex) {
      const auto* g = static_cast<const GlibcLeaf*>(glibc(index));
      return Leaf{g->cpuid[0], g->cpuid[1], g->cpuid[2], g->cpuid[3]};
    }
    if (glibc || n <= (n >= 0x80000000 ? max_extended : max_basic))
      __cpuid_count(n, sub, l.eax, l.ebx, l.ecx, l.edx);
    return l;
  };
  const Leaf l1 = leaf(1, 0, kIndex1), l7 = leaf(7, 0, kIndex7), l7_1 = leaf(7, 1, kIndex7_1);
  const Leaf ld_1 = leaf(0xd, 1, kIndexD1), l14 = leaf(0x14, 0, kIndex14);
  const Leaf l19 = leaf(0x19, 0, kIndex19);
  const Leaf e1 = leaf(0x80000001, 0, kIndex80000001), e8 = leaf(0x80000008, 0, kIndex80000008);
  const bool avx10 = (l7_1.edx >> 19) & 1;
  // A CPU with AVX10 has leaf 0x24 (Intel's AVX10 specification), which glibc does not record.
  const Leaf l24 = avx10 ? leaf(0x24, 0, kNoIndex) : Leaf{};
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  if ((l1.ecx >> 27) & 1)  // OSXSAVE: the OS set XCR0 up
    __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  // "x86 1:eax.ecx.edx 7:... xcr0:hilo", each word as eight hex digits; appended rather than
  // formatted, since every new process builds it at its first call (runtime/hex.hpp).
  std::string s = "x86";
  const auto words = [&s](const char* label, std::initializer_list<unsigned> values) {
    s += label;
    const char* separator = "";
    for (unsigned v : values) {
      s += separator;
      detail::append_hex(s, v, 8);
      separator = ".";
    }
  };
  words(" 1:", {l1.eax, l1.ecx, l1.edx});
  words(" 7:", {l7.eax, l7.ebx, l7.ecx, l7.edx});
  words(" 7.1:", {l7_1.eax, l7_1.ebx, l7_1.ecx, l7_1.edx});
  words(" d.1:", {ld_1.eax});
  words(" 14:", {l14.ebx});
  words(" 19:", {l19.ebx});
  words(" 24:", {l24.ebx});
  words(" e1:", {e1.ecx, e1.edx});
  words(" e8:", {e8.ebx});
  s += " xcr0:";
  detail::append_hex(s, xcr0_hi, 8);
  detail::append_hex(s, xcr0_lo, 8);
  return s;
}

#endif

// "triple\ncpu\nfeatures", the record's artifact.
std::string record_text(const HostTarget& t) {
  return fmt::format("{}\n{}\n{}", t.triple, t.cpu, t.features);
}

std::optional<HostTarget> parse_record(const std::string& text) {
  const size_t a = text.find('\n'), b = a == std::string::npos ? a : text.find('\n', a + 1);
  if (b == std::string::npos || a == 0 || b == a + 1) return std::nullopt;
  return HostTarget{text.substr(0, a), text.substr(a + 1, b - a - 1), text.substr(b + 1)};
}

HostTarget find_host_target() {
  const std::string signature = cpu_signature(true);
  DiskCache& cache = DiskCache::global();
  const std::string key = signature.empty() ? "" : host_record_key(signature);
  if (!key.empty()) {
    if (auto text = cache.load(kHostRecordBackend, key, /*counted=*/false))
      if (auto t = parse_record(*text)) return *t;
  }
  HostTarget t = compiler().host();
  if (!key.empty()) cache.store(kHostRecordBackend, key, record_text(t), /*counted=*/false);
  return t;
}

}  // namespace

bool glibc_at_least(int major, int minor) {
#if defined(__GLIBC__)
  // "2.36": compared by hand, since sscanf's first call costs more than the rest of the reading.
  const std::string_view version = gnu_get_libc_version();
  int has_major = 0, has_minor = 0;
  const char* end = version.data() + version.size();
  auto [dot, ok] = std::from_chars(version.data(), end, has_major);
  if (ok != std::errc() || dot == end || *dot != '.' ||
      std::from_chars(dot + 1, end, has_minor).ec != std::errc())
    return false;
  return has_major > major || (has_major == major && has_minor >= minor);
#else
  (void)major;
  (void)minor;
  return false;
#endif
}

std::string cpu_signature(bool from_c_library) {
#if defined(__x86_64__) && defined(__linux__)
  return x86_signature(from_c_library);
#else
  return "";
#endif
}

std::string host_record_key(const std::string& signature) {
  return fmt::format("tack {} sources {}\ncpu host\nllvm {}\nsignature {}", version(),
                     detail::source_id(), TACK_LLVM_VERSION, signature);
}

const HostTarget& host_target() {
  static std::once_flag once;
  static const HostTarget* target = nullptr;  // leaked, like the backend
  // A throw (no compiler library) leaves the flag unset: the next variant asks again.
  std::call_once(once, [] { target = new HostTarget(find_host_target()); });
  return *target;
}

}  // namespace tack::cpu
