"""Sharded checkpoint: WORLD rank processes save one file each at once.

    sharded_save.py save DIR --world N --steps S   # ranks via torch.multiprocessing
    sharded_save.py verify DIR --world N --steps S # fresh process: load and compare

Each step goes to DIR/step-S.tmp/rank-R.pt (torch.save, fsync, rename);
after a barrier rank 0 writes the step's metadata, renames the directory to
DIR/step-S, fsyncs DIR and deletes the previous step, as a trainer keeping
one checkpoint does. Shard contents depend only on (rank, step).
"""
import argparse
import os
import shutil
import sys

import torch
import torch.multiprocessing as mp


def fsync_path(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def shard(rank, step):
    g = torch.Generator().manual_seed(1000 * step + rank)
    # Tensor sizes like a layer slice: a big matrix, a bias, a half tensor.
    return {
        "layers.%d.weight" % rank: torch.randn(1024, 1536, generator=g),
        "layers.%d.bias" % rank: torch.randn(1536, generator=g),
        "layers.%d.norm" % rank: torch.randn(4096, 129, generator=g).half(),
        "step": step,
        "rank": rank,
    }


def rank_main(rank, world, root, steps, barrier):
    torch.set_num_threads(1)
    for step in range(1, steps + 1):
        tmp_dir = os.path.join(root, "step-%d.tmp" % step)
        if rank == 0:
            os.makedirs(tmp_dir)
        barrier.wait()
        path = os.path.join(tmp_dir, "rank-%d.pt" % rank)
        torch.save(shard(rank, step), path + ".tmp")
        fsync_path(path + ".tmp")
        os.rename(path + ".tmp", path)
        barrier.wait()
        if rank == 0:
            with open(os.path.join(tmp_dir, "metadata"), "w") as f:
                f.write("world=%d step=%d\n" % (world, step))
                os.fsync(f.fileno())
            fsync_path(tmp_dir)
            os.rename(tmp_dir, os.path.join(root, "step-%d" % step))
            fsync_path(root)
            if step > 1:
                shutil.rmtree(os.path.join(root, "step-%d" % (step - 1)))
                fsync_path(root)
        barrier.wait()


def verify(root, world, steps):
    names = sorted(os.listdir(root))
    assert names == ["step-%d" % steps], names
    d = os.path.join(root, names[0])
    assert sorted(os.listdir(d)) == sorted(["metadata"] + ["rank-%d.pt" % r for r in range(world)])
    for r in range(world):
        got, want = torch.load(os.path.join(d, "rank-%d.pt" % r)), shard(r, steps)
        assert got.keys() == want.keys(), (r, got.keys())
        for k, v in want.items():
            if isinstance(v, torch.Tensor):
                assert got[k].dtype == v.dtype and torch.equal(got[k], v), (r, k)
            else:
                assert got[k] == v, (r, k)
    print("verified %d shards of step %d" % (world, steps))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["save", "verify"])
    p.add_argument("dir")
    p.add_argument("--world", type=int, default=4)
    p.add_argument("--steps", type=int, default=2)
    a = p.parse_args()
    if a.mode == "verify":
        verify(a.dir, a.world, a.steps)
        return
    os.makedirs(a.dir, exist_ok=True)
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(a.world)
    procs = [ctx.Process(target=rank_main, args=(r, a.world, a.dir, a.steps, barrier))
             for r in range(a.world)]
    for pr in procs:
        pr.start()
    for pr in procs:
        pr.join()
    codes = [pr.exitcode for pr in procs]
    if any(codes):
        sys.exit("rank exit codes %s" % codes)


if __name__ == "__main__":
    main()
