"""Five kernels that the demo, the tests, the benchmarks and the installed-package check share.

The file is plain Python: `import kernels` works where the `tack` package is installed, and the C++
API loads the same text with tack::Module::from_file.
"""
import tack

# Plummer softening for the n-body step, squared.
SOFTENING2 = tack.constant(1e-4)


@tack.kernel
def vector_add(x, y, out):
    for i in range(x.shape[0]):
        out[i] = x[i] + y[i]


@tack.kernel
def saxpy(a, x, y, out):
    for i in range(x.shape[0]):
        out[i] = a * x[i] + y[i]


@tack.kernel
def stencil5(u, out):
    """One Jacobi sweep of the 2-D 5-point Laplacian stencil over the interior."""
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
    """One all-pairs gravity step (G = 1): accelerations, then a semi-implicit Euler update."""
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
