// Finite-difference checks of first and second order gradients, in float64.
#include <cmath>

#include "autodiff/functional.h"
#include "autodiff/tape.h"
#include "bprop/grad.h"
#include "bprop/ops.h"
#include "tensor/format.h"

namespace bprop {
namespace {

// fn's outputs flattened and concatenated into one float64 vector (differentiable).
Fn flat_output(const Fn& fn) {
  return [fn](const std::vector<Tensor>& in) -> Value {
    std::vector<Tensor> parts;
    for (const Tensor& t : fn(in).flatten()) {
      if (!is_float(t.dtype())) continue;
      parts.push_back(ops::reshape(ops::cast(t, DType::Float64), {t.numel()}));
    }
    if (parts.empty()) throw ValueError("For 'gradcheck', the function returned no float output");
    return Value(parts.size() == 1 ? parts[0] : ops::concat(parts, 0));
  };
}

std::vector<Tensor> as_float64(const std::vector<Tensor>& inputs, std::vector<int>* positions) {
  std::vector<Tensor> out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].defined() && is_float(inputs[i].dtype())) {
      out.push_back(convert(inputs[i], DType::Float64));
      positions->push_back(static_cast<int>(i));
    } else {
      out.push_back(inputs[i]);
    }
  }
  return out;
}

}  // namespace

CheckResult gradcheck(const Fn& fn, const std::vector<Tensor>& inputs, const CheckOptions& opts) {
  std::vector<int> positions;
  std::vector<Tensor> x = as_float64(inputs, &positions);
  const Fn flat = flat_output(fn);
  autodiff::Pullback pb = autodiff::forward_for_vjp(flat, x, positions, "gradcheck");
  const int64_t m = pb.out.numel();

  // Analytic Jacobian, one row per output element.
  std::vector<std::vector<std::vector<double>>> analytic(positions.size());  // [input][row][col]
  for (int64_t r = 0; r < m; ++r) {
    Tensor v = zeros({m}, DType::Float64);
    v.data<double>()[r] = 1.0;
    const std::vector<Tensor> g = pb(v);
    for (size_t k = 0; k < positions.size(); ++k) analytic[k].push_back(g[k].to_vector<double>());
  }

  CheckResult res;
  double worst_excess = -1.0;
  autodiff::SuspendRecording no_record;
  for (size_t k = 0; k < positions.size(); ++k) {
    Tensor& xi = x[static_cast<size_t>(positions[k])];
    const Tensor original = xi.clone();
    for (int64_t j = 0; j < xi.numel(); ++j) {
      double* p = xi.data<double>() + j;
      const double x0 = original.data<double>()[j];
      p[0] = x0 + opts.eps;
      const std::vector<double> fp = flat(x).tensor().to_vector<double>();
      p[0] = x0 - opts.eps;
      const std::vector<double> fm = flat(x).tensor().to_vector<double>();
      p[0] = x0;
      for (int64_t r = 0; r < m; ++r) {
        const double numeric = (fp[static_cast<size_t>(r)] - fm[static_cast<size_t>(r)]) / (2.0 * opts.eps);
        const double a = analytic[k][static_cast<size_t>(r)][static_cast<size_t>(j)];
        const double err = std::abs(a - numeric);
        const double allowed = opts.atol + opts.rtol * std::abs(numeric);
        const bool bad = !(err <= allowed);  // NaN counts as bad
        res.max_abs_error = std::max(res.max_abs_error, std::isnan(err) ? INFINITY : err);
        const double excess = std::isnan(err) ? INFINITY : err - allowed;
        if (excess > worst_excess) {
          worst_excess = excess;
          res.message = "input " + std::to_string(positions[k]) + " element " + std::to_string(j) +
                        ", output element " + std::to_string(r) + ": analytic " + format_g(a, 10) + ", numeric " +
                        format_g(numeric, 10) + ", abs error " + format_g(err, 10);
        }
        if (bad) res.ok = false;
      }
    }
  }
  if (res.ok && res.message.empty()) res.message = "no differentiable elements";
  return res;
}

CheckResult gradgradcheck(const Fn& fn, const std::vector<Tensor>& inputs, const CheckOptions& opts) {
  std::vector<int> positions;
  const std::vector<Tensor> x = as_float64(inputs, &positions);
  const Fn flat = flat_output(fn);
  Tensor out;
  {
    autodiff::SuspendRecording no_record;
    out = flat(x).tensor();
  }
  // A fixed cotangent away from zero, so no term of the second derivative is multiplied away.
  const Tensor v = rand(out.shape(), 1234, 0.5, 1.5, DType::Float64);
  const Fn vjp_fn = [flat, positions, v](const std::vector<Tensor>& in) -> Value {
    autodiff::Pullback pb = autodiff::forward_for_vjp(flat, in, positions, "gradgradcheck");
    return Value::tuple(pb(v));
  };
  CheckResult r = gradcheck(vjp_fn, x, opts);
  r.message = "second order: " + r.message;
  return r;
}

}  // namespace bprop
