"""Large arrays through numpy: np.save and a writable np.memmap, read back
with np.load(mmap_mode="r") and np.memmap, verified against a recomputation.

    memmap_array.py write DIR --mib N
    memmap_array.py read DIR --mib N
"""
import argparse
import os

import numpy as np


def expected(mib, seed):
    n = mib * (1 << 20) // 4
    return np.random.default_rng(seed).integers(0, 2**32, size=n, dtype=np.uint32).view(np.float32)


def fsync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["write", "read"])
    p.add_argument("dir")
    p.add_argument("--mib", type=int, default=128)
    a = p.parse_args()
    big, small = os.path.join(a.dir, "big.npy"), os.path.join(a.dir, "mapped.f32")
    if a.mode == "write":
        np.save(big, expected(a.mib, 1).reshape(-1, 1024))
        fsync_file(big)
        # Written through a shared writable mapping, in strided slices.
        m = np.memmap(small, dtype=np.float32, mode="w+", shape=(a.mib // 2 * (1 << 18),))
        want = expected(a.mib // 2, 2)
        for start in range(0, 7):
            m[start::7] = want[start::7]
        m.flush()
        del m
        fsync_file(small)
        return
    want = expected(a.mib, 1).reshape(-1, 1024)
    got = np.load(big, mmap_mode="r")
    assert isinstance(got, np.memmap) and got.shape == want.shape and got.dtype == want.dtype
    rng = np.random.default_rng(7)
    for _ in range(200):  # random rows first, as a data loader would
        i = int(rng.integers(0, want.shape[0]))
        assert np.array_equal(got[i].view(np.uint32), want[i].view(np.uint32)), i
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    m = np.memmap(small, dtype=np.float32, mode="r")
    assert np.array_equal(m.view(np.uint32), expected(a.mib // 2, 2).view(np.uint32))
    print("memmap reads verified: %d MiB + %d MiB" % (a.mib, a.mib // 2))


if __name__ == "__main__":
    main()
