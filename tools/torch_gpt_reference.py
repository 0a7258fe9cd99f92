"""The PyTorch reference run of bprop's GPT training (docs/transformers.md): the same model (tools/torch_gpt.py), the
initial weights bprop saves (`bprop train --model gpt ... --stop-at 0`), the same batches (models/gpt_trainer.h
defines them from xoshiro256** seeded by SplitMix64; reimplemented below), AdamW with the same parameter groups,
nanoGPT's warmup + cosine rate per step and MindSpore's clip_by_global_norm, all in float32. Writes the loss curve as
JSON: the validation loss at every evaluation and the training loss of every step.

    /usr/bin/python3 tools/torch_gpt_reference.py [--bprop build/native/bprop] [--out FILE] [--config NAME]
        [--check COMMITTED.json]

--config test (default) is the curve tests/data/transformer/gpt_reference_curve.json commits and
tests/cpp/gpt_reference_test.cpp trains against; --config default is `bprop train --model gpt`'s defaults on the
fortunes corpus (the README's comparison).
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_io  # noqa: E402
from torch_gpt import GPT  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), ".."))
CONFIGS = {
    # 300 steps, evaluated every 50: small enough for every test run.
    "test": dict(text="demos/web/data/fortunes/train.txt", context=64, layers=2, heads=4, width=64, steps=300,
                 batch_size=16, grad_accum=2, lr=2e-3, min_lr=2e-4, warmup=30, weight_decay=0.1, clip=1.0,
                 eval_interval=50, eval_batches=8, seed=11),
    "default": dict(text="build/data/fortunes/train.txt", context=128, layers=4, heads=4, width=128, steps=2000,
                    batch_size=16, grad_accum=1, lr=1e-3, min_lr=1e-4, warmup=100, weight_decay=0.1, clip=1.0,
                    eval_interval=250, eval_batches=20, seed=0),
}
MASK = (1 << 64) - 1


def splitmix64_next(x):
    x = (x + 0x9E3779B97F4A7C15) & MASK
    z = x
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return x, z ^ (z >> 31)


def batch_seed(seed, index):
    z = (seed + 0x9E3779B97F4A7C15 * (index + 1)) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class Random:
    """bprop::Random's integers: xoshiro256** seeded by four SplitMix64 outputs."""

    def __init__(self, seed):
        self.s = []
        x = seed & MASK
        for _ in range(4):
            x, v = splitmix64_next(x)
            self.s.append(v)

    def next_u64(self):
        s = self.s
        rotl = lambda v, k: ((v << k) | (v >> (64 - k))) & MASK  # noqa: E731
        result = (rotl((s[1] * 5) & MASK, 7) * 9) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result


def text_batch(tokens, context, seed, n):
    rng = Random(seed)
    starts = [rng.next_u64() % (len(tokens) - context) for _ in range(n)]
    x = torch.stack([tokens[s:s + context] for s in starts])
    y = torch.stack([tokens[s + 1:s + context + 1] for s in starts])
    return x, y


def load_corpus(train_path):
    with open(train_path, "rb") as f:
        train = f.read()
    val_path = os.path.join(os.path.dirname(train_path), "val.txt")
    with open(val_path, "rb") as f:
        val = f.read()
    vocab = sorted(set(train + val))
    index = {b: i for i, b in enumerate(vocab)}
    enc = lambda b: torch.tensor([index[c] for c in b], dtype=torch.int64)  # noqa: E731
    return enc(train), enc(val), len(vocab)


def lr_at(c, t):
    if t < c["warmup"]:
        return c["lr"] * (t + 1) / (c["warmup"] + 1)
    if t >= c["steps"]:
        return c["min_lr"]
    ratio = (t - c["warmup"]) / (c["steps"] - c["warmup"])
    return c["min_lr"] + (c["lr"] - c["min_lr"]) * 0.5 * (1.0 + math.cos(math.pi * ratio))


def bprop_flags(c):
    return ["--data", "text:" + os.path.join(ROOT, c["text"]), "--context", c["context"], "--layers", c["layers"],
            "--heads", c["heads"], "--width", c["width"], "--steps", c["steps"], "--batch-size", c["batch_size"],
            "--grad-accum", c["grad_accum"], "--lr", c["lr"], "--min-lr", c["min_lr"], "--warmup", c["warmup"],
            "--weight-decay", c["weight_decay"], "--clip", c["clip"], "--eval-interval", c["eval_interval"],
            "--eval-batches", c["eval_batches"], "--seed", c["seed"]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bprop", default=os.path.join(ROOT, "build/native/bprop"))
    ap.add_argument("--config", default="test", choices=sorted(CONFIGS))
    ap.add_argument("--out", default=None)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--check", default=None,
                    help="compare with a committed curve instead of writing one (exit 1 beyond 1e-4 relative)")
    a = ap.parse_args()
    c = CONFIGS[a.config]
    out = a.out or os.path.join(ROOT, "tests/data/transformer/gpt_reference_curve.json" if a.config == "test"
                                else "build/gpt_reference_default.json")
    torch.set_num_threads(a.threads)
    train, val, vocab = load_corpus(os.path.join(ROOT, c["text"]))

    with tempfile.TemporaryDirectory() as d:
        init = os.path.join(d, "init.safetensors")
        subprocess.run([a.bprop, "train", "--model", "gpt", *map(str, bprop_flags(c)), "--stop-at", "0",
                        "--sample-tokens", "0", "--out", init], check=True, stdout=subprocess.DEVNULL)
        tensors, meta = safetensors_io.load(init)
    assert int(meta["gpt_vocab_size"]) == vocab, "the vocabularies differ"
    model = GPT(vocab, c["context"], c["layers"], c["heads"], c["width"])
    model.load_state_dict({k: v for k, v in tensors.items() if not k.startswith("optimizer.")}, strict=True)
    model.train()

    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": c["weight_decay"]},
                             {"params": no_decay, "weight_decay": 0.0}], lr=c["lr"], betas=(0.9, 0.99), eps=1e-8)
    micro = c["batch_size"] // c["grad_accum"]

    def evaluate():
        model.eval()
        total = 0.0
        with torch.no_grad():
            for k in range(c["eval_batches"]):
                x, y = text_batch(val, c["context"], batch_seed(~c["seed"] & MASK, k), c["batch_size"])
                total += model(x, y).item()
        model.train()
        return total / c["eval_batches"]

    evals, train_losses = [], []
    t0 = time.time()
    for step in range(c["steps"]):
        for g in opt.param_groups:
            g["lr"] = lr_at(c, step)
        opt.zero_grad(set_to_none=True)
        loss_sum = 0.0
        for m in range(c["grad_accum"]):
            x, y = text_batch(train, c["context"], batch_seed(c["seed"], step * c["grad_accum"] + m), micro)
            loss = model(x, y)
            (loss / c["grad_accum"]).backward()
            loss_sum += loss.item()
        if c["clip"] > 0:
            # MindSpore's clip_by_global_norm, as bprop: times clip / max(norm, clip).
            grads = [p.grad for p in model.parameters()]
            norm = torch.sqrt(sum((g.double() ** 2).sum() for g in grads)).item()
            factor = c["clip"] / max(norm, c["clip"])
            for g in grads:
                g.mul_(factor)
        opt.step()
        train_losses.append(loss_sum / c["grad_accum"])
        if (step + 1) % c["eval_interval"] == 0 or step + 1 == c["steps"]:
            evals.append({"step": step + 1, "val_loss": evaluate()})
            print(f"step {step + 1}/{c['steps']}  val loss {evals[-1]['val_loss']:.4f}  "
                  f"({time.time() - t0:.1f} s)", flush=True)
    result = {
        "generator": "tools/torch_gpt_reference.py --config " + a.config,
        "torch": torch.__version__,
        "config": c,
        "seconds": round(time.time() - t0, 1),
        "threads": a.threads,
        "evals": evals,
        "train_loss": [round(v, 6) for v in train_losses],
    }
    if a.check:
        with open(a.check) as f:
            committed = json.load(f)
        pairs = list(zip(committed["evals"], evals))
        worst = max(abs(x["val_loss"] - y["val_loss"]) / x["val_loss"] for x, y in pairs)
        if len(committed["evals"]) != len(evals) or committed["config"] != c or worst > 1e-4:
            print(f"the rerun differs from {a.check}: worst relative difference {worst:.2e}")
            sys.exit(1)
        print(f"the rerun matches {a.check} (worst relative difference {worst:.2e})")
        return
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
