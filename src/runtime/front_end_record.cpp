#include "runtime/front_end_record.hpp"

#include <fmt/format.h>
#include <algorithm>

#include "ir/serialize.hpp"
#include "ir/verifier.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/log.hpp"
#include "runtime/source_id.hpp"
#include "tack/runtime.hpp"

namespace tack::detail {
namespace {

// "kernel NAME(TYPES) front end", the key's second line, for the log.
std::string_view what(const std::string& key) {
  const size_t begin = key.find('\n') + 1;
  return std::string_view(key).substr(begin, key.find('\n', begin) - begin);
}

}  // namespace

std::string front_end_record_key(const ModuleSource& source, const std::string& kernel,
                                 std::span<const sema::ArgType> types,
                                 const sema::TargetRules& rules, bool debug) {
  if (std::any_of(types.begin(), types.end(),
                  [](const sema::ArgType& t) { return t.kind == sema::ArgType::Kind::Object; }))
    return {};
  std::string atomics;
  for (DType d : rules.atomic_dtypes) atomics += fmt::format(" {}", dtype_name(d));
  const SourceFile& file = source.file();
  // The kernel's line second, as in the code's keys, for `tack cache ls`.
  return fmt::format(
      "tack {} sources {}\nkernel {}({}) front end\nrules {} workgroups={} hardware_textures={} "
      "atomics{}\ndebug={}\nfile {} column {}\n{}",
      version(), source_id(), kernel, sema::to_string(types), rules.backend_label,
      rules.supports_workgroups ? 1 : 0, rules.hardware_textures ? 1 : 0, atomics, debug ? 1 : 0,
      file.name(), file.column_offset(), file.text());
}

std::optional<FrontEndResult> load_front_end_record(const std::string& key,
                                                    const ModuleSource& source) {
  std::optional<std::string> bytes = DiskCache::global().load(kFrontEndRecordKind, key, false);
  if (!bytes) return std::nullopt;
  ir::ByteReader r(*bytes);
  // The answers first: a record the host no longer agrees with is not read further.
  for (uint32_t i = 0, n = r.count(); i < n && !r.failed(); ++i) {
    const std::string name(r.str());
    const std::string_view answer = r.str();
    if (r.failed()) break;
    try {
      if (source.ask(name) != answer) {
        log("{}: not from its record, in which '{}' was bound to something else", what(key), name);
        return std::nullopt;
      }
    } catch (const std::exception&) {
      return std::nullopt;  // the front end asks again, and reports the host's failure
    }
  }
  FrontEndResult result;
  result.printed_ir = std::string(r.str());
  std::optional<ir::Kernel> k = ir::read_kernel(r);
  if (!k || r.failed() || !r.at_end()) return std::nullopt;
  try {
    ir::verify(*k, "reading the front end's record");
  } catch (const Error&) {
    return std::nullopt;
  }
  result.ir = std::move(*k);
  log("{}: from its record in the disk cache", what(key));
  return result;
}

void store_front_end_record(const std::string& key, const ModuleSource& source,
                            const FrontEndResult& result) {
  std::string bytes;
  ir::ByteWriter w(bytes);
  const auto answers = source.answers();
  w.u32(static_cast<uint32_t>(answers.size()));
  for (const auto& [name, answer] : answers) {
    w.str(name);
    w.str(answer);
  }
  w.str(result.printed_ir);
  ir::write_kernel(w, result.ir);
  DiskCache::global().store(kFrontEndRecordKind, key, bytes, false);
}

}  // namespace tack::detail
