"""The comparison's workloads as Warp kernels."""
import warp as wp

SOFTENING2 = wp.constant(1e-4)
TILE = wp.constant(32)


@wp.kernel(module="unique")
def saxpy(a: float, x: wp.array(dtype=float), y: wp.array(dtype=float), out: wp.array(dtype=float)):
    i = wp.tid()
    out[i] = a * x[i] + y[i]


@wp.kernel(module="unique")
def triad(q: float, b: wp.array(dtype=float), c: wp.array(dtype=float), a: wp.array(dtype=float)):
    i = wp.tid()
    a[i] = b[i] + q * c[i]


@wp.kernel(module="unique")
def stencil5(u: wp.array2d(dtype=float), out: wp.array2d(dtype=float)):
    i, j = wp.tid()
    i += 1
    j += 1
    out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@wp.kernel(module="unique")
def mandelbrot(out: wp.array2d(dtype=wp.int32), x0: float, y0: float, dx: float, dy: float,
               max_iter: int):
    i, j = wp.tid()
    cr = x0 + float(j) * dx
    ci = y0 + float(i) * dy
    zr = float(0.0)
    zi = float(0.0)
    n = int(0)
    while n < max_iter and zr * zr + zi * zi <= 4.0:
        t = zr * zr - zi * zi + cr
        zi = 2.0 * zr * zi + ci
        zr = t
        n += 1
    out[i, j] = n


@wp.kernel(module="unique")
def nbody_step(pos: wp.array(dtype=wp.vec3), vel: wp.array(dtype=wp.vec3), mass: wp.array(dtype=float),
               new_pos: wp.array(dtype=wp.vec3), new_vel: wp.array(dtype=wp.vec3), dt: float):
    i = wp.tid()
    p = pos[i]
    acc = wp.vec3(0.0, 0.0, 0.0)
    for j in range(pos.shape[0]):
        d = pos[j] - p
        r2 = wp.dot(d, d) + SOFTENING2
        acc += d * (mass[j] / (r2 * wp.sqrt(r2)))
    v = vel[i] + acc * dt
    new_vel[i] = v
    new_pos[i] = p + v * dt


@wp.kernel(module="unique")
def matmul_naive(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    s = float(0.0)
    for k in range(A.shape[1]):
        s += A[i, k] * B[k, j]
    C[i, j] = s


@wp.kernel(module="unique")
def matmul_tiled(A: wp.array2d(dtype=float), B: wp.array2d(dtype=float), C: wp.array2d(dtype=float)):
    i, j = wp.tid()
    acc = wp.tile_zeros(shape=(TILE, TILE), dtype=float)
    for k in range(A.shape[1] // TILE):
        a = wp.tile_load(A, shape=(TILE, TILE), offset=(i * TILE, k * TILE))
        b = wp.tile_load(B, shape=(TILE, TILE), offset=(k * TILE, j * TILE))
        wp.tile_matmul(a, b, acc)
    wp.tile_store(C, acc, offset=(i * TILE, j * TILE))


@wp.kernel(module="unique")
def histogram(values: wp.array(dtype=float), bins: int, counts: wp.array(dtype=wp.int32)):
    i = wp.tid()
    b = int(values[i] * float(bins))
    if b >= 0 and b < bins:
        wp.atomic_add(counts, b, 1)


@wp.kernel(module="unique")
def life(grid: wp.array2d(dtype=wp.uint8), out: wp.array2d(dtype=wp.uint8)):
    i, j = wp.tid()
    i += 1
    j += 1
    n = (int(grid[i - 1, j - 1]) + int(grid[i - 1, j]) + int(grid[i - 1, j + 1]) + int(grid[i, j - 1])
         + int(grid[i, j + 1]) + int(grid[i + 1, j - 1]) + int(grid[i + 1, j]) + int(grid[i + 1, j + 1]))
    alive = n == 3 or (n == 2 and int(grid[i, j]) == 1)
    if alive:
        out[i, j] = wp.uint8(1)
    else:
        out[i, j] = wp.uint8(0)
