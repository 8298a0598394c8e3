"""Checks that lld placed the functions of an order file together in a library: those of
cmake/compiler_order.txt in the CPU compiler library (cmake/compiler_llvm.cmake), those of
cmake/library_order.txt in libtack (src/CMakeLists.txt). They must lie in one stretch of its code
little longer than their own size, instead of spread over all of it. Exits 77 (skipped) where the
library was linked without lld.

    check_function_order.py LIBRARY ORDER_FILE
"""
import subprocess
import sys


def main(library, order_file):
    comment = subprocess.run(["readelf", "-p", ".comment", library], capture_output=True,
                             text=True, check=True).stdout
    if "LLD" not in comment:
        print(f"skipped: {library} was linked without lld (lld-19 was not installed when the "
              "build was configured), so its functions are in the default linker's order")
        return 77
    listing = subprocess.run(["nm", "--defined-only", "-S", library], capture_output=True,
                             text=True, check=True).stdout
    functions = {}
    for line in listing.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tTwW":
            functions[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
    order = open(order_file).read().split()
    placed = [functions[name] for name in order if name in functions]
    if len(placed) < len(order) // 2:
        print(f"only {len(placed)} of the {len(order)} functions of {order_file} are in "
              f"{library}: regenerate the file (scripts/order-compiler-library, scripts/order-library)")
        return 1
    start = min(address for address, _ in placed)
    end = max(address + size for address, size in placed)
    own = sum(size for _, size in placed)
    code = max(a + s for a, s in functions.values()) - min(a for a, _ in functions.values())
    print(f"{len(placed)} of {len(order)} functions, {own / 1e6:.1f} MB, lie in "
          f"{(end - start) / 1e6:.1f} MB of the library's {code / 1e6:.1f} MB of code")
    # Alignment padding between functions takes a little more than their sizes.
    if end - start > 1.25 * own:
        print("they are not together: lld did not apply the order (see cmake/compiler_llvm.cmake "
              "and src/CMakeLists.txt)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
