#!/usr/bin/python3
"""A short real training run, dumped the ways a checkpoint holds it.

Trains a small byte-level transformer language model (about 3.3 M
parameters) with torch.optim.Adam on the licence texts every Debian system
ships (/usr/share/common-licenses), on the CPU, for a fixed number of steps
or a time budget, then writes into OUT_DIR:

  model-fp32.pt, model-bf16.pt, optimizer.pt   torch.save() checkpoints
  fp32-weights.bin      every parameter, float32, concatenated
  bf16-weights.bin      the same parameters rounded to bfloat16
  adam-exp-avg.bin      Adam's first moments (float32)
  adam-exp-avg-sq.bin   Adam's second moments (float32)
  manifest.json         steps, losses, tensor names and sizes

The .bin files are what ckptfs-compress-bench reads as the data kinds.
Needs Debian's /usr/bin/python3 (torch and numpy from python3-torch).

usage: /usr/bin/python3 train_and_dump.py [--out DIR] [--steps N] [--seconds S]
"""
import argparse
import glob
import json
import math
import os
import time

import torch
import torch.nn as nn


class CharLM(nn.Module):
    def __init__(self, vocab=256, d=256, layers=4, heads=4, ff=1024, context=64):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(context, d)
        layer = nn.TransformerEncoderLayer(d, heads, ff, dropout=0.0, batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)
        mask = torch.triu(torch.full((context, context), float("-inf")), diagonal=1)
        self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        t = x.shape[1]
        h = self.tok(x) + self.pos(torch.arange(t, device=x.device))
        h = self.blocks(h, mask=self.mask[:t, :t])
        return self.head(self.norm(h))


def corpus():
    text = b""
    for path in sorted(glob.glob("/usr/share/common-licenses/*")):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                text += f.read()
    return torch.tensor(list(text), dtype=torch.long)


def write_raw(path, tensors, dtype):
    with open(path, "wb") as f:
        for t in tensors:
            t = t.detach().to(dtype).contiguous()
            if dtype == torch.bfloat16:  # numpy has no bfloat16: write its bits
                t = t.view(torch.int16)
            f.write(t.cpu().numpy().tobytes())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="/var/tmp/weights/train")
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--seconds", type=float, default=110.0)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--context", type=int, default=64)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)

    data = corpus()
    model = CharLM(context=args.context)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    params = sum(p.numel() for p in model.parameters())
    print(f"corpus {len(data)} bytes, model {params} parameters", flush=True)

    start, losses, step = time.time(), [], 0
    while step < args.steps and time.time() - start < args.seconds:
        idx = torch.randint(0, len(data) - args.context - 1, (args.batch,))
        x = torch.stack([data[i:i + args.context] for i in idx])
        y = torch.stack([data[i + 1:i + args.context + 1] for i in idx])
        loss = nn.functional.cross_entropy(model(x).reshape(-1, 256), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        step += 1
        if step % 10 == 0:
            print(f"step {step} loss {sum(losses[-10:]) / 10:.3f} ({time.time() - start:.0f} s)",
                  flush=True)

    state = model.state_dict()
    torch.save(state, os.path.join(args.out, "model-fp32.pt"))
    torch.save({k: v.to(torch.bfloat16) for k, v in state.items()},
               os.path.join(args.out, "model-bf16.pt"))
    torch.save(opt.state_dict(), os.path.join(args.out, "optimizer.pt"))

    named = list(model.named_parameters())
    tensors = [p for _, p in named]
    write_raw(os.path.join(args.out, "fp32-weights.bin"), tensors, torch.float32)
    write_raw(os.path.join(args.out, "bf16-weights.bin"), tensors, torch.bfloat16)
    moments = [opt.state[p] for p in tensors]
    write_raw(os.path.join(args.out, "adam-exp-avg.bin"), [m["exp_avg"] for m in moments],
              torch.float32)
    write_raw(os.path.join(args.out, "adam-exp-avg-sq.bin"), [m["exp_avg_sq"] for m in moments],
              torch.float32)

    manifest = {
        "torch": torch.__version__,
        "parameters": params,
        "steps": step,
        "seconds": round(time.time() - start, 1),
        "loss_first": losses[0] if losses else math.nan,
        "loss_last10": sum(losses[-10:]) / max(1, len(losses[-10:])),
        "tensors": [[n, list(p.shape)] for n, p in named],
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(json.dumps({k: v for k, v in manifest.items() if k != "tensors"}))


if __name__ == "__main__":
    main()
