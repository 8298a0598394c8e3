// libFuzzer target over the compiler's front half: source text is parsed and resolved (as a whole,
// and as Module::from_source loads it, function by function), every kernel is specialized for
// several argument signatures, for a target without workgroups (the CPU) and one with them (the
// GPUs), the IR is verified (and again after the debug mode's bounds checks), every generator runs:
// the LLVM CPU generator and the CUDA, HIP, OpenCL C, Level Zero and Metal printers, and the IR and
// its index-range proof go through a front-end record's bytes and back unchanged. Objects of the
// file's device classes are among the arguments, their attributes named after the `.name`s the text
// reads.
//
// Expected outcomes are a CompileError or TypeError (the language refuses the kernel) and the
// generators' documented refusals (f64 on Metal, atomics a target lacks). Anything else is a
// finding: an "internal error" (IR that the verifier or a generator rejects), another exception,
// or whatever the sanitizers catch (the fuzz build runs under ASan and UBSan).
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/c_family/c_generator.hpp"
#include "codegen/llvm/llvm_codegen.hpp"
#include "ir/index_ranges.hpp"
#include "ir/passes.hpp"
#include "ir/serialize.hpp"
#include "ir/verifier.hpp"
#include "lang/load.hpp"
#include "lang/parser.hpp"
#include "lang/resolve.hpp"
#include "sema/specialize.hpp"
#include "tack/error.hpp"

namespace {

using tack::DType;
using tack::sema::ArgType;

[[noreturn]] void finding(const char* where, const std::string& what) {
  std::fprintf(stderr, "fuzz finding in %s: %s\n", where, what.c_str());
  std::abort();
}

bool is_internal(const tack::Error& e) {
  return std::string_view(e.what()).find("internal error") != std::string_view::npos;
}

// The argument types tried for a kernel of `n` parameters: uniform signatures that fit the usual
// kernels (arrays of f32, f64, i32; arrays of vectors; scalars last), and one mixed from `seed`.
std::vector<std::vector<ArgType>> signatures(size_t n, uint64_t seed) {
  const ArgType kinds[] = {
      ArgType::array(DType::F32, 1),    ArgType::array(DType::F32, 2),
      ArgType::array(DType::F32, 2, 3), ArgType::array(DType::I32, 1),
      ArgType::array(DType::I64, 2),    ArgType::array(DType::U8, 1),
      ArgType::array(DType::F64, 1),    ArgType::array(DType::F32, 3),
      ArgType::scalar(DType::F32),      ArgType::scalar(DType::I32),
      ArgType::scalar(DType::I64),      ArgType::scalar(DType::Bool),
      ArgType::scalar(DType::F64),      ArgType::texture_of(2),
  };
  constexpr size_t kKinds = sizeof kinds / sizeof kinds[0];
  std::vector<std::vector<ArgType>> out;
  auto uniform = [&](ArgType array, ArgType scalar, size_t scalars) {
    std::vector<ArgType> s;
    for (size_t i = 0; i < n; ++i) s.push_back(i + scalars >= n ? scalar : array);
    out.push_back(std::move(s));
  };
  uniform(ArgType::array(DType::F32, 1), ArgType::scalar(DType::F32), 0);
  uniform(ArgType::array(DType::F32, 1), ArgType::scalar(DType::I32), 1);
  uniform(ArgType::array(DType::I32, 1), ArgType::scalar(DType::I32), 1);
  uniform(ArgType::array(DType::F64, 2), ArgType::scalar(DType::F64), 1);
  uniform(ArgType::array(DType::F32, 2, 3), ArgType::scalar(DType::F32), 0);
  std::vector<ArgType> mixed;
  for (size_t i = 0; i < n; ++i) {
    mixed.push_back(kinds[seed % kKinds]);
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  out.push_back(std::move(mixed));
  return out;
}

// The names the text reads as attributes (`.name`), the attributes of the objects tried: at most
// a few, skipping those of vectors and modules.
std::vector<std::string> attribute_names(const std::string& text) {
  std::set<std::string> names;
  for (size_t i = 0; i + 1 < text.size() && names.size() < 6; ++i) {
    if (text[i] != '.' ||
        !(std::isalpha(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '_'))
      continue;
    size_t end = i + 1;
    while (end < text.size() &&
           (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_'))
      ++end;
    std::string name = text.substr(i + 1, end - i - 1);
    if (name.size() > 1 && name != "shape" && name.rfind("__", 0) != 0) names.insert(name);
  }
  return {names.begin(), names.end()};
}

// An object of `cls` whose attributes are `names`, each of a kind chosen by `seed`: arrays,
// scalars, tuples, constants, values kernels cannot take, and (once) an object of the same class.
ArgType object_of(const tack::lang::DeviceClass* cls, const std::vector<std::string>& names,
                  uint64_t seed, int depth = 0) {
  using A = tack::sema::ObjectType::Attribute;
  auto t = std::make_shared<tack::sema::ObjectType>();
  t->cls = std::shared_ptr<const tack::lang::DeviceClass>(std::shared_ptr<void>(), cls);
  for (const std::string& name : names) {  // sorted, as the runtime sorts them
    if (cls->constants().count(name) || cls->other_attributes().count(name)) continue;
    A a;
    a.name = name;
    switch (seed % 9) {
      case 0:
        a.type = ArgType::array(DType::F32, 1);
        break;
      case 1:
        a.type = ArgType::array(DType::I32, 2);
        break;
      case 2:
        a.type = ArgType::scalar(DType::I32);
        break;
      case 3:
        a.type = ArgType::scalar(DType::F32);
        break;
      case 4:
        a.kind = A::Kind::Constant;
        a.constant.int_value = 4;
        a.constant.uint_value = 4;
        a.constant.float_value = 4;
        break;
      case 5:
        a.kind = A::Kind::Unsupported;
        a.what = "a list";
        break;
      case 7:
        a.kind = A::Kind::Tuple;
        a.elements = {ArgType::scalar(DType::I32), ArgType::scalar(DType::I64)};
        break;
      case 6:
        if (depth == 0) {
          a.type = object_of(cls, names, seed >> 3, depth + 1);
          break;
        }
        [[fallthrough]];
      default:
        a.type = ArgType::array(DType::F32, 2, 3);
        break;
    }
    t->attributes.push_back(std::move(a));
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  }
  return ArgType::of_object(t);
}

void generate(const tack::ir::Kernel& k, bool cpu) {
  if (cpu) {
    llvm::LLVMContext ctx;
    // The scalar chunk function, and the widened one (gangs of 8 and of 16 lanes) where the
    // kernel allows it.
    for (bool no_alias : {false, true})
      for (int bits : {0, 256, 512})
        tack::codegen::generate_llvm(
            k, ctx, {.symbol_prefix = "tack_fuzz", .no_alias = no_alias, .vector_bits = bits});
  }
  for (const char* target : {"cuda", "hip", "opencl", "level_zero", "metal"}) {
    try {
      tack::codegen::generate_source(k, target, "tack_fuzz");
    } catch (const tack::Error& e) {
      if (is_internal(e)) finding(target, e.what());
    }
  }
}

// A front-end record's round trip (runtime/front_end_record.hpp): the kernel and its index-range
// proof written, read back and written again give the same bytes (the writer writes every field,
// so equal bytes are an equal kernel).
void round_trip(const tack::ir::Kernel& k) {
  std::string bytes;
  tack::ir::ByteWriter w(bytes);
  tack::ir::write_kernel(w, k);
  tack::ir::write_proof(w, tack::ir::prove_index_ranges(k));
  tack::ir::ByteReader r(bytes);
  std::optional<tack::ir::Kernel> back = tack::ir::read_kernel(r);
  std::optional<tack::ir::IndexProof> proof;
  if (back) proof = tack::ir::read_proof(r, *back);
  if (!proof || !r.at_end()) finding("the record's reader", "refused what the writer wrote");
  std::string again;
  tack::ir::ByteWriter w2(again);
  tack::ir::write_kernel(w2, *back);
  tack::ir::write_proof(w2, *proof);
  if (again != bytes)
    finding("the record's round trip", "the kernel read back differs from the one written");
}

void compile(const tack::lang::ResolvedModule& module, const std::string& name,
             const std::vector<ArgType>& args, bool workgroups) {
  tack::sema::TargetRules rules;
  rules.supports_workgroups = workgroups;
  rules.backend_label = workgroups ? "a GPU" : "the CPU";
  tack::ir::Kernel k;
  try {
    k = tack::sema::specialize(module, name, args, rules);
  } catch (const tack::CompileError&) {
    return;
  } catch (const tack::TypeError&) {
    return;
  }
  generate(k, !workgroups);
  round_trip(k);
  tack::ir::insert_bounds_checks(k);
  tack::ir::verify(k, "bounds checks");
  generate(k, !workgroups);
  round_trip(k);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  auto file = std::make_shared<const tack::SourceFile>("fuzz.py", text);
  std::unique_ptr<tack::lang::ResolvedModule> module;
  try {
    module = std::make_unique<tack::lang::ResolvedModule>(tack::lang::parse_module(file));
  } catch (const tack::CompileError&) {
    return 0;
  } catch (const std::exception& e) {
    finding("parse and resolve", e.what());
  }
  // Module::from_source's lazy load (lang/load.hpp) finds the same kernels, each parsed alone from
  // the lines the scanner gives it; and finding a definition at any line never fails badly.
  try {
    auto lazy = tack::lang::load_module(file);
    if (lazy->kernel_names() != module->kernel_names() ||
        lazy->func_names() != module->func_names())
      finding("lazy load", "the kernels or functions differ from the whole parse's");
    std::vector<std::string> names = module->kernel_names();
    for (const std::string& f : module->func_names()) names.push_back(f);
    for (const std::string& name : names) {
      const tack::ast::FunctionDef* a = nullptr;
      try {
        a = lazy->function(name);
      } catch (const tack::CompileError&) {
        continue;  // a function the whole parse resolves lazily too fails alone, as it should
      }
      const tack::ast::FunctionDef* b = module->function(name);
      if (a && b && (a->loc.line != b->loc.line || a->loc.col != b->loc.col))
        finding("lazy load", name + " is at another line or column than in the whole parse");
    }
    for (int line = 1; line <= 64; ++line) tack::lang::statement_at(text, line);
  } catch (const std::exception& e) {
    finding("lazy load", e.what());
  }
  uint64_t seed = 14695981039346656037ULL;  // FNV-1a of the text: the mixed signature
  for (uint8_t c : text) seed = (seed ^ c) * 1099511628211ULL;
  std::vector<std::string> attributes = attribute_names(text);
  try {
    for (const std::string& name : module->kernel_names()) {
      size_t n = module->function(name)->params.size();
      std::vector<std::vector<ArgType>> tried = signatures(n, seed);
      // Objects of each device class: first, and in the positions the seed picks.
      for (const std::string& c : module->class_names()) {
        const tack::lang::DeviceClass* cls = module->device_class(c);
        for (uint64_t variant : {seed, seed >> 7}) {
          std::vector<ArgType> args = tried.front();
          for (size_t i = 0; i < n; ++i)
            if (i == 0 || (variant >> (i % 60)) & 1)
              args[i] = object_of(cls, attributes, variant + i);
          tried.push_back(std::move(args));
        }
      }
      for (const auto& args : tried)
        for (bool workgroups : {false, true}) compile(*module, name, args, workgroups);
    }
  } catch (const std::exception& e) {
    finding("specialize, verify or generate", e.what());
  }
  return 0;
}
