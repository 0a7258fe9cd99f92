#!/usr/bin/env python3
"""The benchmark workloads W1..W7 through PyTorch on the CPU, one thread: one JSON line per workload on stdout,
impl "torch-cpu". Usage: OPENBLAS_NUM_THREADS=1 python3 bench/torch_bench.py [--quick] [--workloads W1,W3] [--bf16]

--bf16 (impl "torch-cpu-bf16") runs the half-precision rows instead: W3 with torch.bfloat16 tensors, W1 and W4
with the forward under torch.autocast('cpu', torch.bfloat16), the loss in float32 and float32 parameters.

Same inputs as every implementation: the LCG of bench/common.mjs and bench/native/bench_native.cpp,
vectorised here with numpy (the k-th block of states follows from the previous block by one affine map).
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

try:
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402
except ImportError as e:  # reported by run.mjs as a missing peer
    print(f"torch_bench: PyTorch is not installed ({e})", file=sys.stderr)
    sys.exit(3)

IMPL = "torch-cpu-bf16" if "--bf16" in sys.argv else "torch-cpu"
# The fields of a half row's lines (bench/README.md): the dtype, and for the training steps the amp level.
HALF_FIELDS = {"W1": {"amp": "O2", "dtype": "bfloat16"}, "W3": {"dtype": "bfloat16"}, "W4": {"amp": "O2", "dtype": "bfloat16"},
               "W6": {"amp": "O2", "dtype": "bfloat16"}}
_M32 = 0xFFFFFFFF
_A, _C = 1664525, 1013904223

# ---- inputs -------------------------------------------------------------------------------------------------


def lcg24(seed, n):
    """The top 24 bits of n successive states of s = s * 1664525 + 1013904223 (mod 2^32), from s = seed."""
    block = 4096
    first = np.empty(block, dtype=np.uint64)
    s = seed & _M32
    for i in range(block):
        s = (s * _A + _C) & _M32
        first[i] = s
    # s_{i + block} = A_b * s_i + C_b (mod 2^32)
    a_b, c_b = 1, 0
    for _ in range(block):
        a_b, c_b = (a_b * _A) & _M32, (c_b * _A + _C) & _M32
    nblocks = (n + block - 1) // block
    states = np.empty(nblocks * block, dtype=np.uint64)
    states[:block] = first
    a_b64, c_b64 = np.uint64(a_b), np.uint64(c_b)
    for k in range(1, nblocks):
        prev = states[(k - 1) * block : k * block]
        states[k * block : (k + 1) * block] = (prev * a_b64 + c_b64) & np.uint64(_M32)  # wraps mod 2^64
    return (states[:n] >> np.uint64(8)).astype(np.int64)


def unit(seed, n):
    """Uniform in [0, 1): k / 2^24."""
    return (lcg24(seed, n).astype(np.float64) * 2.0**-24).astype(np.float32)


def sym(seed, n, a):
    """Uniform in [-a, a): (k / 2^23 - 1) * a, rounded once to float32 (the product is exact in float64)."""
    u = lcg24(seed, n).astype(np.float64) * 2.0**-23 - 1.0
    return (u * float(np.float32(a))).astype(np.float32)


def labels(seed, n, classes):
    return (lcg24(seed, n) % classes).astype(np.int64)


def fan_scale(fan_in):
    return np.float32(1.0 / math.sqrt(fan_in))


def t(arr, shape, grad=False):
    return torch.from_numpy(arr.reshape(shape)).requires_grad_(grad)


# ---- timing -------------------------------------------------------------------------------------------------


def reps(quick):
    if quick:
        return {"W1": (1, 3), "W2": (1, 2), "W3": (1, 3), "W4": (1, 3), "W5": (1, 3), "W6": (1, 2), "W7": (0, 1),
                "W7big": (0, 1)}
    return {"W1": (5, 30), "W2": (2, 10), "W3": (3, 10), "W4": (3, 20), "W5": (3, 20), "W6": (3, 20), "W7": (2, 5),
            "W7big": (1, 3)}


def time_ms(r, body):
    warmup, timed = r
    for _ in range(warmup):
        body()
    out = []
    for _ in range(timed):
        t0 = time.perf_counter()
        body()
        out.append((time.perf_counter() - t0) * 1e3)
    return out


def summarize(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "reps": len(xs)}


def fields(workload):
    return HALF_FIELDS.get(workload, {}) if IMPL == "torch-cpu-bf16" else {}


def emit(workload, metric, stats, **extra):
    line = {"impl": IMPL, "workload": workload}
    if "n" in extra:
        line["n"] = extra.pop("n")
    line.update({**fields(workload), "metric": metric, **stats, **extra})
    print(json.dumps(line), flush=True)


def fmt(v):
    return f"{v:.9g}"


def check_training(losses, classes=10):
    loss0, last = losses[0], losses[-1]
    ok = math.isfinite(loss0) and math.isfinite(last) and last < loss0 and abs(loss0 - math.log(classes)) < 1
    msg = f"step-0 loss {fmt(loss0)}, decreasing" if ok else f"loss not finite or not decreasing: {fmt(loss0)} -> {fmt(last)}"
    return {"ok": ok, "loss0": loss0, "loss_last": last, "steps": len(losses), "message": msg}


# ---- workloads ------------------------------------------------------------------------------------------


def training(workload, logits_fn, y, params, r):
    """One step per repetition: forward, backward, torch.optim.SGD(lr=0.01) update. With --bf16 the forward
    runs under autocast in bfloat16 and the loss takes the logits in float32."""
    opt = torch.optim.SGD(params, lr=0.01)
    losses = []

    def loss_fn():
        if IMPL != "torch-cpu-bf16":
            return F.cross_entropy(logits_fn(), y)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = logits_fn()
        return F.cross_entropy(logits.float(), y)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_fn()
        loss.backward()
        opt.step()
        losses.append(loss.item())

    stats = summarize(time_ms(r, step))
    emit(workload, "ms_per_step", stats, check=check_training(losses))


def w1(r):
    x = t(unit(11, 128 * 784), (128, 784))
    y = torch.from_numpy(labels(12, 128, 10))
    w1_ = t(sym(13, 784 * 512, fan_scale(784)), (784, 512), True)
    b1 = t(sym(14, 512, fan_scale(784)), (512,), True)
    w2_ = t(sym(15, 512 * 256, fan_scale(512)), (512, 256), True)
    b2 = t(sym(16, 256, fan_scale(512)), (256,), True)
    w3_ = t(sym(17, 256 * 10, fan_scale(256)), (256, 10), True)
    b3 = t(sym(18, 10, fan_scale(256)), (10,), True)

    def logits_fn():
        h1 = torch.relu(torch.addmm(b1, x, w1_))
        h2 = torch.relu(torch.addmm(b2, h1, w2_))
        return torch.addmm(b3, h2, w3_)

    training("W1", logits_fn, y, [w1_, b1, w2_, b2, w3_, b3], r)


def w2(r):
    state = {}

    def body():
        x = torch.tensor(0.5, dtype=torch.float32, requires_grad=True)
        y = x
        for _ in range(10000):
            y = torch.sin(y) * 1.0001 + 0.1
        y.backward()
        state["value"], state["grad"] = y.item(), x.grad.item()

    ms = time_ms(r, body)
    ry, rg = 0.5, 1.0
    for _ in range(10000):
        rg *= 1.0001 * math.cos(ry)
        ry = math.sin(ry) * 1.0001 + 0.1
    value, grad = state["value"], state["grad"]
    ok = abs(value - ry) < 1e-4 and abs(grad - rg) < 1e-6
    check = {"ok": ok, "value": value, "grad": grad,
             "message": f"value {fmt(value)} (reference {fmt(ry)}), gradient {fmt(grad)} (reference {fmt(rg)})"}
    emit("W2", "ns_per_op", summarize([v * 1e6 / 30000 for v in ms]), check=check)


def w3(n, r):
    av, bv = sym(31, n * n, 1.0), sym(32, n * n, 1.0)
    a, b = t(av, (n, n), True), t(bv, (n, n), True)
    # With --bf16: the inputs rounded to bfloat16 once, the reference from the rounded values; a gradient element
    # is its float32 sum rounded once (relative 2^-9), the value n^2 rounded products summed.
    rel = 0.0
    if IMPL == "torch-cpu-bf16":
        a = a.detach().bfloat16().requires_grad_(True)
        b = b.detach().bfloat16().requires_grad_(True)
        av, bv = a.detach().float().numpy().reshape(-1), b.detach().float().numpy().reshape(-1)
        rel = 2.0**-8
    out = {}

    def body():
        a.grad = b.grad = None
        v = torch.sum(a @ b)
        v.backward()
        out["v"] = v

    stats = summarize(time_ms(r, body))
    a64, b64 = av.reshape(n, n).astype(np.float64), bv.reshape(n, n).astype(np.float64)
    rowsum_b, colsum_a = b64.sum(axis=1), a64.sum(axis=0)
    ga, gb = a.grad.float().numpy(), b.grad.float().numpy()
    err_a = float((np.abs(ga - rowsum_b[None, :]) - rel * np.abs(rowsum_b[None, :])).max())  # dA = ones @ B^T
    err_b = float((np.abs(gb - colsum_a[:, None]) - rel * np.abs(colsum_a[:, None])).max())  # dB = A^T @ ones
    ref = float(np.dot(colsum_a, rowsum_b))
    scale = float(np.abs(colsum_a * rowsum_b).sum())
    value = out["v"].item()
    tol = 1e-5 * n
    value_tol = 1e-4 * scale + rel * (abs(ref) + 4 * n * math.sqrt(scale / n))
    ok = err_a < tol and err_b < tol and abs(value - ref) <= value_tol
    check = {"ok": ok, "max_err_dA": err_a, "max_err_dB": err_b, "value": value,
             "message": f"dA = ones @ B^T within {fmt(err_a)}, dB = A^T @ ones within {fmt(err_b)}, "
                        f"value {fmt(value)} (reference {fmt(ref)})"}
    emit("W3", "ms", stats, n=n, gflops=6.0 * n**3 / (stats["median"] * 1e6), check=check)


def w4(r):
    x = t(unit(41, 32 * 28 * 28), (32, 1, 28, 28))
    y = torch.from_numpy(labels(48, 32, 10))
    c1w = t(sym(42, 16 * 9, fan_scale(9)), (16, 1, 3, 3), True)
    c1b = t(sym(43, 16, fan_scale(9)), (16,), True)
    c2w = t(sym(44, 32 * 16 * 9, fan_scale(144)), (32, 16, 3, 3), True)
    c2b = t(sym(45, 32, fan_scale(144)), (32,), True)
    dw = t(sym(46, 1568 * 10, fan_scale(1568)), (1568, 10), True)
    db = t(sym(47, 10, fan_scale(1568)), (10,), True)

    def logits_fn():
        h = F.max_pool2d(torch.relu(F.conv2d(x, c1w, c1b, padding=1)), 2)
        h = F.max_pool2d(torch.relu(F.conv2d(h, c2w, c2b, padding=1)), 2)
        return torch.addmm(db, h.reshape(32, 1568), dw)

    training("W4", logits_fn, y, [c1w, c1b, c2w, c2b, dw, db], r)


def w5(r):
    xv = sym(51, 1000000, 2.0)
    x = t(xv, (1000000,), True)
    out = {}

    def body():
        x.grad = None
        v = torch.sum(torch.tanh(x * x + 1) * torch.sigmoid(x))
        v.backward()
        out["v"] = v

    stats = summarize(time_ms(r, body))
    x64 = xv.astype(np.float64)
    th, s = np.tanh(x64 * x64 + 1), 1 / (1 + np.exp(-x64))
    ref = float(np.sum(th * s))
    d = (1 - th * th) * 2 * x64 * s + th * s * (1 - s)
    max_err = float(np.max(np.abs(x.grad.numpy() - d) / (1e-3 + np.abs(d))))
    value = out["v"].item()
    ok = abs(value - ref) <= 1e-4 * abs(ref) and max_err < 1e-3
    check = {"ok": ok, "value": value, "max_rel_err_grad": max_err,
             "message": f"value {fmt(value)} (reference {fmt(ref)}), gradient within {fmt(max_err)} relative"}
    emit("W5", "ms", stats, check=check)


def w7(n, r):
    """One forward + backward of causal attention composed as softmax(q k^T / 8 + mask) v (8 heads, E = 64)."""
    shape, count = (1, 8, n, 64), 8 * n * 64
    q, k, v = (t(sym(seed, count, 1.0), shape, True) for seed in (71, 72, 73))
    mask = torch.full((n, n), float("-inf")).triu(1)
    out = {}

    def body():
        for x in (q, k, v):
            x.grad = None
        y = torch.sum(torch.softmax(q @ k.transpose(-2, -1) * 0.125 + mask, -1) @ v)
        y.backward()
        out["y"] = y

    stats = summarize(time_ms(r, body))
    dv_sum, want = float(v.grad.double().sum()), float(8 * n * 64)
    ok = math.isfinite(out["y"].item()) and abs(dv_sum - want) <= 1e-4 * want
    check = {"ok": ok, "dv_sum": dv_sum, "message": f"sum(dv) {fmt(dv_sum)} (every probability row sums to 1: {fmt(want)})"}
    emit("W7", "ms", stats, n=n, check=check)


def w6(r):
    """The contract's GPT: tools/torch_gpt.py (nn.TransformerEncoderLayer, norm_first, batch_first, gelu, dropout 0,
    a causal mask), untied head, AdamW lr 3e-4 with weight decay 0.1 on matrices only."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
    from torch_gpt import GPT  # noqa: E402

    batch, context, vocab = 16, 128, 96
    model = GPT(vocab, context, 4, 4, 128, dropout=0.0, tie_weights=False)
    x = torch.from_numpy(labels(62, batch * context, vocab)).reshape(batch, context)
    y = torch.from_numpy(labels(63, batch * context, vocab)).reshape(batch, context)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=3e-4)
    losses = []

    def step():
        opt.zero_grad(set_to_none=True)
        if IMPL == "torch-cpu-bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = model(x, y)
            loss = loss.float()
        else:
            loss = model(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())

    stats = summarize(time_ms(r, step))
    emit("W6", "ms_per_step", stats, check=check_training(losses, vocab))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--workloads", default="W1,W2,W3,W4,W5,W6,W7")
    p.add_argument("--bf16", action="store_true", help="the bfloat16 rows (W1, W3, W4, W6) as torch-cpu-bf16")
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    r = reps(args.quick)
    want = set(args.workloads.split(","))
    jobs = [("W1", {}, lambda: w1(r["W1"])), ("W2", {}, lambda: w2(r["W2"])),
            ("W3", {"n": 256}, lambda: w3(256, r["W3"])), ("W3", {"n": 1024}, lambda: w3(1024, r["W3"])),
            ("W4", {}, lambda: w4(r["W4"])), ("W5", {}, lambda: w5(r["W5"])), ("W6", {}, lambda: w6(r["W6"])),
            ("W7", {"n": 1024}, lambda: w7(1024, r["W7"])), ("W7", {"n": 4096}, lambda: w7(4096, r["W7big"]))]
    for workload, extra, job in jobs:
        if workload not in want or (args.bf16 and workload not in HALF_FIELDS):
            continue
        try:
            job()
        except Exception as e:  # one failing workload does not stop the others
            print(json.dumps({"impl": IMPL, "workload": workload, **extra, **fields(workload),
                              "error": f"{type(e).__name__}: {e}"}),
                  flush=True)


if __name__ == "__main__":
    main()
