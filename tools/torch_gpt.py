"""bprop's GPT (core/include/bprop/nn/transformer.h) in PyTorch, with the same state-dict keys: wte.weight,
wpe.weight, blocks.N.* (nn.TransformerEncoderLayer, norm_first, gelu, batch_first, a causal mask), ln_f.*, and
lm_head.weight unless the output projection is tied to wte."""
import torch
from torch import nn


class GPT(nn.Module):
    def __init__(self, vocab_size=96, context=128, layers=4, heads=4, width=128, dropout=0.0, tie_weights=True):
        super().__init__()
        self.context = context
        self.wte = nn.Embedding(vocab_size, width)
        self.wpe = nn.Embedding(context, width)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(width, heads, 4 * width, dropout, activation="gelu", layer_norm_eps=1e-5,
                                       batch_first=True, norm_first=True) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(width, eps=1e-5)
        self.lm_head = None if tie_weights else nn.Linear(width, vocab_size, bias=False)

    def forward(self, ids, targets=None):
        T = ids.shape[-1]
        mask = torch.triu(torch.full((T, T), float("-inf"), dtype=self.wte.weight.dtype), diagonal=1)
        x = self.drop(self.wte(ids.long()) + self.wpe(torch.arange(T)))
        for b in self.blocks:
            x = b(x, src_mask=mask)
        x = self.ln_f(x)
        logits = self.lm_head(x) if self.lm_head is not None else x @ self.wte.weight.t()
        if targets is None:
            return logits
        return nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1).long())
