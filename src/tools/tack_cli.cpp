// The `tack` command-line tool: devices, generated code, the kernel cache, running a kernel.
#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>
#include <optional>

#include "codegen/c_family/c_generator.hpp"
#include "ir/passes.hpp"
#include "ir/printer.hpp"
#include "lang/parser.hpp"
#include "lang/resolve.hpp"
#include "runtime/disk_cache.hpp"
#include "sema/specialize.hpp"
#include "tack/tack.hpp"

namespace {

// "file.py:kernel" or "file.py" (then the file must hold exactly one kernel).
std::pair<tack::Module, tack::Kernel> load_kernel(const std::string& spec) {
  std::string path = spec, name;
  if (auto colon = spec.rfind(':'); colon != std::string::npos && colon + 1 < spec.size() &&
                                    spec.find('/', colon) == std::string::npos) {
    path = spec.substr(0, colon);
    name = spec.substr(colon + 1);
  }
  tack::Module m = tack::Module::from_file(path);
  if (name.empty()) {
    auto names = m.kernel_names();
    if (names.size() != 1)
      throw tack::TypeError(
          fmt::format("{} has {} kernels: name one as {}:KERNEL", path, names.size(), path));
    name = names[0];
  }
  return {m, m.kernel(name)};
}

// Arguments for `emit` and `run`: "f32[1024],f32=2.5,i32=7,tex3d[8,8,8]". Arrays get a size per
// dimension (for emit, sizes may be left out: f32[] or f32[,]); scalars a value; textures (tex2d,
// tex3d, and tex3d_exact for interp="linear_exact") their width, height[, depth] (for emit, none).
struct DriverArgs {
  std::vector<tack::Array> arrays;
  std::vector<tack::Texture> textures;
  std::vector<double> scalars;
  std::vector<tack::sema::ArgType> types;
};

// A texture argument "tex3d[w,h,d]" (sizes 1 when left out), or nullopt for another argument.
std::optional<tack::Texture> make_texture(const std::string& item, tack::sema::ArgType& type) {
  std::string base = item.substr(0, item.find('['));
  if (base != "tex2d" && base != "tex3d" && base != "tex2d_exact" && base != "tex3d_exact")
    return std::nullopt;
  int dims = base[3] - '0';
  bool exact = base.size() > 5;
  type = tack::sema::ArgType::texture_of(dims, exact);
  std::vector<int64_t> sizes(dims, 1);
  if (size_t b = item.find('['); b != std::string::npos) {
    std::string inside = item.substr(b + 1, item.find(']') - b - 1);
    size_t pos = 0;
    for (int d = 0; d < dims && pos <= inside.size(); ++d) {
      size_t next = inside.find(',', pos);
      sizes[d] = std::stoll(inside.substr(pos, next - pos));
      pos = next == std::string::npos ? inside.size() + 1 : next + 1;
    }
  }
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  tack::Interp interp = exact ? tack::Interp::LinearExact : tack::Interp::Linear;
  tack::Array texels = tack::arange(n, tack::DType::F32);
  if (dims == 2) return tack::texture2d(texels, {sizes[0], sizes[1]}, interp);
  return tack::texture3d(texels, {sizes[0], sizes[1], sizes[2]}, interp);
}

DriverArgs make_args(const std::string& text, bool allocate) {
  DriverArgs out;
  std::vector<std::string> items;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) items.push_back(cur);
  for (const std::string& item : items) {
    tack::sema::ArgType texture_type;
    if (std::optional<tack::Texture> t = make_texture(item, texture_type)) {
      out.types.push_back(texture_type);
      out.textures.push_back(*t);
      out.arrays.emplace_back();
      out.scalars.push_back(0);
      continue;
    }
    out.textures.emplace_back();
    size_t b = item.find('['), eq = item.find('=');
    auto dt = tack::dtype_from_name(item.substr(0, std::min(b, eq)));
    if (!dt)
      throw tack::TypeError(
          fmt::format("'{}' is not an argument: write f32[1024] or f32=2.5", item));
    if (b != std::string::npos) {
      tack::Shape shape;
      std::string dims = item.substr(b + 1, item.find(']') - b - 1);
      size_t pos = 0;
      int rank = 1;
      for (char c : dims) rank += c == ',';
      while (pos <= dims.size() && allocate) {
        size_t next = dims.find(',', pos);
        std::string d =
            dims.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        if (d.empty())
          throw tack::TypeError(
              fmt::format("'{}' needs a size per dimension, e.g. f32[1024]", item));
        shape.push_back(std::stoll(d));
        if (next == std::string::npos) break;
        pos = next + 1;
      }
      // An array whose last extent is 2, 3 or 4 is also an array of vectors (f32[,3] in emit).
      std::string last =
          dims.substr(dims.rfind(',') == std::string::npos ? 0 : dims.rfind(',') + 1);
      int64_t last_extent = allocate ? shape.back() : last.empty() ? 0 : std::stoll(last);
      int lanes =
          rank >= 2 ? tack::sema::ArgType::lanes_of(std::vector<int64_t>{1, last_extent}) : 0;
      out.types.push_back(tack::sema::ArgType::array(*dt, rank, lanes));
      if (allocate) {
        int64_t n = 1;
        for (int64_t d : shape) n *= d;
        tack::Array a = tack::arange(n, *dt);
        out.arrays.push_back(a.reshape(shape));
      } else {
        out.arrays.emplace_back();
      }
      out.scalars.push_back(0);
    } else {
      out.types.push_back(tack::sema::ArgType::scalar(*dt));
      out.scalars.push_back(eq == std::string::npos ? 1.0 : std::stod(item.substr(eq + 1)));
      out.arrays.emplace_back();
    }
  }
  return out;
}

std::vector<tack::Arg> as_call_args(DriverArgs& d) {
  std::vector<tack::Arg> args;
  for (size_t i = 0; i < d.types.size(); ++i) {
    if (d.types[i].texture) {
      args.emplace_back(d.textures[i]);
    } else if (d.types[i].kind == tack::sema::ArgType::Kind::Array) {
      args.emplace_back(d.arrays[i]);
    } else if (tack::is_float(d.types[i].dtype)) {
      args.emplace_back(d.scalars[i]);
    } else if (d.types[i].dtype == tack::DType::Bool) {
      args.emplace_back(d.scalars[i] != 0);
    } else {
      args.emplace_back(static_cast<int64_t>(d.scalars[i]));
    }
  }
  return args;
}

int cmd_info() {
  fmt::print("Tack {}\n\n", tack::version());
  fmt::print("{:<11} {:<10} {:<26} {:<5} {:<10} {:<10} {:<9} {}\n", "backend", "status", "dtypes",
             "f64", "workgroups", "reductions", "textures", "memory spaces");
  for (const tack::BackendStatus& s : tack::backend_status()) {
    if (!s.available) {
      fmt::print("{:<11} {:<10} {}\n", s.name, "missing", s.reason);
      continue;
    }
    const tack::BackendInfo& b = tack::device(s.name).backend();
    std::string dtypes;
    for (tack::DType t : b.supported_dtypes)
      dtypes += (dtypes.empty() ? "" : " ") + std::string(tack::dtype_name(t));
    std::string spaces;
    for (const auto& m : b.device_memory_spaces) spaces += (spaces.empty() ? "" : " ") + m;
    fmt::print("{:<11} {:<10} {:<26} {:<5} {:<10} {:<10} {:<9} {}\n", s.name, "available",
               b.supported_dtypes.size() == std::size(tack::kAllDTypes) ? "all" : dtypes,
               b.supports_f64() ? "yes" : "no", b.supports_workgroups ? "yes" : "no",
               b.supports_device_reductions ? "device" : "host",
               b.supports_hardware_textures ? "hardware" : "software", spaces);
  }
  fmt::print("\ndevices:");
  for (const tack::Device& d : tack::devices()) fmt::print(" {}", d.name());
  fmt::print("\ndefault device: {}\n", tack::get_default_device().name());
  fmt::print("cache: {} ({})\n", tack::cache_dir(),
             tack::cache_enabled() ? "on" : "off: " + tack::cache_disabled_reason());
  fmt::print("debug mode: {}\n", tack::debug() ? "on" : "off");
  return 0;
}

// GPU backends: the IR or the generated C-family source, with no device needed (sema, then the
// generator). In debug mode (TACK_DEBUG=1), with the index checks the runtime would compile.
int emit_gpu_source(const std::string& spec, const std::string& backend, const std::string& args,
                    const std::string& stage) {
  std::string path = spec, name;
  if (auto colon = spec.rfind(':'); colon != std::string::npos && colon + 1 < spec.size() &&
                                    spec.find('/', colon) == std::string::npos) {
    path = spec.substr(0, colon);
    name = spec.substr(colon + 1);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw tack::TypeError(fmt::format("cannot read {}", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto file = std::make_shared<const tack::SourceFile>(path, text);
  tack::lang::ResolvedModule module(tack::lang::parse_module(file));
  if (name.empty()) {
    auto names = module.kernel_names();
    if (names.size() != 1)
      throw tack::TypeError(
          fmt::format("{} has {} kernels: name one as {}:KERNEL", path, names.size(), path));
    name = names[0];
  }
  auto types = tack::sema::parse_arg_types(args);
  // As the backend would compile it on a device with images (texture units).
  tack::sema::TargetRules rules{"the " + backend + " backend", true};
  rules.hardware_textures = true;
  tack::ir::Kernel k = tack::sema::specialize(module, name, types, rules);
  if (tack::debug()) tack::ir::insert_bounds_checks(k);
  if (stage == "ir")
    std::cout << tack::ir::print(k);
  else
    std::cout << tack::codegen::generate_source(k, backend, name);
  return 0;
}

int cmd_emit(const std::string& spec, const std::string& backend, const std::string& args,
             const std::string& stage) {
  if (backend == "cuda" || backend == "hip" || backend == "opencl" || backend == "metal" ||
      backend == "level_zero")
    return emit_gpu_source(spec, backend, args, stage);
  if (backend != "cpu") (void)tack::device(backend);  // says why it is unavailable
  tack::set_default_device(backend);
  auto [module, kernel] = load_kernel(spec);
  DriverArgs d = make_args(args, false);
  // Specialization only needs types: zero-sized arrays of the right rank stand in for data.
  for (size_t i = 0; i < d.types.size(); ++i)
    if (d.types[i].kind == tack::sema::ArgType::Kind::Array && !d.types[i].texture) {
      tack::Shape shape(d.types[i].rank, 0);
      if (d.types[i].lanes) shape.back() = d.types[i].lanes;
      d.arrays[i] = tack::empty(shape, d.types[i].dtype);
    }
  auto call = as_call_args(d);
  tack::InspectMode mode = stage == "ir"          ? tack::InspectMode::IR
                           : stage == "optimized" ? tack::InspectMode::Optimized
                                                  : tack::InspectMode::Source;
  std::cout << kernel.inspect(call, mode);
  return 0;
}

int cmd_run(const std::string& spec, const std::string& args, int repeat) {
  auto [module, kernel] = load_kernel(spec);
  DriverArgs d = make_args(args, true);
  auto call = as_call_args(d);
  auto t0 = std::chrono::steady_clock::now();
  tack::Scalar r = kernel.call(call);
  auto t1 = std::chrono::steady_clock::now();
  for (int i = 1; i < repeat; ++i) kernel.call(call);
  tack::sync();
  auto t2 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  fmt::print("{}: first call {:.3f} ms (compile or cache load included)", kernel.name(),
             ms(t0, t1));
  if (repeat > 1)
    fmt::print(", then {:.3f} ms per call over {} calls", ms(t1, t2) / (repeat - 1), repeat - 1);
  fmt::print("\n");
  if (r.has_value) fmt::print("returned {}\n", r.value);
  for (size_t i = 0; i < d.arrays.size(); ++i) {
    if (!d.arrays[i].valid()) continue;
    tack::Array flat = d.arrays[i].reshape({-1});
    int64_t n = std::min<int64_t>(flat.size(), 8);
    std::string vals;
    for (int64_t j = 0; j < n; ++j) vals += fmt::format("{}{:g}", j ? ", " : "", flat.item({j}));
    fmt::print("arg {}: {} {}{} sum={:g}\n", i + 1, tack::dtype_name(flat.dtype()), vals,
               flat.size() > n ? ", ..." : "", flat.sum());
  }
  return 0;
}

int cmd_cache(const std::string& action) {
  tack::DiskCache& cache = tack::DiskCache::global();
  if (action == "ls") {
    for (const auto& e : cache.list()) {
      char when[32];
      std::time_t t = e.mtime;
      std::strftime(when, sizeof when, "%Y-%m-%d %H:%M", std::localtime(&t));
      fmt::print("{:<48} {:>9} {}  {}\n", e.file, e.bytes, when, e.key_summary);
    }
    return 0;
  }
  if (action == "stats") {
    const bool on = cache.enabled();
    const auto entries = cache.list();
    const tack::DiskCacheLimits& limits = cache.limits();
    fmt::print("directory: {}\n", cache.dir().string());
    fmt::print("enabled: {}\n", on ? "yes" : "no (" + cache.disabled_reason() + ")");
    fmt::print("entries: {}\nbytes: {}\n", entries.size(), cache.total_bytes());
    fmt::print("limit: {} bytes (TACK_CACHE_MAX_BYTES), {} bytes per entry\n", limits.max_bytes,
               limits.max_entry_bytes);
    if (size_t unusable = cache.unusable_entries())
      fmt::print(
          "unusable: {} file{} at entry names (removed when next used, or by `tack cache "
          "clear`)\n",
          unusable, unusable == 1 ? "" : "s");
    return 0;
  }
  const tack::CacheClearReport r = cache.clear();
  fmt::print("removed {} entr{} ({} bytes) and {} leftover file{} from {}\n", r.entries,
             r.entries == 1 ? "y" : "ies", r.bytes, r.leftovers, r.leftovers == 1 ? "" : "s",
             cache.dir().string());
  if (r.failures > 0) {
    fmt::print(stderr, "tack: could not remove {} file{}: {}\n", r.failures,
               r.failures == 1 ? "" : "s", r.first_error);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Tack: one kernel, written once, compiled for the device it runs on"};
  app.require_subcommand(1);
  app.add_subcommand("info", "devices and their declared capabilities");

  auto* emit = app.add_subcommand("emit", "print the generated code of a kernel");
  std::string spec, backend = "cpu", args, stage = "source";
  emit->add_option("kernel", spec, "FILE.py[:KERNEL]")->required();
  emit->add_option(
      "--backend", backend,
      "cpu; or cuda, hip, level_zero, metal, opencl (generated source, no device needed)");
  emit->add_option("--args", args, "argument types, e.g. 'f32,f32[],f32[],f32[]'")->required();
  emit->add_option("--stage", stage, "ir (Tack's typed IR), source (generated code), optimized")
      ->check(CLI::IsMember({"ir", "source", "optimized"}));

  auto* run =
      app.add_subcommand("run", "run a kernel on generated data (arrays hold 0, 1, 2, ...)");
  std::string run_spec, run_args;
  int repeat = 1;
  run->add_option("kernel", run_spec, "FILE.py[:KERNEL]")->required();
  run->add_option("--args", run_args, "arguments, e.g. 'f32=2.5,f32[1024],f32[1024],f32[1024]'")
      ->required();
  run->add_option("--repeat", repeat, "calls to time")->check(CLI::PositiveNumber);

  auto* cache = app.add_subcommand("cache", "the kernel cache on disk");
  cache->require_subcommand(1);
  for (const char* a : {"ls", "stats", "clear"}) cache->add_subcommand(a);

  CLI11_PARSE(app, argc, argv);
  try {
    if (app.got_subcommand("info")) return cmd_info();
    if (app.got_subcommand(emit)) return cmd_emit(spec, backend, args, stage);
    if (app.got_subcommand(run)) return cmd_run(run_spec, run_args, repeat);
    return cmd_cache(cache->get_subcommands()[0]->get_name());
  } catch (const tack::Error& e) {
    std::cerr << "tack: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "tack: " << e.what() << "\n";
    return 1;
  }
}
