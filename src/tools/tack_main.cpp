// The `tack` executable: the tool of cli.cpp.
#include "tools/cli.hpp"

int main(int argc, char** argv) {
  return tack::tools::run_cli(std::vector<std::string>(argv + 1, argv + argc));
}
