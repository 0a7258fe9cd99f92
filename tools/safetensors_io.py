"""Reads and writes safetensors files with the standard library and torch only (Debian has no safetensors
package): an 8-byte little-endian header length, a JSON header padded with spaces to a multiple of 8, the data."""
import json
import struct

import torch

_DTYPES = {torch.float32: "F32", torch.float64: "F64", torch.int32: "I32", torch.bool: "BOOL",
           torch.float16: "F16", torch.bfloat16: "BF16"}
_NAMES = {v: k for k, v in _DTYPES.items()}


def save(tensors, path, metadata=None):
    """Writes {name: tensor} in the given order."""
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    for name, t in tensors.items():
        t = t.detach().contiguous().cpu()
        flat = t.reshape(-1)
        data = flat.to(torch.uint8).numpy().tobytes() if t.dtype == torch.bool else flat.view(torch.uint8).numpy().tobytes()
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def load(path):
    """{name: tensor} in file order, and the metadata strings."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    base = 8 + n
    out = {}
    for name, h in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        b, e = h["data_offsets"]
        dtype = _NAMES[h["dtype"]]
        buf = bytearray(raw[base + b:base + e])
        if dtype == torch.bool:
            t = torch.frombuffer(buf, dtype=torch.uint8).to(torch.bool) if buf else torch.empty(0, dtype=torch.bool)
        else:
            t = torch.frombuffer(buf, dtype=dtype) if buf else torch.empty(0, dtype=dtype)
        out[name] = t.reshape(h["shape"]).clone()
    return out, meta
