"""A small deterministic trainer that checkpoints the way real trainers do.

    trainer.py --dir DIR --steps N [--every K] [--keep N] [--seed S] [--resume]

Every K steps it saves {model, optimizer, step} with torch.save to
DIR/ckpt-STEP.pt.tmp, fsyncs it, renames it to DIR/ckpt-STEP.pt, rewrites
DIR/latest (a temporary name fsynced and renamed over the old one), fsyncs
DIR, and deletes all but the newest --keep checkpoints. With --resume it
first loads DIR/latest with torch.load and continues from that step. Batches
depend only on (seed, step), so a resumed run computes bit-identical tensors
to an uninterrupted one.
"""
import argparse
import os

import torch


def fsync_path(path, flags=os.O_RDONLY):
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def make_model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(256, 768), torch.nn.ReLU(),
                               torch.nn.Linear(768, 512), torch.nn.ReLU(),
                               torch.nn.Linear(512, 64))


def batch(seed, step):
    g = torch.Generator().manual_seed(seed * 100003 + step)
    return torch.randn(64, 256, generator=g), torch.randn(64, 64, generator=g)


def save_checkpoint(ckpt_dir, step, model, opt, keep):
    name = "ckpt-%06d.pt" % step
    final = os.path.join(ckpt_dir, name)
    tmp = final + ".tmp"
    torch.save({"step": step, "model": model.state_dict(), "optim": opt.state_dict()}, tmp)
    fsync_path(tmp)
    os.rename(tmp, final)
    latest_tmp = os.path.join(ckpt_dir, "latest.tmp")
    with open(latest_tmp, "w") as f:
        f.write(name + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.rename(latest_tmp, os.path.join(ckpt_dir, "latest"))  # over the last one
    fsync_path(ckpt_dir)  # the renames themselves
    ckpts = sorted(n for n in os.listdir(ckpt_dir) if n.startswith("ckpt-") and n.endswith(".pt"))
    for old in ckpts[:-keep]:
        os.unlink(os.path.join(ckpt_dir, old))
    fsync_path(ckpt_dir)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--dir", required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--every", type=int, default=2)
    p.add_argument("--keep", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--resume", action="store_true")
    a = p.parse_args()
    torch.set_num_threads(1)  # same reduction order in every process
    os.makedirs(a.dir, exist_ok=True)
    model = make_model(a.seed)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    start = 0
    if a.resume:
        with open(os.path.join(a.dir, "latest")) as f:
            name = f.read().strip()
        state = torch.load(os.path.join(a.dir, name))
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optim"])
        start = state["step"]
        print("resumed from", name)
    for step in range(start + 1, a.steps + 1):
        x, y = batch(a.seed, step)
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % a.every == 0 or step == a.steps:
            save_checkpoint(a.dir, step, model, opt, a.keep)


if __name__ == "__main__":
    main()
