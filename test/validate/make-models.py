"""Writes small real model files for validate's --model tests (run by a Python that has torch).

usage: make-models.py OUTDIR -> OUTDIR/linear.pt (torch.save of a state dict),
OUTDIR/hf/ (config.json + model.safetensors, written in the safetensors layout: 8-byte header
length, JSON header, raw little-endian tensor bytes), OUTDIR/broken.pt (not a pickle).
"""
import json
import os
import struct
import sys

import torch

out = sys.argv[1]
os.makedirs(os.path.join(out, "hf"), exist_ok=True)
torch.manual_seed(0)
linear = torch.nn.Linear(4, 3)  # 12 weights + 3 biases = 15 parameters
torch.save(linear.state_dict(), os.path.join(out, "linear.pt"))

tensors = {"embed.weight": torch.randn(10, 8), "head.weight": torch.randn(8, 2).to(torch.bfloat16)}
header, blobs, offset = {}, [], 0
for name, tensor in tensors.items():
    data = tensor.contiguous().view(torch.uint8).numpy().tobytes() if tensor.dtype == torch.bfloat16 else tensor.numpy().tobytes()
    kind = {torch.float32: "F32", torch.bfloat16: "BF16"}[tensor.dtype]
    header[name] = {"dtype": kind, "shape": list(tensor.shape), "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
encoded = json.dumps(header).encode()
with open(os.path.join(out, "hf", "model.safetensors"), "wb") as handle:
    handle.write(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))
with open(os.path.join(out, "hf", "config.json"), "w") as handle:
    json.dump({"model_type": "toy", "architectures": ["ToyModel"]}, handle)
with open(os.path.join(out, "broken.pt"), "wb") as handle:
    handle.write(b"this is not a torch file")
