// The `tack` command-line tool: devices, generated code, the kernel cache, running a kernel.
#include "tools/cli.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
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

namespace tack::tools {
namespace {

// A number the user wrote: all of `text` must be one, else a ValueError that names the item.
template <typename T>
T parse_number(const std::string& text, const std::string& item, const char* example) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    throw tack::ValueError(fmt::format("'{}' in '{}' is out of range", text, item));
  if (ec != std::errc() || ptr != end)
    throw tack::ValueError(
        fmt::format("'{}' in '{}' is not a number: write {}", text, item, example));
  return value;
}

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
        int64_t extent = parse_number<int64_t>(d, item, "a size such as f32[1024]");
        if (extent < 0)
          throw tack::ValueError(
              fmt::format("'{}' has a negative size: write a size such as f32[1024]", item));
        shape.push_back(extent);
        if (next == std::string::npos) break;
        pos = next + 1;
      }
      // An array whose last extent is 2, 3 or 4 is also an array of vectors (f32[,3] in emit).
      std::string last =
          dims.substr(dims.rfind(',') == std::string::npos ? 0 : dims.rfind(',') + 1);
      int64_t last_extent = allocate       ? shape.back()
                            : last.empty() ? 0
                                           : parse_number<int64_t>(last, item, "f32[,3] or f32[]");
      int lanes =
          rank >= 2 ? tack::sema::ArgType::lanes_of(std::vector<int64_t>{1, last_extent}) : 0;
      out.types.push_back(tack::sema::ArgType::array(*dt, rank, lanes));
      if (allocate) {
        int64_t n = 1;
        for (int64_t d : shape)
          if (__builtin_mul_overflow(n, d, &n))
            throw tack::ValueError(fmt::format("'{}' has more elements than fit in 64 bits", item));
        tack::Array a = tack::arange(n, *dt);
        out.arrays.push_back(a.reshape(shape));
      } else {
        out.arrays.emplace_back();
      }
      out.scalars.push_back(0);
    } else {
      out.types.push_back(tack::sema::ArgType::scalar(*dt));
      out.scalars.push_back(eq == std::string::npos
                                ? 1.0
                                : parse_number<double>(item.substr(eq + 1), item, "f32=2.5"));
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
  const std::vector<std::string>& sources = tack::codegen::source_targets();
  if (std::find(sources.begin(), sources.end(), backend) != sources.end())
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

int cmd_run(const std::string& spec, const std::string& args, int repeat,
            const std::string& device) {
  if (!device.empty()) tack::set_default_device(device);
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
  fmt::print("{} on {}: first call {:.3f} ms (compile or cache load included)", kernel.name(),
             tack::get_default_device().name(), ms(t0, t1));
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

// "kernel saxpy(a: f32, x: f32[1d], y: f32[1d] out) -> f32" -> {"saxpy", "f32, f32[1d], f32[1d]"};
// an entry that is not a kernel's (the CPU backend's description of the host) has no signature.
std::pair<std::string, std::string> split_signature(const std::string& signature) {
  const std::string prefix = "kernel ";
  size_t open = signature.find('('), close = signature.rfind(')');
  if (signature.rfind(prefix, 0) != 0 || open == std::string::npos || close == std::string::npos ||
      close < open)
    return {"-", "-"};
  std::string name = signature.substr(prefix.size(), open - prefix.size());
  std::string types;
  std::string params = signature.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < params.size()) {
    size_t comma = params.find(", ", pos);
    std::string param =
        params.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    size_t colon = param.find(": ");
    std::string type = colon == std::string::npos ? param : param.substr(colon + 2);
    type = type.substr(0, type.find(' '));  // drops " out", " partials"
    types += (types.empty() ? "" : ", ") + type;
    if (comma == std::string::npos) break;
    pos = comma + 2;
  }
  return {name, types.empty() ? "()" : types};
}

std::string age_text(int64_t seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return fmt::format("{}s", seconds);
  if (seconds < 3600) return fmt::format("{}m", seconds / 60);
  if (seconds < 86400) return fmt::format("{}h", seconds / 3600);
  return fmt::format("{}d", seconds / 86400);
}

int cmd_cache(const std::string& action) {
  tack::DiskCache& cache = tack::DiskCache::global();
  if (action == "ls") {
    const auto entries = cache.list();
    if (entries.empty()) {
      fmt::print("the cache in {} is empty\n", cache.dir());
      return 0;
    }
    fmt::print("{:<20} {:<40} {:<10} {:>9} {:>6}  {}\n", "kernel", "argument types", "backend",
               "bytes", "age", "file");
    const auto now = std::time(nullptr);
    for (const auto& e : entries) {
      auto [name, types] = split_signature(e.signature);
      fmt::print("{:<20} {:<40} {:<10} {:>9} {:>6}  {}\n", name, types, e.backend, e.bytes,
                 age_text(static_cast<int64_t>(now) - e.mtime), e.file);
    }
    return 0;
  }
  if (action == "stats") {
    const bool on = cache.enabled();
    const auto entries = cache.list();
    const tack::DiskCacheLimits& limits = cache.limits();
    fmt::print("directory: {}\n", cache.dir());
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
             cache.dir());
  if (r.failures > 0) {
    fmt::print(stderr, "tack: could not remove {} file{}: {}\n", r.failures,
               r.failures == 1 ? "" : "s", r.first_error);
    return 1;
  }
  return 0;
}

constexpr const char* kSubcommands[] = {"info", "emit", "run", "cache"};
constexpr const char* kCacheActions[] = {"ls", "stats", "clear"};

// CLI11 reports a word it does not know as an unexpected argument; name it as a subcommand.
std::optional<std::string> unknown_subcommand(const std::vector<std::string>& argv) {
  auto known = [](const std::string& word, const auto& names) {
    return std::find(std::begin(names), std::end(names), word) != std::end(names);
  };
  auto list = [](const auto& names) {
    std::string out;
    for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
    return out;
  };
  if (argv.empty() || argv[0].starts_with("-")) return std::nullopt;
  if (!known(argv[0], kSubcommands))
    return fmt::format("unknown subcommand '{}': the subcommands are {} (tack --help)", argv[0],
                       list(kSubcommands));
  if (argv[0] == "cache" && argv.size() > 1 && !argv[1].starts_with("-") &&
      !known(argv[1], kCacheActions))
    return fmt::format(
        "unknown subcommand 'cache {}': the cache subcommands are {} (tack cache "
        "--help)",
        argv[1], list(kCacheActions));
  return std::nullopt;
}

int run_cli_unflushed(const std::vector<std::string>& argv) {
  if (auto message = unknown_subcommand(argv)) {
    std::cerr << "tack: " << *message << "\n";
    return 2;
  }
  CLI::App app{"Tack: one kernel, written once, compiled for the device it runs on", "tack"};
  app.set_version_flag("--version", fmt::format("tack {}", tack::version()));
  app.require_subcommand(1);
  app.add_subcommand("info", "list the backends, their devices and capabilities, and the cache");

  auto* emit = app.add_subcommand("emit", "print a kernel's IR or generated code for a backend");
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
  std::string run_spec, run_args, run_device;
  int repeat = 1;
  run->add_option("kernel", run_spec, "FILE.py[:KERNEL]")->required();
  run->add_option("--args", run_args, "arguments, e.g. 'f32=2.5,f32[1024],f32[1024],f32[1024]'")
      ->required();
  run->add_option("--repeat", repeat, "calls to time")->check(CLI::PositiveNumber);
  run->add_option("--device", run_device, "the device to run on, e.g. cpu, opencl, cuda:1");

  auto* cache = app.add_subcommand("cache", "list, count or clear the kernel cache on disk");
  cache->require_subcommand(1);
  cache->add_subcommand("ls", "one line per entry: kernel, argument types, backend, size, age");
  cache->add_subcommand("stats", "the cache's directory, state, entries, size and limits");
  cache->add_subcommand("clear", "remove every entry");

  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(argv.rbegin(), argv.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (app.got_subcommand("info")) return cmd_info();
  if (app.got_subcommand(emit)) return cmd_emit(spec, backend, args, stage);
  if (app.got_subcommand(run)) return cmd_run(run_spec, run_args, repeat, run_device);
  return cmd_cache(cache->get_subcommands()[0]->get_name());
}

}  // namespace

int run_cli(const std::vector<std::string>& argv) {
  int status = 1;
  try {
    status = run_cli_unflushed(argv);
  } catch (const std::exception& e) {
    std::cerr << "tack: " << e.what() << "\n";
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  return status;
}

}  // namespace tack::tools
