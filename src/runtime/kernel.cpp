// Kernel calls: argument checks, specialization, the variant caches, launch.
#include "tack/kernel.hpp"

#include <fmt/format.h>
#include <xxhash.h>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "codegen/c_family/c_generator.hpp"
#include "codegen/debug_record.hpp"
#include "ir/passes.hpp"
#include "ir/printer.hpp"
#include "ir/verifier.hpp"
#include "lang/resolve.hpp"
#include "runtime/arguments.hpp"
#include "runtime/compile_once.hpp"
#include "runtime/front_end_record.hpp"
#include "runtime/hex.hpp"
#include "runtime/internals.hpp"
#include "runtime/launch_bounds.hpp"
#include "runtime/log.hpp"
#include "runtime/module_state.hpp"
#include "runtime/queue.hpp"
#include "runtime/source_id.hpp"
#include "runtime/stats.hpp"
#include "sema/specialize.hpp"
#include "tack/runtime.hpp"

namespace tack {
namespace detail {

// The builds of a variant's code: with and without the no-alias assumption, each for launches
// that stream their stores past the caches and for the others (Backend::streams).
constexpr int kBuilds = 4;
int build_index(bool no_alias, bool streams) {
  return (no_alias ? 1 : 0) | (streams ? 2 : 0);
}

// One specialization of a kernel on one device, and its builds (each compiled when first needed).
struct Variant {
  ir::Kernel ir;
  IndexRangeCheck index_check;  // the accesses each launch checks (launch_bounds.hpp)
  std::string target;           // Backend::cache_target, part of the cache key
  Backend* backend = nullptr;
  int device = 0;
  int column_offset = 0;  // of the kernel's source in its file (see SourceFile)
  // The argument types: objects' classes and functions, kept alive while their addresses are
  // part of the variant's key.
  std::vector<sema::ArgType> types;
  std::string printed_ir;  // the canonical text of `ir`, for the cache keys
  std::mutex compile_mutex;
  // Per build_index, set under compile_mutex: the code (shared by variants of one key, and by a
  // kernel's two builds where streaming changes nothing) and where it came from (shared_code).
  std::shared_ptr<LoadedCode> code[kBuilds];
  std::string origin[kBuilds];
  std::atomic<LoadedCode*> ready[kBuilds] = {};  // published for calls that take no lock
};

struct KernelState {
  std::shared_ptr<const ModuleSource> source;
  std::string name;
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<Variant>> variants;
};

namespace {

// Every KernelState, so that clear_cache() can forget compiled variants.
std::mutex g_kernels_mutex;
std::vector<std::weak_ptr<KernelState>>& all_kernels() {
  static auto* v = new std::vector<std::weak_ptr<KernelState>>();
  return *v;
}

std::string shape_text(const int64_t* shape, int rank) {
  std::string out = "(";
  for (int i = 0; i < rank; ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + (rank == 1 ? ",)" : ")");
}

uint64_t scalar_bits(const Arg& a, DType t) {
  uint64_t bits = 0;
  switch (a.kind()) {
    case Arg::Kind::Bool:
      bits = a.int_value() != 0;
      break;
    case Arg::Kind::Int:
      bits = static_cast<uint64_t>(a.int_value());
      break;
    case Arg::Kind::UInt:
      bits = a.uint_value();
      break;
    case Arg::Kind::Float:
      if (t == DType::F32) {
        float f = static_cast<float>(a.float_value());
        std::memcpy(&bits, &f, sizeof f);
      } else {
        double d = a.float_value();
        std::memcpy(&bits, &d, sizeof d);
      }
      break;
    case Arg::Kind::Array:
    case Arg::Kind::Object:
      break;
  }
  return bits;
}

}  // namespace

// Everything that changes the artifact: Tack's version and sources (the generators that made it),
// the backend and its target (architecture, compiler and driver versions), the compile options,
// and the canonical IR after specialization.
namespace {

std::string cache_key(const std::string& printed_ir, bool debug, const std::string& backend,
                      const std::string& target, bool no_alias, bool streams) {
  // Appended rather than formatted: a new process's first call builds it (runtime/hex.hpp).
  std::string key = std::string("tack ") + version() + " sources " + detail::source_id();
  key += "\nbackend " + backend + "\ntarget " + target;
  key += no_alias ? "\noptions no_alias=1" : "\noptions no_alias=0";
  key += streams ? " streams=1" : " streams=0";
  key += debug ? " debug=1\n" : " debug=0\n";
  key += printed_ir;
  return key;
}

}  // namespace

std::string variant_cache_key(const ir::Kernel& k, const std::string& backend,
                              const std::string& target, bool no_alias, bool streams) {
  return cache_key(ir::print(k, {.locations = k.debug, .local_ids = true}), k.debug, backend,
                   target, no_alias, streams);
}

namespace {

// The front end's result for the call's types: from its record in the disk cache, else specialized
// now (with debug mode's index checks), its index ranges proved, and recorded.
FrontEndResult front_end_of(const KernelState& ks, const CallTypes& c,
                            const sema::TargetRules& rules) {
  const bool debug_checks = debug();
  const std::string record_key =
      front_end_record_key(*ks.source, ks.name, c.types, rules, debug_checks);
  if (!record_key.empty())
    if (std::optional<FrontEndResult> recorded = load_front_end_record(record_key, *ks.source)) {
      stats().front_end_records++;
      return std::move(*recorded);
    }
  stats().front_end_runs++;
  FrontEndResult r;
  r.ir = sema::specialize(*ks.source->module(), ks.name, c.types, rules);
  if (debug_checks) {
    ir::insert_bounds_checks(r.ir);
    ir::verify(r.ir, "bounds checks");
  }
  // Printed once for every build's key, not again at each compile or cache lookup.
  r.printed_ir = ir::print(r.ir, {.locations = r.ir.debug, .local_ids = true});
  r.proof = ir::prove_index_ranges(r.ir);
  if (!record_key.empty()) store_front_end_record(record_key, *ks.source, r);
  return r;
}

// Builds a variant: checks the dtypes against the backend, then takes the front end's result.
std::unique_ptr<Variant> make_variant(const KernelState& ks, const CallTypes& c) {
  Backend* backend = c.device.impl();
  const BackendInfo& info = backend->info();
  // Every array and scalar, those in objects included (named by their path there).
  std::function<void(const sema::ArgType&, const std::string&)> check =
      [&](const sema::ArgType& t, const std::string& what) {
        if (t.kind == sema::ArgType::Kind::Object) {
          for (const sema::ObjectType::Attribute& a : t.object->attributes)
            if (a.kind == sema::ObjectType::Attribute::Kind::Value)
              check(a.type, fmt::format("{} (its attribute '{}')", what, a.name));
          return;
        }
        if (!info.supported_dtypes.count(t.dtype))
          throw TypeError(fmt::format("kernel '{}': {} has dtype {}, which {} does not support",
                                      ks.name, what, dtype_name(t.dtype), info.label));
      };
  // Named only where one may fail (most calls pass plain arrays and numbers the backend supports).
  if (!std::all_of(c.types.begin(), c.types.end(), [&](const sema::ArgType& t) {
        return t.kind != sema::ArgType::Kind::Object && info.supported_dtypes.count(t.dtype);
      }))
    for (size_t i = 0; i < c.types.size(); ++i)
      check(c.types[i], fmt::format("argument {}", i + 1));
  sema::TargetRules rules;
  rules.backend_label = info.label;
  rules.supports_workgroups = info.supports_workgroups;
  rules.hardware_textures = info.supports_hardware_textures;
  rules.atomic_dtypes = info.supported_atomic_dtypes;
  FrontEndResult front_end = front_end_of(ks, c, rules);
  auto v = std::make_unique<Variant>();
  v->ir = std::move(front_end.ir);
  v->printed_ir = std::move(front_end.printed_ir);
  v->types = c.types;
  v->index_check = IndexRangeCheck(std::move(front_end.proof));
  v->backend = backend;
  v->device = c.device.index();
  v->column_offset = ks.source->file().column_offset();
  v->target = backend->cache_target(c.device.index());
  return v;
}

// A build's cache key and options. Symbols are named after the key, so that an object from the
// disk cache links under its name.
CompileOptions build_options(const Variant& v, int build, std::string* key) {
  CompileOptions o;
  o.no_alias = build & 1;
  o.streams = build & 2;
  *key =
      cache_key(v.printed_ir, v.ir.debug, v.backend->info().name, v.target, o.no_alias, o.streams);
  o.symbol_prefix = "tack_";
  append_hex(o.symbol_prefix, XXH3_64bits(key->data(), key->size()), 16);
  return o;
}

// The code of one build: already loaded, or loaded or compiled now.
LoadedCode& code_for(Variant& v, int build) {
  if (LoadedCode* code = v.ready[build].load(std::memory_order_acquire)) {
    stats().memory_hits++;
    return *code;
  }
  std::lock_guard lock(v.compile_mutex);
  std::shared_ptr<LoadedCode>& code = v.code[build];
  const int other = build ^ 2;  // the same build for the other kind of launch
  if (!code && v.code[other] && !v.code[other]->has_streamed_stores) {
    code = v.code[other];
    v.origin[build] = v.origin[other];
  }
  if (!code) {
    std::string key;
    const CompileOptions options = build_options(v, build, &key);
    code = shared_code(*v.backend, v.device, v.ir, options, key, &v.origin[build]);
  }
  v.ready[build].store(code.get(), std::memory_order_release);
  return *code;
}

// What a debug-mode report needs from a launch, kept until the record is read (at the launch on
// the CPU, at the next synchronization on asynchronous backends).
struct DebugReport {
  std::string file, kernel;
  int column_offset = 0;
  std::vector<std::string> names;   // per parameter
  std::vector<std::string> shapes;  // per parameter, "(4, 5)"

  DebugReport(const Variant& v, const LaunchArgs& args)
      : file(v.ir.file), kernel(v.ir.name), column_offset(v.column_offset) {
    for (size_t i = 0; i < v.ir.params.size(); ++i) {
      const ir::Param& p = v.ir.params[i];
      names.push_back(p.name);
      shapes.push_back(p.is_local_array()  ? fmt::format("({},)", p.local_size)
                       : p.type.is_array() ? shape_text(args.params[i].shape, p.type.rank)
                                           : "()");
    }
  }

  [[noreturn]] void raise(const codegen::DebugRecord& r) const {
    std::string index;
    for (int d = 0; d < r.rank; ++d) index += fmt::format("{}{}", d ? ", " : "", r.index[d]);
    throw IndexError(fmt::format(
        "{}:{}:{}: in kernel '{}': index [{}] is out of bounds for array '{}' of shape {}; the "
        "{} was not performed",
        file, r.line, r.col + column_offset, kernel, index, names.at(r.array), shapes.at(r.array),
        r.is_store ? "store" : "load"));
  }
};

// Whether a launch must complete before the call returns: it uses memory shared with another
// library (array_from_ptr, DLPack).
bool uses_shared_memory(std::span<const Arg> args) {
  for (const Arg& a : args)
    if (a.kind() == Arg::Kind::Array && a.array().buffer()->shared()) return true;
  return false;
}

// Launches on an asynchronous backend: the debug record lives on the device and is read at the
// next synchronization (queue.hpp), which raises the violation.
void launch_queued(Variant& v, LoadedCode& code, LaunchArgs& launch, std::span<const Arg> args) {
  const ir::Kernel& k = v.ir;
  Backend* backend = v.backend;
  int device = v.device;
  void* record = nullptr;
  if (k.debug) {
    record = backend->allocate(device, sizeof(codegen::DebugRecord));
    try {
      int32_t zero = 0;
      backend->fill(device, record, &zero, sizeof zero, sizeof(codegen::DebugRecord) / 4);
      launch.debug_record = record;
      backend->launch(code, k, launch, device);
    } catch (...) {
      backend->release(device, record);
      throw;
    }
  } else {
    backend->launch(code, k, launch, device);
  }
  std::function<void()> after;
  if (record)
    after = [backend, device, record, report = std::make_shared<DebugReport>(v, launch)] {
      codegen::DebugRecord r{};
      try {
        backend->copy_to_host(device, &r, record, sizeof r);
      } catch (...) {
        backend->release(device, record);
        throw;
      }
      backend->release(device, record);
      if (r.hit) report->raise(r);
    };
  note_queued(backend, device, k.name, std::move(after));
  // A `return` value is a host read; shared memory must be complete when the call returns.
  if (k.result || uses_shared_memory(args)) wait_for_device(backend, device);
}

}  // namespace
}  // namespace detail

// ---- Kernel ----

Kernel detail::make_kernel(std::shared_ptr<const ModuleSource> source, const std::string& name,
                           bool check_now) {
  if (check_now) source->module()->kernel(name);  // throws when there is no such kernel
  auto ks = std::make_shared<detail::KernelState>();
  ks->source = std::move(source);
  ks->name = name;
  std::lock_guard lock(detail::g_kernels_mutex);
  detail::all_kernels().push_back(ks);
  return Kernel(std::move(ks));
}

const std::string& Kernel::name() const {
  return state_->name;
}

void detail::check_workgroup_launch(const ir::Kernel& k, const std::vector<int64_t>& counts,
                                    int max_workgroup_size) {
  if (k.workgroup_size <= 0) return;
  if (max_workgroup_size < k.workgroup_size)
    throw ValueError(fmt::format(
        "kernel '{}' uses workgroup primitives, which need groups of {} lanes, but this device's "
        "groups hold at most {}: run it on a device with larger groups",
        k.name, k.workgroup_size, max_workgroup_size));
  if (!k.collectives) return;
  int64_t total = 1;
  for (int64_t c : counts) total *= c;
  if (total % k.workgroup_size != 0)
    throw ValueError(fmt::format(
        "kernel '{}' uses barriers or block collectives, which need complete groups of {} lanes, "
        "but this call runs {} iterations ({} groups and {} left over): make the parallel loop's "
        "iteration count a multiple of {} (pad the data and skip the padding with a condition "
        "that does not enclose the collectives)",
        k.name, k.workgroup_size, total, total / k.workgroup_size, total % k.workgroup_size,
        k.workgroup_size));
}

namespace {

detail::Variant& variant_for(detail::KernelState& ks, const detail::CallTypes& c) {
  std::lock_guard lock(ks.mutex);
  auto it = ks.variants.find(c.key);
  if (it != ks.variants.end()) return *it->second;
  auto v = detail::make_variant(ks, c);
  return *ks.variants.emplace(c.key, std::move(v)).first->second;
}

}  // namespace

Scalar Kernel::call(std::span<const Arg> args) const {
  if (!state_) throw TypeError("calling an empty tack::Kernel");
  detail::CallTypes c;
  detail::classify(args, c);
  detail::Variant& v = variant_for(*state_, c);
  const ir::Kernel& k = v.ir;
  std::span<const Arg> leaves = c.leaves;  // the arguments, objects flattened

  detail::LaunchArgs launch;
  launch.params.resize(k.params.size());  // local arrays and partials after the arguments
  for (size_t i = 0; i < leaves.size(); ++i) {
    const ir::Param& p = k.params[i];
    if (p.type.is_array()) {
      const Array& a = leaves[i].array();
      if (!(a.device() == c.device))
        throw TypeError(
            fmt::format("kernel '{}': array '{}' is on {} but the call runs on {}; "
                        "copy it with tack::copyto first",
                        k.name, p.name, a.device().name(), c.device.name()));
      if (p.written && !a.writable())
        throw ValueError(
            fmt::format("kernel '{}' writes to '{}', but that array is read-only", k.name, p.name));
      launch.params[i].data = a.data();
      launch.params[i].shape = a.shape().data();
    } else {
      launch.params[i].scalar = detail::scalar_bits(leaves[i], p.type.dtype);
    }
  }

  // The iteration space, from the launch's own values.
  ir::HostValues values{
      [&](int p) { return launch.params[p].scalar; },
      [&](int p, int d) { return launch.params[p].shape[d]; },
  };
  for (const ir::LoopDim& d : k.dims) {
    int64_t start = ir::eval_host(*d.start, values);
    int64_t stop = ir::eval_host(*d.stop, values);
    int64_t step = ir::eval_host(*d.step, values);
    if (step <= 0)
      throw ValueError(fmt::format(
          "kernel '{}': the parallel loop's step is {}; it must be positive", k.name, step));
    int64_t count = stop > start ? static_cast<int64_t>((static_cast<uint64_t>(stop) -
                                                         static_cast<uint64_t>(start) - 1) /
                                                            static_cast<uint64_t>(step) +
                                                        1)
                                 : 0;
    launch.start.push_back(start);
    launch.step.push_back(step);
    launch.count.push_back(count);
  }

  detail::check_workgroup_launch(k, launch.count, v.backend->info().max_workgroup_size);
  // Debug mode checks every access as it runs instead, and reports the first index itself.
  if (!k.debug) v.index_check.run(k, values, launch, v.column_offset);

  // The no-alias variant may run when no written array overlaps another array argument.
  int no_alias = 1;
  for (size_t i = 0; i < leaves.size() && no_alias; ++i) {
    if (!k.params[i].written) continue;
    const Array& w = leaves[i].array();
    auto wb = static_cast<const char*>(w.data());
    auto we = wb + w.nbytes();
    for (size_t j = 0; j < leaves.size(); ++j) {
      if (j == i || !k.params[j].type.is_array()) continue;
      const Array& o = leaves[j].array();
      auto ob = static_cast<const char*>(o.data());
      if (ob < we && wb < ob + o.nbytes()) {
        no_alias = 0;
        break;
      }
    }
  }

  // ---- reductions: the partials of each (ir::Reduction), allocated per launch ----
  std::vector<Array> partials;
  int64_t partials_extent = 0;
  if (!k.reductions.empty()) {
    int64_t total = 1;
    for (int64_t n : launch.count)
      if (__builtin_mul_overflow(total, std::max<int64_t>(n, 0), &total) ||
          total > INT64_MAX - ir::kReductionBlock)
        throw ValueError(fmt::format(
            "kernel '{}': its reductions cannot count this many iterations (over 2^63): use a "
            "smaller loop",
            k.name));
    partials_extent = ir::reduction_partials(total);
    for (const ir::Reduction& r : k.reductions) {
      // At least one element: an empty launch passes an extent of 0 with a valid buffer.
      partials.push_back(empty({std::max<int64_t>(partials_extent, 1)},
                               k.params[r.partials].type.dtype, &c.device));
      launch.params[r.partials].data = partials.back().data();
      launch.params[r.partials].shape = &partials_extent;
    }
  }
  // ---- end of reductions ----

  detail::LoadedCode& code =
      detail::code_for(v, detail::build_index(no_alias, v.backend->streams(k, launch)));
  alignas(8) unsigned char result[8] = {};
  if (k.result) launch.result = result;
  const int64_t launch_start = log_level() >= 1 ? detail::now_ns() : 0;
  if (v.backend->info().asynchronous) {
    detail::launch_queued(v, code, launch, leaves);
  } else {
    codegen::DebugRecord record{};
    if (k.debug) launch.debug_record = &record;
    v.backend->launch(code, k, launch, v.device);
    if (k.debug && record.hit) detail::DebugReport(v, launch).raise(record);
  }
  if (log_level() >= 1) {
    std::string count;
    for (int64_t n : launch.count) count += fmt::format("{}{}", count.empty() ? "" : "x", n);
    detail::log("launch: kernel '{}' on {}:{}, {} iterations, {} in {:.3f} ms", k.name,
                v.backend->info().name, v.device, count.empty() ? "1" : count,
                v.backend->info().asynchronous ? "queued" : "ran",
                detail::elapsed_ms(launch_start));
  }

  Scalar out;
  if (k.result) {
    out.has_value = true;
    out.dtype = k.result->type.dtype;
    if (is_float(out.dtype)) {
      float f;
      double d;
      std::memcpy(&f, result, sizeof f);
      std::memcpy(&d, result, sizeof d);
      out.value = out.dtype == DType::F32 ? f : d;
    } else if (out.dtype == DType::Bool) {
      out.value = result[0] != 0;
      out.int_value = result[0] != 0;
    } else {
      uint64_t bits = 0;
      std::memcpy(&bits, result, dtype_size(out.dtype));
      if (is_signed(out.dtype) && dtype_bits(out.dtype) < 64 &&
          (bits >> (dtype_bits(out.dtype) - 1)) & 1)
        bits |= ~uint64_t{0} << dtype_bits(out.dtype);
      out.int_value = static_cast<int64_t>(bits);
      out.value =
          is_unsigned(out.dtype) ? static_cast<double>(bits) : static_cast<double>(out.int_value);
    }
  }
  return out;
}

std::vector<VariantInfo> Kernel::variants() const {
  std::vector<VariantInfo> out;
  std::lock_guard lock(state_->mutex);
  for (const auto& [id, v] : state_->variants) {
    VariantInfo info;
    info.arg_types = sema::to_string(v->types);
    info.device = fmt::format("{}:{}", v->backend->info().name, v->device);
    {
      std::lock_guard compile_lock(v->compile_mutex);
      for (int build = 0; build < detail::kBuilds; ++build) {
        const bool streams = build & 2;
        // A build that serves both kinds of launch is listed once.
        if (!v->code[build] || (streams && v->code[build] == v->code[build ^ 2])) continue;
        info.origin +=
            fmt::format("{}{}{}{}", info.origin.empty() ? "" : ", ", v->origin[build],
                        build & 1 ? " (no-alias)" : "", streams ? " (streamed stores)" : "");
      }
    }
    if (info.origin.empty()) info.origin = "not loaded yet";
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const VariantInfo& a, const VariantInfo& b) {
    return std::tie(a.device, a.arg_types) < std::tie(b.device, b.arg_types);
  });
  return out;
}

std::string Kernel::inspect(std::span<const Arg> args, InspectMode mode) const {
  detail::CallTypes c;
  detail::classify(args, c);
  detail::Variant& v = variant_for(*state_, c);
  if (mode == InspectMode::IR) return ir::print(v.ir);
  // The build a launch with these arrays would run: only their extents matter (Backend::streams).
  detail::LaunchArgs launch;
  launch.params.resize(v.ir.params.size());
  const int64_t no_elements = 0;  // the reductions' partials (rank 1), which a launch makes
  for (size_t i = 0; i < v.ir.params.size(); ++i)
    launch.params[i].shape = i < c.leaves.size() && c.leaves[i].kind() == Arg::Kind::Array
                                 ? c.leaves[i].array().shape().data()
                                 : &no_elements;
  std::string key;
  const int build = detail::build_index(false, v.backend->streams(v.ir, launch));
  return v.backend->emit(v.ir, detail::build_options(v, build, &key),
                         mode == InspectMode::Optimized);
}

std::string Kernel::inspect(std::span<const Arg> args, InspectMode mode,
                            const std::string& backend) const {
  detail::CallTypes c;
  detail::classify(args, c);
  if (backend.empty() || backend == c.device.type()) return inspect(args, mode);
  const std::vector<std::string>& sources = codegen::source_targets();
  if (std::find(sources.begin(), sources.end(), backend) == sources.end())
    throw ValueError(fmt::format(
        "kernel '{}': inspect for backend '{}' needs arguments on a {} device (these are on {}); "
        "without a device, inspect shows the source of {} or {}",
        state_->name, backend, backend, c.device.name(),
        fmt::join(sources.begin(), sources.end() - 1, ", "), sources.back()));
  if (mode == InspectMode::Optimized)
    throw ValueError(
        fmt::format("kernel '{}': the optimized code of backend '{}' needs its device and driver; "
                    "mode='source' shows the generated source without one",
                    state_->name, backend));
  // As the backend would specialize it, without its device: sema, debug checks, the generator.
  ir::Kernel k = sema::specialize(*state_->source->module(), state_->name, c.types,
                                  {"the " + backend + " backend", true});
  if (debug()) ir::insert_bounds_checks(k);
  if (mode == InspectMode::IR) return ir::print(k);
  return codegen::generate_source(k, backend, state_->name);
}

namespace detail {

void forget_compiled_variants() {
  std::lock_guard lock(g_kernels_mutex);
  auto& all = all_kernels();
  std::erase_if(all, [](const std::weak_ptr<KernelState>& w) { return w.expired(); });
  for (auto& w : all)
    if (auto ks = w.lock()) {
      std::lock_guard klock(ks->mutex);
      ks->variants.clear();
    }
}

}  // namespace detail
}  // namespace tack
