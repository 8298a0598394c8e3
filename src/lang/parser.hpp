// Parsing a kernels file into its syntax tree.
#pragma once

#include <memory>

#include "lang/ast.hpp"
#include "lang/source.hpp"

namespace tack::lang {

// Parses a whole kernels file: imports, module-level `NAME = value` definitions and functions.
// A module docstring and other bare strings are dropped, and the body of an
// `if __name__ == "__main__":` block is skipped unparsed (it must still tokenize).
// Throws CompileError, naming the enclosing function when there is one, for anything the kernel
// language does not accept.
ast::Module parse_module(std::shared_ptr<const SourceFile> file);

}  // namespace tack::lang
