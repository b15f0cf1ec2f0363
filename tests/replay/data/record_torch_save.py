# Recorded for tests/replay/data/torch_save_2ranks.strace (see docs/replay.md):
#   strace -f -tt -e trace=openat,write,writev,pwrite64,read,pread64,lseek,fsync,fdatasync,close,rename,renameat,renameat2,mkdir,mkdirat,unlink,unlinkat \
#     -o full.strace /usr/bin/python3 record_torch_save.py /tmp/st2/ckpt
# then kept the lines from the mkdir of the checkpoint root on.
# Two "ranks" (processes) each torch.save a model shard and its Adam state into
# a DeepSpeed-style step directory; rank 0 then publishes a "latest" tag by
# write-to-temp + rename, and rank 1 loads its shard back.
import os, sys, torch, torch.multiprocessing as mp

def rank_main(rank, root):
    torch.manual_seed(rank)
    model = torch.nn.Sequential(torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64))
    opt = torch.optim.Adam(model.parameters())
    model(torch.randn(2, 128)).sum().backward(); opt.step()
    step = os.path.join(root, "global_step10")
    os.makedirs(step, exist_ok=True)
    with open(os.path.join(step, f"mp_rank_{rank:02d}_model_states.pt"), "wb") as f:
        torch.save(model.state_dict(), f)
        f.flush(); os.fsync(f.fileno())
    torch.save(opt.state_dict(), os.path.join(step, f"zero_pp_rank_{rank}_mp_rank_00_optim_states.pt"))
    if rank == 0:
        with open(os.path.join(root, "latest.tmp"), "w") as f:
            f.write("global_step10"); f.flush(); os.fsync(f.fileno())
        os.rename(os.path.join(root, "latest.tmp"), os.path.join(root, "latest"))
    else:
        torch.load(os.path.join(step, f"mp_rank_{rank:02d}_model_states.pt"))

if __name__ == "__main__":
    root = sys.argv[1]
    os.makedirs(root, exist_ok=True)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=rank_main, args=(r, root)) for r in range(2)]
    for p in procs: p.start()
    for p in procs: p.join()
