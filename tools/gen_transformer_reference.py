"""Writes tests/data/transformer/layers.safetensors: PyTorch float64 values and gradients of
nn.MultiheadAttention, nn.TransformerEncoderLayer and tools/torch_gpt.GPT, for tests/cpp/nn_transformer_test.cpp.

Each case CASE stores its weights as "CASE/param/<PyTorch state-dict key>" (the test loads them into bprop's layer
with strict key matching), its inputs as "CASE/input/<name>", the output as "CASE/output" (and "CASE/weights"), and
the gradients of sum(output * CASE/input/cotangent) as "CASE/grad/<input or parameter name>".

    /usr/bin/python3 tools/gen_transformer_reference.py
"""
import os
import sys

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(__file__))
import safetensors_io  # noqa: E402
from torch_gpt import GPT  # noqa: E402

torch.manual_seed(7)
torch.set_default_dtype(torch.float64)
OUT = {}


def record(case, module, inputs, run, weights_out=False):
    """inputs: {name: tensor}; run(module, inputs) -> output or (output, weights)."""
    for k, p in module.state_dict().items():
        OUT[f"{case}/param/{k}"] = p.clone()
    leaves = {}
    for k, v in inputs.items():
        v = v.clone()
        if v.is_floating_point() and not k.endswith("mask"):
            v.requires_grad_(True)
            leaves[k] = v
        OUT[f"{case}/input/{k}"] = v.detach().clone() if v.dtype != torch.int64 else v.to(torch.int32)
        inputs[k] = v
    r = run(module, inputs)
    out, w = (r if weights_out else (r, None))
    if out.dim() == 0:
        cot = torch.tensor(1.0)
    else:
        cot = torch.randn(out.shape)
    OUT[f"{case}/input/cotangent"] = cot
    OUT[f"{case}/output"] = out.detach().clone()
    if w is not None:
        OUT[f"{case}/weights"] = w.detach().clone()
    params = dict(module.named_parameters())
    names = list(leaves) + list(params)
    grads = torch.autograd.grad((out * cot).sum(), list(leaves.values()) + list(params.values()), allow_unused=True)
    for k, g in zip(names, grads):
        if g is not None:
            OUT[f"{case}/grad/{k}"] = g.clone()


# Self-attention, (L, N, E), bool attn_mask and key padding, weights averaged over the heads.
mha = nn.MultiheadAttention(8, 2)
x = torch.randn(5, 3, 8)
attn_mask = torch.rand(5, 5) < 0.3
attn_mask.fill_diagonal_(False)
kpm = torch.zeros(3, 5, dtype=torch.bool)
kpm[1, 3:] = True
record("mha_self", mha, {"query": x, "attn_mask": attn_mask, "key_padding_mask": kpm},
       lambda m, i: m(i["query"], i["query"], i["query"], attn_mask=i["attn_mask"],
                      key_padding_mask=i["key_padding_mask"], need_weights=True),
       weights_out=True)

# Cross-attention with kdim/vdim != embed_dim, batch_first, a float (N * H, L, S) mask, per-head weights.
mha = nn.MultiheadAttention(8, 4, kdim=6, vdim=5, batch_first=True)
q, k, v = torch.randn(2, 3, 8), torch.randn(2, 4, 6), torch.randn(2, 4, 5)
fmask = torch.randn(8, 3, 4)
record("mha_cross", mha, {"query": q, "key": k, "value": v, "attn_mask": fmask},
       lambda m, i: m(i["query"], i["key"], i["value"], attn_mask=i["attn_mask"], need_weights=True,
                      average_attn_weights=False),
       weights_out=True)

# Encoder attention without asking for weights (the fused op), separate q/k/v inputs of one embed_dim.
mha = nn.MultiheadAttention(8, 2, batch_first=True)
q, k = torch.randn(2, 3, 8), torch.randn(2, 6, 8)
record("mha_kv", mha, {"query": q, "key": k, "value": k.clone()},
       lambda m, i: m(i["query"], i["key"], i["value"], need_weights=False)[0])

# Post-norm, relu, (S, N, E), a float src_mask.
layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)
src = torch.randn(4, 2, 8)
record("encoder_post_relu", layer, {"src": src, "src_mask": torch.randn(4, 4)},
       lambda m, i: m(i["src"], src_mask=i["src_mask"]))

# Pre-norm, gelu, batch_first, causal.
layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", batch_first=True, norm_first=True)
src = torch.randn(2, 5, 8)
causal = torch.triu(torch.full((5, 5), float("-inf")), diagonal=1)
record("encoder_pre_gelu_causal", layer, {"src": src},
       lambda m, i: m(i["src"], src_mask=causal))

# GPT: logits, then the loss (tied), and an untied one.
gpt = GPT(vocab_size=11, context=8, layers=2, heads=2, width=8)
ids = torch.randint(0, 11, (2, 6))
targets = torch.randint(0, 11, (2, 6))
record("gpt_logits", gpt, {"ids": ids}, lambda m, i: m(i["ids"]))
record("gpt_loss", gpt, {"ids": ids, "targets": targets}, lambda m, i: m(i["ids"], i["targets"]))
gpt = GPT(vocab_size=11, context=8, layers=1, heads=2, width=8, tie_weights=False)
record("gpt_untied", gpt, {"ids": ids}, lambda m, i: m(i["ids"]))

path = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "transformer", "layers.safetensors")
safetensors_io.save(OUT, path, {"generator": "tools/gen_transformer_reference.py", "torch": torch.__version__})
print(f"wrote {len(OUT)} tensors to {os.path.normpath(path)}")
