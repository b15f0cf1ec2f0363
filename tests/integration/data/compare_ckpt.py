"""compare_ckpt.py A1 B1 [A2 B2 ...] [--differ X Y]: torch.load each pair of
checkpoints (files, or directories holding a `latest` pointer) and exit 0
only if every pair is bit-identical in every tensor and value, and (with
--differ) X and Y are not."""
import os
import sys

import torch


def resolve(path):
    if os.path.isdir(path):
        with open(os.path.join(path, "latest")) as f:
            return os.path.join(path, f.read().strip())
    return path


def same(a, b, where):
    if isinstance(a, torch.Tensor):
        assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape, where
        # Bitwise, so -0.0/0.0 and NaN payloads count too.
        assert torch.equal(a.view(torch.uint8) if a.dim() else a, b.view(torch.uint8) if b.dim() else b), where
    elif isinstance(a, dict):
        assert isinstance(b, dict) and sorted(a, key=str) == sorted(b, key=str), (where, list(a), list(b))
        for k in a:
            same(a[k], b[k], where + "/" + str(k))
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, where + "/" + str(i))
    else:
        assert a == b, (where, a, b)


args = sys.argv[1:]
differ = []
if "--differ" in args:
    i = args.index("--differ")
    differ, args = args[i + 1:i + 3], args[:i]
assert args and len(args) % 2 == 0, "usage: compare_ckpt.py A1 B1 [A2 B2 ...] [--differ X Y]"
for a, b in zip(args[::2], args[1::2]):
    a, b = resolve(a), resolve(b)
    same(torch.load(a), torch.load(b), a)
    print("identical:", a, b)
if differ:
    try:
        same(torch.load(resolve(differ[0])), torch.load(resolve(differ[1])), "")
    except AssertionError:
        print("different, as expected:", *differ)
    else:
        sys.exit("%s and %s should differ" % tuple(differ))
