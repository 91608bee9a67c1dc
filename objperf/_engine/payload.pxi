# The incompressible, random-access payload stream that uploads send.

cdef inline uint64_t splitmix64(uint64_t x) noexcept nogil:
    x += 0x9E3779B97F4A7C15ULL
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL
    return x ^ (x >> 31)


def fill_payload(unsigned char[::1] out not None, uint64_t seed, int64_t start=0):
    """Fill ``out`` with bytes ``start:start+len(out)`` of the payload stream of ``seed``.

    Word i (8 bytes, little-endian) of the stream is splitmix64(seed·2^32 + i): incompressible,
    random-access (so parts can be made one at a time and still join up) and about 0.15 s/GiB."""
    cdef int64_t n = out.shape[0], i, word, first
    cdef uint64_t value
    cdef unsigned char *dst = &out[0] if n > 0 else NULL
    cdef uint64_t base = seed << 32
    if start < 0:
        raise ValueError("start must be >= 0")
    with nogil:
        i = 0
        while i < n:
            word = (start + i) >> 3
            first = (start + i) & 7
            value = splitmix64(base + <uint64_t>word)
            if first == 0 and n - i >= 8:
                memcpy(dst + i, &value, 8)  # little-endian hosts: byte k of the word is value >> 8k
                i += 8
                continue
            while first < 8 and i < n:
                dst[i] = <unsigned char>(value >> (8 * first))
                first += 1
                i += 1
