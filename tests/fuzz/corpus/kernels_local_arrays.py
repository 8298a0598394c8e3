"""Local arrays: per-thread scratch storage sized at compilation."""
import tack

DEPTH = tack.constant(8)


@tack.func
def push(stack, top, v):
    stack[top] = v
    return top + 1


@tack.kernel
def digits_reversed(x, out):
    scratch = tack.local_array(tack.i32, DEPTH)       # before the loop: fresh in every iteration
    for i in range(x.shape[0]):
        n = x[i]
        top = 0
        while n > 0 and top < len(scratch):
            top = push(scratch, top, n % 10)
            n = n // 10
        value = 0
        for k in range(len(scratch)):
            value = value * 10 + scratch[k]
        out[i] = value


@tack.kernel
def running_max(x, out):
    for i in range(x.shape[0]):
        window = tack.local_array_like(x, 4)
        for k in range(4):
            j = i - k
            window[k] = x[j] if j >= 0 else 0.0
        m = window[0]
        for k in range(1, 4):
            m = max(m, window[k])
        out[i] = m


@tack.kernel
def overflow(out):
    for i in range(out.shape[0]):
        buf = tack.local_array(tack.f32, 4)
        buf[i] = 1.0
        out[i] = buf[0]
