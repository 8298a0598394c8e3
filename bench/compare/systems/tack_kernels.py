"""The comparison's workloads as Tack kernels (a kernels file: plain Python, see docs/language.md)."""
import tack

SOFTENING2 = tack.constant(1e-4)
TILE = tack.constant(32, dtype=tack.i64)
CHUNK = tack.constant(16384, dtype=tack.i64)


@tack.kernel
def saxpy(a, x, y, out):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + y[i]


@tack.kernel
def triad(q, b, c, a):
    for i in range(b.shape[0]):
        a[i] = b[i] + q * c[i]


@tack.kernel
def stencil5(u, out):
    h = u.shape[0]
    w = u.shape[1]
    for i, j in tack.ndrange((1, h - 1), (1, w - 1)):
        out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@tack.kernel
def mandelbrot(out, x0, y0, dx, dy, max_iter):
    for i, j in tack.ndrange(out.shape[0], out.shape[1]):
        cr = x0 + j * dx
        ci = y0 + i * dy
        zr = 0.0
        zi = 0.0
        n = 0
        while n < max_iter and zr * zr + zi * zi <= 4.0:
            t = zr * zr - zi * zi + cr
            zi = 2.0 * zr * zi + ci
            zr = t
            n += 1
        out[i, j] = n


@tack.kernel
def nbody_step(pos, vel, mass, new_pos, new_vel, dt):
    n = pos.shape[0]
    for i in range(n):
        xi = pos[i, 0]
        yi = pos[i, 1]
        zi = pos[i, 2]
        ax = 0.0
        ay = 0.0
        az = 0.0
        for j in range(n):
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + SOFTENING2
            s = mass[j] / (r2 * sqrt(r2))
            ax += dx * s
            ay += dy * s
            az += dz * s
        vx = vel[i, 0] + ax * dt
        vy = vel[i, 1] + ay * dt
        vz = vel[i, 2] + az * dt
        new_vel[i, 0] = vx
        new_vel[i, 1] = vy
        new_vel[i, 2] = vz
        new_pos[i, 0] = xi + vx * dt
        new_pos[i, 1] = yi + vy * dt
        new_pos[i, 2] = zi + vz * dt


@tack.kernel
def matmul_naive(A, B, C):
    for i, j in tack.ndrange(C.shape[0], C.shape[1]):
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s


@tack.kernel
def matmul_tiled(A, B, C):
    """One thread per 32 x 32 tile of C, accumulated in a local array (i-k-j order, so that the
    innermost loop runs along rows of B and of the tile). Sizes are multiples of TILE."""
    for bi, bj in tack.ndrange(C.shape[0] // TILE, C.shape[1] // TILE):
        acc = tack.local_array(tack.f32, 1024)
        for kk in range(0, A.shape[1], TILE):
            for i in range(TILE):
                for k in range(TILE):
                    a = A[bi * TILE + i, kk + k]
                    for j in range(TILE):
                        acc[i * TILE + j] += a * B[kk + k, bj * TILE + j]
        for i in range(TILE):
            for j in range(TILE):
                C[bi * TILE + i, bj * TILE + j] = acc[i * TILE + j]


@tack.kernel
def sum_chunks(x, total):
    """Each thread sums a chunk of CHUNK elements and adds it to total[0] with one atomic."""
    n = x.shape[0]
    for c in range((n + CHUNK - 1) // CHUNK):
        s = 0.0
        for i in range(c * CHUNK, min((c + 1) * CHUNK, n)):
            s += x[i]
        tack.atomic_add(total, 0, s)


@tack.kernel
def sum_reduce(x) -> tack.f32:
    """The sum as Numba users write a prange reduction: a scalar reduction in the parallel loop."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
    return s


@tack.kernel
def histogram(values, bins, counts):
    for i in range(values.shape[0]):
        b = int(values[i] * bins)
        if 0 <= b < bins:
            tack.atomic_add(counts, b, 1)


@tack.kernel
def life(grid, out):
    h = grid.shape[0]
    w = grid.shape[1]
    for i, j in tack.ndrange((1, h - 1), (1, w - 1)):
        n = (grid[i - 1, j - 1] + grid[i - 1, j] + grid[i - 1, j + 1] + grid[i, j - 1]
             + grid[i, j + 1] + grid[i + 1, j - 1] + grid[i + 1, j] + grid[i + 1, j + 1])
        alive = n == 3 or (n == 2 and grid[i, j] == 1)
        out[i, j] = 1 if alive else 0
