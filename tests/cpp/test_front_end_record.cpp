// Front-end records (runtime/front_end_record.hpp): the IR read back is the IR written, a damaged
// record is never used, and a record serves only the same text, argument types, target rules,
// debug mode and host answers. (The whole suite checks records end to end too: tack_tests_scalar
// runs after tack_tests on one cache directory, so its kernels come from the first run's records.)
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>

#include "codegen/c_family/c_generator.hpp"
#include "ir/passes.hpp"
#include "ir/printer.hpp"
#include "ir/serialize.hpp"
#include "ir/verifier.hpp"
#include "lang/load.hpp"
#include "runtime/cache_file.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/front_end_record.hpp"
#include "sema/specialize.hpp"
#include "test_support.hpp"

namespace tack {
namespace {

namespace fs = std::filesystem;
using sema::ArgType;

const ArgType kF32s = ArgType::array(DType::F32, 1);
const ArgType kI32s = ArgType::array(DType::I32, 1);

// What a kernel is made of: a device function called twice (two copies of its locals, one name),
// loops with break and continue, a local array, atomics, math, casts, a print, a reduction.
constexpr const char* kEverything = R"(import math
import tack

LIMIT = tack.constant(7, dtype=tack.i32)

@tack.func
def clamp(v, lo, hi):
    if v < lo:
        return lo
    return min(v, hi)

@tack.kernel
def everything(x, counts, out, scale) -> tack.f32:
    total = 0.0
    for i in range(x.shape[0]):
        scratch = tack.local_array(tack.f32, 4)
        for j in range(4):
            scratch[j] = x[i] * j
        k = 0
        while k < LIMIT:
            k += 1
            if k == 3:
                continue
            if k > 5:
                break
        v = clamp(scratch[3], -1.0, 1.0) + clamp(math.sqrt(abs(x[i])), 0.0, 2.0)
        tack.atomic_add(counts, int(v * scale) % counts.shape[0], 1)
        out[i] = v if k > 2 else -v
        if i == 0:
            print("first", v, k)
        total += v
    return total
)";

// The shared test kernels with shared memory, barriers and block collectives.
std::string workgroups_file() {
  std::ifstream in(test::kernels_dir() + "/workgroups.py");
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

ir::Kernel specialized(const std::string& text, const std::string& kernel,
                       std::vector<ArgType> types, const sema::TargetRules& rules = {}) {
  auto module = lang::load_module(std::make_shared<const SourceFile>("record.py", text));
  return sema::specialize(*module, kernel, types, rules);
}

// The kernel's bytes and its proof's, as a record holds them.
std::string bytes_of(const ir::Kernel& k) {
  std::string bytes;
  ir::ByteWriter w(bytes);
  ir::write_kernel(w, k);
  ir::write_proof(w, ir::prove_index_ranges(k));
  return bytes;
}

// Reads what bytes_of wrote; nullopt where either part is refused.
std::optional<ir::Kernel> read_back(std::string_view bytes) {
  ir::ByteReader r(bytes);
  std::optional<ir::Kernel> k = ir::read_kernel(r);
  if (!k || !ir::read_proof(r, *k) || !r.at_end()) return std::nullopt;
  return k;
}

void expect_same(const ir::Kernel& a, const ir::Kernel& b) {
  EXPECT_EQ(ir::print(a, {.locations = true}), ir::print(b, {.locations = true}));
  for (const char* target : {"opencl", "cuda"})
    EXPECT_EQ(codegen::generate_source(a, target, a.name),
              codegen::generate_source(b, target, b.name))
        << target;
  // The bytes identify everything printing might leave out (which of two locals of one name), and
  // the proof read back is the one written (bytes_of proves b again: the same proof).
  const std::string bytes = bytes_of(a);
  EXPECT_EQ(bytes, bytes_of(b));
  ir::ByteReader r(bytes);
  std::optional<ir::Kernel> k = ir::read_kernel(r);
  ASSERT_TRUE(k);
  std::optional<ir::IndexProof> proof = ir::read_proof(r, *k);
  ASSERT_TRUE(proof);
  std::string written;
  ir::ByteWriter w(written);
  ir::write_proof(w, *proof);
  EXPECT_TRUE(bytes.ends_with(written));
}

ir::Kernel round_trip(const ir::Kernel& k) {
  std::optional<ir::Kernel> back = read_back(bytes_of(k));
  EXPECT_TRUE(back.has_value());
  if (!back) return {};
  ir::verify(*back, "the round trip");
  return std::move(*back);
}

TEST(FrontEndRecord, TheIrReadBackIsTheIrWritten) {
  const sema::TargetRules gpu{"OpenCL", true};
  ir::Kernel everything =
      specialized(kEverything, "everything", {kF32s, kI32s, kF32s, ArgType::scalar(DType::F32)});
  expect_same(everything, round_trip(everything));
  const std::string workgroups = workgroups_file();
  ir::Kernel tiles = specialized(workgroups, "reverse_tiles", {kF32s, kF32s}, gpu);
  expect_same(tiles, round_trip(tiles));
  ir::Kernel blocks =
      specialized(workgroups, "block_reductions", {kF32s, kF32s, kF32s, kF32s}, gpu);
  expect_same(blocks, round_trip(blocks));
  // Debug mode's index checks, and every location, survive too.
  ir::insert_bounds_checks(everything);
  expect_same(everything, round_trip(everything));
}

// Inlining gives several locals one name; the code's key (printed with local ids) tells apart two
// kernels that differ only in which of them an expression reads, which names alone do not.
TEST(FrontEndRecord, TheCodesKeyTellsSameNamedLocalsApart) {
  ir::Kernel k =
      specialized(kEverything, "everything", {kF32s, kI32s, kF32s, ArgType::scalar(DType::F32)});
  // A read of a local, and another local of the same name and type.
  ir::Expr* read = nullptr;
  int other = -1;
  std::function<void(ir::Expr&)> visit = [&](ir::Expr& e) {
    for (auto& o : e.operands) visit(*o);
    if (read || e.op != ir::Op::Local) return;
    for (size_t i = 0; i < k.locals.size(); ++i)
      if (static_cast<int>(i) != e.index && k.locals[i].name == k.locals[e.index].name &&
          k.locals[i].type == k.locals[e.index].type) {
        read = &e;
        other = static_cast<int>(i);
        return;
      }
  };
  std::function<void(ir::Block&)> walk = [&](ir::Block& b) {
    for (auto& s : b) {
      for (ir::ExprPtr* e : {&s->value, &s->cond, &s->start, &s->stop, &s->step})
        if (*e) visit(**e);
      walk(s->body);
      walk(s->orelse);
    }
  };
  walk(k.body);
  ASSERT_NE(read, nullptr) << "the kernel inlines clamp twice: two locals of each name";
  const std::string names = ir::print(k), key = ir::print(k, {.local_ids = true});
  read->index = other;
  EXPECT_EQ(ir::print(k), names);
  EXPECT_NE(ir::print(k, {.local_ids = true}), key);
}

TEST(FrontEndRecord, DamagedBytesNeverReadAsAKernel) {
  const std::string bytes = bytes_of(
      specialized(kEverything, "everything", {kF32s, kI32s, kF32s, ArgType::scalar(DType::F32)}));
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(read_back(std::string_view(bytes).substr(0, n)).has_value()) << "cut at " << n;
  // Any byte changed: refused by the reader or the verifier, or a valid kernel; never a crash.
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string damaged = bytes;
    damaged[rng() % damaged.size()] ^= static_cast<char>(1 + rng() % 255);
    if (std::optional<ir::Kernel> k = read_back(damaged)) {
      try {
        ir::verify(*k, "a damaged record");
      } catch (const Error&) {
      }
    }
  }
}

// In a process, through the disk cache: two modules of one text, the second's kernel specialized
// from the first's record; another text, other types or debug mode specialize anew.
class FrontEndRecordCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cache_enabled()) GTEST_SKIP() << "the disk cache is off: " << cache_disabled_reason();
  }
  static uint64_t records() { return cache_stats().front_end_records; }
  static uint64_t runs() { return cache_stats().front_end_runs; }
};

std::string unique_kernel(int constant) {
  return fmt::format(
      "import tack\n@tack.kernel\ndef add_c(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] + {}\n",
      constant);
}

TEST_F(FrontEndRecordCache, ASecondModuleOfTheSameTextReadsTheRecord) {
  const int c = static_cast<int>(std::random_device{}() % 1000000) + 11;
  Array x = arange(16, DType::I32), out = empty({16}, DType::I32);
  const uint64_t runs0 = runs(), records0 = records();
  Module::from_source(unique_kernel(c)).kernel("add_c")(x, out);
  EXPECT_EQ(runs() - runs0, 1u);
  EXPECT_EQ(records() - records0, 0u);
  out = zeros({16}, DType::I32);
  Module::from_source(unique_kernel(c)).kernel("add_c")(x, out);
  EXPECT_EQ(runs() - runs0, 1u) << "the same text, types and rules: from the record";
  EXPECT_EQ(records() - records0, 1u);
  auto got = out.to_vector<int32_t>();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], i + c);

  // Other types, another text, debug mode: the front end runs.
  Array xf = arange(16, DType::I64), outf = empty({16}, DType::I64);
  Module::from_source(unique_kernel(c)).kernel("add_c")(xf, outf);
  Module::from_source(unique_kernel(c + 1)).kernel("add_c")(x, out);
  set_debug(true);
  Module::from_source(unique_kernel(c)).kernel("add_c")(x, out);
  set_debug(false);
  EXPECT_EQ(runs() - runs0, 4u);
  EXPECT_EQ(records() - records0, 1u);
  got = out.to_vector<int32_t>();
  for (int i = 0; i < 16; ++i) EXPECT_EQ(got[i], i + c);
}

// A kernel served by its record still has its launches' index checks.
TEST_F(FrontEndRecordCache, ARecordKeepsTheIndexChecks) {
  const std::string text = fmt::format(
      "import tack\n@tack.kernel\ndef shifted(x, out):\n    for i in range(out.shape[0]):\n"
      "        out[i] = x[i + {}]\n",
      static_cast<int>(std::random_device{}() % 1000000) + 1);
  const uint64_t records0 = records();
  for (int process = 0; process < 2; ++process) {
    Array x = zeros({8}, DType::I32), out = zeros({8}, DType::I32);
    EXPECT_THROW(Module::from_source(text).kernel("shifted")(x, out), IndexError);
  }
  EXPECT_EQ(records() - records0, 1u);
}

// A function handed over with a resolver (as Python's are): the record holds the answers, and a
// host that answers differently now gets a new specialization, with its own constant.
TEST_F(FrontEndRecordCache, AnAnswerThatChangedIsNotTakenFromTheRecord) {
  const int salt = static_cast<int>(std::random_device{}() % 1000000);
  const std::string source = fmt::format(
      "@tack.kernel\ndef scaled(x, out):\n    for i in range(x.shape[0]):\n"
      "        out[i] = x[i] * SCALE + {}\n",
      salt);
  auto run = [&](int64_t scale) {
    NameResolver resolve = [scale](const std::string& name) {
      ExternalName n;
      if (name == "SCALE") {
        n.kind = ExternalName::Kind::Constant;
        n.int_value = scale;
      } else if (name == "tack") {
        n.kind = ExternalName::Kind::TackModule;
      }
      return n;
    };
    Array x = arange(8, DType::I32), out = zeros({8}, DType::I32);
    Module::from_function(source, "host.py", 3, resolve).kernel("scaled")(x, out);
    return out.to_vector<int32_t>();
  };
  const uint64_t runs0 = runs(), records0 = records();
  EXPECT_EQ(run(2)[5], 5 * 2 + salt);
  EXPECT_EQ(run(3)[5], 5 * 3 + salt) << "SCALE is 3 now: not the record made with 2";
  EXPECT_EQ(run(3)[5], 5 * 3 + salt);
  EXPECT_EQ(runs() - runs0, 2u);
  EXPECT_EQ(records() - records0, 1u);
}

// A record whose bytes were damaged behind the checksum (as a bug in writing them would): the
// front end runs instead, and the answer is right.
TEST_F(FrontEndRecordCache, AnUnreadableRecordIsIgnored) {
  const int c = static_cast<int>(std::random_device{}() % 1000000) + 11;
  const std::string text = unique_kernel(c);
  Array x = arange(8, DType::I32), out = zeros({8}, DType::I32);
  Module::from_source(text).kernel("add_c")(x, out);
  // The record just made: the one whose key holds this text.
  DiskCache cache(cache_dir());
  int damaged = 0;
  for (const auto& e : fs::directory_iterator(cache_dir())) {
    if (!e.path().filename().string().starts_with(detail::kFrontEndRecordKind)) continue;
    std::ifstream in(e.path(), std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), {});
    cache_file::ParsedEntry entry;
    if (cache_file::parse_entry(bytes, &entry) != nullptr ||
        entry.key.find(text) == std::string_view::npos)
      continue;
    cache.store(detail::kFrontEndRecordKind, std::string(entry.key),
                std::string("\x01\x00\x00\x00garbage", 11));
    ++damaged;
  }
  ASSERT_EQ(damaged, 1);
  const uint64_t runs0 = runs();
  out = zeros({8}, DType::I32);
  Module::from_source(text).kernel("add_c")(x, out);
  EXPECT_EQ(runs() - runs0, 1u);
  EXPECT_EQ(out.to_vector<int32_t>()[7], 7 + c);
}

}  // namespace
}  // namespace tack
