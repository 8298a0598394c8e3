// Where a kernel's module comes from, and what a front-end record (front_end_record.hpp) needs to
// know that its specialization would come out the same: the module's text, and the answers of the
// host language to the names that the text does not bind.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "lang/resolve.hpp"
#include "lang/source.hpp"
#include "tack/kernel.hpp"

namespace tack::detail {

// A kernels file's module, resolved already; or one function handed over by a host (Python's
// @tack.kernel) with a resolver of its free names, parsed and resolved when first needed, since a
// front-end record usually spares a new process that work.
class ModuleSource {
 public:
  // A whole kernels file, and its module: everything the module means is in the file's text
  // (which the module's own source() holds only in part, since each function is parsed when
  // first needed: lang/load.hpp).
  ModuleSource(std::shared_ptr<const SourceFile> file,
               std::shared_ptr<const lang::ResolvedModule> module);
  // One function, placed at its line of `file`; `resolve` answers its free names.
  ModuleSource(std::shared_ptr<const SourceFile> file, NameResolver resolve);

  const SourceFile& file() const { return *file_; }
  // Parses and resolves on the first call; a failure is thrown again by the next call.
  std::shared_ptr<const lang::ResolvedModule> module() const;

  // The names the module asked the host about so far, in the order asked, each with its answer
  // as answer_text() writes it. Empty for a kernels file.
  std::vector<std::pair<std::string, std::string>> answers() const;
  // Asks the host again (not through the module, which asks each name once), for a record whose
  // answers must still hold; throws what the host throws.
  std::string ask(const std::string& name) const;

 private:
  struct Answers {
    std::mutex mutex;
    std::vector<std::pair<std::string, std::string>> list;
  };
  std::shared_ptr<const SourceFile> file_;
  NameResolver resolve_;
  std::shared_ptr<Answers> answers_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<const lang::ResolvedModule> module_;
};

// A host's answer as text in which two answers are equal only when they mean the same to the
// compiler: the kind, and a constant's value and dtype, a function's text, file and line, a
// member's name.
std::string answer_text(const ExternalName& n);

// The definition's text placed at its line of its file, so that positions need no translation
// (indentation removed, and counted in the file's column_offset).
std::shared_ptr<const SourceFile> function_source(std::string source, const std::string& filename,
                                                  int first_line);
// A host's answer as the resolver's symbol; a function's definition is parsed here.
lang::ExternalSymbol to_external(const ExternalName& n);

}  // namespace tack::detail
