"""tack.random: counter-based, explicit state, the same bits on every backend."""
import tack


@tack.kernel
def draws(uniforms, normals):
    for i in range(uniforms.shape[0]):
        s = tack.random.seed(i, 3)
        u, s = tack.random.uniform(s)
        uniforms[i] = u
        z, s = tack.random.normal(s)
        normals[i] = z


@tack.kernel
def monte_carlo_pi(samples, hits):
    for i in range(hits.shape[0]):
        s = tack.random.seed(i, 7)
        count = 0
        for k in range(samples):
            x, s = tack.random.uniform(s)
            y, s = tack.random.uniform(s)
            if x * x + y * y < 1.0:
                count += 1
        hits[i] = count


@tack.kernel
def directions(out):
    """out is (n, 3): one random unit vector per row."""
    for i in range(out.shape[0]):
        s = tack.random.seed(i, 11)
        d, s = tack.random.direction3(s)
        out[i] = d
