import tack


@tack.data_oriented
class Grid:
    __tack_iterate__ = ("nx", "ny", "nz")
    spacing = 0.5

    @tack.func
    def position(self, c):
        return tack.vec3(c.x, c.y, c.z) * self.spacing + self.origin

    @tack.func
    def flat(self, c):
        return (c.z * self.ny + c.y) * self.nx + c.x


@tack.kernel
def sample(g, field, out):
    for c in g:
        p = g.position(c)
        out[c] = field[g.flat(c)] + p.x
        out[tack.ivec3(c.z, c.y, c.x)] += len(g.data)


@tack.kernel
def misuse(g, out):
    for i in range(out.shape[0]):
        g.nx = 1
        out[i] = g + g.missing(1) + g[i] + len(g) + g.position
