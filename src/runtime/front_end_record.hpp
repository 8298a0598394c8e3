// Front-end records: the specialized IR that parsing, resolving and specializing a kernel gave for
// one call's argument types, kept in the disk cache next to the code, so that a new process that
// calls the kernel with those types again skips the front end, which is most of a warm first call.
//
// A record holds what the front end made and the host's answers it was made with (names the
// module's text does not bind: Python globals, device functions of other files). It is keyed by
// everything else the front end reads: Tack's build, the module's file name and text, the kernel,
// the argument types, the target's rules and debug mode. It is used only when the host still gives
// every answer it holds, asked again in the same order; the front end, which reads nothing else,
// would then make the same IR.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "ir/index_ranges.hpp"
#include "ir/ir.hpp"
#include "runtime/module_source.hpp"
#include "sema/specialize.hpp"

namespace tack::detail {

// The records' entries are `front_end-<hash>.tck`, beside the backends' code.
inline constexpr const char* kFrontEndRecordKind = "front_end";

struct FrontEndResult {
  ir::Kernel ir;  // specialized, with index checks in debug mode
  // ir::print(ir) with local ids, and locations in debug mode: part of the code's key.
  std::string printed_ir;
  ir::IndexProof proof;  // ir::prove_index_ranges(ir), which each launch checks
};

// The key of the record; empty where none applies: an argument is an object of a device class
// (whose type is known by its address in this process).
std::string front_end_record_key(const ModuleSource& source, const std::string& kernel,
                                 std::span<const sema::ArgType> types,
                                 const sema::TargetRules& rules, bool debug);

// The front end's result from the process's disk cache: nullopt when it holds no usable record
// for `key`, or one whose answers the host no longer gives.
std::optional<FrontEndResult> load_front_end_record(const std::string& key,
                                                    const ModuleSource& source);

// Stores the result, with the answers `source`'s module has had so far (a superset of those it
// was made with: asking more again at a load only makes the record stricter).
void store_front_end_record(const std::string& key, const ModuleSource& source,
                            const FrontEndResult& result);

}  // namespace tack::detail
