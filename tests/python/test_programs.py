"""Real programs ported to Tack, each checked against a NumPy reference on every available backend:
Jacobi, 2-D heat diffusion, the wave equation, Conway's game of life, a histogram with atomics, a
Monte Carlo estimate of pi with tack.random, and a ray marcher with vectors. (Mandelbrot and the
n-body step are in test_kernels.py.)"""
import importlib.util
import pathlib

import numpy as np
import pytest

import tack
from support import bits_equal

import atomics
import kernels
import programs

# tests/kernels/random.py, under a name that does not shadow Python's random module.
_spec = importlib.util.spec_from_file_location(
    "random_kernels", pathlib.Path(__file__).parents[1] / "kernels" / "random.py")
tack_random = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tack_random)

pytestmark = pytest.mark.usefixtures("backend")

f32 = np.float32


def test_jacobi_iterations(rng):
    u = rng.random((48, 40), dtype=f32)
    a, b = tack.asarray(u), tack.asarray(u)
    want = u.copy()
    for _ in range(20):
        kernels.stencil5(a, b)
        a, b = b, a
        nxt = want.copy()
        nxt[1:-1, 1:-1] = f32(0.25) * (((want[:-2, 1:-1] + want[2:, 1:-1]) + want[1:-1, :-2])
                                       + want[1:-1, 2:])
        want = nxt
    bits_equal(a.numpy(), want)


def test_heat_diffusion(rng):
    u = rng.random((33, 29), dtype=f32)
    a, b = tack.asarray(u), tack.zeros(u.shape)
    want = u.copy()
    alpha = 0.2
    for _ in range(10):
        programs.heat_step(a, b, alpha)
        a, b = b, a
        nxt = want.copy()
        c = want[1:-1, 1:-1]
        lap = (((want[:-2, 1:-1] + want[2:, 1:-1]) + want[1:-1, :-2]) + want[1:-1, 2:]) \
            - f32(4) * c
        nxt[1:-1, 1:-1] = c + f32(alpha) * lap
        want = nxt
    bits_equal(a.numpy(), want)


def test_wave_equation(rng):
    n = 301
    x = np.linspace(0, 1, n, dtype=f32)
    cur = np.exp(-((x - f32(0.5)) ** 2) * f32(200)).astype(f32)
    cur[0] = cur[-1] = 0
    prev = cur.copy()
    bufs = [tack.asarray(prev), tack.asarray(cur), tack.zeros((n,))]
    c2 = 0.25
    for _ in range(50):
        programs.wave_step(*bufs, c2)
        bufs = [bufs[1], bufs[2], bufs[0]]
        nxt = np.zeros_like(cur)
        nxt[1:-1] = (f32(2) * cur[1:-1] - prev[1:-1]) + f32(c2) * (
            (cur[:-2] - f32(2) * cur[1:-1]) + cur[2:])
        prev, cur = cur, nxt
    bits_equal(bufs[1].numpy(), cur)


def test_game_of_life(rng):
    board = (rng.random((40, 50)) < 0.3).astype(np.int32)
    a, b = tack.asarray(board), tack.zeros(board.shape, dtype="i32")
    want = board.copy()
    for _ in range(12):
        programs.life_step(a, b)
        a, b = b, a
        n = sum(np.roll(np.roll(want, di, 0), dj, 1)
                for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0))
        want = ((n == 3) | ((n == 2) & (want == 1))).astype(np.int32)
    bits_equal(a.numpy(), want)


def test_histogram_with_atomics(rng):
    values = rng.random(20_000, dtype=f32)
    counts = tack.zeros((16,), dtype="i32")
    atomics.histogram(tack.asarray(values), 16, counts)
    want = np.bincount(np.minimum((values * f32(16)).astype(np.int32), 15), minlength=16)
    bits_equal(counts.numpy(), want.astype(np.int32))


# ---- tack.random, recomputed in NumPy from its definition (docs/language.md) ----

M64 = np.uint64


def seed(index, stream):
    with np.errstate(over="ignore"):
        z = index.astype(M64) * M64(0x9E3779B97F4A7C15) + M64(stream)
        z = (z ^ (z >> M64(30))) * M64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> M64(27))) * M64(0x94D049BB133111EB)
        return z ^ (z >> M64(31))


def uniform(state):
    with np.errstate(over="ignore"):
        nxt = state * M64(6364136223846793005) + M64(1442695040888963407)
    x = (((state >> M64(18)) ^ state) >> M64(27)).astype(np.uint32)
    rot = (state >> M64(59)).astype(np.uint32)
    bits = (x >> rot) | (x << ((-rot.astype(np.int64)).astype(np.uint32) & np.uint32(31)))
    return (bits >> np.uint32(8)).astype(f32) * f32(1.0 / 16777216.0), nxt


def test_monte_carlo_pi():
    threads, samples = 512, 200
    hits = tack.zeros((threads,), dtype="i32")
    tack_random.monte_carlo_pi(samples, hits)
    s = seed(np.arange(threads), 7)
    count = np.zeros(threads, np.int32)
    for _ in range(samples):
        x, s = uniform(s)
        y, s = uniform(s)
        count += (x * x + y * y < f32(1)).astype(np.int32)
    bits_equal(hits.numpy(), count)
    estimate = 4 * count.sum() / (threads * samples)
    assert abs(estimate - np.pi) < 0.02


# ---- the ray marcher ----


def length(x, y, z):
    return np.sqrt((x * x + y * y) + z * z)


def scene(px, py, pz):
    big = length(px - f32(0), py - f32(0), pz - f32(-3)) - f32(1)
    small = length(px - f32(1.2), py - f32(0.3), pz - f32(-2.5)) - f32(0.5)
    return np.minimum(np.minimum(big, small), py + f32(1))


def raymarch_reference(h, w, max_steps):
    y, x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    u = (x.astype(f32) + f32(0.5)) / f32(w) * f32(2) - f32(1)
    v = f32(1) - (y.astype(f32) + f32(0.5)) / f32(h) * f32(2)
    dz = np.full_like(u, f32(-1.5))
    dl = length(u, v, dz)
    dx, dy, dz = u / dl, v / dl, dz / dl
    t = np.zeros_like(u)
    px = py = pz = np.zeros_like(u)
    active = np.ones(u.shape, bool)
    hit = np.zeros(u.shape, bool)
    for _ in range(max_steps):
        px, py, pz = (np.where(active, dx * t, px), np.where(active, dy * t, py),
                      np.where(active, dz * t, pz))
        dist = scene(px, py, pz)
        now = active & (dist < f32(0.001))
        hit |= now
        active &= ~now
        t = np.where(active, t + dist, t)
        active &= ~(t > f32(20))
    e, z0 = f32(0.001), f32(0)
    nx = scene(px + e, py + z0, pz + z0) - scene(px - e, py - z0, pz - z0)
    ny = scene(px + z0, py + e, pz + z0) - scene(px - z0, py - e, pz - z0)
    nz = scene(px + z0, py + z0, pz + e) - scene(px - z0, py - z0, pz - e)
    nl = length(nx, ny, nz)
    nx, ny, nz = nx / nl, ny / nl, nz / nl
    ll = length(f32(1), f32(1), f32(0.5))
    lx, ly, lz = f32(1) / ll, f32(1) / ll, f32(0.5) / ll
    diffuse = np.maximum((nx * lx + ny * ly) + nz * lz, f32(0))
    image = np.empty((h, w, 3), f32)
    for c, (albedo, sky) in enumerate([(0.8, 0.1), (0.7, 0.1), (0.6, 0.2)]):
        image[:, :, c] = np.where(hit, f32(albedo) * diffuse + f32(0.1), f32(sky))
    return image


def test_ray_marcher_with_vectors():
    h, w = 48, 64
    image = tack.zeros((h, w, 3))
    with np.errstate(invalid="ignore", divide="ignore"):
        want = raymarch_reference(h, w, 64)
    programs.raymarch(image, 64)
    got = image.numpy()
    bits_equal(got, want)
    assert (got[:, :, 0] > 0.5).any() and (got[:, :, 2] == f32(0.2)).any()  # surfaces and sky


def test_random_directions_are_unit_vectors_from_their_definition():
    n = 4096
    out = tack.zeros((n, 3))
    tack_random.directions(out)
    got = out.numpy()
    u1, s = uniform(seed(np.arange(n), 11))
    u2, _ = uniform(s)
    z = f32(1) - f32(2) * u1
    bits_equal(np.ascontiguousarray(got[:, 2]), z)  # exact: only integer operations and exact float ones
    r = np.sqrt(np.maximum(f32(0), f32(1) - z * z))
    phi = f32(2 * np.pi) * u2
    np.testing.assert_allclose(got[:, 0], r * np.cos(phi), atol=2e-6)
    np.testing.assert_allclose(got[:, 1], r * np.sin(phi), atol=2e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1, atol=1e-5)
    assert abs(got.mean(axis=0)).max() < 0.05  # no preferred direction
