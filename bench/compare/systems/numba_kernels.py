"""The comparison's workloads for Numba (parallel=True, prange), f32 throughout."""
import numpy as np
from numba import njit, prange

SOFTENING2 = np.float32(1e-4)
TILE = 32
HIST_CHUNK = 1 << 16

jit = njit(parallel=True, cache=True)


@jit
def saxpy(a, x, y, out):
    for i in prange(x.shape[0]):
        out[i] = a * x[i] + y[i]


@jit
def triad(q, b, c, a):
    for i in prange(b.shape[0]):
        a[i] = b[i] + q * c[i]


@jit
def stencil5(u, out):
    h, w = u.shape
    for i in prange(1, h - 1):
        for j in range(1, w - 1):
            out[i, j] = np.float32(0.25) * (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1])


@jit
def mandelbrot(out, x0, y0, dx, dy, max_iter):
    h, w = out.shape
    for i in prange(h):
        for j in range(w):
            cr = x0 + np.float32(j) * dx
            ci = y0 + np.float32(i) * dy
            zr = np.float32(0.0)
            zi = np.float32(0.0)
            n = 0
            while n < max_iter and zr * zr + zi * zi <= np.float32(4.0):
                t = zr * zr - zi * zi + cr
                zi = np.float32(2.0) * zr * zi + ci
                zr = t
                n += 1
            out[i, j] = n


@jit
def nbody_step(pos, vel, mass, new_pos, new_vel, dt):
    n = pos.shape[0]
    for i in prange(n):
        xi, yi, zi = pos[i, 0], pos[i, 1], pos[i, 2]
        ax = np.float32(0.0)
        ay = np.float32(0.0)
        az = np.float32(0.0)
        for j in range(n):
            dx = pos[j, 0] - xi
            dy = pos[j, 1] - yi
            dz = pos[j, 2] - zi
            r2 = dx * dx + dy * dy + dz * dz + SOFTENING2
            s = mass[j] / (r2 * np.sqrt(r2))
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


@jit
def matmul_naive(A, B, C):
    n, m = C.shape
    for i in prange(n):
        for j in range(m):
            s = np.float32(0.0)
            for k in range(A.shape[1]):
                s += A[i, k] * B[k, j]
            C[i, j] = s


@jit
def matmul_tiled(A, B, C):
    n, m = C.shape
    tiles_j = m // TILE
    for t in prange((n // TILE) * tiles_j):
        bi = t // tiles_j
        bj = t % tiles_j
        acc = np.zeros((TILE, TILE), np.float32)
        for kk in range(0, A.shape[1], TILE):
            for i in range(TILE):
                for k in range(TILE):
                    a = A[bi * TILE + i, kk + k]
                    for j in range(TILE):
                        acc[i, j] += a * B[kk + k, bj * TILE + j]
        for i in range(TILE):
            for j in range(TILE):
                C[bi * TILE + i, bj * TILE + j] = acc[i, j]


@jit
def sum_all(x):
    s = np.float32(0.0)
    for i in prange(x.shape[0]):
        s += x[i]
    return s


@jit
def histogram(values, bins, counts):
    n = values.shape[0]
    chunks = (n + HIST_CHUNK - 1) // HIST_CHUNK
    private = np.zeros((chunks, bins), np.int32)
    for c in prange(chunks):
        for i in range(c * HIST_CHUNK, min((c + 1) * HIST_CHUNK, n)):
            b = int(values[i] * bins)
            if 0 <= b < bins:
                private[c, b] += 1
    for b in range(bins):
        s = 0
        for c in range(chunks):
            s += private[c, b]
        counts[b] = s


@jit
def life(grid, out):
    h, w = grid.shape
    for i in prange(1, h - 1):
        for j in range(1, w - 1):
            n = (grid[i - 1, j - 1] + grid[i - 1, j] + grid[i - 1, j + 1] + grid[i, j - 1]
                 + grid[i, j + 1] + grid[i + 1, j - 1] + grid[i + 1, j] + grid[i + 1, j + 1])
            out[i, j] = 1 if (n == 3 or (n == 2 and grid[i, j] == 1)) else 0


@njit(cache=True)
def scan(x, out):
    out[:] = np.cumsum(x)


@njit(cache=True)
def argsort_stable(keys):
    return np.argsort(keys, kind="mergesort")
