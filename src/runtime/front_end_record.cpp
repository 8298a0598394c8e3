#include "runtime/front_end_record.hpp"

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
  const SourceFile& file = source.file();
  // Appended rather than formatted: this runs at every new process's first call of a kernel.
  std::string key = "tack ";
  key += version();
  key += " sources ";
  key += source_id();
  // The kernel's line second, its types as the code's keys separate them, for `tack cache ls`.
  key += "\nkernel " + kernel + "(" + sema::to_string(types, ", ") + ") front end\nrules ";
  key += rules.backend_label;
  key += rules.supports_workgroups ? " workgroups" : "";
  key += rules.hardware_textures ? " hardware_textures" : "";
  key += " atomics";
  for (DType d : rules.atomic_dtypes) (key += ' ') += dtype_name(d);
  key += debug ? "\ndebug" : "\nno debug";
  // The name's length first: a name may hold anything, even what would read as the text's start.
  key += "\nfile of " + std::to_string(file.name().size()) + " bytes: " + file.name();
  key += "\ncolumn " + std::to_string(file.column_offset()) + "\n";
  key += file.text();
  return key;
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
  std::optional<ir::IndexProof> proof;
  if (k) proof = ir::read_proof(r, *k);
  if (!proof || r.failed() || !r.at_end()) return std::nullopt;
  try {
    ir::verify(*k, "reading the front end's record");
  } catch (const Error&) {
    return std::nullopt;
  }
  result.ir = std::move(*k);
  result.proof = std::move(*proof);
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
  ir::write_proof(w, result.proof);
  DiskCache::global().store(kFrontEndRecordKind, key, bytes, false);
}

}  // namespace tack::detail
