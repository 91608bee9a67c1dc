# The RAM sink's memory: fresh anonymous pages, faulted in before the run, one slice per slot.

cdef extern from "<sys/mman.h>" nogil:
    int madvise(void *addr, size_t length, int advice)

PAGE = mmap.PAGESIZE
FAULT_SLICE = 16 << 20
HUGE_PAGES_UP_TO = 256 << 20  # slot buffers in huge pages: at most 0.35 s more to fault before the run
cdef size_t PAGE_BYTES = PAGE
cdef int MADV_POPULATE_WRITE = getattr(mmap, "MADV_POPULATE_WRITE", 23)  # Linux's value; Python names it from 3.13


cdef int fault_in(char *start, size_t length) noexcept nogil:
    """0, or the errno that says the pages cannot be had (touching them would wake the OOM killer)."""
    cdef size_t at = 0
    if madvise(start, length, MADV_POPULATE_WRITE) == 0:
        return 0
    if errno != EINVAL:
        return errno
    while at < length:  # kernels before 5.14: write one byte per page
        start[at] = 0
        at += PAGE_BYTES
    return 0


def _fault_in_slice(cnp.ndarray part, list failures):
    cdef int err
    with nogil:
        err = fault_in(<char *>cnp.PyArray_DATA(part), <size_t>part.shape[0])
    if err:
        failures.append(err)


def page_array(int64_t nbytes, bint huge=True):
    """A zeroed uint8 array on fresh anonymous memory, its pages faulted in now.

    Private pages: a shared anonymous mapping (mmap's default) is backed by shmem, whose
    pages cost half as much again to fault and three times as much to free.
    Huge pages up to HUGE_PAGES_UP_TO, small ones beyond, asked for up front (MADV_POPULATE_WRITE,
    Linux 5.14+; populating skips the write pass that touching every page would be).  The RAM sink's
    copy into huge pages took a quarter less CPU per GiB (0.104 s against 0.137 beyond the discard
    sink, 8 slots of 8 MiB from nginx), since every 4 KiB it writes no longer needs a page walk.  But
    on a virtual machine a fresh huge page costs more to fault than 512 small ones (1 GiB: 1.4 s
    against 0.16 s), before the run starts: beyond the cap the wait would outweigh the gain.
    Faulting costs about 0.6 ms of CPU per MiB on a VM, so large arrays are faulted by one thread per
    core (each at least FAULT_SLICE bytes): 128 MiB of slot buffers in half the time on two.  ``huge=False``:
    small pages whatever the size, for a run too short to win back the slower fault (0.015 to 0.25 s for
    128 MiB here, as the kernel has huge pages free or must compact memory for them, against 0.07 s)."""
    region = mmap.mmap(-1, max(nbytes, 1), flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if huge and nbytes <= HUGE_PAGES_UP_TO and hasattr(mmap, "MADV_HUGEPAGE"):
        region.madvise(mmap.MADV_HUGEPAGE)
    elif hasattr(mmap, "MADV_NOHUGEPAGE"):
        region.madvise(mmap.MADV_NOHUGEPAGE)
    whole = np.frombuffer(region, dtype=np.uint8)
    workers = max(1, min(os.cpu_count() or 1, len(whole) // FAULT_SLICE))
    step = -(-len(whole) // workers // PAGE) * PAGE
    parts = [whole[at:at + step] for at in range(0, len(whole), step)]
    failures = []
    helpers = [threading.Thread(target=_fault_in_slice, args=(part, failures)) for part in parts[1:]]
    for helper in helpers:
        helper.start()
    _fault_in_slice(parts[0], failures)
    for helper in helpers:
        helper.join()
    if failures:
        del whole, parts
        try:
            region.close()
        except BufferError:  # a helper thread not yet gone still holds its slice; the collector frees it
            pass
        raise MemoryError(f"cannot have {nbytes:,} bytes of memory: {os.strerror(failures[0])}")
    return whole[:nbytes]


def slot_region(int nslots, int64_t slot_cap, bint huge=True):
    """The RAM sink's slot buffers: one mapping, a page-aligned slice per slot (``huge``: see page_array)."""
    stride = (slot_cap + PAGE - 1) // PAGE * PAGE
    whole = page_array(stride * nslots, huge)
    return [whole[i * stride:i * stride + slot_cap] for i in range(nslots)]
