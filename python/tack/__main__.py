"""The `tack` command: `python -m tack ...`, and the console script `tack` that pip installs.

It is the C++ tool itself (src/tools), linked into the extension module: `tack info`, `tack emit`,
`tack run` and `tack cache` behave and print exactly as the `tack` that a C++ install puts in bin/.
"""
import sys


def main(argv=None):
    """Runs the `tack` tool on argv (default: sys.argv[1:]) and returns its exit status."""
    from . import _tack

    args = sys.argv[1:] if argv is None else list(argv)
    # The tool writes to the process's stdout and stderr directly: what Python buffered goes first.
    sys.stdout.flush()
    sys.stderr.flush()
    return _tack._cli(args)


if __name__ == "__main__":
    sys.exit(main())
