"""The comparison's workloads as Taichi kernels (ti.ndarray arguments, f32 by default)."""
import taichi as ti

SOFTENING2 = 1e-4
TILE = 32
f1 = ti.types.ndarray(dtype=ti.f32, ndim=1)
f2 = ti.types.ndarray(dtype=ti.f32, ndim=2)


@ti.kernel
def saxpy(a: ti.f32, x: f1, y: f1, out: f1):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + y[i]


@ti.kernel
def triad(q: ti.f32, b: f1, c: f1, a: f1):
    for i in range(b.shape[0]):
        a[i] = b[i] + q * c[i]


@ti.kernel
def stencil5(u: f2, out: f2):
    for i, j in ti.ndrange((1, u.shape[0] - 1), (1, u.shape[1] - 1)):
        out[i, j] = 0.25 * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@ti.kernel
def mandelbrot(out: ti.types.ndarray(dtype=ti.i32, ndim=2), x0: ti.f32, y0: ti.f32, dx: ti.f32,
               dy: ti.f32, max_iter: ti.i32):
    for i, j in ti.ndrange(out.shape[0], out.shape[1]):
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


@ti.kernel
def nbody_step(pos: f2, vel: f2, mass: f1, new_pos: f2, new_vel: f2, dt: ti.f32):
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
            s = mass[j] / (r2 * ti.sqrt(r2))
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


@ti.kernel
def matmul_naive(A: f2, B: f2, C: f2):
    for i, j in ti.ndrange(C.shape[0], C.shape[1]):
        s = 0.0
        for k in range(A.shape[1]):
            s += A[i, k] * B[k, j]
        C[i, j] = s


@ti.kernel
def matmul_tiled(A: f2, B: f2, C: f2):
    for bi, bj in ti.ndrange(C.shape[0] // TILE, C.shape[1] // TILE):
        for i in range(TILE):
            for j in range(TILE):
                C[bi * TILE + i, bj * TILE + j] = 0.0
        for kb in range(A.shape[1] // TILE):
            kk = kb * TILE
            for i in range(TILE):
                for k in range(TILE):
                    a = A[bi * TILE + i, kk + k]
                    for j in range(TILE):
                        C[bi * TILE + i, bj * TILE + j] += a * B[kk + k, bj * TILE + j]


@ti.kernel
def sum_all(x: f1, total: f1):
    total[0] = 0.0
    for i in range(x.shape[0]):
        total[0] += x[i]


@ti.kernel
def histogram(values: f1, bins: ti.i32, counts: ti.types.ndarray(dtype=ti.i32, ndim=1)):
    for b in range(bins):
        counts[b] = 0
    for i in range(values.shape[0]):
        b = ti.cast(values[i] * bins, ti.i32)
        if 0 <= b < bins:
            ti.atomic_add(counts[b], 1)


@ti.kernel
def life(grid: ti.types.ndarray(dtype=ti.u8, ndim=2), out: ti.types.ndarray(dtype=ti.u8, ndim=2)):
    for i, j in ti.ndrange((1, grid.shape[0] - 1), (1, grid.shape[1] - 1)):
        n = (ti.i32(grid[i - 1, j - 1]) + grid[i - 1, j] + grid[i - 1, j + 1] + grid[i, j - 1]
             + grid[i, j + 1] + grid[i + 1, j - 1] + grid[i + 1, j] + grid[i + 1, j + 1])
        alive = n == 3 or (n == 2 and grid[i, j] == 1)
        out[i, j] = ti.u8(1) if alive else ti.u8(0)
