// The `tack` command-line tool as a function, so that the C++ executable and the Python package's
// console script (`tack`, `python -m tack`, through the extension) run the same code.
#pragma once

#include <string>
#include <vector>

namespace tack::tools {

// Runs the tool on `args` (without the program name) and returns its exit status. Prints on
// stdout and stderr, flushed before it returns; never throws.
int run_cli(const std::vector<std::string>& args);

}  // namespace tack::tools
