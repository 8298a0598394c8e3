"""More programs written in Tack: heat diffusion, the wave equation, Conway's game of life.

Each is checked against plain C++ in tests/cpp/test_programs.cpp and against NumPy in the Python
tests.
"""
import tack


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
