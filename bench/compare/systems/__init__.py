"""One module per system. Each defines:

    NAME, VERSION()                      the label in the tables and the package version
    init(threads, cache_dir)             start the runtime on `threads` threads, caches in cache_dir
    setup(workload, d) -> (run, fetch)   d: the inputs (workloads.inputs); run() computes the result
                                         and returns when it is complete (synchronized); fetch()
                                         returns it as NumPy (not timed)
    NOTES                                workload -> how the system expresses it, where it differs

setup raises Unsupported(reason) for a workload the system cannot express.
"""


class Unsupported(Exception):
    pass
