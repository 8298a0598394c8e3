// A stand-in for a library that another user planted in a directory where Tack's programs are run,
// under the name of a library they need (tests/build_tree/working_directory.sh). Loaded, it says
// so and ends the process, which fails the test.
#include <stdio.h>
#include <unistd.h>

__attribute__((constructor)) static void planted(void) {
  fputs("the planted library in the working directory was loaded\n", stderr);
  _exit(86);
}
