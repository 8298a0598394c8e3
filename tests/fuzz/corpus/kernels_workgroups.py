"""Workgroups: shared memory, barriers, lane and group ids, block collectives.

Groups have 256 lanes. Kernels with barriers or block collectives run on complete groups (an
iteration count that is a multiple of 256); the others run on any count.
"""
import tack


@tack.kernel
def reverse_tiles(x, out):
    tile = tack.shared_like(x, 256)
    for i in range(x.shape[0]):
        t = tack.thread_id()
        tile[t] = x[i]
        tack.barrier()
        out[i] = tile[255 - t]


@tack.kernel
def block_reductions(x, sums, mins, maxs):
    for i in range(x.shape[0]):
        sums[i] = tack.block_sum(x[i])
        mins[i] = tack.block_min(x[i])
        maxs[i] = tack.block_max(x[i])


@tack.kernel
def block_prefix(x, out):
    for i in range(x.shape[0]):
        out[i] = tack.block_scan(x[i])


@tack.kernel
def matmul_tiled(a, b, c):
    ta = tack.shared_like(a, 256)
    tb = tack.shared_like(b, 256)
    for i in range((c.shape[0] // 16) * (c.shape[1] // 16) * 256):
        t = tack.thread_id()
        g = tack.group_id()
        tiles_x = c.shape[1] // 16
        row = (g // tiles_x) * 16 + t // 16
        col = (g % tiles_x) * 16 + t % 16
        acc = a[0, 0] * 0.0
        for k0 in range(0, a.shape[1], 16):
            ta[t] = a[row, k0 + t % 16]
            tb[t] = b[k0 + t // 16, col]
            tack.barrier()
            for kk in range(16):
                acc += ta[(t // 16) * 16 + kk] * tb[kk * 16 + t % 16]
            tack.barrier()
        c[row, col] = acc


@tack.kernel
def iterated_sums(x, out, rounds):
    for i in range(x.shape[0]):
        v = x[i]
        for r in range(rounds):
            total = tack.block_sum(v)
            if total > 1000:
                v = v % 7
            else:
                v = v + total % 5
        out[i] = v


@tack.kernel
def lane_ids(lanes, groups, sizes):
    first = tack.thread_id()
    for i in range(lanes.shape[0]):
        lanes[i] = first
        groups[i] = tack.group_id()
        sizes[i] = tack.group_size()


@tack.kernel
def shared_scratch(x, out):
    buf = tack.shared(tack.f32, 256)
    for i in range(x.shape[0]):
        t = tack.thread_id()
        buf[t] = x[i] * 2.0
        out[i] = buf[t] + 1.0


@tack.kernel
def shared_histogram(values, counts):
    bins = tack.shared_like(counts, 16)
    for i in range(values.shape[0]):
        t = tack.thread_id()
        if t < 16:
            bins[t] = 0
        tack.barrier()
        tack.atomic_add(bins, values[i] % 16, 1)
        tack.barrier()
        if t < 16:
            tack.atomic_add(counts, t, bins[t])
