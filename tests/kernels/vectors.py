"""Vectors and matrices: the kernels of the conformance suite's vector tests (tests/python/
test_vectors.py checks them against NumPy; tests/cpp/test_vectors.cpp against plain C++)."""
import tack
from tack import vec2, vec3, vec4, ivec3, uvec2, dvec3, mat2, mat3, mat4, dmat3

ORIGIN = tack.constant((0.5, -1.0, 2.0))
SCALE = tack.constant(3)


@tack.kernel
def arithmetic(a, b, out_sum, out_mix, out_neg):
    """Componentwise + - * / with vectors and scalars; a and b are arrays of vec3."""
    for i in range(a.shape[0]):
        u = a[i]
        v = b[i]
        out_sum[i] = u + v * 2.0 - 1.0
        out_mix[i] = (u * v) / (v + 4.0)
        out_neg[i] = -u


@tack.kernel
def construct_and_swizzle(a, out4, out2, out3):
    for i in range(a.shape[0]):
        v = a[i]
        w = vec4(v.xy, v.z, 1.0)
        out4[i] = w.wzyx
        out2[i] = vec2(w.x + w.y, w.z * w.w)
        c = vec3(v.z)
        c.x = v.y
        c.yz = v.xx
        c.z += 0.5
        c[1] = c[1] * 2.0
        out3[i] = c


@tack.kernel
def dynamic_index(a, k, out, out_vec):
    """v[k] with a k known only at run time, read and written."""
    for i in range(a.shape[0]):
        v = a[i]
        j = k[i]
        out[i] = v[j]
        v[j] = 10.0
        out_vec[i] = v


@tack.kernel
def masks(a, b, out_lt, out_any, out_all, out_sel):
    for i in range(a.shape[0]):
        u = a[i]
        v = b[i]
        m = u < v
        out_lt[i] = tack.select(m, vec3(1.0), vec3(0.0))
        out_any[i] = 1 if tack.any(m) else 0
        out_all[i] = 1 if tack.all(u >= v) else 0
        out_sel[i] = tack.select(u == v, u, tack.max(u, v))


@tack.kernel
def geometry(a, b, out_dot, out_cross, out_len, out_dist, out_norm, out_refl):
    for i in range(a.shape[0]):
        u = a[i]
        v = b[i]
        out_dot[i] = tack.dot(u, v)
        out_cross[i] = tack.cross(u, v)
        out_len[i] = tack.length(u)
        out_dist[i] = tack.distance(u, v)
        out_norm[i] = tack.normalize(u)
        out_refl[i] = tack.reflect(u, tack.normalize(v))


@tack.kernel
def math_componentwise(a, out_sqrt, out_floor, out_clamp, out_mix, out_abs, out_fract):
    for i in range(a.shape[0]):
        v = a[i]
        out_sqrt[i] = tack.sqrt(tack.abs(v))
        out_floor[i] = tack.floor(v)
        out_clamp[i] = tack.clamp(v, -0.5, 0.5)
        out_mix[i] = tack.mix(v, vec3(1.0, 2.0, 3.0), 0.25)
        out_abs[i] = abs(v)
        out_fract[i] = tack.fract(v)


@tack.kernel
def int_vectors(a, out):
    """ivec3 wraps and floors like i32; a is an i32 array of ivec3."""
    for i in range(a.shape[0]):
        v = a[i]
        w = ivec3(7, -7, 3)
        out[i] = (v * w) // ivec3(4) + v % 5 - ivec3(tack.i32(SCALE))


@tack.kernel
def uint_and_double(a, out_u, d, out_d):
    for i in range(a.shape[0]):
        u = uvec2(a[i, 0], a[i, 1])
        u = u * tack.u32(3) + tack.u32(1)
        out_u[i] = u
        p = d[i]
        q = dvec3(ORIGIN) + p * 0.1
        out_d[i] = q


@tack.kernel
def matrices(m_in, v_in, out_mv, out_vm, out_mm, out_t, out_det, out_inv, out_elem):
    """m_in holds 3x3 matrices row-major: m_in[i, r, c]."""
    for i in range(m_in.shape[0]):
        m = mat3(
            vec3(m_in[i, 0, 0], m_in[i, 1, 0], m_in[i, 2, 0]),
            vec3(m_in[i, 0, 1], m_in[i, 1, 1], m_in[i, 2, 1]),
            vec3(m_in[i, 0, 2], m_in[i, 1, 2], m_in[i, 2, 2]),
        )
        v = v_in[i]
        out_mv[i] = m @ v
        out_vm[i] = v @ m
        p = m @ tack.transpose(m)
        t = tack.transpose(m)
        inv = tack.inverse(m)
        for r in range(3):
            for c in range(3):
                out_mm[i, r, c] = p[r, c]
                out_t[i, r, c] = t[r, c]
                out_inv[i, r, c] = inv[r, c]
        out_det[i] = tack.determinant(m)
        e = mat2(1.0)
        e[0, 1] = 5.0
        out_elem[i] = e @ vec2(1.0, 2.0)


@tack.kernel
def matrix_sizes(m2, m4, out_det2, out_det4, out_inv4):
    for i in range(m2.shape[0]):
        a = mat2(m2[i, 0, 0], m2[i, 1, 0], m2[i, 0, 1], m2[i, 1, 1])
        out_det2[i] = tack.determinant(a)
        b = mat4(0.0)
        for r in range(4):
            for c in range(4):
                b[r, c] = m4[i, r, c]
        out_det4[i] = tack.determinant(b)
        inv = tack.inverse(b)
        for r in range(4):
            for c in range(4):
                out_inv4[i, r, c] = inv[r, c]


@tack.kernel
def double_matrix(m_in, out):
    for i in range(m_in.shape[0]):
        m = dmat3(1.0)
        for r in range(3):
            for c in range(3):
                m[r, c] = m_in[i, r, c]
        out[i] = tack.determinant(m)


@tack.func
def lambert(n, l):
    """A vector function: a vector and a scalar back."""
    h = tack.normalize(n + l)
    return h, tack.max(tack.dot(n, l), 0.0)


@tack.kernel
def vector_functions(n, l, out_h, out_d):
    for i in range(n.shape[0]):
        h, d = lambert(n[i], l[i])
        out_h[i] = h
        out_d[i] = d


@tack.kernel
def accumulate(a, out):
    """out[i] += v on an array of vectors, and vectors in a sequential loop."""
    for i in range(a.shape[0]):
        acc = vec3(0.0)
        for k in range(4):
            acc += a[i] * tack.f32(k)
        out[i] += acc


@tack.kernel
def print_vector(a):
    for i in range(1):
        print("v =", a[i], "m =", mat2(1.0))


@tack.kernel
def sample3d(tex, coords, out):
    """coords is (n, 3): normalized (u, v, w) per sample."""
    for i in range(coords.shape[0]):
        c = coords[i]
        out[i] = tex.sample(c.x, c.y, c.z)


@tack.kernel
def sample2d(tex, coords, out):
    for i in range(coords.shape[0]):
        out[i] = tex.sample(coords[i, 0], coords[i, 1])


@tack.kernel
def stores_into_texture(tex, out):
    for i in range(out.shape[0]):
        tex[0, 0] = out[i]  # MARK-texture-store


@tack.kernel
def march_volume(volume, image, steps):
    """Orthographic ray marching along z: pixel (y, x) of image averages `steps` samples of the
    volume on the ray through its centre."""
    for y, x in tack.ndrange(image.shape[0], image.shape[1]):
        u = (tack.f32(x) + 0.5) / tack.f32(image.shape[1])
        v = (tack.f32(y) + 0.5) / tack.f32(image.shape[0])
        acc = tack.f32(0.0)
        for k in range(steps):
            acc += volume.sample(u, v, (tack.f32(k) + 0.5) / tack.f32(steps))
        image[y, x] = acc / tack.f32(steps)
