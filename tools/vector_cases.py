"""The case tables of the shared gradient test vectors (tests/vectors/*.json).

OPS holds one entry per catalogue op: the family (which vector file its cases go to), its attribute defaults,
a PyTorch implementation of the op (what gen_vectors.py interprets programs with), and the samples that become
its single-op cases. Adding an op is adding one entry here. The hand-written cases below (programs, non-finite
values, stop_gradient, error cases) complete the set.

Input specs make the inputs from a seeded generator; they keep values away from kinks, ties and branch cuts
so that central finite differences agree with the analytic gradients.
"""

import numpy as np
import torch
import torch.nn.functional as F

# ---- input specs --------------------------------------------------------------------------------------------


class Spec:
    kind = "float"  # float | int32 | bool

    def make(self, rng, inputs):
        raise NotImplementedError


class U(Spec):
    """Uniform floats in [lo, hi)."""

    def __init__(self, shape, lo=-2.0, hi=2.0):
        self.shape, self.lo, self.hi = tuple(shape), lo, hi

    def make(self, rng, inputs):
        return rng.uniform(self.lo, self.hi, self.shape)


class Away(Spec):
    """Uniform floats in [lo, hi) at least `margin` away from each of `points` (kinks, jumps)."""

    def __init__(self, shape, lo=-2.0, hi=2.0, points=(0.0,), margin=0.15):
        self.shape, self.lo, self.hi, self.points, self.margin = tuple(shape), lo, hi, points, margin

    def make(self, rng, inputs):
        v = rng.uniform(self.lo, self.hi, self.shape)
        for _ in range(1000):
            bad = np.zeros(v.shape, dtype=bool)
            for p in self.points:
                bad |= np.abs(v - p) < self.margin
            if not bad.any():
                return v
            v = np.where(bad, rng.uniform(self.lo, self.hi, v.shape), v)
        raise ValueError("Away: cannot draw values away from %s in [%g, %g)" % (self.points, self.lo, self.hi))


class Distinct(Spec):
    """Floats in [lo, hi) with no two closer than a tenth of the even spacing (no ties for max/min/sort)."""

    def __init__(self, shape, lo=-2.0, hi=2.0):
        self.shape, self.lo, self.hi = tuple(shape), lo, hi

    def make(self, rng, inputs):
        n = int(np.prod(self.shape, dtype=np.int64))
        step = (self.hi - self.lo) / max(n, 1)
        base = self.lo + step * (np.arange(n) + 0.5)
        v = base + rng.uniform(-0.3 * step, 0.3 * step, n)
        return rng.permutation(v).reshape(self.shape)


class Frac(Spec):
    """Floats whose fractional part is in [0.15, 0.35] or [0.65, 0.85]: away from integers and halves."""

    def __init__(self, shape, lo=-3, hi=3):
        self.shape, self.lo, self.hi = tuple(shape), lo, hi

    def make(self, rng, inputs):
        ints = rng.integers(self.lo, self.hi, self.shape)
        frac = rng.uniform(0.15, 0.35, self.shape) + 0.5 * rng.integers(0, 2, self.shape)
        return ints + frac


class Grid(Spec):
    """Floats on a grid of `step` (exact in float32, so comparisons see ties)."""

    def __init__(self, shape, lo=-2.0, hi=2.0, step=0.5):
        self.shape, self.lo, self.hi, self.step = tuple(shape), lo, hi, step

    def make(self, rng, inputs):
        k = rng.integers(0, int(round((self.hi - self.lo) / self.step)) + 1, self.shape)
        return self.lo + self.step * k


class Near(Spec):
    """`base` input plus an offset whose magnitude is in [lo, hi] away from `avoid` (random sign)."""

    def __init__(self, base, lo=0.15, hi=1.5, avoid=(), margin=0.1):
        self.base, self.lo, self.hi, self.avoid, self.margin = base, lo, hi, avoid, margin

    def make(self, rng, inputs):
        b = inputs[self.base]
        mag = Away(b.shape, self.lo, self.hi, points=tuple(self.avoid) or (-1e9,), margin=self.margin).make(rng, inputs)
        return b + mag * rng.choice([-1.0, 1.0], b.shape)


class Const(Spec):
    """Fixed values."""

    def __init__(self, values, shape=None, kind="float"):
        arr = np.array(values, dtype=np.float64)
        self.values = arr.reshape(shape) if shape is not None else arr
        self.kind = kind
        self.shape = self.values.shape

    def make(self, rng, inputs):
        return self.values.copy()


class Ints(Spec):
    """int32 values in [lo, hi)."""

    kind = "int32"

    def __init__(self, shape, lo, hi):
        self.shape, self.lo, self.hi = tuple(shape), lo, hi

    def make(self, rng, inputs):
        return rng.integers(self.lo, self.hi, self.shape).astype(np.float64)


class Bools(Spec):
    kind = "bool"

    def __init__(self, shape):
        self.shape = tuple(shape)

    def make(self, rng, inputs):
        return rng.integers(0, 2, self.shape).astype(np.float64)


def Ival(values, shape=None):
    return Const(values, shape, kind="int32")


def Bval(values, shape=None):
    return Const([1.0 if v else 0.0 for v in np.ravel(values)], shape if shape is not None else np.shape(values),
                 kind="bool")


# ---- samples ----------------------------------------------------------------------------------------------


class Sample:
    """One single-op case: inputs (keyword specs, in argument order), the op's arguments (defaults to the input
    names in order; None for an omitted optional argument, a list of names for a list argument), attributes,
    and optional overrides of the case options (wrt, dtype, second, sens, rtol, atol, tag)."""

    def __init__(self, *args, attrs=None, wrt=None, dtype=None, second=None, sens=None, rtol=None, atol=None,
                 tag=None, **inputs):
        self.args = list(args) if args else list(inputs.keys())
        self.inputs = inputs
        self.attrs = attrs or {}
        self.wrt, self.dtype, self.second, self.sens = wrt, dtype, second, sens
        self.rtol, self.atol, self.tag = rtol, atol, tag


class OpEntry:
    """A catalogue op: its family (vector file), attribute defaults, torch implementation fn(*args, **attrs)
    in the order of the catalogue, and its samples. `fd` False skips the finite-difference check (only for
    stop_gradient, whose gradient is zero by definition while the function has a slope)."""

    def __init__(self, family, fn, samples, attrs=None, fd=True):
        self.family, self.fn, self.samples = family, fn, samples
        self.attrs = attrs or {}
        self.fd = fd


# How float casts behave while interpreting: "typed" runs them (to learn output dtypes), "exact" keeps float64
# arithmetic (reference values and finite differences); casts to int32/bool always run.
CAST_MODE = ["exact"]

TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32, "bool": torch.bool}


def _axes(axis, ndim):
    """Normalised, sorted axes of an "axis" attribute (None = all)."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    return sorted(a + ndim if a < 0 else a for a in axes)


def _reduce(fn_all_dims):
    def run(x, axis=None, keepdims=False):
        axes = _axes(axis, x.dim())
        if x.dim() == 0:
            return fn_all_dims(x, None, False)
        return fn_all_dims(x, tuple(axes), keepdims)

    return run


def _prod(x, axis=None, keepdims=False):
    out = x
    for a in sorted(_axes(axis, x.dim()), reverse=True):
        out = torch.prod(out, dim=a, keepdim=keepdims)
    return out


def _var(unbiased_std):
    def run(x, axis=None, keepdims=False, correction=1):
        axes = tuple(_axes(axis, x.dim()))
        f = torch.std if unbiased_std else torch.var
        return f(x, dim=axes if axes else None, correction=correction, keepdim=keepdims)

    return run


def _arg(fn):
    def run(x, axis=None, keepdims=False):
        if axis is None:
            return fn(x.reshape(-1), dim=0).to(torch.int32)
        return fn(x, dim=axis, keepdim=keepdims).to(torch.int32)

    return run


def _squeeze(x, axis=None):
    shape = list(x.shape)
    drop = [i for i, d in enumerate(shape) if d == 1] if axis is None else _axes(axis, x.dim())
    return x.reshape([d for i, d in enumerate(shape) if i not in drop])


def _expand_dims(x, axis):
    axes = [axis] if isinstance(axis, int) else list(axis)
    rank = x.dim() + len(axes)
    axes = sorted(a + rank if a < 0 else a for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return x.reshape(shape)


def _slice(x, begin, size):
    idx = tuple(slice(b, None if s == -1 else b + s) for b, s in zip(begin, size))
    return x[idx]


def _strided_slice(x, begin, end, strides):
    out = x
    for axis, (b, e, s) in enumerate(zip(begin, end, strides)):
        picks = list(range(x.shape[axis]))[slice(b, e, s)]
        out = out.index_select(axis, torch.tensor(picks, dtype=torch.long))
    return out


def _gather(x, indices, axis=0):
    axis = axis + x.dim() if axis < 0 else axis
    flat = x.index_select(axis, indices.reshape(-1).long())
    return flat.reshape(list(x.shape[:axis]) + list(indices.shape) + list(x.shape[axis + 1:]))


def _pad(x, paddings, value=0.0):
    flat = []
    for lo, hi in reversed(paddings):
        flat += [lo, hi]
    return F.pad(x, flat, mode="constant", value=value)


def _flip(x, axis=None):
    return torch.flip(x, _axes(axis, x.dim()))


def _norm(x, axes, weight, bias, eps):
    """(x - mean) / sqrt(var + eps) * weight + bias, statistics (biased variance) over `axes`."""
    mu = x.mean(dim=axes, keepdim=True)
    var = ((x - mu) ** 2).mean(dim=axes, keepdim=True)
    y = (x - mu) / torch.sqrt(var + eps)
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _channel(p, x):
    """A per-channel (axis 1) parameter shaped to broadcast against x."""
    return None if p is None else p.reshape([-1] + [1] * (x.dim() - 2))


def _reduce_loss(loss, reduction):
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.mean()
    return loss


def _nll_rows(log_probs, labels, weight, ignore_index):
    """Per-row weighted negative log likelihood, its row weights, and the mask of rows not ignored."""
    labels = labels.long()
    valid = labels != ignore_index
    safe = torch.where(valid, labels, torch.zeros_like(labels))
    picked = log_probs.gather(1, safe[:, None])[:, 0]
    w = weight[safe] if weight is not None else torch.ones_like(picked)
    w = torch.where(valid, w, torch.zeros_like(w))
    return -w * picked, w, valid


def _nll_loss(log_probs, labels, weight=None, reduction="mean", ignore_index=-100):
    rows, w, _ = _nll_rows(log_probs, labels, weight, ignore_index)
    if reduction == "mean":
        return rows.sum() / w.sum()
    return _reduce_loss(rows, reduction)


def _cross_entropy(logits, labels, weight=None, reduction="mean", ignore_index=-100, label_smoothing=0.0):
    # loss_i = -sum_c w_c t_ic log p_ic with t = (1 - ls) onehot + ls / C (the weighted form PyTorch uses)
    logp = torch.log_softmax(logits, dim=-1)
    rows, w, valid = _nll_rows(logp, labels, weight, ignore_index)
    if label_smoothing:
        c = logits.shape[-1]
        wc = weight if weight is not None else torch.ones(c, dtype=logits.dtype)
        smooth = -(logp * wc).sum(-1) / c
        smooth = torch.where(valid, smooth, torch.zeros_like(smooth))
        rows = (1 - label_smoothing) * rows + label_smoothing * smooth
    if reduction == "mean":
        return rows.sum() / w.sum()
    return _reduce_loss(rows, reduction)


def _bce_with_logits(x, t, weight=None, pos_weight=None, reduction="mean"):
    # (1 - t) x + (1 + (pw - 1) t) softplus(-x), softplus(-x) = log1p(e^-|x|) + relu(-x)
    sp = torch.log1p(torch.exp(-torch.abs(x))) + torch.relu(-x)
    coef = 1 + (pos_weight - 1) * t if pos_weight is not None else 1
    loss = (1 - t) * x + coef * sp
    if weight is not None:
        loss = loss * weight
    return _reduce_loss(loss, reduction)


def _bce(p, t, weight=None, reduction="mean"):
    loss = -(t * torch.log(p) + (1 - t) * torch.log(1 - p))
    if weight is not None:
        loss = loss * weight
    return _reduce_loss(loss, reduction)


def _smooth_l1(x, y, reduction="mean", beta=1.0):
    d = torch.abs(x - y)
    return _reduce_loss(torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def _cast(x, dtype):
    target = TORCH_DTYPES[dtype]
    if dtype.startswith("float") and x.is_floating_point() and CAST_MODE[0] == "exact":
        return x
    if dtype == "bool":
        return x != 0
    return x.to(target)


# ---- the op table -------------------------------------------------------------------------------------------

UNARY_SHAPES = [(2, 3), (5,), (2, 3, 2), ()]


def unary_samples(spec, attr_sets=(None,)):
    """Four samples over UNARY_SHAPES (attribute sets cycle over them)."""
    out = []
    for i, shape in enumerate(UNARY_SHAPES):
        attrs = attr_sets[i % len(attr_sets)]
        out.append(Sample(x=spec(shape), attrs=attrs))
    return out


def U_(lo, hi):
    return lambda shape: U(shape, lo, hi)


def A_(lo=-2.0, hi=2.0, points=(0.0,), margin=0.15):
    return lambda shape: Away(shape, lo, hi, points, margin)


BINARY_SHAPES = [((2, 3), (2, 3)), ((), (2, 3)), ((3, 1), (1, 4)), ((2, 3, 4), (4,))]


def binary_samples(xs, ys):
    return [Sample(x=xs(a), y=ys(b)) for a, b in BINARY_SHAPES]


def compare_samples():
    return [
        Sample(x=Grid((2, 3)), y=Grid((2, 3))),
        Sample(x=Grid(()), y=Grid((2, 3))),
        Sample(x=Grid((3, 1), -1, 1), y=Grid((1, 4), -1, 1)),
        Sample(x=Ints((2, 3), 0, 3), y=Ints((2, 3), 0, 3), tag="int32"),
    ]


def reduce_samples(spec, extra=()):
    return [
        Sample(x=spec((2, 3, 4)), attrs={"axis": None, "keepdims": False}),
        Sample(x=spec((2, 3, 4)), attrs={"axis": -1, "keepdims": True}),
        Sample(x=spec((2, 3, 4)), attrs={"axis": [0, 2], "keepdims": False}),
        Sample(x=spec((3, 4)), attrs={"axis": 0, "keepdims": False}),
        Sample(x=spec((3, 4)), attrs={"axis": None, "keepdims": True}),
        Sample(x=spec((2, 3, 4)), attrs={"axis": [-1, 0], "keepdims": True}),
    ] + list(extra)


def arg_samples():
    return [
        Sample(x=Distinct((3, 4)), attrs={"axis": None, "keepdims": False}),
        Sample(x=Distinct((3, 4)), attrs={"axis": 1, "keepdims": True}),
        Sample(x=Distinct((2, 3, 4)), attrs={"axis": -1, "keepdims": False}),
        Sample(x=Distinct((2, 3, 4)), attrs={"axis": 0}),
    ]


def _seq(n):
    return list(range(n))



def _sdpa(query, key, value, attn_mask=None, is_causal=False, scale=None):
    """F.scaled_dot_product_attention without dropout, composed (PyTorch 1.13 has no such op), with bprop's rule
    for rows whose every key is masked: zeros, not NaN."""
    s = 1.0 / float(query.shape[-1]) ** 0.5 if scale is None else scale
    scores = torch.matmul(query, key.transpose(-2, -1)) * s
    allowed = torch.ones(scores.shape, dtype=torch.bool)
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            allowed = allowed & attn_mask
        else:
            scores = scores + attn_mask
    if is_causal:
        allowed = allowed & torch.ones(scores.shape[-2], scores.shape[-1], dtype=torch.bool).tril()
    allowed = allowed & (scores > float("-inf"))
    seen = allowed.any(-1, keepdim=True)
    scores = torch.where(allowed, scores, torch.full_like(scores, float("-inf")))
    scores = torch.where(seen, scores, torch.zeros_like(scores))
    return torch.matmul(torch.softmax(scores, -1) * seen, value)


def _attention_samples():
    """Batch and head axes (broadcast too), L != S, E != Ev, causal (L < S, L > S), bool and float masks (broadcast
    rows and columns), a custom scale, fully masked rows (bool, and an additive -inf row)."""
    ninf = float("-inf")
    out = [
        Sample("q", "k", "v", None, q=U((3, 4)), k=U((5, 4)), v=U((5, 2)), tag="2d_L3_S5"),
        Sample("q", "k", "v", None, q=U((2, 3, 4)), k=U((2, 3, 4)), v=U((2, 3, 4)), tag="batch_square"),
        Sample("q", "k", "v", None, q=U((2, 2, 3, 2)), k=U((2, 2, 4, 2)), v=U((2, 2, 4, 3)), tag="heads_E2_Ev3"),
        Sample("q", "k", "v", None, q=U((2, 3, 4, 2)), k=U((2, 1, 5, 2)), v=U((2, 1, 5, 2)), tag="kv_shared_heads"),
        Sample("q", "k", "v", None, q=U((3, 2, 3)), k=U((2, 3)), v=U((2, 4)), tag="kv_unbatched"),
        Sample("q", "k", "v", None, q=U((1, 4, 3)), k=U((3, 5, 3)), v=U((3, 5, 1)), tag="q_broadcast_Ev1"),
        Sample("q", "k", "v", None, q=U((1, 2)), k=U((6, 2)), v=U((6, 3)), tag="one_query"),
        Sample("q", "k", "v", None, q=U((4, 3)), k=U((1, 3)), v=U((1, 2)), tag="one_key"),
        Sample("q", "k", "v", None, q=U((2, 4, 3)), k=U((2, 4, 3)), v=U((2, 4, 3)), attrs={"scale": 0.3},
               tag="scale"),
        Sample("q", "k", "v", None, q=U((2, 3, 2), -3, 3), k=U((2, 5, 2), -3, 3), v=U((2, 5, 2)),
               attrs={"scale": 2.0}, tag="peaked_scores"),
        Sample("q", "k", "v", None, q=U((4, 3)), k=U((4, 3)), v=U((4, 2)), attrs={"is_causal": True}, tag="causal"),
        Sample("q", "k", "v", None, q=U((2, 2, 5, 3)), k=U((2, 2, 5, 3)), v=U((2, 2, 5, 4)),
               attrs={"is_causal": True}, tag="causal_heads"),
        Sample("q", "k", "v", None, q=U((3, 2)), k=U((5, 2)), v=U((5, 2)), attrs={"is_causal": True},
               tag="causal_L_lt_S"),
        Sample("q", "k", "v", None, q=U((5, 2)), k=U((3, 2)), v=U((3, 3)), attrs={"is_causal": True},
               tag="causal_L_gt_S"),
        Sample("q", "k", "v", None, q=U((2, 4, 2)), k=U((2, 4, 2)), v=U((2, 4, 2)),
               attrs={"is_causal": True, "scale": 0.7}, tag="causal_scale"),
        Sample("q", "k", "v", "m", q=U((3, 2)), k=U((4, 2)), v=U((4, 3)),
               m=Const([1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1], (3, 4), kind="bool"), tag="bool_mask"),
        Sample("q", "k", "v", "m", q=U((2, 3, 2)), k=U((2, 4, 2)), v=U((2, 4, 2)),
               m=Const([1, 1, 0, 1], (4,), kind="bool"), tag="bool_key_padding"),
        Sample("q", "k", "v", "m", q=U((2, 3, 2)), k=U((2, 4, 2)), v=U((2, 4, 2)),
               m=Const([1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 0], (3, 4), kind="bool"), tag="bool_fully_masked_row"),
        Sample("q", "k", "v", "m", q=U((2, 2, 3, 2)), k=U((2, 2, 3, 2)), v=U((2, 2, 3, 2)),
               m=Const([1, 0, 1, 1, 1, 1], (2, 1, 1, 3), kind="bool"), tag="bool_per_batch"),
        Sample("q", "k", "v", "m", q=U((4, 2)), k=U((4, 2)), v=U((4, 2)),
               m=Const([1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1], (4, 4), kind="bool"),
               attrs={"is_causal": True}, tag="bool_and_causal"),
        Sample("q", "k", "v", "m", q=U((3, 2)), k=U((4, 2)), v=U((4, 2)),
               m=Const([0, 0, 0, 0], (1, 4), kind="bool"), tag="bool_every_row_masked"),
        Sample("q", "k", "v", "m", q=U((3, 2)), k=U((4, 2)), v=U((4, 3)), m=U((3, 4), -1, 1), tag="float_mask"),
        Sample("q", "k", "v", "m", q=U((2, 3, 2)), k=U((2, 4, 2)), v=U((2, 4, 2)), m=U((4,), -1, 1),
               tag="float_mask_row_broadcast"),
        Sample("q", "k", "v", "m", q=U((2, 3, 2)), k=U((2, 4, 2)), v=U((2, 4, 2)), m=U((3, 1), -1, 1),
               tag="float_mask_column_broadcast"),
        Sample("q", "k", "v", "m", q=U((2, 2, 3, 2)), k=U((2, 2, 4, 2)), v=U((2, 2, 4, 2)), m=U((2, 1, 3, 4), -1, 1),
               tag="float_mask_per_batch"),
        Sample("q", "k", "v", "m", q=U((4, 3)), k=U((4, 3)), v=U((4, 2)), m=U((4, 4), -1, 1),
               attrs={"is_causal": True}, tag="float_mask_and_causal"),
        Sample("q", "k", "v", "m", q=U((3, 2)), k=U((3, 2)), v=U((3, 2)),
               m=Const([0.5, -0.25, 0.0, ninf, ninf, ninf, 1.0, ninf, -0.5], (3, 3)), wrt=["q", "k", "v"],
               tag="float_mask_inf_row"),
        Sample("q", "k", "v", "m", q=U((2, 3, 2)), k=U((2, 3, 2)), v=U((2, 3, 2)), m=U((2, 3, 3), -1, 1),
               attrs={"scale": 0.5}, wrt=["m"], tag="mask_grad_only"),
        Sample("q", "k", "v", None, q=U((2, 3, 4)), k=U((2, 5, 4)), v=U((2, 5, 3)), wrt=["q"], tag="query_grad_only"),
        Sample("q", "k", "v", None, q=U((2, 3, 4)), k=U((2, 5, 4)), v=U((2, 5, 3)), wrt=["k", "v"],
               tag="key_value_grads"),
        Sample("q", "q", "q", None, q=U((2, 4, 3)), tag="self_attention_same_tensor"),
        Sample("q", "k", "v", None, q=U((2, 3, 3)), k=U((2, 6, 3)), v=U((2, 6, 5)), dtype="float32", second=True,
               tag="f32_second_order"),
    ]
    return out

OPS = {
    # elementwise unary
    "neg": OpEntry("unary", torch.neg, unary_samples(U_(-2, 2))),
    "abs": OpEntry("unary", torch.abs, unary_samples(A_())),
    "sign": OpEntry("unary", torch.sign, unary_samples(A_())),
    "exp": OpEntry("unary", torch.exp, unary_samples(U_(-2, 2))),
    "log": OpEntry("unary", torch.log, unary_samples(U_(0.2, 3))),
    "log1p": OpEntry("unary", torch.log1p, unary_samples(U_(-0.7, 2))),
    "expm1": OpEntry("unary", torch.expm1, unary_samples(U_(-2, 2))),
    "sqrt": OpEntry("unary", torch.sqrt, unary_samples(U_(0.2, 3))),
    "rsqrt": OpEntry("unary", torch.rsqrt, unary_samples(U_(0.2, 3))),
    "square": OpEntry("unary", torch.square, unary_samples(U_(-2, 2))),
    "reciprocal": OpEntry("unary", torch.reciprocal, unary_samples(A_(-2, 2, margin=0.3))),
    "sin": OpEntry("unary", torch.sin, unary_samples(U_(-3, 3))),
    "cos": OpEntry("unary", torch.cos, unary_samples(U_(-3, 3))),
    "tan": OpEntry("unary", torch.tan, unary_samples(U_(-1.2, 1.2))),
    "tanh": OpEntry("unary", torch.tanh, unary_samples(U_(-2, 2))),
    "sigmoid": OpEntry("unary", torch.sigmoid, unary_samples(U_(-4, 4))),
    "relu": OpEntry("unary", torch.relu, unary_samples(A_())),
    "silu": OpEntry("unary", F.silu, unary_samples(U_(-3, 3))),
    "softplus": OpEntry("unary", F.softplus, unary_samples(U_(-4, 4))),
    "erf": OpEntry("unary", torch.erf, unary_samples(U_(-2, 2))),
    "floor": OpEntry("unary", torch.floor, unary_samples(lambda s: Frac(s))),
    "ceil": OpEntry("unary", torch.ceil, unary_samples(lambda s: Frac(s))),
    "round": OpEntry("unary", torch.round, unary_samples(lambda s: Frac(s))),
    "leaky_relu": OpEntry("unary", lambda x, alpha=0.01: F.leaky_relu(x, alpha),
                          unary_samples(A_(), ({}, {"alpha": 0.2}, {"alpha": 0.01}, {"alpha": 0.5})),
                          attrs={"alpha": 0.01}),
    "elu": OpEntry("unary", lambda x, alpha=1.0: F.elu(x, alpha),
                   unary_samples(A_(), ({}, {"alpha": 0.5}, {"alpha": 1.0}, {"alpha": 2.0})), attrs={"alpha": 1.0}),
    "gelu": OpEntry("unary", lambda x, approximate="none": F.gelu(x, approximate=approximate),
                    unary_samples(U_(-3, 3), ({}, {"approximate": "tanh"}, {"approximate": "none"},
                                              {"approximate": "tanh"})),
                    attrs={"approximate": "none"}),
    # elementwise binary
    "add": OpEntry("binary", torch.add, binary_samples(U_(-2, 2), U_(-2, 2))),
    "sub": OpEntry("binary", torch.sub, binary_samples(U_(-2, 2), U_(-2, 2))),
    "mul": OpEntry("binary", torch.mul, binary_samples(U_(-2, 2), U_(-2, 2))),
    "div": OpEntry("binary", torch.div, binary_samples(U_(-2, 2), A_(-2, 2, margin=0.5))),
    "pow": OpEntry("binary", torch.pow, binary_samples(U_(0.3, 2), U_(-1.5, 2))),
    "maximum": OpEntry("binary", torch.maximum, binary_samples(U_(-2, 2), U_(-2, 2))),
    "minimum": OpEntry("binary", torch.minimum, binary_samples(U_(-2, 2), U_(-2, 2))),
    "atan2": OpEntry("binary", torch.atan2, binary_samples(A_(-2, 2, margin=0.2), U_(-2, 2))),
    "squared_difference": OpEntry("binary", lambda x, y: (x - y) ** 2, binary_samples(U_(-2, 2), U_(-2, 2))),
    # comparison
    "equal": OpEntry("binary", torch.eq, compare_samples()),
    "not_equal": OpEntry("binary", torch.ne, compare_samples()),
    "greater": OpEntry("binary", torch.gt, compare_samples()),
    "greater_equal": OpEntry("binary", torch.ge, compare_samples()),
    "less": OpEntry("binary", torch.lt, compare_samples()),
    "less_equal": OpEntry("binary", torch.le, compare_samples()),
    # selection
    "where": OpEntry("binary", torch.where, [
        Sample(cond=Bools((2, 3)), x=U((2, 3)), y=U((2, 3)), wrt=["x", "y"]),
        Sample(cond=Bools((3, 1)), x=U((1, 4)), y=U(()), wrt=["x", "y"]),
        Sample(cond=Bools((2, 3, 4)), x=U((4,)), y=U((2, 1, 4)), wrt=["x", "y"]),
        Sample(cond=Bval([True, False, True]), x=U((2, 3)), y=U((3,)), wrt=["y"]),
    ]),
    "clamp": OpEntry("binary", lambda x, min=None, max=None: torch.clamp(x, min, max), [
        Sample(x=Away((2, 3), points=(-0.5, 0.7)), attrs={"min": -0.5, "max": 0.7}),
        Sample(x=Away((5,), points=(0.25,)), attrs={"min": 0.25}),
        Sample(x=Away((2, 3, 2), points=(-1,)), attrs={"max": -1, "min": None}),
        Sample(x=Away((3, 2), points=(-1.5, 1.5)), attrs={"min": -1.5, "max": 1.5}),
    ], attrs={"min": None, "max": None}),
    # reductions
    "sum": OpEntry("reduce", _reduce(lambda x, d, k: torch.sum(x, dim=d, keepdim=k) if d else torch.sum(x)),
                   reduce_samples(lambda s: U(s)), attrs={"axis": None, "keepdims": False}),
    "mean": OpEntry("reduce", _reduce(lambda x, d, k: torch.mean(x, dim=d, keepdim=k) if d else torch.mean(x)),
                    reduce_samples(lambda s: U(s)), attrs={"axis": None, "keepdims": False}),
    "prod": OpEntry("reduce", _prod, reduce_samples(lambda s: Away(s, -1.5, 1.5, margin=0.3)) + [
        Sample(x=Const([[0.5, 0.0, 1.5], [2.0, -0.5, 1.25]]), attrs={"axis": 1}, tag="one_zero_in_a_row",
               second=False),
    ], attrs={"axis": None, "keepdims": False}),
    "amax": OpEntry("reduce", _reduce(lambda x, d, k: torch.amax(x, dim=d if d else (), keepdim=k)),
                    reduce_samples(lambda s: Distinct(s)), attrs={"axis": None, "keepdims": False}),
    "amin": OpEntry("reduce", _reduce(lambda x, d, k: torch.amin(x, dim=d if d else (), keepdim=k)),
                    reduce_samples(lambda s: Distinct(s)), attrs={"axis": None, "keepdims": False}),
    "logsumexp": OpEntry("reduce",
                         _reduce(lambda x, d, k: torch.logsumexp(x, dim=d if d else tuple(range(x.dim())), keepdim=k)),
                         reduce_samples(lambda s: U(s, -3, 3)), attrs={"axis": None, "keepdims": False}),
    "var": OpEntry("reduce", _var(False), [
        Sample(x=U((2, 3, 4)), attrs={"axis": None}),
        Sample(x=U((2, 3, 4)), attrs={"axis": -1, "keepdims": True, "correction": 0}),
        Sample(x=U((2, 3, 4)), attrs={"axis": [0, 2], "correction": 1}),
        Sample(x=U((3, 4)), attrs={"axis": 0, "keepdims": False, "correction": 0}),
        Sample(x=U((3, 4)), attrs={"axis": None, "keepdims": True, "correction": 1}),
    ], attrs={"axis": None, "keepdims": False, "correction": 1}),
    "std": OpEntry("reduce", _var(True), [
        Sample(x=U((2, 3, 4)), attrs={"axis": None}),
        Sample(x=U((2, 3, 4)), attrs={"axis": -1, "keepdims": True, "correction": 0}),
        Sample(x=U((2, 3, 4)), attrs={"axis": [0, 2], "correction": 1}),
        Sample(x=U((3, 4)), attrs={"axis": 1, "keepdims": False, "correction": 0}),
        Sample(x=U((3, 4)), attrs={"axis": None, "keepdims": True, "correction": 1}),
    ], attrs={"axis": None, "keepdims": False, "correction": 1}),
    "argmax": OpEntry("reduce", _arg(torch.argmax), arg_samples(), attrs={"axis": None, "keepdims": False},
                      ),
    "argmin": OpEntry("reduce", _arg(torch.argmin), arg_samples(), attrs={"axis": None, "keepdims": False},
                      ),
    # shape
    "reshape": OpEntry("shape", lambda x, shape: x.reshape(shape), [
        Sample(x=U((2, 3)), attrs={"shape": [3, 2]}),
        Sample(x=U((2, 3, 4)), attrs={"shape": [6, -1]}),
        Sample(x=U((4,)), attrs={"shape": [2, 1, 2]}),
        Sample(x=U(()), attrs={"shape": [1, 1]}),
        Sample(x=U((2, 3)), attrs={"shape": [-1]}),
    ]),
    "transpose": OpEntry("shape", lambda x, perm: x.permute(perm), [
        Sample(x=U((2, 3)), attrs={"perm": [1, 0]}),
        Sample(x=U((2, 3, 4)), attrs={"perm": [2, 0, 1]}),
        Sample(x=U((2, 3, 4)), attrs={"perm": [0, 2, 1]}),
        Sample(x=U((2, 1, 3, 2)), attrs={"perm": [3, 1, 0, 2]}),
    ]),
    "broadcast_to": OpEntry("shape", lambda x, shape: x.broadcast_to(shape), [
        Sample(x=U((3,)), attrs={"shape": [2, 3]}),
        Sample(x=U((3, 1)), attrs={"shape": [2, 3, 4]}),
        Sample(x=U(()), attrs={"shape": [2, 2]}),
        Sample(x=U((1, 2, 1)), attrs={"shape": [3, 2, 2]}),
    ]),
    "squeeze": OpEntry("shape", _squeeze, [
        Sample(x=U((1, 3, 1)), attrs={"axis": None}),
        Sample(x=U((2, 1, 3)), attrs={"axis": 1}),
        Sample(x=U((1, 3, 1)), attrs={"axis": -1}),
        Sample(x=U((1, 2, 1, 3)), attrs={"axis": [0, 2]}),
    ], attrs={"axis": None}),
    "expand_dims": OpEntry("shape", _expand_dims, [
        Sample(x=U((2, 3)), attrs={"axis": 0}),
        Sample(x=U((2, 3)), attrs={"axis": -1}),
        Sample(x=U((3,)), attrs={"axis": 1}),
        Sample(x=U((2, 3)), attrs={"axis": [0, 3]}),
    ]),
    "concat": OpEntry("shape", lambda xs, axis=0: torch.cat(xs, dim=axis), [
        Sample(["a", "b"], a=U((2, 3)), b=U((1, 3)), attrs={"axis": 0}),
        Sample(["a", "b", "c"], a=U((2, 1)), b=U((2, 3)), c=U((2, 2)), attrs={"axis": -1}),
        Sample(["a", "b"], a=U((2, 3, 2)), b=U((2, 1, 2)), attrs={"axis": 1}),
        Sample(["a"], a=U((3, 2)), attrs={"axis": 0}),
        Sample(["a", "b", "a"], a=U((2,)), b=U((3,)), tag="repeated_input"),
    ], attrs={"axis": 0}),
    "stack": OpEntry("shape", lambda xs, axis=0: torch.stack(xs, dim=axis), [
        Sample(["a", "b"], a=U((2, 3)), b=U((2, 3)), attrs={"axis": 0}),
        Sample(["a", "b"], a=U((2, 3)), b=U((2, 3)), attrs={"axis": -1}),
        Sample(["a", "b", "c"], a=U((3,)), b=U((3,)), c=U((3,)), attrs={"axis": 1}),
        Sample(["a", "b"], a=U(()), b=U(()), attrs={"axis": 0}),
    ], attrs={"axis": 0}),
    "tile": OpEntry("shape", lambda x, multiples: torch.tile(x, multiples), [
        Sample(x=U((2, 3)), attrs={"multiples": [2, 1]}),
        Sample(x=U((3,)), attrs={"multiples": [2, 2]}),
        Sample(x=U((2, 1, 2)), attrs={"multiples": [1, 3, 1]}),
        Sample(x=U((2, 2)), attrs={"multiples": [3]}),
    ]),
    "flip": OpEntry("shape", _flip, [
        Sample(x=U((2, 3)), attrs={"axis": 0}),
        Sample(x=U((2, 3)), attrs={"axis": None}),
        Sample(x=U((2, 3, 2)), attrs={"axis": [0, -1]}),
        Sample(x=U((4,)), attrs={"axis": -1}),
    ], attrs={"axis": None}),
    "pad": OpEntry("shape", _pad, [
        Sample(x=U((2, 3)), attrs={"paddings": [[1, 0], [0, 2]]}),
        Sample(x=U((3,)), attrs={"paddings": [[2, 1]], "value": 1.5}),
        Sample(x=U((2, 2, 2)), attrs={"paddings": [[0, 0], [1, 1], [0, 1]], "value": -1}),
        Sample(x=U((2, 3)), attrs={"paddings": [[0, 0], [0, 0]]}),
    ], attrs={"value": 0.0}),
    # index
    "slice": OpEntry("index", _slice, [
        Sample(x=U((4, 5)), attrs={"begin": [1, 0], "size": [2, -1]}),
        Sample(x=U((3, 4, 2)), attrs={"begin": [0, 1, 0], "size": [-1, 2, 1]}),
        Sample(x=U((6,)), attrs={"begin": [2], "size": [3]}),
        Sample(x=U((2, 3)), attrs={"begin": [0, 0], "size": [2, 3]}),
    ]),
    "strided_slice": OpEntry("index", _strided_slice, [
        Sample(x=U((6,)), attrs={"begin": [1], "end": [5], "strides": [2]}),
        Sample(x=U((4, 5)), attrs={"begin": [3, 0], "end": [0, 5], "strides": [-1, 2]}),
        Sample(x=U((5,)), attrs={"begin": [-1], "end": [-6], "strides": [-1]}),
        Sample(x=U((3, 4)), attrs={"begin": [0, -3], "end": [3, 4], "strides": [1, 1]}),
        Sample(x=U((4, 3)), attrs={"begin": [0, 2], "end": [4, 0], "strides": [3, -2]}),
    ]),
    "gather": OpEntry("index", _gather, [
        Sample(x=U((5, 3)), indices=Ival([4, 0, 4, 2]), attrs={"axis": 0}, wrt=["x"], tag="repeated_indices"),
        Sample(x=U((2, 5)), indices=Ival([[1, 3, 0], [4, 4, 2]]), attrs={"axis": 1}, wrt=["x"]),
        Sample(x=U((4,)), indices=Ival(2), attrs={"axis": 0}, wrt=["x"], tag="0d_index"),
        Sample(x=U((3, 4, 2)), indices=Ival([3, 1]), attrs={"axis": -2}, wrt=["x"]),
    ], attrs={"axis": 0}),
    # linear algebra (every NumPy matmul form)
    "matmul": OpEntry("linalg", torch.matmul, [
        Sample(a=U((3,)), b=U((3,)), tag="1d_1d"),
        Sample(a=U((3,)), b=U((3, 4)), tag="1d_2d"),
        Sample(a=U((2, 3)), b=U((3,)), tag="2d_1d"),
        Sample(a=U((2, 3)), b=U((3, 4)), tag="2d_2d"),
        Sample(a=U((2, 2, 3)), b=U((2, 3, 4)), tag="batched_3d_3d"),
        Sample(a=U((2, 1, 2, 3)), b=U((3, 3, 4)), tag="broadcast_batch_4d_3d"),
        Sample(a=U((2, 2, 3)), b=U((3, 4)), tag="3d_2d"),
        Sample(a=U((2, 3)), b=U((2, 3, 4)), tag="2d_3d"),
        Sample(a=U((3,)), b=U((2, 3, 4)), tag="1d_3d"),
        Sample(a=U((2, 2, 3)), b=U((3,)), tag="3d_1d"),
        Sample(a=U((1, 3)), b=U((3, 1)), tag="row_col"),
        Sample(a=U((4, 2, 3)), b=U((1, 3, 2)), tag="batch_of_one"),
    ]),
    # neural network
    "softmax": OpEntry("nn", lambda x, axis=-1: torch.softmax(x, dim=axis), [
        Sample(x=U((2, 4), -3, 3)),
        Sample(x=U((3, 2, 2), -3, 3), attrs={"axis": 0}),
        Sample(x=U((5,), -3, 3)),
        Sample(x=U((2, 3), -3, 3), attrs={"axis": -2}),
    ], attrs={"axis": -1}),
    "log_softmax": OpEntry("nn", lambda x, axis=-1: torch.log_softmax(x, dim=axis), [
        Sample(x=U((2, 4), -3, 3)),
        Sample(x=U((3, 2, 2), -3, 3), attrs={"axis": 1}),
        Sample(x=U((5,), -3, 3), attrs={"axis": 0}),
        Sample(x=U((2, 3), -3, 3), attrs={"axis": -2}),
    ], attrs={"axis": -1}),
    "cross_entropy": OpEntry("nn", _cross_entropy, [
        Sample(logits=U((4, 5)), labels=Ints((4,), 0, 5), wrt=["logits"]),
        Sample(logits=U((4, 5)), labels=Ints((4,), 0, 5), attrs={"reduction": "sum"}, wrt=["logits"]),
        Sample(logits=U((3, 4)), labels=Ints((3,), 0, 4), attrs={"reduction": "none"}, wrt=["logits"]),
        Sample(logits=U((4, 3)), labels=Ival([2, 0, 1, 2]), weight=U((3,), 0.5, 2), wrt=["logits", "weight"],
               tag="weight"),
        Sample(logits=U((4, 3)), labels=Ival([2, -100, 1, 0]), wrt=["logits"], tag="ignore_index_default"),
        Sample(logits=U((4, 3)), labels=Ival([2, 1, 1, 0]), attrs={"ignore_index": 1, "reduction": "mean"},
               wrt=["logits"], tag="ignore_index_1"),
        Sample(logits=U((4, 5)), labels=Ints((4,), 0, 5), attrs={"label_smoothing": 0.1}, wrt=["logits"],
               tag="label_smoothing"),
        Sample(logits=U((3, 4)), labels=Ival([3, -100, 0]), weight=U((4,), 0.5, 2),
               attrs={"reduction": "sum"}, wrt=["logits", "weight"], tag="weight_ignore_sum"),
    ], attrs={"reduction": "mean", "ignore_index": -100, "label_smoothing": 0.0}),
    "nll_loss": OpEntry("nn", _nll_loss, [
        Sample(log_probs=U((4, 5), -3, -0.1), labels=Ints((4,), 0, 5), wrt=["log_probs"]),
        Sample(log_probs=U((4, 3), -3, -0.1), labels=Ival([0, 2, 2, 1]), weight=U((3,), 0.5, 2),
               wrt=["log_probs", "weight"], tag="weight"),
        Sample(log_probs=U((3, 4), -3, -0.1), labels=Ints((3,), 0, 4), attrs={"reduction": "none"},
               wrt=["log_probs"]),
        Sample(log_probs=U((4, 3), -3, -0.1), labels=Ival([1, 0, -100, 2]), attrs={"reduction": "sum"},
               wrt=["log_probs"], tag="ignore_index"),
    ], attrs={"reduction": "mean", "ignore_index": -100}),
    "binary_cross_entropy_with_logits": OpEntry("nn", _bce_with_logits, [
        Sample(logits=Away((3, 4), -3, 3), target=U((3, 4), 0, 1)),
        Sample(logits=Away((3, 4), -3, 3), target=U((3, 4), 0, 1), weight=U((3, 4), 0.5, 1.5),
               pos_weight=U((4,), 0.5, 3), attrs={"reduction": "sum"}, tag="weight_pos_weight"),
        Sample(logits=Away((2, 3), -3, 3), target=U((2, 3), 0, 1), attrs={"reduction": "none"}),
        Sample("logits", "target", None, "pos_weight", logits=Away((4, 2), -3, 3), target=U((4, 2), 0, 1),
               pos_weight=U((2,), 0.5, 3), tag="pos_weight_only"),
    ], attrs={"reduction": "mean"}),
    "binary_cross_entropy": OpEntry("nn", _bce, [
        Sample(probs=U((3, 4), 0.1, 0.9), target=U((3, 4), 0, 1)),
        Sample(probs=U((3, 4), 0.1, 0.9), target=U((3, 4), 0, 1), weight=U((3, 4), 0.5, 1.5),
               attrs={"reduction": "sum"}, tag="weight"),
        Sample(probs=U((5,), 0.1, 0.9), target=Const([1.0, 0.0, 0.0, 1.0, 1.0]), attrs={"reduction": "none"},
               wrt=["probs"], tag="hard_targets"),
    ], attrs={"reduction": "mean"}),
    "mse_loss": OpEntry("nn", lambda x, y, reduction="mean": _reduce_loss((x - y) ** 2, reduction), [
        Sample(x=U((3, 4)), y=U((3, 4))),
        Sample(x=U((3, 4)), y=U((3, 4)), attrs={"reduction": "sum"}),
        Sample(x=U((5,)), y=U((5,)), attrs={"reduction": "none"}),
    ], attrs={"reduction": "mean"}),
    "l1_loss": OpEntry("nn", lambda x, y, reduction="mean": _reduce_loss(torch.abs(x - y), reduction), [
        Sample(x=U((3, 4)), y=Near("x")),
        Sample(x=U((3, 4)), y=Near("x"), attrs={"reduction": "sum"}),
        Sample(x=U((5,)), y=Near("x"), attrs={"reduction": "none"}),
    ], attrs={"reduction": "mean"}),
    "smooth_l1_loss": OpEntry("nn", _smooth_l1, [
        Sample(x=U((3, 4)), y=Near("x", 0.1, 2.0, avoid=(1.0,))),
        Sample(x=U((3, 4)), y=Near("x", 0.1, 1.5, avoid=(0.5,)), attrs={"reduction": "sum", "beta": 0.5}),
        Sample(x=U((5,)), y=Near("x", 0.1, 2.5, avoid=(2.0,)), attrs={"reduction": "none", "beta": 2.0}),
    ], attrs={"reduction": "mean", "beta": 1.0}),
    # graph control
    "identity": OpEntry("unary", lambda x: x, [Sample(x=U((2, 3))), Sample(x=U((4,))), Sample(x=U(()))]),
    "cast": OpEntry("unary", _cast, [
        Sample(x=U((2, 3)), attrs={"dtype": "float32"}, dtype="float64", rtol=1e-6, atol=1e-7,
               tag="f64_to_f32"),
        Sample(x=U((2, 3)), attrs={"dtype": "float64"}, dtype="float32", tag="f32_to_f64"),
        Sample(x=Frac((5,)), attrs={"dtype": "int32"}, wrt=[], tag="to_int32_truncates"),
        Sample(x=Grid((2, 2), -1, 1), attrs={"dtype": "bool"}, wrt=[], tag="to_bool"),
        Sample(x=Ints((3,), -4, 4), attrs={"dtype": "float64"}, wrt=[], tag="int32_to_f64"),
    ]),
    "stop_gradient": OpEntry("unary", lambda x: x.detach(), [
        Sample(x=U((2, 3))), Sample(x=U((3,))), Sample(x=U(()))], fd=False),
    # convolution and pooling (NCHW)
    "conv2d": OpEntry("nn", lambda x, w, bias=None, stride=1, padding=0, dilation=1, groups=1: F.conv2d(
        x, w, bias, stride=stride, padding=padding, dilation=dilation, groups=groups), [
        Sample(x=U((1, 2, 5, 5)), w=U((3, 2, 3, 3), -1, 1)),
        Sample(x=U((2, 2, 5, 4)), w=U((2, 2, 2, 3), -1, 1), bias=U((2,)), attrs={"stride": 2, "padding": 1}),
        Sample(x=U((1, 4, 4, 5)), w=U((4, 2, 2, 2), -1, 1), bias=U((4,)),
               attrs={"groups": 2, "dilation": [1, 2], "padding": [1, 0]}),
        Sample(x=U((1, 1, 4, 4)), w=U((2, 1, 2, 2), -1, 1), attrs={"stride": [1, 2], "padding": [0, 1]}),
        Sample("x", "w", None, x=U((1, 3, 3, 3)), w=U((2, 3, 1, 1), -1, 1), attrs={"padding": 1}, tag="1x1_null_bias"),
    ], attrs={"stride": 1, "padding": 0, "dilation": 1, "groups": 1}),
    "max_pool2d": OpEntry("nn", lambda x, kernel_size, stride=None, padding=0: F.max_pool2d(
        x, kernel_size, stride=kernel_size if stride is None else stride, padding=padding), [
        Sample(x=Distinct((1, 1, 4, 4)), attrs={"kernel_size": 2}),
        Sample(x=Distinct((2, 2, 5, 5)), attrs={"kernel_size": 3, "stride": 2, "padding": 1}),
        Sample(x=Distinct((1, 2, 4, 6)), attrs={"kernel_size": [2, 3], "stride": [2, 3]}),
        Sample(x=Distinct((1, 1, 4, 5)), attrs={"kernel_size": 2, "stride": 1}, tag="overlapping"),
    ], attrs={"stride": None, "padding": 0}),
    "avg_pool2d": OpEntry("nn", lambda x, kernel_size, stride=None, padding=0: F.avg_pool2d(
        x, kernel_size, stride=kernel_size if stride is None else stride, padding=padding, count_include_pad=True), [
        Sample(x=U((1, 1, 4, 4)), attrs={"kernel_size": 2}),
        Sample(x=U((2, 2, 5, 5)), attrs={"kernel_size": 3, "stride": 2, "padding": 1}),
        Sample(x=U((1, 2, 4, 6)), attrs={"kernel_size": [2, 3], "stride": [1, 3]}),
        Sample(x=U((1, 1, 5, 4)), attrs={"kernel_size": 3, "stride": 1, "padding": [1, 0]}),
    ], attrs={"stride": None, "padding": 0}),
    # normalisation
    "batch_norm": OpEntry("nn", lambda x, weight=None, bias=None, eps=1e-5: _norm(
        x, [0] + list(range(2, x.dim())), _channel(weight, x), _channel(bias, x), eps), [
        Sample(x=U((4, 3)), weight=U((3,), 0.5, 1.5), bias=U((3,))),
        Sample(x=U((2, 3, 2, 2)), weight=U((3,), 0.5, 1.5), bias=U((3,))),
        Sample(x=U((3, 2, 2, 2))),
        Sample("x", "weight", x=U((5, 2)), weight=U((2,), 0.5, 1.5), attrs={"eps": 1e-3}),
    ], attrs={"eps": 1e-5}),
    "layer_norm": OpEntry("nn", lambda x, weight=None, bias=None, normalized_ndim=1, eps=1e-5: _norm(
        x, list(range(x.dim() - normalized_ndim, x.dim())), weight, bias, eps), [
        Sample(x=U((3, 4)), weight=U((4,), 0.5, 1.5), bias=U((4,))),
        Sample(x=U((2, 3, 4)), weight=U((3, 4), 0.5, 1.5), bias=U((3, 4)), attrs={"normalized_ndim": 2}),
        Sample(x=U((2, 5))),
        Sample("x", "weight", x=U((4, 3)), weight=U((3,), 0.5, 1.5), attrs={"eps": 1e-3}),
    ], attrs={"normalized_ndim": 1, "eps": 1e-5}),
    "scaled_dot_product_attention": OpEntry("attention", _sdpa, _attention_samples(),
                                            attrs={"is_causal": False, "scale": None}),
    "embedding": OpEntry("nn", lambda indices, table: F.embedding(indices.long(), table), [
        Sample(indices=Ival([4, 0, 4, 2]), table=U((5, 3)), tag="repeated_indices"),
        Sample(indices=Ival([[1, 5, 0], [2, 2, 3]]), table=U((6, 2))),
        Sample(indices=Ival(3), table=U((4, 3)), tag="0d_index"),
    ]),
}

# Catalogue ops without an entry yet (none now; an op listed here is exempt from the coverage requirement).
PENDING_OPS = []

# ---- hand-written cases ---------------------------------------------------------------------------------------


class Case:
    """A multi-statement (or otherwise hand-written) case. `fd` False skips the finite-difference check: only for
    programs whose gradient differs from the function's slope by definition (stop_gradient) or is non-finite."""

    def __init__(self, family, name, inputs, program, output, wrt, dtype="float64", second=False, sens=False,
                 rtol=None, atol=None, fd=True, error=None):
        self.family, self.name, self.inputs, self.program, self.output = family, name, inputs, program, output
        self.wrt, self.dtype, self.second, self.sens = wrt, dtype, second, sens
        self.rtol, self.atol, self.fd, self.error = rtol, atol, fd, error


def _linear_bce(dtype, guard):
    prog = [["h", "matmul", "x", "w"], ["z", "add", "h", "b"]]
    if guard:
        prog.append(["zs", "stop_gradient", "z"])
    prog.append(["loss", "binary_cross_entropy_with_logits", "zs" if guard else "z", "t", "weight", "pos_weight",
                 {"reduction": "mean"}])
    return prog


LINEAR_BCE_INPUTS = lambda: {  # noqa: E731
    "x": U((4, 3)), "w": U((3, 2), -1, 1), "b": U((2,), -0.5, 0.5), "t": U((4, 2), 0, 1),
    "weight": U((4, 2), 0.5, 1.5), "pos_weight": U((2,), 0.5, 3)}

MLP_INPUTS = lambda n=5: {  # noqa: E731
    "x": U((n, 4)), "w1": U((4, 6), -1, 1), "b1": U((6,), -0.5, 0.5), "w2": U((6, 3), -1, 1),
    "b2": U((3,), -0.5, 0.5), "labels": Ints((n,), 0, 3)}


def _mlp(loss_attrs, weight=False):
    ce = ["loss", "cross_entropy", "logits", "labels"] + (["cw"] if weight else [])
    return [["h1", "matmul", "x", "w1"], ["z1", "add", "h1", "b1"], ["a1", "tanh", "z1"],
            ["h2", "matmul", "a1", "w2"], ["logits", "add", "h2", "b2"], ce + [loss_attrs]]


ATTENTION = [["kt", "transpose", "k", {"perm": [1, 0]}], ["s", "matmul", "q", "kt"], ["sc", "mul", "s", "scale"],
             ["p", "softmax", "sc", {"axis": -1}], ["o", "matmul", "p", "v"]]

ATTENTION_BATCHED = [["kt", "transpose", "k", {"perm": [0, 2, 1]}], ["s", "matmul", "q", "kt"],
                     ["sc", "div", "s", "sqrt_d"], ["p", "softmax", "sc"], ["o", "matmul", "p", "v"]]

RESIDUAL = [
    ["mu", "mean", "x", {"axis": -1, "keepdims": True}],
    ["xc", "sub", "x", "mu"],
    ["v", "var", "x", {"axis": -1, "keepdims": True, "correction": 0}],
    ["ve", "add", "v", "eps"],
    ["r", "rsqrt", "ve"],
    ["n", "mul", "xc", "r"],
    ["ng", "mul", "n", "gamma"],
    ["nb", "add", "ng", "beta"],
    ["h", "matmul", "nb", "w"],
    ["hb", "add", "h", "b"],
    ["g", "gelu", "hb"],
    ["y", "add", "x", "g"],
]

RESIDUAL_INPUTS = lambda: {  # noqa: E731
    "x": U((3, 5)), "gamma": U((5,), 0.5, 1.5), "beta": U((5,), -0.5, 0.5), "w": U((5, 5), -0.8, 0.8),
    "b": U((5,), -0.3, 0.3), "eps": Const(1e-5)}

RESIDUAL_LAYER_NORM = [
    ["nb", "layer_norm", "x", "gamma", "beta"],
    ["h", "matmul", "nb", "w"],
    ["hb", "add", "h", "b"],
    ["g", "gelu", "hb"],
    ["y", "add", "x", "g"],
]

PROGRAMS = [
    Case("programs", "linear_bce_with_logits_weight_pos_weight", LINEAR_BCE_INPUTS(), _linear_bce("float64", False),
         "loss", ["w", "b", "x", "t", "weight", "pos_weight"], second=True),
    Case("programs", "linear_bce_with_logits_weight_pos_weight_f32", LINEAR_BCE_INPUTS(),
         _linear_bce("float32", False), "loss", ["w", "b"], dtype="float32", second=True, rtol=1e-4, atol=1e-5),
    Case("programs", "linear_bce_with_logits_behind_stop_gradient", LINEAR_BCE_INPUTS(),
         _linear_bce("float64", True), "loss", ["w", "b", "x"], second=True, fd=False),
    Case("programs", "linear_bce_with_logits_behind_stop_gradient_f32", LINEAR_BCE_INPUTS(),
         _linear_bce("float32", True), "loss", ["w", "b"], dtype="float32", fd=False),
    Case("programs", "mlp2_cross_entropy", MLP_INPUTS(), _mlp({}), "loss", ["w1", "b1", "w2", "b2"], second=True),
    Case("programs", "mlp2_cross_entropy_f32", MLP_INPUTS(), _mlp({}), "loss", ["w1", "b1", "w2", "b2"],
         dtype="float32", rtol=1e-4, atol=1e-5),
    Case("programs", "mlp2_cross_entropy_sum_label_smoothing", MLP_INPUTS(),
         _mlp({"reduction": "sum", "label_smoothing": 0.2}), "loss", ["w1", "b2", "x"], second=True),
    Case("programs", "mlp2_cross_entropy_class_weight", dict(MLP_INPUTS(), cw=U((3,), 0.5, 2)),
         _mlp({"reduction": "mean"}, weight=True), "loss", ["w2", "w1", "cw"], second=True),
    Case("programs", "mlp2_cross_entropy_none_sens", MLP_INPUTS(4), _mlp({"reduction": "none"}), "loss",
         ["w1", "b1", "w2"], sens=True, second=True),
    Case("programs", "attention_softmax_qkT_scaled_v",
         {"q": U((3, 4)), "k": U((5, 4)), "v": U((5, 2)), "scale": Const(0.5)}, ATTENTION, "o", ["q", "k", "v"],
         second=True, sens=True),
    Case("programs", "attention_softmax_qkT_scaled_v_f32",
         {"q": U((3, 4)), "k": U((5, 4)), "v": U((5, 2)), "scale": Const(0.5)}, ATTENTION, "o", ["q", "k", "v"],
         dtype="float32", sens=True, rtol=1e-4, atol=1e-5),
    Case("programs", "attention_batched_div_sqrt_d",
         {"q": U((2, 3, 4)), "k": U((2, 5, 4)), "v": U((2, 5, 3)), "sqrt_d": Const(2.0)}, ATTENTION_BATCHED, "o",
         ["k", "q", "v"], second=True),
    Case("programs", "residual_block_layer_norm_decomposed_mean_var_rsqrt_gelu", RESIDUAL_INPUTS(), RESIDUAL, "y",
         ["x", "gamma", "beta", "w", "b"], second=True),
    Case("programs", "residual_block_layer_norm_decomposed_mean_var_rsqrt_gelu_sens", RESIDUAL_INPUTS(), RESIDUAL,
         "y", ["w", "x"], sens=True, second=True),
    Case("programs", "residual_block_layer_norm_decomposed_mean_var_rsqrt_gelu_f32", RESIDUAL_INPUTS(), RESIDUAL,
         "y", ["x", "gamma", "w"], dtype="float32", rtol=1e-4, atol=1e-5),
    Case("programs", "residual_block_layer_norm_gelu", RESIDUAL_INPUTS(), RESIDUAL_LAYER_NORM, "y",
         ["x", "gamma", "beta", "w", "b"], second=True, sens=True),
    Case("programs", "conv_tanh_avgpool_linear_cross_entropy",
         {"x": U((2, 1, 5, 5)), "k": U((2, 1, 2, 2), -1, 1), "kb": U((2,), -0.2, 0.2), "w": U((8, 3), -1, 1),
          "labels": Ival([2, 0])},
         [["c", "conv2d", "x", "k", "kb"], ["r", "tanh", "c"], ["p", "avg_pool2d", "r", {"kernel_size": 2}],
          ["f", "reshape", "p", {"shape": [2, 8]}], ["z", "matmul", "f", "w"],
          ["loss", "cross_entropy", "z", "labels"]], "loss", ["k", "kb", "w"], second=True),
    Case("programs", "embedding_mean_linear_mse",
         {"ids": Ival([[0, 3, 3], [1, 2, 0]]), "table": U((4, 3)), "w": U((3, 1)), "y": U((2, 1))},
         [["e", "embedding", "ids", "table"], ["m", "mean", "e", {"axis": 1}], ["p", "matmul", "m", "w"],
          ["loss", "mse_loss", "p", "y"]], "loss", ["table", "w"], second=True),
    Case("programs", "unused_wrt_input_has_zero_gradient", {"x": U((2, 3)), "y": U((2, 3)), "z": U((4,))},
         [["p", "mul", "x", "y"], ["s", "sum", "p"]], "s", ["x", "z"], second=True),
    Case("programs", "unused_wrt_input_only", {"x": U((3,)), "z": U((2, 2))}, [["e", "exp", "x"]], "e", ["z"],
         second=True),
    Case("programs", "stop_gradient_blocks_one_path", {"x": U((3,))},
         [["s", "stop_gradient", "x"], ["p", "mul", "x", "s"]], "p", ["x"], second=True, fd=False),
    Case("programs", "log_softmax_nll_equals_cross_entropy", {"z": U((4, 3)), "labels": Ival([0, 2, 1, 1])},
         [["lp", "log_softmax", "z"], ["loss", "nll_loss", "lp", "labels"]], "loss", ["z"], second=True),
    Case("programs", "mse_linear_regression_f32", {"x": U((6, 3)), "w": U((3, 1)), "y": U((6, 1))},
         [["p", "matmul", "x", "w"], ["loss", "mse_loss", "p", "y"]], "loss", ["w"], dtype="float32", second=True,
         rtol=1e-4, atol=1e-5),
    Case("programs", "gather_at_argmax", {"x": Distinct((6,))},
         [["i", "argmax", "x"], ["m", "gather", "x", "i"], ["e", "exp", "m"]], "e", ["x"], second=True),
    Case("programs", "where_greater_piecewise", {"x": Away((2, 4), points=(0.0,)), "zero": Const(0.0)},
         [["c", "greater", "x", "zero"], ["sq", "square", "x"], ["ex", "exp", "x"], ["y", "where", "c", "sq", "ex"]],
         "y", ["x"], second=True, sens=True),
    Case("programs", "concat_stack_reduce", {"a": U((2, 3)), "b": U((2, 3))},
         [["c", "concat", ["a", "b"], {"axis": 1}], ["d", "concat", ["b", "a"], {"axis": -1}],
          ["s", "stack", ["c", "d", "c"], {"axis": 0}],
          ["t", "logsumexp", "s", {"axis": [0, 2]}], ["u", "mul", "t", "t"]], "u", ["a", "b"],
         second=True, sens=True),
    Case("programs", "cast_f64_to_f32_and_back", {"x": U((2, 3))},
         [["a", "cast", "x", {"dtype": "float32"}], ["e", "exp", "a"], ["b", "cast", "e", {"dtype": "float64"}],
          ["y", "mul", "b", "x"]], "y", ["x"], second=True, rtol=1e-6, atol=1e-7),
    Case("programs", "int32_labels_to_float_weights",
         {"x": U((4,)), "labels": Ival([0, 3, 1, 2])},
         [["lf", "cast", "labels", {"dtype": "float64"}], ["y", "mul", "x", "lf"], ["s", "sum", "y"]], "s", ["x"],
         second=True),
    Case("programs", "identity_chain_reused_value", {"x": U((3, 2))},
         [["i", "identity", "x"], ["a", "mul", "i", "x"], ["b", "sin", "a"], ["c", "add", "b", "i"]], "c", ["x"],
         second=True),
    Case("programs", "broadcast_rank3_with_rank1_sub_div", {"x": U((2, 3, 4)), "m": U((4,)), "s": U((4,), 0.5, 2)},
         [["c", "sub", "x", "m"], ["d", "div", "c", "s"], ["t", "tanh", "d"]], "t", ["x", "m", "s"], second=True,
         sens=True),
    Case("programs", "broadcast_scalar_times_matrix_pow", {"a": U((), 0.5, 1.5), "x": U((3, 2), 0.3, 2)},
         [["p", "pow", "x", "a"], ["q", "mul", "a", "p"]], "q", ["a", "x"], second=True),
    Case("programs", "slice_pad_tile_flip", {"x": U((3, 4))},
         [["s", "slice", "x", {"begin": [1, 0], "size": [2, 3]}], ["p", "pad", "s", {"paddings": [[1, 1], [0, 1]]}],
          ["t", "tile", "p", {"multiples": [1, 2]}], ["f", "flip", "t", {"axis": 1}], ["g", "sigmoid", "f"]],
         "g", ["x"], second=True, sens=True),
    Case("programs", "softplus_of_reshape_transpose_matmul_f32", {"x": U((6,)), "w": U((3, 2))},
         [["r", "reshape", "x", {"shape": [2, 3]}], ["t", "transpose", "r", {"perm": [1, 0]}],
          ["m", "matmul", "w", "r"], ["m2", "matmul", "m", "t"], ["y", "softplus", "m2"]], "y", ["x", "w"],
         dtype="float32", second=True, rtol=1e-4, atol=1e-5),
]

# Non-finite values: equal non-finite values pass, so these pin nan/inf results down.
NONFINITE = [
    Case("unary", "log/nan_for_negative_input", {"x": Const([-1.0, 2.0])}, [["y", "log", "x"]], "y", ["x"],
         fd=False),
    Case("unary", "reciprocal/inf_at_zero", {"x": Const([0.0, 2.0])}, [["y", "reciprocal", "x"]], "y", ["x"],
         fd=False),
    Case("unary", "sqrt/infinite_gradient_at_zero", {"x": Const([0.0, 4.0])}, [["y", "sqrt", "x"]], "y", ["x"],
         fd=False),
    Case("unary", "exp/overflow_to_inf_f32", {"x": Const([100.0, 1.0])}, [["y", "exp", "x"]], "y", ["x"],
         dtype="float32", fd=False),
    Case("unary", "add/nan_input_propagates", {"x": Const([float("nan"), 1.0]), "y": Const([1.0, float("inf")])},
         [["z", "add", "x", "y"]], "z", ["x", "y"], fd=False),
]


def E(name, inputs, program, kind, output=None, wrt=(), dtype="float64"):
    return Case("errors", name, inputs, program, output or program[-1][0], list(wrt), dtype=dtype, error=kind)


ERRORS = [
    E("add/shapes_do_not_broadcast", {"x": U((2, 3)), "y": U((4,))}, [["z", "add", "x", "y"]], "shape"),
    E("mul/shapes_do_not_broadcast_rank3", {"x": U((2, 3, 4)), "y": U((3, 1, 3))}, [["z", "mul", "x", "y"]], "shape"),
    E("matmul/inner_dims_differ", {"a": U((2, 3)), "b": U((4, 5))}, [["c", "matmul", "a", "b"]], "shape"),
    E("matmul/1d_lengths_differ", {"a": U((3,)), "b": U((4,))}, [["c", "matmul", "a", "b"]], "shape"),
    E("matmul/batch_dims_do_not_broadcast", {"a": U((2, 2, 3)), "b": U((3, 3, 4))}, [["c", "matmul", "a", "b"]],
      "shape"),
    E("matmul/0d_operand", {"a": U(()), "b": U((3,))}, [["c", "matmul", "a", "b"]], "shape"),
    E("reshape/element_count_differs", {"x": U((2, 3))}, [["y", "reshape", "x", {"shape": [4, 2]}]], "shape"),
    E("concat/other_dims_differ", {"a": U((2, 3)), "b": U((2, 4))}, [["c", "concat", ["a", "b"], {"axis": 0}]],
      "shape"),
    E("stack/shapes_differ", {"a": U((2, 3)), "b": U((3, 2))}, [["c", "stack", ["a", "b"]]], "shape"),
    E("sum/axis_out_of_range", {"x": U((2, 3))}, [["y", "sum", "x", {"axis": 2}]], "shape"),
    E("mean/negative_axis_out_of_range", {"x": U((2, 3))}, [["y", "mean", "x", {"axis": [0, -3]}]], "shape"),
    E("softmax/axis_out_of_range", {"x": U((2, 3))}, [["y", "softmax", "x", {"axis": 3}]], "shape"),
    E("expand_dims/axis_out_of_range", {"x": U((2, 3))}, [["y", "expand_dims", "x", {"axis": 4}]], "shape"),
    E("broadcast_to/incompatible_shape", {"x": U((2, 3))}, [["y", "broadcast_to", "x", {"shape": [3, 3]}]],
      "shape"),
    E("where/shapes_do_not_broadcast", {"c": Bools((2, 3)), "x": U((3, 2)), "y": U((2, 3))},
      [["z", "where", "c", "x", "y"]], "shape"),
    E("cross_entropy/labels_length_differs", {"z": U((4, 5)), "labels": Ints((3,), 0, 5)},
      [["l", "cross_entropy", "z", "labels"]], "shape"),
    E("nll_loss/weight_length_differs", {"z": U((4, 3)), "labels": Ints((4,), 0, 3), "w": U((4,))},
      [["l", "nll_loss", "z", "labels", "w"]], "shape"),
    E("mse_loss/shapes_differ", {"x": U((3,)), "y": U((4,))}, [["l", "mse_loss", "x", "y"]], "shape"),
    E("bce_with_logits/target_shape_differs", {"z": U((3, 4)), "t": U((3, 5), 0, 1)},
      [["l", "binary_cross_entropy_with_logits", "z", "t"]], "shape"),
    E("program/fails_in_third_statement", {"x": U((2, 3)), "w": U((4, 2))},
      [["a", "exp", "x"], ["b", "sum", "a", {"axis": 0}], ["c", "matmul", "a", "w"], ["d", "sum", "c"]], "shape",
      output="d", wrt=["x"]),
    E("where/float_condition", {"c": U((2, 3)), "x": U((2, 3)), "y": U((2, 3))}, [["z", "where", "c", "x", "y"]],
      "dtype"),
    E("where/int32_condition", {"c": Ints((3,), 0, 2), "x": U((3,)), "y": U((3,))}, [["z", "where", "c", "x", "y"]],
      "dtype"),
    E("gather/float_indices", {"x": U((4, 3)), "i": Const([0.0, 2.0])}, [["y", "gather", "x", "i"]], "dtype"),
    E("cross_entropy/float_labels", {"z": U((3, 4)), "labels": Const([0.0, 1.0, 3.0])},
      [["l", "cross_entropy", "z", "labels"]], "dtype"),
    E("nll_loss/bool_labels", {"z": U((2, 2)), "labels": Bval([True, False])}, [["l", "nll_loss", "z", "labels"]],
      "dtype"),
    E("unknown_op/frobnicate", {"x": U((2,))}, [["y", "frobnicate", "x"]], "unknown_op"),
    E("unknown_op/conv3d", {"x": U((1, 1, 2, 2, 2)), "w": U((1, 1, 1, 1, 1))}, [["y", "conv3d", "x", "w"]],
      "unknown_op"),
    E("unknown_op/after_valid_statements", {"x": U((2,))}, [["a", "exp", "x"], ["b", "exp_2", "a"]], "unknown_op"),
    E("sum/unknown_attribute", {"x": U((2, 3))}, [["y", "sum", "x", {"axes": 0}]], "value"),
    E("gelu/approximate_not_a_choice", {"x": U((3,))}, [["y", "gelu", "x", {"approximate": "fast"}]], "value"),
    E("mse_loss/reduction_not_a_choice", {"x": U((3,)), "y": U((3,))},
      [["l", "mse_loss", "x", "y", {"reduction": "avg"}]], "value"),
    E("reshape/shape_attribute_is_a_string", {"x": U((2, 3))}, [["y", "reshape", "x", {"shape": "6"}]], "value"),
    E("leaky_relu/alpha_is_a_string", {"x": U((3,))}, [["y", "leaky_relu", "x", {"alpha": "0.1"}]], "value"),
    E("add/missing_required_argument", {"x": U((3,))}, [["y", "add", "x"]], "value"),
    E("exp/too_many_arguments", {"x": U((3,)), "y": U((3,))}, [["z", "exp", "x", "y"]], "value"),
    E("cast/unknown_dtype", {"x": U((3,))}, [["y", "cast", "x", {"dtype": "float8"}]], "value"),
    E("add/list_argument_to_a_non_list_op", {"x": U((3,)), "y": U((3,))}, [["z", "add", ["x", "y"]]], "value"),
    E("stack/empty_list", {"x": U((3,))}, [["z", "stack", []]], "value"),
    E("var/correction_not_0_or_1", {"x": U((4,))}, [["y", "var", "x", {"correction": 2}]], "value"),
    E("transpose/perm_not_a_permutation", {"x": U((2, 3))}, [["y", "transpose", "x", {"perm": [0, 0]}]], "value"),
    # The float ops PyTorch has no bfloat16 CPU kernel for take float32 and float64 only (docs/mixed-precision.md).
    E("prod/bfloat16_input", {"x": U((2, 3))}, [["y", "prod", "x"]], "dtype", dtype="bfloat16"),
    E("prod/float16_input", {"x": U((4,))}, [["y", "prod", "x", {"axis": 0}]], "dtype", dtype="float16"),
    E("mse_loss/bfloat16_inputs", {"x": U((3,)), "y": U((3,))}, [["l", "mse_loss", "x", "y"]], "dtype",
      dtype="bfloat16"),
    E("mse_loss/float16_inputs", {"x": U((2, 2)), "y": U((2, 2))}, [["l", "mse_loss", "x", "y"]], "dtype",
      dtype="float16"),
    E("binary_cross_entropy/bfloat16_inputs", {"p": U((4,), 0.1, 0.9), "t": U((4,), 0, 1)},
      [["l", "binary_cross_entropy", "p", "t"]], "dtype", dtype="bfloat16"),
    E("binary_cross_entropy/float16_inputs", {"p": U((4,), 0.1, 0.9), "t": U((4,), 0, 1)},
      [["l", "binary_cross_entropy", "p", "t"]], "dtype", dtype="float16"),
]

HAND_WRITTEN = PROGRAMS + NONFINITE + ERRORS
