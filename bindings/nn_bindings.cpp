// The embind layer of the nn library: layers and losses as opaque cells (call, parameters, train/eval mode),
// optimizers and learning-rate schedules, seeded initialisers, and checkpoint bytes. It only converts and
// calls the core; web/nn.js and web/checkpoint.js build the JavaScript classes (bp.nn, bp.optim,
// bp.saveCheckpoint, bp.loadCheckpoint) on top.
//
// Errors follow guard.h's convention: every exported function catches, records the error kind and message
// (read with nnTakeError) and returns `undefined`; the JavaScript wrapper throws the matching Error.
// Nothing here calls back into JavaScript.
//
// Arguments arrive as one plain object with the JavaScript (camelCase) names; web/nn.js has already merged
// positional arguments into it and turned tensors into handles. Absent (undefined or null) entries take the
// C++ defaults.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bprop/bprop.h"
#include "convert.h"
#include "guard.h"
#include "handles.h"
#include "tensor/format.h"

using emscripten::val;

namespace bprop::js_nn {
namespace {

using js::from_value;
using js::guarded;
using js::handle_val;
using js::handles;
using js::is_array;
using js::refuse_while_tracing;
using js::take_error;
using js::tensor_arg;
using js::to_parameters;
using js::to_strings;
using js::to_tensors;

// ---- arguments ----------------------------------------------------------------------------------------

/// Reads the entries of one argument object; `who` ("Dense") starts every message.
class Args {
 public:
  /// `prefix` goes before every key in messages ("weightInit." for an initialiser's own arguments).
  Args(std::string who, val obj, std::string prefix = "")
      : who_(std::move(who)), obj_(std::move(obj)), prefix_(std::move(prefix)) {}

  const std::string& who() const { return who_; }

  bool has(const char* key) const {
    if (obj_.isNull() || obj_.isUndefined()) return false;
    const val v = obj_[key];
    return !v.isUndefined() && !v.isNull();
  }
  val get(const char* key) const { return obj_[key]; }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw ValueError("For '" + who_ + "', " + prefix_ + key + " " + what);
  }

  double number(const char* key, double def) const {
    if (!has(key)) return def;
    return as_number(key, get(key));
  }
  double required_number(const char* key) const {
    if (!has(key)) fail(key, "is required");
    return as_number(key, get(key));
  }
  int64_t integer(const char* key, int64_t def) const {
    if (!has(key)) return def;
    return as_integer(key, get(key));
  }
  int64_t required_integer(const char* key) const {
    if (!has(key)) fail(key, "is required");
    return as_integer(key, get(key));
  }
  std::optional<int64_t> optional_integer(const char* key) const {
    if (!has(key)) return std::nullopt;
    return as_integer(key, get(key));
  }
  /// A seed: a non-negative integer.
  std::optional<uint64_t> seed(const char* key) const {
    if (!has(key)) return std::nullopt;
    const int64_t s = as_integer(key, get(key));
    if (s < 0) fail(key, "must be a non-negative integer, got " + std::to_string(s));
    return static_cast<uint64_t>(s);
  }
  bool boolean(const char* key, bool def) const {
    if (!has(key)) return def;
    return as_boolean(key, get(key));
  }
  std::optional<bool> optional_boolean(const char* key) const {
    if (!has(key)) return std::nullopt;
    return as_boolean(key, get(key));
  }
  std::string string(const char* key, const std::string& def) const {
    if (!has(key)) return def;
    const val v = get(key);
    if (v.typeOf().as<std::string>() != "string") fail(key, "must be a string, got " + describe(v));
    return v.as<std::string>();
  }
  DType dtype(const char* key = "dtype") const {
    if (!has(key)) return DType::Float32;
    return parse_dtype(string(key, ""), "For '" + who_ + "', " + prefix_ + key);
  }
  /// A tensor handle, or an undefined tensor when absent.
  Tensor tensor(const char* key) const {
    if (!has(key)) return {};
    return handles().get_or_none(get(key).as<uint32_t>());
  }
  /// One int for both axes or an [h, w] pair.
  Size2 size2(const char* key, int64_t def) const {
    if (!has(key)) return Size2(def);
    const std::vector<int64_t> v = int_list(key, get(key));
    if (v.size() == 1) return Size2(v[0]);
    if (v.size() == 2) return Size2(v[0], v[1]);
    fail(key, "must be one integer or an [h, w] pair");
  }
  /// One int, [h, w] or [top, bottom, left, right].
  nn::Padding padding(const char* key) const {
    if (!has(key)) return nn::Padding(0);
    const std::vector<int64_t> v = int_list(key, get(key));
    if (v.size() == 1) return nn::Padding(v[0]);
    if (v.size() == 2) return nn::Padding(v[0], v[1]);
    if (v.size() == 4) return nn::Padding(v[0], v[1], v[2], v[3]);
    fail(key, "must be one integer, [h, w] or [top, bottom, left, right]");
  }
  /// One int or a list of ints.
  Shape shape(const char* key) const {
    if (!has(key)) fail(key, "is required");
    return int_list(key, get(key));
  }

  /// An initialiser: a name, or {name, sigma, mean, scale, gain, value, negativeSlope, mode, nonlinearity,
  /// seed}, or {name: "tensor", tensor: handle} for given values.
  std::optional<nn::Initializer> initializer(const char* key) const {
    if (!has(key)) return std::nullopt;
    const val v = get(key);
    if (v.typeOf().as<std::string>() == "string") return nn::Initializer(v.as<std::string>());
    if (v.typeOf().as<std::string>() != "object" || is_array(v)) {
      fail(key, "must be an initializer name, bp.nn.init.*(...) or a tensor, got " + describe(v));
    }
    const Args a(who_, v, prefix_ + key + ".");
    const std::string name = a.string("name", "");
    if (name == "tensor") {
      if (!a.has("tensor")) fail(key, "has no values");
      return nn::Initializer(a.tensor("tensor"));
    }
    const std::optional<uint64_t> seed = a.seed("seed");
    if (name == "zeros" || name == "zero") return nn::init::zeros();
    if (name == "ones" || name == "one") return nn::init::ones();
    if (name == "constant") return nn::init::constant(a.required_number("value"));
    if (name == "normal") return nn::init::normal(a.number("sigma", 0.01), a.number("mean", 0.0), seed);
    if (name == "uniform") return nn::init::uniform(a.number("scale", 0.07), seed);
    if (name == "xavier_uniform") return nn::init::xavier_uniform(a.number("gain", 1.0), seed);
    if (name == "xavier_normal") return nn::init::xavier_normal(a.number("gain", 1.0), seed);
    if (name == "he_normal" || name == "he_uniform") {
      const double slope = a.number("negativeSlope", 0.0);
      const std::string mode = a.string("mode", "fan_in");
      const std::string nonlinearity = a.string("nonlinearity", "leaky_relu");
      return name == "he_normal" ? nn::init::he_normal(slope, mode, nonlinearity, seed)
                                 : nn::init::he_uniform(slope, mode, nonlinearity, seed);
    }
    nn::Initializer by_name(name);  // throws the core's message for unknown names
    return seed ? by_name.with_seed(*seed) : by_name;
  }

 private:
  static std::string describe(const val& v) {
    if (v.isNull()) return "null";
    if (is_array(v)) return "an array";
    return "a " + v.typeOf().as<std::string>();
  }
  double as_number(const char* key, const val& v) const {
    if (v.typeOf().as<std::string>() != "number") fail(key, "must be a number, got " + describe(v));
    return v.as<double>();
  }
  int64_t as_integer(const char* key, const val& v) const {
    const double d = as_number(key, v);
    if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9007199254740992.0) {
      fail(key, "must be an integer, got " + format_number(d));
    }
    return static_cast<int64_t>(d);
  }
  bool as_boolean(const char* key, const val& v) const {
    if (v.typeOf().as<std::string>() != "boolean") fail(key, "must be a boolean, got " + describe(v));
    return v.as<bool>();
  }
  std::vector<int64_t> int_list(const char* key, const val& v) const {
    if (!is_array(v)) return {as_integer(key, v)};
    std::vector<int64_t> out;
    const int n = v["length"].as<int>();
    for (int i = 0; i < n; ++i) out.push_back(as_integer(key, v[i]));
    return out;
  }

  std::string who_;
  val obj_;
  std::string prefix_;
};

// ---- conversions --------------------------------------------------------------------------------------

/// A Uint8Array's bytes.
std::vector<uint8_t> to_bytes(const val& bytes) {
  const size_t n = static_cast<size_t>(bytes["length"].as<double>());
  std::vector<uint8_t> out(n);
  if (n > 0) val(emscripten::typed_memory_view(n, out.data())).call<void>("set", bytes);
  return out;
}

val from_bytes(const std::vector<uint8_t>& bytes) {
  return val(emscripten::typed_memory_view(bytes.size(), bytes.data())).call<val>("slice");
}

// ---- layers and losses --------------------------------------------------------------------------------

std::shared_ptr<Cell> make_layer(const std::string& kind, const Args& a) {
  using namespace nn;
  if (kind == "Dense") {
    DenseOptions o;
    o.weight_init = a.initializer("weightInit");
    o.bias_init = a.initializer("biasInit");
    o.has_bias = a.boolean("hasBias", true);
    o.activation = a.string("activation", "");
    o.dtype = a.dtype();
    return std::make_shared<Dense>(a.required_integer("inChannels"), a.required_integer("outChannels"), o);
  }
  if (kind == "Conv2d") {
    Conv2dOptions o;
    o.stride = a.size2("stride", 1);
    o.pad_mode = a.string("padMode", "same");
    o.padding = a.padding("padding");
    o.dilation = a.size2("dilation", 1);
    o.group = a.integer("group", 1);
    o.has_bias = a.boolean("hasBias", false);
    o.weight_init = a.initializer("weightInit");
    o.bias_init = a.initializer("biasInit");
    o.dtype = a.dtype();
    if (!a.has("kernelSize")) a.fail("kernelSize", "is required");
    return std::make_shared<Conv2d>(a.required_integer("inChannels"), a.required_integer("outChannels"),
                                    a.size2("kernelSize", 1), o);
  }
  if (kind == "MaxPool2d") {
    return std::make_shared<MaxPool2d>(a.size2("kernelSize", 1), a.size2("stride", 1), a.string("padMode", "valid"),
                                       a.padding("padding"));
  }
  if (kind == "AvgPool2d") {
    return std::make_shared<AvgPool2d>(a.size2("kernelSize", 1), a.size2("stride", 1), a.string("padMode", "valid"),
                                       a.padding("padding"));
  }
  if (kind == "BatchNorm1d" || kind == "BatchNorm2d") {
    BatchNormOptions o;
    o.eps = a.number("eps", o.eps);
    o.momentum = a.number("momentum", o.momentum);
    o.affine = a.boolean("affine", o.affine);
    if (auto i = a.initializer("gammaInit")) o.gamma_init = *i;
    if (auto i = a.initializer("betaInit")) o.beta_init = *i;
    if (auto i = a.initializer("movingMeanInit")) o.moving_mean_init = *i;
    if (auto i = a.initializer("movingVarInit")) o.moving_var_init = *i;
    o.use_batch_statistics = a.optional_boolean("useBatchStatistics");
    o.dtype = a.dtype();
    const int64_t c = a.required_integer("numFeatures");
    if (kind == "BatchNorm1d") return std::make_shared<BatchNorm1d>(c, o);
    return std::make_shared<BatchNorm2d>(c, o);
  }
  if (kind == "LayerNorm") {
    LayerNormOptions o;
    if (auto i = a.initializer("gammaInit")) o.gamma_init = *i;
    if (auto i = a.initializer("betaInit")) o.beta_init = *i;
    o.epsilon = a.number("epsilon", o.epsilon);
    o.dtype = a.dtype();
    return std::make_shared<LayerNorm>(a.shape("normalizedShape"), o);
  }
  if (kind == "Dropout") {
    const std::optional<uint64_t> seed = a.seed("seed");
    return std::make_shared<Dropout>(a.number("p", 0.5), seed);
  }
  if (kind == "Embedding") {
    EmbeddingOptions o;
    if (auto i = a.initializer("embeddingTable")) o.embedding_table = *i;
    o.padding_idx = a.optional_integer("paddingIdx");
    o.dtype = a.dtype();
    return std::make_shared<Embedding>(a.required_integer("vocabSize"), a.required_integer("embeddingSize"), o);
  }
  if (kind == "Flatten") return std::make_shared<Flatten>(a.integer("startDim", 1), a.integer("endDim", -1));
  if (kind == "ReLU") return std::make_shared<ReLU>();
  if (kind == "LeakyReLU") return std::make_shared<LeakyReLU>(a.number("alpha", 0.2));
  if (kind == "GELU") return std::make_shared<GELU>(a.boolean("approximate", true));
  if (kind == "SiLU") return std::make_shared<SiLU>();
  if (kind == "Sigmoid") return std::make_shared<Sigmoid>();
  if (kind == "Tanh") return std::make_shared<Tanh>();
  if (kind == "Softmax") return std::make_shared<Softmax>(a.integer("axis", -1));
  if (kind == "LogSoftmax") return std::make_shared<LogSoftmax>(a.integer("axis", -1));

  if (kind == "MultiheadAttention") {
    MultiheadAttentionOptions o;
    o.dropout = a.number("dropout", 0.0);
    o.bias = a.boolean("bias", true);
    o.kdim = a.optional_integer("kdim");
    o.vdim = a.optional_integer("vdim");
    o.batch_first = a.boolean("batchFirst", false);
    o.dtype = a.dtype();
    return std::make_shared<MultiheadAttention>(a.required_integer("embedDim"), a.required_integer("numHeads"), o);
  }
  if (kind == "TransformerEncoderLayer") {
    TransformerEncoderLayerOptions o;
    o.dim_feedforward = a.integer("dimFeedforward", o.dim_feedforward);
    o.dropout = a.number("dropout", o.dropout);
    o.activation = a.string("activation", o.activation);
    o.layer_norm_eps = a.number("layerNormEps", o.layer_norm_eps);
    o.batch_first = a.boolean("batchFirst", false);
    o.norm_first = a.boolean("normFirst", false);
    o.dtype = a.dtype();
    return std::make_shared<TransformerEncoderLayer>(a.required_integer("dModel"), a.required_integer("nhead"), o);
  }
  if (kind == "GPT") {
    GPTConfig c;
    c.vocab_size = a.integer("vocabSize", c.vocab_size);
    c.context = a.integer("context", c.context);
    c.layers = a.integer("layers", c.layers);
    c.heads = a.integer("heads", c.heads);
    c.width = a.integer("width", c.width);
    c.dropout = a.number("dropout", c.dropout);
    c.tie_weights = a.boolean("tieWeights", c.tie_weights);
    c.dtype = a.dtype();
    return std::make_shared<GPT>(c);
  }

  const std::string reduction = a.string("reduction", "mean");
  if (kind == "BCEWithLogitsLoss") {
    return std::make_shared<BCEWithLogitsLoss>(reduction, a.tensor("weight"), a.tensor("posWeight"));
  }
  if (kind == "BCELoss") return std::make_shared<BCELoss>(a.tensor("weight"), reduction);
  if (kind == "CrossEntropyLoss") {
    return std::make_shared<CrossEntropyLoss>(a.tensor("weight"), a.integer("ignoreIndex", -100), reduction,
                                              a.number("labelSmoothing", 0.0));
  }
  if (kind == "NLLLoss") {
    return std::make_shared<NLLLoss>(a.tensor("weight"), a.integer("ignoreIndex", -100), reduction);
  }
  if (kind == "MSELoss") return std::make_shared<MSELoss>(reduction);
  if (kind == "L1Loss") return std::make_shared<L1Loss>(reduction);
  if (kind == "SmoothL1Loss") return std::make_shared<SmoothL1Loss>(a.number("beta", 1.0), reduction);
  throw ValueError("bprop.nn: unknown layer '" + kind + "'");
}

// The kinds of the cells make_cell built that have methods of their own (the transformer layers), by address: the
// module is built without RTTI, so a method finds its cell's type here. Entries of freed cells are dropped as new
// ones come (an address can be reused, hence the weak pointer).
std::map<const Cell*, std::pair<std::string, std::weak_ptr<Cell>>>& typed_cells() {
  static std::map<const Cell*, std::pair<std::string, std::weak_ptr<Cell>>> cells;
  return cells;
}

template <typename C>
C* typed_cell(const std::shared_ptr<Cell>& cell, const std::string& kind) {
  const auto it = typed_cells().find(cell.get());
  if (it == typed_cells().end() || it->second.first != kind || it->second.second.lock() != cell) return nullptr;
  return static_cast<C*>(cell.get());
}

val make_cell(std::string kind, val args) {
  return guarded([&] {
    std::shared_ptr<Cell> cell = make_layer(kind, Args(kind, args));
    if (kind == "MultiheadAttention" || kind == "TransformerEncoderLayer" || kind == "GPT") {
      auto& cells = typed_cells();
      for (auto it = cells.begin(); it != cells.end();) it = it->second.second.expired() ? cells.erase(it) : std::next(it);
      cells[cell.get()] = {kind, cell};
    }
    return val(cell);
  });
}

val cell_call(std::shared_ptr<Cell> cell, val inputs) {
  return guarded([&] { return from_value((*cell)(to_tensors(inputs))); });
}

/// [[name, parameter handle], ...] with dotted paths, state (moving statistics) included.
val cell_parameters(std::shared_ptr<Cell> cell) {
  return guarded([&] {
    val out = val::array();
    const auto params = cell->parameters_and_names();
    for (size_t i = 0; i < params.size(); ++i) {
      val pair = val::array();
      pair.set(0, params[i].first);
      pair.set(1, handle_val(static_cast<const Tensor&>(params[i].second)));
      out.set(i, pair);
    }
    return out;
  });
}

val cell_set_train(std::shared_ptr<Cell> cell, bool mode) {
  return guarded([&] {
    cell->set_train(mode);
    return val(true);
  });
}

val cell_set_grad(std::shared_ptr<Cell> cell, bool requires_grad) {
  return guarded([&] {
    cell->set_grad(requires_grad);
    return val(true);
  });
}

// ---- transformer methods ------------------------------------------------------------------------------

/// MultiheadAttention.forward(q, k, v, call) or TransformerEncoderLayer.forward(src, call): [output, weights or null].
/// masks: [attnMask, keyPaddingMask] handles (null when absent).
val attention_forward(std::shared_ptr<Cell> cell, val inputs, val masks, bool is_causal, bool need_weights,
                      bool average_attn_weights) {
  return guarded([&] {
    const std::vector<Tensor> in = to_tensors(inputs), m = to_tensors(masks);
    nn::AttentionCall call;
    call.attn_mask = m.size() > 0 ? m[0] : Tensor();
    call.key_padding_mask = m.size() > 1 ? m[1] : Tensor();
    call.is_causal = is_causal;
    call.need_weights = need_weights;
    call.average_attn_weights = average_attn_weights;
    nn::AttentionOutput o;
    if (auto* mha = typed_cell<nn::MultiheadAttention>(cell, "MultiheadAttention")) {
      if (in.size() != 3) throw ValueError("For 'MultiheadAttention.forward', expected query, key and value");
      o = mha->forward(in[0], in[1], in[2], call);
    } else if (auto* layer = typed_cell<nn::TransformerEncoderLayer>(cell, "TransformerEncoderLayer")) {
      if (in.size() != 1) throw ValueError("For 'TransformerEncoderLayer.forward', expected one src tensor");
      o = layer->forward(in[0], call);
    } else {
      throw ValueError("forward with attention options: the cell is not a MultiheadAttention or TransformerEncoderLayer");
    }
    val out = val::array();
    out.set(0, handle_val(o.output));
    out.set(1, o.weights.defined() ? handle_val(o.weights) : val::null());
    return out;
  });
}

nn::GPT& as_gpt(const std::shared_ptr<Cell>& cell, const char* who) {
  auto* gpt = typed_cell<nn::GPT>(cell, "GPT");
  if (!gpt) throw ValueError(std::string("For '") + who + "', the cell is not a GPT");
  return *gpt;
}

/// The sampled ids (an array of numbers) after `prompt` (an array of ids).
val gpt_generate(std::shared_ptr<Cell> cell, val prompt, double tokens, double temperature, double top_k, double seed) {
  return guarded([&] {
    nn::GPT& gpt = as_gpt(cell, "GPT.generate");
    std::vector<int32_t> ids;
    const int n = prompt["length"].as<int>();
    for (int i = 0; i < n; ++i) {
      const double v = prompt[i].as<double>();
      if (v != std::floor(v) || v < 0 || v > 2147483647.0) {
        throw ValueError("For 'GPT.generate', prompt item " + std::to_string(i) + " is not a token id");
      }
      ids.push_back(static_cast<int32_t>(v));
    }
    for (const double v : {tokens, top_k, seed}) {
      if (!(v >= 0) || v != std::floor(v) || v > 9007199254740991.0) {
        throw ValueError("For 'GPT.generate', tokens, topK and seed must be integers >= 0");
      }
    }
    nn::GenerateOptions o;
    o.tokens = static_cast<int64_t>(tokens);
    o.temperature = temperature;
    o.top_k = static_cast<int64_t>(top_k);
    o.seed = static_cast<uint64_t>(seed);
    const std::vector<int32_t> out = gpt.generate(ids, o);
    val arr = val::array();
    for (size_t i = 0; i < out.size(); ++i) arr.set(i, out[i]);
    return arr;
  });
}

/// One (B, heads, T, T) weights handle per layer.
val gpt_attention_weights(std::shared_ptr<Cell> cell, val ids) {
  return guarded([&] {
    const std::vector<Tensor> w = as_gpt(cell, "GPT.attentionWeights").attention_weights(tensor_arg(ids));
    val out = val::array();
    for (size_t i = 0; i < w.size(); ++i) out.set(i, handle_val(w[i]));
    return out;
  });
}

// ---- optimizers and schedules -------------------------------------------------------------------------

std::shared_ptr<optim::Optimizer> make_optimizer_impl(const std::string& kind, std::vector<Parameter> params,
                                                      const Args& a) {
  using namespace optim;
  if (kind == "SGD") {
    return std::make_shared<SGD>(std::move(params), a.number("learningRate", 1e-3), a.number("momentum", 0.0),
                                 a.number("dampening", 0.0), a.boolean("nesterov", false),
                                 a.number("weightDecay", 0.0));
  }
  if (kind == "Momentum") {
    return std::make_shared<Momentum>(std::move(params), a.required_number("learningRate"),
                                      a.required_number("momentum"), a.number("weightDecay", 0.0),
                                      a.boolean("useNesterov", false));
  }
  if (kind == "Adam" || kind == "AdamW") {
    std::pair<double, double> betas{0.9, 0.999};
    if (a.has("betas")) {
      const val b = a.get("betas");
      if (!is_array(b) || b["length"].as<int>() != 2 || b[0].typeOf().as<std::string>() != "number" ||
          b[1].typeOf().as<std::string>() != "number") {
        a.fail("betas", "must be a [beta1, beta2] pair of numbers");
      }
      betas = {b[0].as<double>(), b[1].as<double>()};
    }
    betas.first = a.number("beta1", betas.first);
    betas.second = a.number("beta2", betas.second);
    const double lr = a.number("learningRate", 1e-3);
    const double eps = a.number("eps", 1e-8);
    const bool amsgrad = a.boolean("amsgrad", false);
    if (kind == "Adam") return std::make_shared<Adam>(std::move(params), lr, betas, eps, a.number("weightDecay", 0.0), amsgrad);
    return std::make_shared<AdamW>(std::move(params), lr, betas, eps, a.number("weightDecay", 1e-2), amsgrad);
  }
  throw ValueError("bprop.optim: unknown optimizer '" + kind + "'");
}

val make_optimizer(std::string kind, val params, val args) {
  return guarded([&] { return val(make_optimizer_impl(kind, to_parameters(kind, params), Args(kind, args))); });
}

val optimizer_step(std::shared_ptr<optim::Optimizer> opt, val grads) {
  return guarded([&] {
    opt->step(to_tensors(grads));  // (while tracing, the update ops and assignments become part of the graph)
    return val(true);
  });
}

/// Weight decay off for the parameters whose flag in `excluded` (one per parameter) is true.
val optimizer_exclude_from_decay(std::shared_ptr<optim::Optimizer> opt, val excluded) {
  return guarded([&] {
    const size_t n = opt->parameters().size();
    if (excluded["length"].as<size_t>() != n) {
      throw ValueError("For '" + opt->name() + "', excludeFromWeightDecay needs one flag per parameter");
    }
    for (size_t i = 0; i < n; ++i) {
      if (!excluded[i].as<bool>()) continue;
      const TensorImpl* target = opt->parameters()[i].impl();
      opt->exclude_from_weight_decay([target](const Parameter& p) { return p.impl() == target; });
    }
    return val(true);
  });
}

/// {name, learningRate, stepCount}.
val optimizer_info(std::shared_ptr<optim::Optimizer> opt) {
  return guarded([&] {
    val out = val::object();
    out.set("name", opt->name());
    out.set("learningRate", opt->learning_rate());
    out.set("stepCount", static_cast<double>(opt->step_count()));
    return out;
  });
}

val optimizer_set_lr(std::shared_ptr<optim::Optimizer> opt, double lr) {
  return guarded([&] {
    opt->set_learning_rate(lr);
    return val(true);
  });
}

val optimizer_update_count(std::shared_ptr<optim::Optimizer> opt, double i) {
  return guarded([&] {
    if (i < 0 || i != std::floor(i)) throw ValueError("For '" + opt->name() + "', updateCount needs an index >= 0");
    return val(static_cast<double>(opt->update_count(static_cast<size_t>(i))));
  });
}

/// The state tensors of parameter i: [[key, handle], ...].
val optimizer_state(std::shared_ptr<optim::Optimizer> opt, double i) {
  return guarded([&] {
    if (i < 0 || i != std::floor(i)) throw ValueError("For '" + opt->name() + "', state needs an index >= 0");
    val out = val::array();
    size_t k = 0;
    for (const auto& [key, t] : opt->state(static_cast<size_t>(i))) {
      val pair = val::array();
      pair.set(0, key);
      pair.set(1, handle_val(t));
      out.set(k++, pair);
    }
    return out;
  });
}

/// [clipped gradient handles..., global norm handle] (optim::clip_by_global_norm).
val clip_by_global_norm(val grads, double clip_norm) {
  return guarded([&] {
    Tensor norm;
    const std::vector<Tensor> clipped = optim::clip_by_global_norm(to_tensors(grads), clip_norm, &norm);
    val out = val::array();
    for (size_t i = 0; i < clipped.size(); ++i) out.set(i, handle_val(clipped[i]));
    out.set(clipped.size(), norm.defined() ? handle_val(norm) : val::null());
    return out;
  });
}

/// A schedule together with the optimizer it drives, so that the optimizer outlives it.
struct Schedule {
  std::shared_ptr<optim::Optimizer> optimizer;
  std::unique_ptr<optim::LRScheduler> scheduler;
};

val make_schedule(std::string kind, std::shared_ptr<optim::Optimizer> opt, val args) {
  return guarded([&] {
    const Args a(kind, args);
    auto s = std::make_shared<Schedule>();
    s->optimizer = opt;
    if (kind == "StepLR") {
      s->scheduler = std::make_unique<optim::StepLR>(*opt, a.required_integer("stepSize"), a.number("gamma", 0.1));
    } else if (kind == "CosineAnnealingLR") {
      s->scheduler =
          std::make_unique<optim::CosineAnnealingLR>(*opt, a.required_integer("tMax"), a.number("etaMin", 0.0));
    } else if (kind == "WarmupCosineLR") {
      s->scheduler = std::make_unique<optim::WarmupCosineLR>(*opt, a.required_integer("warmupSteps"),
                                                             a.required_integer("totalSteps"), a.number("etaMin", 0.0));
    } else {
      throw ValueError("bprop.optim: unknown learning-rate schedule '" + kind + "'");
    }
    return val(s);
  });
}

val schedule_step(std::shared_ptr<Schedule> s) {
  return guarded([&] {
    s->scheduler->step();
    return val(s->scheduler->get_last_lr());
  });
}

/// {lastLr, lastEpoch, baseLr}.
val schedule_info(std::shared_ptr<Schedule> s) {
  return guarded([&] {
    val out = val::object();
    out.set("lastLr", s->scheduler->get_last_lr());
    out.set("lastEpoch", static_cast<double>(s->scheduler->last_epoch()));
    out.set("baseLr", s->scheduler->base_lr());
    return out;
  });
}

val schedule_lr_at(std::shared_ptr<Schedule> s, double epoch) {
  return guarded([&] {
    if (!(epoch >= 0 && epoch <= 9007199254740992.0) || epoch != std::floor(epoch)) {
      throw ValueError("lrAt needs a whole epoch >= 0, got " + format_number(epoch));
    }
    return val(s->scheduler->lr_at(static_cast<int64_t>(epoch)));
  });
}

// ---- initialisers -------------------------------------------------------------------------------------

val set_seed(double seed) {
  return guarded([&] {
    if (seed < 0 || seed != std::floor(seed) || seed > 9007199254740992.0) {
      throw ValueError("bprop.nn.setSeed: the seed must be a non-negative integer");
    }
    nn::set_seed(static_cast<uint64_t>(seed));
    return val(true);
  });
}

/// A new tensor filled by args.init: {init, shape, dtype}.
val make_initializer_tensor(val args) {
  return guarded([&] {
    const Args a("initializer", args);
    const std::optional<nn::Initializer> init = a.initializer("init");
    if (!init) a.fail("init", "is required");
    return handle_val(nn::initializer(*init, a.shape("shape"), a.dtype()));
  });
}

val calculate_gain(std::string nonlinearity, double param) {
  return guarded([&] { return val(nn::calculate_gain(nonlinearity, param)); });
}

// ---- checkpoints --------------------------------------------------------------------------------------

CheckpointMetadata to_metadata(const val& obj) {
  CheckpointMetadata out;
  if (obj.isNull() || obj.isUndefined()) return out;
  const val keys = val::global("Object").call<val>("keys", obj);
  const int n = keys["length"].as<int>();
  for (int i = 0; i < n; ++i) {
    const std::string k = keys[i].as<std::string>();
    const val v = obj[k];
    if (v.typeOf().as<std::string>() != "string") {
      throw ValueError("For 'save_checkpoint', metadata entry '" + k + "' must be a string");
    }
    out[k] = v.as<std::string>();
  }
  return out;
}

/// The bytes of a checkpoint holding tensors[i] under names[i].
val save_checkpoint(val names, val tensors, val metadata) {
  return guarded([&] {
    refuse_while_tracing("saveCheckpoint", "save outside the jitted function");
    const std::vector<std::string> ns = to_strings(names);
    const std::vector<Tensor> ts = to_tensors(tensors);
    NamedTensors named;
    for (size_t i = 0; i < ns.size() && i < ts.size(); ++i) named.emplace_back(ns[i], ts[i]);
    return from_bytes(save_checkpoint_bytes(named, to_metadata(metadata)));
  });
}

/// {names, tensors, metadata} of checkpoint bytes, in file order.
val parse_checkpoint(val bytes, std::string source) {
  return guarded([&] {
    const Checkpoint ck = load_checkpoint_bytes(to_bytes(bytes), source);
    val names = val::array();
    val tensors = val::array();
    for (size_t i = 0; i < ck.tensors.size(); ++i) {
      names.set(i, ck.tensors[i].first);
      tensors.set(i, handle_val(ck.tensors[i].second));
    }
    val metadata = val::object();
    for (const auto& [k, v] : ck.metadata) metadata.set(k, v);
    val out = val::object();
    out.set("names", names);
    out.set("tensors", tensors);
    out.set("metadata", metadata);
    return out;
  });
}

/// A cell that only holds parameters under dotted paths, so that a JavaScript model's parameters go through
/// the core's load_param_into_net: the same checks, messages and all-or-nothing writes as natively.
class ParameterTree : public Cell {
 public:
  Value construct(const std::vector<Tensor>&) override {
    throw ValueError("a checkpoint's parameter tree cannot be called");
  }
  void add(const std::string& path, const Parameter& p) {
    ParameterTree* node = this;
    size_t begin = 0;
    for (size_t dot = path.find('.'); dot != std::string::npos; dot = path.find('.', begin)) {
      node = &node->child(path.substr(begin, dot - begin));
      begin = dot + 1;
    }
    node->register_parameter(path.substr(begin), p);
  }

 private:
  // Every sub-cell of a tree is a tree made here, so children_ finds them without RTTI (the module is built
  // with -fno-rtti).
  ParameterTree& child(const std::string& name) {
    for (const auto& [n, c] : children_) {
      if (n == name) return *c;
    }
    children_.emplace_back(name, register_cell(name, std::make_shared<ParameterTree>()));
    return *children_.back().second;
  }

  std::vector<std::pair<std::string, std::shared_ptr<ParameterTree>>> children_;
};

/// Loads checkpoint bytes into params[i] (named names[i]); returns the names not loaded (strict: none).
val load_checkpoint_into(val names, val params, val bytes, bool strict, std::string source) {
  return guarded([&] {
    const std::vector<std::string> ns = to_strings(names);
    refuse_while_tracing("loadCheckpoint", "load outside the jitted function");
    const std::vector<Parameter> ps = to_parameters("load_checkpoint", params);
    ParameterTree tree;
    for (size_t i = 0; i < ns.size() && i < ps.size(); ++i) tree.add(ns[i], ps[i]);
    const std::vector<uint8_t> data = to_bytes(bytes);
    const std::vector<std::string> missing = load_checkpoint_bytes(tree, data, strict, source);
    val out = val::array();
    for (size_t i = 0; i < missing.size(); ++i) out.set(i, missing[i]);
    return out;
  });
}

}  // namespace
}  // namespace bprop::js_nn

EMSCRIPTEN_BINDINGS(bprop_nn) {
  using namespace emscripten;
  namespace js = bprop::js_nn;
  class_<bprop::Cell>("NnCell").smart_ptr<std::shared_ptr<bprop::Cell>>("NnCellPtr");
  class_<bprop::optim::Optimizer>("NnOptimizer").smart_ptr<std::shared_ptr<bprop::optim::Optimizer>>("NnOptimizerPtr");
  class_<js::Schedule>("NnSchedule").smart_ptr<std::shared_ptr<js::Schedule>>("NnSchedulePtr");

  function("nnTakeError", &js::take_error);

  function("nnMakeCell", &js::make_cell);
  function("nnCellCall", &js::cell_call);
  function("nnCellParameters", &js::cell_parameters);
  function("nnCellSetTrain", &js::cell_set_train);
  function("nnCellSetGrad", &js::cell_set_grad);
  function("nnAttentionForward", &js::attention_forward);
  function("nnGptGenerate", &js::gpt_generate);
  function("nnGptAttentionWeights", &js::gpt_attention_weights);

  function("nnMakeOptimizer", &js::make_optimizer);
  function("nnOptimizerStep", &js::optimizer_step);
  function("nnOptimizerInfo", &js::optimizer_info);
  function("nnOptimizerExcludeFromDecay", &js::optimizer_exclude_from_decay);
  function("nnOptimizerSetLr", &js::optimizer_set_lr);
  function("nnOptimizerUpdateCount", &js::optimizer_update_count);
  function("nnOptimizerState", &js::optimizer_state);
  function("nnMakeSchedule", &js::make_schedule);
  function("nnClipByGlobalNorm", &js::clip_by_global_norm);
  function("nnScheduleStep", &js::schedule_step);
  function("nnScheduleInfo", &js::schedule_info);
  function("nnScheduleLrAt", &js::schedule_lr_at);

  function("nnSetSeed", &js::set_seed);
  function("nnInitializer", &js::make_initializer_tensor);
  function("nnCalculateGain", &js::calculate_gain);

  function("nnSaveCheckpoint", &js::save_checkpoint);
  function("nnParseCheckpoint", &js::parse_checkpoint);
  function("nnLoadCheckpoint", &js::load_checkpoint_into);
}
