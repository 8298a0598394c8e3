"""More programs written in Tack: heat diffusion, the wave equation, Conway's game of life, and a
ray marcher with vectors.

Each is checked against plain C++ in tests/cpp/test_programs.cpp and against NumPy in the Python
tests.
"""
import tack
from tack import vec3


@tack.kernel
def heat_step(u, out, alpha):
    """Explicit 2-D heat diffusion with fixed (Dirichlet) borders."""
    for i, j in tack.ndrange(u.shape[0], u.shape[1]):
        if i == 0 or j == 0 or i == u.shape[0] - 1 or j == u.shape[1] - 1:
            out[i, j] = u[i, j]
        else:
            lap = u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j]
            out[i, j] = u[i, j] + alpha * lap


@tack.kernel
def wave_step(prev, cur, nxt, c2):
    """1-D wave equation, leapfrog: next = 2 cur - prev + c^2 (laplacian of cur); ends fixed."""
    n = cur.shape[0]
    for i in range(n):
        if i == 0 or i == n - 1:
            nxt[i] = 0.0
        else:
            nxt[i] = 2.0 * cur[i] - prev[i] + c2 * (cur[i - 1] - 2.0 * cur[i] + cur[i + 1])


@tack.func
def alive(board, i, j):
    """1 when the cell is alive, with the board wrapping around (a torus)."""
    h = board.shape[0]
    w = board.shape[1]
    return board[(i + h) % h, (j + w) % w]


@tack.kernel
def life_step(board, out):
    for i, j in tack.ndrange(board.shape[0], board.shape[1]):
        n = 0
        for di in range(-1, 2):
            for dj in range(-1, 2):
                if di != 0 or dj != 0:
                    n += alive(board, i + di, j + dj)
        out[i, j] = 1 if n == 3 or (n == 2 and board[i, j] == 1) else 0


SPHERE = tack.constant((0.0, 0.0, -3.0))
LIGHT = tack.constant((1.0, 1.0, 0.5))


@tack.func
def scene(p):
    """The distance from p to the nearest surface: two spheres above a floor."""
    big = tack.length(p - vec3(SPHERE)) - 1.0
    small = tack.length(p - vec3(1.2, 0.3, -2.5)) - 0.5
    return min(big, small, p.y + 1.0)


@tack.func
def surface_normal(p):
    """The scene's gradient at p, by central differences."""
    e = 0.001
    dx = scene(p + vec3(e, 0.0, 0.0)) - scene(p - vec3(e, 0.0, 0.0))
    dy = scene(p + vec3(0.0, e, 0.0)) - scene(p - vec3(0.0, e, 0.0))
    dz = scene(p + vec3(0.0, 0.0, e)) - scene(p - vec3(0.0, 0.0, e))
    return tack.normalize(vec3(dx, dy, dz))


@tack.kernel
def raymarch(image, max_steps):
    """Sphere tracing from a camera at the origin; image is (height, width, 3) RGB."""
    for y, x in tack.ndrange(image.shape[0], image.shape[1]):
        u = (tack.f32(x) + 0.5) / tack.f32(image.shape[1]) * 2.0 - 1.0
        v = 1.0 - (tack.f32(y) + 0.5) / tack.f32(image.shape[0]) * 2.0
        d = tack.normalize(vec3(u, v, -1.5))
        p = vec3(0.0)
        t = 0.0
        hit = False
        for k in range(max_steps):
            p = d * t
            dist = scene(p)
            if dist < 0.001:
                hit = True
                break
            t += dist
            if t > 20.0:
                break
        color = vec3(0.1, 0.1, 0.2)
        if hit:
            diffuse = max(tack.dot(surface_normal(p), tack.normalize(vec3(LIGHT))), 0.0)
            color = vec3(0.8, 0.7, 0.6) * diffuse + 0.1
        image[y, x] = color
