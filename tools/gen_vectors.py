#!/usr/bin/python3
"""Generates the shared gradient test vectors tests/vectors/*.json (format bprop-vectors/1).

Run with Debian's PyTorch:  /usr/bin/python3 tools/gen_vectors.py [--out DIR]

Every case is a program over the op catalogue (tools/vector_cases.py). The program written to the file is the
single source of truth: this script interprets it in PyTorch float64 (one small interpreter: op name +
attributes -> the op's torch implementation in vector_cases.OPS) and records the value, the vector-Jacobian
product for the case's cotangent ("sens"), and, when asked, the gradient of sum(grads[wrt[0]]) with respect to
every wrt input. First and second order are checked against central finite differences while generating; a
disagreement stops the script. Inputs come from a generator seeded by the case name, so adding a case changes
no other case.
"""
import argparse
import json
import math
import os
import sys
import zlib
from collections import Counter, OrderedDict

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vector_cases as vc  # noqa: E402

FORMAT = "bprop-vectors/1"
FILES = ["unary", "binary", "reduce", "shape", "index", "linalg", "nn", "attention", "programs", "errors"]

# The catalogue (contracts/ops.md); every name must have an entry in vc.OPS or be pending.
CATALOGUE = """neg abs sign exp log log1p expm1 sqrt rsqrt square reciprocal sin cos tan tanh sigmoid relu silu softplus
erf floor ceil round leaky_relu elu gelu add sub mul div pow maximum minimum atan2 squared_difference equal not_equal
greater greater_equal less less_equal where clamp sum mean prod amax amin logsumexp var std argmax argmin reshape
transpose broadcast_to squeeze expand_dims concat stack slice strided_slice gather pad tile flip matmul softmax
log_softmax cross_entropy nll_loss binary_cross_entropy_with_logits binary_cross_entropy mse_loss l1_loss
smooth_l1_loss conv2d max_pool2d avg_pool2d batch_norm layer_norm scaled_dot_product_attention embedding stop_gradient identity
cast""".split()

FD_EPS = 1e-6
FD_ATOL = 1e-6
FD_RTOL = 1e-5
F32_SECOND_TOL = (1e-4, 1e-5)


class GenError(Exception):
    pass


# ---- the interpreter ----------------------------------------------------------------------------------------


def split_stmt(stmt):
    out, op, rest = stmt[0], stmt[1], list(stmt[2:])
    attrs = rest.pop() if rest and isinstance(rest[-1], dict) else {}
    return out, op, rest, attrs


def interpret(program, env, mode):
    """Runs the program over env (name -> torch tensor); float casts run only in "typed" mode."""
    vc.CAST_MODE[0] = mode
    env = dict(env)
    for stmt in program:
        out, op, args, attrs = split_stmt(stmt)
        entry = vc.OPS[op]
        full = dict(entry.attrs)
        full.update(attrs)
        vals = [None if a is None else [env[n] for n in a] if isinstance(a, list) else env[a] for a in args]
        val = entry.fn(*vals, **full)
        if val.dtype == torch.int64:
            val = val.to(torch.int32)
        env[out] = val
    return env


def dtype_name(t):
    return {torch.float32: "float32", torch.float64: "float64", torch.int32: "int32", torch.bool: "bool",
            torch.float16: "float16", torch.bfloat16: "bfloat16"}[t]


# ---- building cases -----------------------------------------------------------------------------------------


class Built:
    """A case ready to compute: arrays for the inputs and the options."""

    def __init__(self, family, name, specs, program, output, wrt, dtype, second, sens, rtol, atol, fd, error,
                 auto_wrt=False):
        self.family, self.name, self.specs, self.program, self.output = family, name, specs, program, output
        self.wrt, self.dtype, self.second, self.sens = wrt, dtype, second, sens
        self.rtol, self.atol, self.fd, self.error, self.auto_wrt = rtol, atol, fd, error, auto_wrt


def shape_tag(spec):
    if not hasattr(spec, "shape"):
        return "near"
    return "x".join(str(d) for d in spec.shape) if spec.shape else "0d"


def sample_cases():
    out = []
    for op, entry in vc.OPS.items():
        for i, s in enumerate(entry.samples):
            rot = i % 4
            dtype = s.dtype or ("float32" if rot in (1, 3) else "float64")
            second = s.second if s.second is not None else rot in (0, 2, 3)
            sens = s.sens if s.sens is not None else rot in (1, 2)
            tag = s.tag or "_".join(shape_tag(sp) for sp in s.inputs.values())
            name = "%s/%d_%s%s" % (op, i, tag, "_f32" if dtype == "float32" else "")
            args = list(s.args)
            stmt = ["out", op] + args + ([s.attrs] if s.attrs else [])
            wrt = s.wrt if s.wrt is not None else [n for n, sp in s.inputs.items() if sp.kind == "float"]
            rtol, atol = s.rtol, s.atol
            if dtype == "float32" and second and rtol is None:
                rtol, atol = F32_SECOND_TOL
            out.append(Built(entry.family, name, s.inputs, [stmt], "out", wrt, dtype, second, sens, rtol, atol, entry.fd,
                             None, auto_wrt=s.wrt is None))
    return out


def hand_cases():
    out = []
    for c in vc.HAND_WRITTEN:
        out.append(Built(c.family, c.name, c.inputs, c.program, c.output, c.wrt, c.dtype, c.second, c.sens, c.rtol,
                         c.atol, c.fd, c.error))
    return out


def make_inputs(case):
    rng = np.random.default_rng(zlib.crc32(case.name.encode()))
    arrays = OrderedDict()
    kinds = {}
    for n, spec in case.specs.items():
        a = np.asarray(spec.make(rng, arrays), dtype=np.float64)
        if spec.kind == "float" and case.dtype == "float32":
            a = a.astype(np.float32).astype(np.float64)
        arrays[n] = a
        kinds[n] = spec.kind
    return rng, arrays, kinds


def to_torch(arrays, kinds, float_dtype, requires=()):
    env = {}
    for n, a in arrays.items():
        if kinds[n] == "float":
            env[n] = torch.tensor(a, dtype=float_dtype, requires_grad=n in requires)
        elif kinds[n] == "int32":
            env[n] = torch.tensor(a.astype(np.int64), dtype=torch.int32)
        else:
            env[n] = torch.tensor(a != 0, dtype=torch.bool)
    return env


def first_order(case, arrays, kinds, sens, create_graph):
    env = to_torch(arrays, kinds, torch.float64, requires=case.wrt)
    out = interpret(case.program, env, "exact")[case.output]
    leaves = [env[n] for n in case.wrt]
    if out.requires_grad:
        gs = torch.autograd.grad(out, leaves, grad_outputs=sens, create_graph=create_graph, allow_unused=True)
    else:
        gs = [None] * len(leaves)
    gs = [torch.zeros_like(l) if g is None else g for g, l in zip(gs, leaves)]
    return out, gs, leaves


def second_order(case, arrays, kinds, sens):
    _, gs, leaves = first_order(case, arrays, kinds, sens, create_graph=True)
    g0 = gs[0]
    if g0.requires_grad:
        ss = torch.autograd.grad(g0.sum(), leaves, allow_unused=True)
    else:
        ss = [None] * len(leaves)
    return [torch.zeros_like(l) if s is None else s for s, l in zip(ss, leaves)]


def to_numpy(t):
    """A tensor's values (through tolist: autograd may hand back storage-less efficient zero tensors)."""
    if t._is_zerotensor():
        return np.zeros(tuple(t.shape))
    return np.array(t.detach().tolist(), dtype=np.float64 if t.is_floating_point() else None)


def fd_compare(case, what, analytic, func, arrays):
    """Central differences of the scalar func(arrays) w.r.t. each wrt input against `analytic`."""
    for n, an in zip(case.wrt, analytic):
        an = to_numpy(an).reshape(-1)
        base = arrays[n]
        for k in range(base.size):
            plus = {m: a.copy() for m, a in arrays.items()}
            minus = {m: a.copy() for m, a in arrays.items()}
            plus[n].reshape(-1)[k] += FD_EPS
            minus[n].reshape(-1)[k] -= FD_EPS
            fd = (func(plus) - func(minus)) / (2 * FD_EPS)
            if not abs(fd - an[k]) <= FD_ATOL + FD_RTOL * max(abs(fd), abs(an[k])):
                raise GenError("%s: %s of '%s' at flat index %d: autograd %r, finite differences %r"
                               % (case.name, what, n, k, float(an[k]), float(fd)))


def case_header(case, arrays, kinds):
    """name, dtype, inputs, program and output of a case's JSON object."""
    obj = OrderedDict()
    obj["name"] = case.name
    obj["dtype"] = case.dtype
    obj["inputs"] = OrderedDict((n, tensor_json(a, case.dtype if kinds[n] == "float" else kinds[n], case.dtype))
                                for n, a in arrays.items())
    obj["program"] = case.program
    obj["output"] = case.output
    return obj


def compute(case):
    """Returns the JSON object of one case."""
    rng, arrays, kinds = make_inputs(case)
    if case.error and case.dtype in HALF:
        arrays = OrderedDict((n, half_values(a, case.dtype) if kinds[n] == "float" else a) for n, a in arrays.items())
    obj = case_header(case, arrays, kinds)
    if case.error:
        if case.wrt:
            obj["wrt"] = case.wrt
        obj["expected"] = {"error": case.error}
        return obj

    case_dt = torch.float32 if case.dtype == "float32" else torch.float64
    typed = interpret(case.program, to_torch(arrays, kinds, case_dt), "typed")[case.output]
    out_dtype = dtype_name(typed.dtype)
    out_is_float = out_dtype.startswith("float")
    if not out_is_float:
        if case.auto_wrt:
            case.wrt, case.second, case.sens = [], False, False
        elif case.wrt:
            raise GenError("%s: output '%s' is %s and cannot be differentiated" % (case.name, case.output, out_dtype))
    for n in case.wrt:
        if kinds.get(n) != "float":
            raise GenError("%s: wrt '%s' is not a float input" % (case.name, n))
    if not case.wrt:
        case.second, case.sens = False, False

    sens_arr = None
    if case.sens:
        sens_arr = rng.uniform(-1.5, 1.5, tuple(typed.shape))
        if case.dtype == "float32":
            sens_arr = sens_arr.astype(np.float32).astype(np.float64)
    sens_t = torch.tensor(sens_arr) if sens_arr is not None else None
    if case.wrt and sens_t is None:
        sens_t = torch.ones(tuple(typed.shape), dtype=torch.float64)

    if case.wrt:
        value, grads, _ = first_order(case, arrays, kinds, sens_t, create_graph=False)
    else:
        value = interpret(case.program, to_torch(arrays, kinds, torch.float64), "exact")[case.output]
        grads = []
    if tuple(value.shape) != tuple(typed.shape):
        raise GenError("%s: typed and exact runs disagree on the output shape" % case.name)
    if out_is_float:
        v64, v_typed = value.detach().double(), typed.detach().double()
        finite = torch.isfinite(v64) & torch.isfinite(v_typed)
        if not torch.allclose(v64[finite], v_typed[finite], rtol=1e-3, atol=1e-4):
            raise GenError("%s: typed and exact runs disagree on the value" % case.name)

    second = second_order(case, arrays, kinds, sens_t) if case.second else None

    if case.fd and case.wrt:
        def phi(arrs):
            with torch.no_grad():
                out = interpret(case.program, to_torch(arrs, kinds, torch.float64), "exact")[case.output]
                return float((out.double() * sens_t).sum())

        fd_compare(case, "gradient", grads, phi, arrays)
        if second is not None:
            def psi(arrs):
                _, gs, _ = first_order(case, arrs, kinds, sens_t, create_graph=False)
                return float(gs[0].sum())

            fd_compare(case, "second-order gradient", second, psi, arrays)

    if sens_arr is not None:
        obj["sens"] = tensor_json(sens_arr, case.dtype, case.dtype)
    if case.wrt:
        obj["wrt"] = case.wrt
    expected = OrderedDict()
    expected["value"] = tensor_json(to_numpy(value), out_dtype, case.dtype, expected=True)
    if case.wrt:
        expected["grads"] = OrderedDict((n, tensor_json(to_numpy(g), case.dtype, case.dtype, expected=True))
                                        for n, g in zip(case.wrt, grads))
    if second is not None:
        expected["second"] = OrderedDict((n, tensor_json(to_numpy(s), case.dtype, case.dtype, expected=True))
                                         for n, s in zip(case.wrt, second))
    obj["expected"] = expected
    if case.rtol is not None:
        obj["rtol"] = case.rtol
    if case.atol is not None:
        obj["atol"] = case.atol
    return obj


# ---- half precision -----------------------------------------------------------------------------------------

HALF = {"float16": torch.float16, "bfloat16": torch.bfloat16}
# Ops left out of the half cases: a cast's target dtype is the case (the cast cases cover conversions), and the
# ops PyTorch has no bfloat16 CPU kernel for, which refuse half inputs (error cases in errors.json); other errors
# are dtype-independent.
HALF_SKIP = {"cast", "prod", "mse_loss", "binary_cross_entropy"}
HALF_SAMPLES_PER_OP = 2
# Ops PyTorch 1.13 has no op for (the float64 reference composes them): their half references are float32 on the
# half inputs, rounded once, as bprop's kernel computes them (PyTorch 2's fused CPU kernel likewise).
HALF_NO_TORCH_OP = {"scaled_dot_product_attention"}


def half_cases():
    """Cases of the catalogue's samples in float16 and bfloat16: each op's first samples with float inputs, in
    both dtypes (alternating which gets the second sample), first order, and second order where the float64
    case has it."""
    out = []
    for op, entry in vc.OPS.items():
        if op in HALF_SKIP:
            continue
        taken = 0
        for i, s in enumerate(entry.samples):
            if taken == HALF_SAMPLES_PER_OP:
                break
            if not any(sp.kind == "float" for sp in s.inputs.values()) or s.dtype == "float32":
                continue
            rot = i % 4
            second = s.second if s.second is not None else rot in (0, 2, 3)
            sens = s.sens if s.sens is not None else rot in (1, 2)
            tag = s.tag or "_".join(shape_tag(sp) for sp in s.inputs.values())
            stmt = ["out", op] + list(s.args) + ([s.attrs] if s.attrs else [])
            wrt = s.wrt if s.wrt is not None else [n for n, sp in s.inputs.items() if sp.kind == "float"]
            for dtype in (("float16", "bfloat16") if taken == 0 else ("bfloat16", "float16")):
                name = "%s/%d_%s_%s" % (op, i, tag, "f16" if dtype == "float16" else "bf16")
                out.append(Built("half", name, s.inputs, [stmt], "out", wrt, dtype, second, sens, None, None,
                                 False, None, auto_wrt=s.wrt is None))
            taken += 1
    return out


def half_values(a, dtype):
    """float64 values rounded to the half dtype (through float32, as bprop and PyTorch convert)."""
    return torch.tensor(np.asarray(a, dtype=np.float64)).float().to(HALF[dtype]).double().numpy()


def half_run(case, arrays, kinds, sens, compute_dt):
    """value, grads and second order of the case with its float inputs in `compute_dt`."""
    env = to_torch(arrays, kinds, compute_dt, requires=case.wrt)
    out = interpret(case.program, env, "typed")[case.output]
    grads, second = [], None
    leaves = [env[n] for n in case.wrt]
    if case.wrt and out.requires_grad:
        gs = torch.autograd.grad(out, leaves, grad_outputs=sens.to(compute_dt), create_graph=case.second,
                                 allow_unused=True)
        grads = [torch.zeros_like(l) if g is None else g for g, l in zip(gs, leaves)]
        if case.second:
            if grads[0].requires_grad:
                ss = torch.autograd.grad(grads[0].sum(), leaves, allow_unused=True)
            else:
                ss = [None] * len(leaves)
            second = [torch.zeros_like(l) if x is None else x for x, l in zip(ss, leaves)]
    elif case.wrt:
        grads = [torch.zeros_like(l) for l in leaves]
        second = [torch.zeros_like(l) for l in leaves] if case.second else None
    return out, grads, second


HALF_FALLBACKS = []  # cases computed in float32 because PyTorch has no CPU kernel for the dtype
HALF_OFF_EXACT = []  # cases computed in float32 because PyTorch's kernel in the dtype misses the exact answer
HALF_TOL = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5)}  # torch.testing.assert_close's defaults

# Per-op tolerances of the half cases, widened from assert_close's defaults only here, each with its reason (as
# PyTorch's OpInfo toleranceOverride). The reason is the same for all of them: bprop writes each gradient once,
# as a composition of catalogue ops, and in a half dtype every one of those ops rounds its result (PyTorch's CPU
# semantics per op); PyTorch fuses the same backward into one kernel (tanh_backward, native_layer_norm_backward,
# ...) that rounds once. So bprop's first-order gradients carry a few roundings of their intermediates, and
# second order more, where cancellation (normalisations, softmax, a gradient that sums to zero) turns a rounding
# of a term near 1 into an absolute error near the dtype's epsilon. The bounds are (rtol, atol) per dtype.
HALF_COMPOSED = "gradient composed of ops that each round to the dtype; PyTorch's fused backward rounds once"
HALF_CANCEL = ("as above, and the gradient (or its derivative) cancels to about zero, so the roundings of terms "
               "near 1 leave an absolute error of a few epsilons")
HALF_WIDENED = {
    "reciprocal": (HALF_COMPOSED, {"float16": (0.004, 1e-05)}),
    "tanh": (HALF_CANCEL, {"float16": (0.004, 1e-05), "bfloat16": (0.064, 0.0001)}),
    "sigmoid": (HALF_CANCEL, {"float16": (0.004, 0.0002), "bfloat16": (0.032, 0.0001)}),
    "silu": (HALF_COMPOSED, {"float16": (0.002, 0.0002), "bfloat16": (0.064, 0.0002)}),
    "softplus": (HALF_COMPOSED, {"float16": (0.004, 0.0002)}),
    "erf": (HALF_COMPOSED, {"float16": (0.004, 1e-05)}),
    "gelu": (HALF_COMPOSED, {"float16": (0.004, 1e-05), "bfloat16": (0.032, 0.0001)}),
    "log1p": (HALF_COMPOSED, {"float16": (0.004, 1e-05)}),
    "rsqrt": (HALF_COMPOSED, {"float16": (0.004, 1e-05)}),
    "pow": (HALF_CANCEL, {"bfloat16": (0.032, 0.004)}),
    "atan2": (HALF_CANCEL, {"float16": (0.004, 0.0002), "bfloat16": (0.032, 0.04)}),
    "logsumexp": (HALF_CANCEL, {"float16": (0.002, 0.001), "bfloat16": (0.032, 0.0001)}),
    "var": (HALF_CANCEL, {"float16": (0.004, 0.0001), "bfloat16": (0.032, 0.001)}),
    "std": (HALF_CANCEL, {"bfloat16": (0.032, 0.0002)}),
    "softmax": (HALF_CANCEL, {"float16": (0.004, 0.0001), "bfloat16": (0.064, 0.0001)}),
    "log_softmax": (HALF_CANCEL, {"float16": (0.004, 0.0001)}),
    "cross_entropy": (HALF_CANCEL, {"bfloat16": (0.032, 0.0001)}),
    "nll_loss": (HALF_CANCEL, {"float16": (0.002, 0.001), "bfloat16": (0.032, 0.002)}),
    "binary_cross_entropy_with_logits": (HALF_COMPOSED, {"float16": (0.004, 0.002), "bfloat16": (0.064, 0.0004)}),
    "batch_norm": (HALF_CANCEL, {"float16": (0.002, 0.002), "bfloat16": (0.032, 0.016)}),
    "layer_norm": (HALF_CANCEL, {"float16": (0.002, 0.002), "bfloat16": (0.032, 0.016)}),
    # dq, dk come from dS = P (dP - rowsum(dout out)), which cancels, with out the op's result in the dtype (as
    # PyTorch's fused backward reads its saved output); second order composes ops that each round
    "scaled_dot_product_attention": (HALF_CANCEL, {"float16": (0.004, 0.001), "bfloat16": (0.032, 0.008)}),
}


def half_within(got, want, dtype, share=1.0):
    """Whether every element of `got` is within `share` of the dtype's default tolerance of `want`."""
    rtol, atol = HALF_TOL[dtype]
    got = to_numpy(got).astype(np.float64)
    want = to_numpy(want).astype(np.float64)
    return bool(np.all(np.abs(got - want) <= share * (atol + rtol * np.abs(want))))


def half_results(case, arrays, kinds, sens_t, compute_dt, hdt):
    """value, grads and second order computed in `compute_dt`, each result rounded once to the half dtype."""
    value, grads, second = half_run(case, arrays, kinds, sens_t, compute_dt)
    value = value.to(hdt) if value.is_floating_point() else value
    grads = [g.to(hdt) for g in grads]
    second = [x.to(hdt) for x in second] if second is not None else None
    return value, grads, second


def flat_results(value, grads, second):
    return [value] + list(grads) + list(second or [])


def half_compute(case):
    """One half case: inputs rounded to the dtype; value and gradients from PyTorch in that dtype on the CPU.
    Where PyTorch 1.13 has no CPU kernel for the dtype, or where its kernel in the dtype misses the exact answer
    (float64 on the same inputs) by more than half assert_close's tolerance while float32 rounded once
    does not (its
    bfloat16 kernels that accumulate in bfloat16: the dtype's semantics, and bprop's, accumulate in float32), the
    values are float32 on the same inputs with each result rounded once to the dtype."""
    rng, arrays, kinds = make_inputs(case)
    for n in arrays:
        if kinds[n] == "float":
            arrays[n] = half_values(arrays[n], case.dtype)
    hdt = HALF[case.dtype]
    probe = interpret(case.program, to_torch(arrays, kinds, torch.float64), "typed")[case.output]
    out_is_float = probe.is_floating_point()
    if not out_is_float:
        case.wrt, case.second, case.sens = [], False, False
    sens_arr = None
    if case.sens:
        sens_arr = half_values(rng.uniform(-1.5, 1.5, tuple(probe.shape)), case.dtype)
    sens_t = torch.tensor(sens_arr) if sens_arr is not None else torch.ones(tuple(probe.shape), dtype=torch.float64)
    rounded_f32 = half_results(case, arrays, kinds, sens_t, torch.float32, hdt)
    in_dtype_results = None
    if case.program[0][1] not in HALF_NO_TORCH_OP:
        try:
            in_dtype_results = half_run(case, arrays, kinds, sens_t, hdt)
        except RuntimeError as e:
            if "not implemented for" not in str(e):
                raise
    if in_dtype_results is None:  # no PyTorch kernel (or op) for the dtype
        HALF_FALLBACKS.append(case.name)
        value, grads, second = rounded_f32
    else:
        value, grads, second = in_dtype_results
        exact = flat_results(*half_run(case, arrays, kinds, sens_t, torch.float64))
        in_dtype, once = flat_results(value, grads, second), flat_results(*rounded_f32)
        # A reference that uses up more than half the tolerance on its own error leaves too little for bprop's.
        misses = any(not half_within(t, x, case.dtype, 0.5) for t, x in zip(in_dtype, exact)
                     if t.is_floating_point())
        once_ok = all(half_within(t, x, case.dtype, 0.5) for t, x in zip(once, exact) if t.is_floating_point())
        if misses and once_ok:
            HALF_OFF_EXACT.append(case.name)
            value, grads, second = rounded_f32
    op = case.program[0][1]
    if op in HALF_WIDENED and case.dtype in HALF_WIDENED[op][1]:
        case.rtol, case.atol = HALF_WIDENED[op][1][case.dtype]
    obj = case_header(case, arrays, kinds)
    if sens_arr is not None:
        obj["sens"] = tensor_json(sens_arr, case.dtype, case.dtype)
    if case.wrt:
        obj["wrt"] = case.wrt
    expected = OrderedDict()
    expected["value"] = tensor_json(to_numpy(value), dtype_name(value.dtype), case.dtype)
    if case.wrt:
        expected["grads"] = OrderedDict((n, tensor_json(to_numpy(g), case.dtype, case.dtype)) for n, g in
                                        zip(case.wrt, grads))
    if second is not None:
        expected["second"] = OrderedDict((n, tensor_json(to_numpy(x), case.dtype, case.dtype)) for n, x in
                                         zip(case.wrt, second))
    obj["expected"] = expected
    if case.rtol is not None:
        obj["rtol"], obj["atol"] = case.rtol, case.atol
    return obj


# ---- JSON ---------------------------------------------------------------------------------------------------


class Num:
    """A float written with a chosen text."""

    def __init__(self, text):
        self.text = text


F32_MAX = float(np.finfo(np.float32).max)


def float_text(v, dtype, case_dtype, expected):
    v = float(v)
    if dtype == "float32" and abs(v) > F32_MAX and not math.isinf(v):
        v = math.copysign(math.inf, v)  # a float32 result overflows where the float64 reference does not
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if not expected and dtype == "float32":
        short = str(np.float32(v))
        if float(np.float32(float(short))) == v:
            return Num(short)
    if expected and case_dtype == "float32":
        short = "%.10g" % v
        return Num(short if "." in short or "e" in short else short + ".0")
    return Num(repr(v))


def tensor_json(arr, dtype, case_dtype, expected=False):
    arr = np.asarray(arr)
    flat = arr.reshape(-1)
    if dtype == "bool":
        data = [bool(v) for v in flat]
    elif dtype == "int32":
        data = [int(v) for v in flat]
    else:
        data = [float_text(v, dtype, case_dtype, expected) for v in flat]
    return OrderedDict([("shape", list(arr.shape)), ("dtype", dtype), ("data", data)])


def compact(v):
    if isinstance(v, Num):
        return v.text
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (bool, int, str)) or v is None:
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(compact(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + compact(x) for k, x in v.items()) + "}"
    raise TypeError(type(v))


def case_text(obj):
    pad = "      "
    lines = []
    for key, v in obj.items():
        if key in ("inputs", "expected") and v:
            parts = []
            for k, x in v.items():
                if isinstance(x, dict) and "shape" not in x:
                    inner = (",\n" + pad + "    ").join(json.dumps(a) + ": " + compact(b) for a, b in x.items())
                    parts.append(pad + "  " + json.dumps(k) + ": {\n" + pad + "    " + inner + "\n" + pad + "  }")
                else:
                    parts.append(pad + "  " + json.dumps(k) + ": " + compact(x))
            lines.append(pad + json.dumps(key) + ": {\n" + ",\n".join(parts) + "\n" + pad + "}")
        elif key == "program":
            stmts = (",\n" + pad + "  ").join(compact(s) for s in v)
            lines.append(pad + '"program": [\n' + pad + "  " + stmts + "\n" + pad + "]")
        else:
            lines.append(pad + json.dumps(key) + ": " + compact(v))
    return "    {\n" + ",\n".join(lines) + "\n    }"


def file_text(source, cases):
    head = '{\n  "format": %s,\n  "source": %s,\n  "cases": [\n' % (json.dumps(FORMAT), json.dumps(source))
    return head + ",\n".join(case_text(c) for c in cases) + "\n  ]\n}\n"


# ---- requirements -------------------------------------------------------------------------------------------


def check_requirements(objs):
    problems = []
    missing = [op for op in CATALOGUE if op not in vc.OPS and op not in vc.PENDING_OPS]
    if missing:
        problems.append("catalogue ops without an entry: " + ", ".join(missing))
    unknown = [op for op in vc.OPS if op not in CATALOGUE]
    if unknown:
        problems.append("entries that are not catalogue ops: " + ", ".join(unknown))
    uses = Counter()
    for o in objs:
        if "error" in o["expected"]:
            continue
        for op in {s[1] for s in o["program"]}:
            uses[op] += 1
    few = ["%s (%d)" % (op, uses[op]) for op in CATALOGUE if op not in vc.PENDING_OPS and uses[op] < 3]
    if few:
        problems.append("ops in fewer than 3 cases: " + ", ".join(few))
    n_second = sum(1 for o in objs if "second" in o["expected"])
    n_sens = sum(1 for o in objs if "sens" in o)
    n_f32 = sum(1 for o in objs if o["dtype"] == "float32")
    n_err = sum(1 for o in objs if "error" in o["expected"])
    names = Counter(o["name"] for o in objs)
    dups = [n for n, k in names.items() if k > 1]
    if dups:
        problems.append("duplicate case names: " + ", ".join(dups))
    for what, n, need in (("cases", len(objs), 300), ("cases with second", n_second, 100),
                          ("cases with sens", n_sens, 20), ("float32 cases", n_f32, 40), ("error cases", n_err, 20)):
        if n < need:
            problems.append("%d %s, need %d" % (n, what, need))
    if problems:
        raise GenError("requirements not met:\n  " + "\n  ".join(problems))
    return {"cases": len(objs), "second": n_second, "sens": n_sens, "float32": n_f32, "errors": n_err}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "vectors"), help="output folder")
    args = ap.parse_args()
    torch.set_default_dtype(torch.float32)

    built = sample_cases() + hand_cases()
    by_file = OrderedDict((f, []) for f in FILES)
    objs = []
    try:
        for case in built:
            if case.family not in by_file:
                raise GenError("%s: unknown family '%s'" % (case.name, case.family))
            obj = compute(case)
            by_file[case.family].append(obj)
            objs.append(obj)
        stats = check_requirements(objs)
    except GenError as e:
        print("gen_vectors: " + str(e), file=sys.stderr)
        return 1

    source = ("tools/gen_vectors.py: programs interpreted in PyTorch %s float64; value, vector-Jacobian product "
              "and second order by torch.autograd.grad (create_graph=True); first and second order checked "
              "against central finite differences; inputs seeded by crc32 of the case name" % torch.__version__)
    os.makedirs(args.out, exist_ok=True)
    for f, cases in by_file.items():
        src = "hand-written error kinds (bprop semantics); no expected values" if f == "errors" else source
        with open(os.path.join(args.out, f + ".json"), "w") as fh:
            fh.write(file_text(src, cases))
        print("%-9s %3d cases" % (f, len(cases)))
    print("total %(cases)d cases: %(second)d with second order, %(sens)d with sens, %(float32)d float32, "
          "%(errors)d error cases" % stats)
    try:
        half = [half_compute(c) for c in half_cases()]
    except GenError as e:
        print("gen_vectors: " + str(e), file=sys.stderr)
        return 1
    widened = "; ".join("%s %s" % (op, ", ".join("%s rtol %g atol %g" % (dt, r, a) for dt, (r, a) in tols.items()))
                        for op, (_, tols) in HALF_WIDENED.items())
    half_source = ("tools/gen_vectors.py: the catalogue's samples in float16 and bfloat16, inputs (and sens) rounded "
                   "to the dtype; value, vector-Jacobian product and second order by PyTorch %s on the CPU in the "
                   "case's dtype (torch.autograd.grad, create_graph=True). Float32 on the same inputs with each "
                   "result rounded once to the dtype instead, where PyTorch has no CPU kernel for the dtype: %s; "
                   "and where its kernel in the dtype misses the float64 answer by more than half assert_close's "
                   "tolerance while float32 rounded once does not (it accumulates in the dtype): %s. Tolerances "
                   "widened from assert_close's (float16 rtol 1e-3, bfloat16 rtol 1.6e-2, atol 1e-5) for: %s; "
                   "because %s (and where %s)."
                   % (torch.__version__, ", ".join(HALF_FALLBACKS) or "none", ", ".join(HALF_OFF_EXACT) or "none",
                      widened, HALF_COMPOSED, HALF_CANCEL))
    with open(os.path.join(args.out, "half.json"), "w") as fh:
        fh.write(file_text(half_source, half))
    n_half_second = sum(1 for o in half if "second" in o["expected"])
    print("half      %3d cases: %d with second order, %d float32 references (%d without a PyTorch kernel, %d off "
          "the exact answer)" % (len(half), n_half_second, len(HALF_FALLBACKS) + len(HALF_OFF_EXACT),
                                 len(HALF_FALLBACKS), len(HALF_OFF_EXACT)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
