#!/usr/bin/python3
"""Raw tensor bytes out of a TensorFlow.js graph model (model.json + .bin).

A tfjs model's weightsManifest lists each tensor's name, shape, dtype and
optional quantization, in the order their bytes follow each other in the
shard files. This writes the tensors of each stored dtype, concatenated,
to OUT_PREFIX.fp16.bin (weights quantized to float16: IEEE half bits) and
OUT_PREFIX.fp32.bin (plain float32); int32 and uint8-quantized tensors are
skipped. With --bf16 it also writes OUT_PREFIX.bf16.bin: the float32
tensors rounded to bfloat16 by torch (round to nearest even).

usage: /usr/bin/python3 extract_tfjs.py MODEL.json OUT_PREFIX [--bf16]
"""
import json
import os
import sys

import numpy as np

ITEM = {"float32": 4, "int32": 4, "bool": 1, "float16": 2, "uint8": 1, "uint16": 2}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    model_path, prefix = sys.argv[1], sys.argv[2]
    with open(model_path) as f:
        model = json.load(f)
    base = os.path.dirname(model_path)
    out = {"fp16": bytearray(), "fp32": bytearray()}
    counts = {"fp16": 0, "fp32": 0, "skipped": 0}
    for group in model["weightsManifest"]:
        blob = b"".join(open(os.path.join(base, p), "rb").read() for p in group["paths"])
        at = 0
        for w in group["weights"]:
            n = int(np.prod(w["shape"])) if w["shape"] else 1
            q = w.get("quantization")
            stored = q["dtype"] if q else w["dtype"]
            size = n * ITEM[stored]
            chunk = blob[at:at + size]
            at += size
            if w["dtype"] == "float32" and stored == "float16":
                out["fp16"] += chunk
                counts["fp16"] += n
            elif w["dtype"] == "float32" and stored == "float32":
                out["fp32"] += chunk
                counts["fp32"] += n
            else:
                counts["skipped"] += n
        if at != len(blob):
            sys.exit(f"{model_path}: manifest covers {at} of {len(blob)} bytes")
    for kind, data in out.items():
        if data:
            with open(f"{prefix}.{kind}.bin", "wb") as f:
                f.write(data)
    if "--bf16" in sys.argv[3:] and out["fp32"]:
        import torch
        f32 = torch.from_numpy(np.frombuffer(bytes(out["fp32"]), dtype="<f4").copy())
        with open(f"{prefix}.bf16.bin", "wb") as f:
            f.write(f32.to(torch.bfloat16).view(torch.int16).numpy().tobytes())
    print(model_path, counts)


if __name__ == "__main__":
    main()
