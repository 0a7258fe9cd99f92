// MultiheadAttention, TransformerEncoderLayer and GPT against PyTorch float64 (tests/data/transformer, written by
// tools/gen_transformer_reference.py): each case's PyTorch state dict loads with strict key matching, and the
// output, attention weights and every gradient (inputs and parameters) agree.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>

#include "bprop/bprop.h"
#include "nn_test_util.h"

namespace {

using namespace bprop;
using namespace bprop::nn;
using nntest::expect_error;

const Checkpoint& reference() {
  static const Checkpoint c =
      load_checkpoint(std::string(BPROP_SOURCE_DIR) + "/tests/data/transformer/layers.safetensors");
  return c;
}

/// The tensors of `case_name` under `part` ("param", "input", "grad"), by name.
std::map<std::string, Tensor> part(const std::string& case_name, const std::string& what) {
  std::map<std::string, Tensor> out;
  const std::string prefix = case_name + "/" + what + "/";
  for (const auto& [name, t] : reference().tensors)
    if (name.rfind(prefix, 0) == 0) out[name.substr(prefix.size())] = t;
  return out;
}

const Tensor& entry(const std::string& name) {
  const Tensor* t = reference().find(name);
  if (!t) throw ValueError("reference tensor " + name + " missing");
  return *t;
}

void load_case(Cell& model, const std::string& case_name) {
  Checkpoint params;
  for (const auto& [name, t] : part(case_name, "param")) params.tensors.emplace_back(name, t);
  EXPECT_TRUE(load_param_into_net(model, params, /*strict=*/true, case_name).empty());
}

void expect_close(const Tensor& got, const Tensor& want, const std::string& what, double tol = 1e-10) {
  ASSERT_TRUE(got.defined()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto g = convert(got, DType::Float64).to_vector<double>();
  const auto w = convert(want, DType::Float64).to_vector<double>();
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], tol * std::max(1.0, std::abs(w[i]))) << what << " element " << i;
  }
}

/// Checks output (and weights) and the gradients of sum(output * cotangent) w.r.t. the float inputs named in
/// `differentiable` (in the order `run` takes them) and every parameter.
void check_case(Cell& model, const std::string& case_name, const std::vector<std::string>& differentiable,
                const std::function<AttentionOutput(const std::vector<Tensor>&)>& run) {
  load_case(model, case_name);
  std::vector<Tensor> xs;
  for (const auto& n : differentiable) xs.push_back(entry(case_name + "/input/" + n));
  const AttentionOutput o = run(xs);
  expect_close(o.output, entry(case_name + "/output"), case_name + " output");
  if (const Tensor* w = reference().find(case_name + "/weights")) expect_close(o.weights, *w, case_name + " weights");

  const Tensor cot = entry(case_name + "/input/cotangent");
  const std::vector<Parameter> weights = model.trainable_params();
  std::vector<int> positions;
  for (size_t i = 0; i < xs.size(); ++i) positions.push_back(static_cast<int>(i));
  auto f = [&](const std::vector<Tensor>& a) -> Value { return ops::sum(run(a).output * cot); };
  const Value g = grad(f, positions.empty() ? GradPosition(nullptr) : GradPosition(positions), weights)(xs);
  const Value& wg = positions.empty() ? g : g[1];
  if (!positions.empty()) {
    for (size_t i = 0; i < xs.size(); ++i)
      expect_close(g[0][i].tensor(), entry(case_name + "/grad/" + differentiable[i]), case_name + " d" + differentiable[i]);
  }
  const auto want = part(case_name, "grad");
  size_t k = 0;
  for (const auto& [name, p] : model.parameters_and_names()) {
    if (!p.requires_grad()) continue;
    ASSERT_TRUE(want.count(name)) << case_name << ": no reference gradient for " << name;
    expect_close(wg[k++].tensor(), want.at(name), case_name + " d" + name);
  }
  EXPECT_EQ(k, weights.size());
}

TEST(NnTransformer, SelfAttentionWithBoolMasksMatchesPyTorch) {
  MultiheadAttention mha(8, 2, {.dtype = DType::Float64});
  AttentionCall call{.attn_mask = entry("mha_self/input/attn_mask"),
                     .key_padding_mask = entry("mha_self/input/key_padding_mask"),
                     .need_weights = true};
  check_case(mha, "mha_self", {"query"}, [&](const std::vector<Tensor>& x) { return mha.forward(x[0], x[0], x[0], call); });
}

TEST(NnTransformer, CrossAttentionWithKdimVdimAndPerHeadMaskMatchesPyTorch) {
  MultiheadAttention mha(8, 4, {.kdim = 6, .vdim = 5, .batch_first = true, .dtype = DType::Float64});
  EXPECT_FALSE(mha.in_proj_weight.defined());
  AttentionCall call{.attn_mask = entry("mha_cross/input/attn_mask"), .need_weights = true, .average_attn_weights = false};
  check_case(mha, "mha_cross", {"query", "key", "value"},
             [&](const std::vector<Tensor>& x) { return mha.forward(x[0], x[1], x[2], call); });
}

TEST(NnTransformer, AttentionThroughTheFusedOpMatchesPyTorch) {
  MultiheadAttention mha(8, 2, {.batch_first = true, .dtype = DType::Float64});
  check_case(mha, "mha_kv", {"query", "key", "value"},
             [&](const std::vector<Tensor>& x) { return mha.forward(x[0], x[1], x[2]); });
}

TEST(NnTransformer, PostNormReluEncoderLayerMatchesPyTorch) {
  TransformerEncoderLayer layer(8, 2, {.dim_feedforward = 16, .dropout = 0.0, .dtype = DType::Float64});
  const Tensor mask = entry("encoder_post_relu/input/src_mask");
  check_case(layer, "encoder_post_relu", {"src"},
             [&](const std::vector<Tensor>& x) { return AttentionOutput{layer(std::vector<Tensor>{x[0], mask}).tensor(), {}}; });
}

TEST(NnTransformer, PreNormGeluCausalEncoderLayerMatchesPyTorch) {
  TransformerEncoderLayer layer(8, 2,
                                {.dim_feedforward = 16, .dropout = 0.0, .activation = "gelu", .batch_first = true,
                                 .norm_first = true, .dtype = DType::Float64});
  AttentionCall causal;
  causal.is_causal = true;
  check_case(layer, "encoder_pre_gelu_causal", {"src"},
             [&](const std::vector<Tensor>& x) { return layer.forward(x[0], causal); });
}

GPTConfig tiny(int64_t layers, bool tied) {
  return {.vocab_size = 11, .context = 8, .layers = layers, .heads = 2, .width = 8, .tie_weights = tied,
          .dtype = DType::Float64};
}

TEST(NnTransformer, GptLogitsAndLossMatchPyTorch) {
  GPT gpt(tiny(2, true));
  const Tensor ids = entry("gpt_logits/input/ids"), targets = entry("gpt_loss/input/targets");
  check_case(gpt, "gpt_logits", {}, [&](const std::vector<Tensor>&) { return AttentionOutput{gpt.logits(ids), {}}; });
  check_case(gpt, "gpt_loss", {}, [&](const std::vector<Tensor>&) { return AttentionOutput{gpt(ids, targets), {}}; });
  GPT untied(tiny(1, false));
  ASSERT_TRUE(untied.lm_head);
  check_case(untied, "gpt_untied", {}, [&](const std::vector<Tensor>&) { return AttentionOutput{untied.logits(ids), {}}; });
}

TEST(NnTransformer, ParameterNamesAreThePyTorchStateDictKeys) {
  GPT gpt(tiny(1, true));
  std::vector<std::string> names;
  for (const auto& [n, p] : gpt.parameters_and_names()) names.push_back(n);
  const std::vector<std::string> want = {
      "wte.weight", "wpe.weight", "blocks.0.self_attn.in_proj_weight", "blocks.0.self_attn.in_proj_bias",
      "blocks.0.self_attn.out_proj.weight", "blocks.0.self_attn.out_proj.bias", "blocks.0.linear1.weight",
      "blocks.0.linear1.bias", "blocks.0.linear2.weight", "blocks.0.linear2.bias", "blocks.0.norm1.weight",
      "blocks.0.norm1.bias", "blocks.0.norm2.weight", "blocks.0.norm2.bias", "ln_f.weight", "ln_f.bias"};
  EXPECT_EQ(names, want);
  // A PyTorch checkpoint of another architecture is refused by strict loading, naming the key.
  Checkpoint extra;
  for (const auto& [n, p] : gpt.parameters_and_names()) extra.tensors.emplace_back(n, p.detach());
  extra.tensors.emplace_back("lm_head.weight", zeros({11, 8}, DType::Float64));
  expect_error<ValueError>([&] { load_param_into_net(gpt, extra, true, "torch.safetensors"); }, {"lm_head.weight"});
}

TEST(NnTransformer, GptInitialisationFollowsNanoGpt) {
  nn::set_seed(3);
  GPT gpt({.vocab_size = 64, .context = 32, .layers = 4, .heads = 4, .width = 64});
  auto stddev = [](const Tensor& t) { return ops::stddev(t).item(); };
  EXPECT_NEAR(stddev(gpt.wte->embedding_table), 0.02, 0.002);
  EXPECT_NEAR(stddev(gpt.blocks[0]->linear1->weight), 0.02, 0.002);
  EXPECT_NEAR(stddev(gpt.blocks[0]->linear2->weight), 0.02 / std::sqrt(8.0), 0.001);
  EXPECT_NEAR(stddev(gpt.blocks[3]->self_attn->out_proj->weight), 0.02 / std::sqrt(8.0), 0.001);
  EXPECT_EQ(ops::amax(ops::abs(gpt.blocks[1]->linear1->bias)).item(), 0.0);
  EXPECT_EQ(ops::amax(ops::abs(gpt.blocks[1]->self_attn->in_proj_bias)).item(), 0.0);
}

TEST(NnTransformer, CausalAttentionIgnoresTheFuture) {
  nn::set_seed(1);
  GPT gpt({.vocab_size = 13, .context = 10, .layers = 2, .heads = 2, .width = 16, .dtype = DType::Float64});
  const Tensor a = tensor_i32({1, 2, 3, 4, 5, 6}, {6}), b = tensor_i32({1, 2, 3, 9, 9, 9}, {6});
  const auto la = gpt.logits(a).to_vector<double>(), lb = gpt.logits(b).to_vector<double>();
  for (size_t i = 0; i < 3 * 13; ++i) {
    EXPECT_EQ(la[i], lb[i]) << i;
  }
  EXPECT_NE(la[3 * 13], lb[3 * 13]);
  // The per-head weights: rows sum to one, nothing above the diagonal.
  const auto w = gpt.attention_weights(a);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].shape(), (Shape{1, 2, 6, 6}));
  const auto v = w[1].to_vector<double>();
  for (int h = 0; h < 2; ++h) {
    for (int i = 0; i < 6; ++i) {
      double s = 0;
      for (int j = 0; j < 6; ++j) {
        const double x = v[static_cast<size_t>((h * 6 + i) * 6 + j)];
        if (j > i) {
          EXPECT_EQ(x, 0.0);
        }
        s += x;
      }
      EXPECT_NEAR(s, 1.0, 1e-12);
    }
  }
}

TEST(NnTransformer, GenerateIsSeededAndHonoursTopK) {
  nn::set_seed(2);
  GPT gpt({.vocab_size = 17, .context = 6, .layers = 1, .heads = 1, .width = 8});
  const std::vector<int32_t> prompt = {1, 2};
  const auto a = gpt.generate(prompt, {.tokens = 12, .temperature = 1.0, .seed = 5});
  EXPECT_EQ(a.size(), 12u);  // longer than the context: the window slides
  EXPECT_EQ(a, gpt.generate(prompt, {.tokens = 12, .temperature = 1.0, .seed = 5}));
  EXPECT_NE(a, gpt.generate(prompt, {.tokens = 12, .temperature = 1.0, .seed = 6}));
  // top_k = 1 and temperature 0 are both greedy.
  EXPECT_EQ(gpt.generate(prompt, {.tokens = 8, .temperature = 0.7, .top_k = 1, .seed = 1}),
            gpt.generate(prompt, {.tokens = 8, .temperature = 0.0, .seed = 9}));
  EXPECT_TRUE(gpt.training());
  expect_error<ValueError>([&] { gpt.generate({}, {}); }, {"GPT.generate", "prompt"});
  expect_error<ValueError>([&] { gpt.generate({17}, {}); }, {"17", "vocab_size 17"});
  expect_error<ValueError>([&] { gpt.generate({1}, {.temperature = -1}); }, {"temperature"});
}

TEST(NnTransformer, SampleTokenKeepsTheTopK) {
  const std::vector<double> logits = {0.0, 3.0, 1.0, 2.0};
  for (double u : {0.0, 0.3, 0.6, 0.999}) {
    const int32_t t = sample_token(logits, 1.0, 2, u);
    EXPECT_TRUE(t == 1 || t == 3) << u;
  }
  EXPECT_EQ(sample_token(logits, 0.0, 0, 0.5), 1);
  EXPECT_EQ(sample_token(logits, 1.0, 0, 0.0), 0);  // every token reachable without top_k
}

TEST(NnTransformer, BadInputsNameTheLayerAndShapes) {
  expect_error<ValueError>([] { MultiheadAttention(10, 3); }, {"MultiheadAttention", "divisible", "10", "3"});
  MultiheadAttention mha(8, 2);
  expect_error<ShapeError>([&] { mha(std::vector<Tensor>{zeros({4, 2, 8}), zeros({4, 3, 8}), zeros({4, 3, 8})}); },
                           {"MultiheadAttention", "(4, 2, 8)", "(4, 3, 8)"});
  expect_error<ShapeError>([&] { mha.forward(zeros({4, 2, 8}), zeros({4, 2, 8}), zeros({4, 2, 8}), {.attn_mask = zeros({3, 4})}); },
                           {"attn_mask", "(4, 4)", "(3, 4)"});
  expect_error<ValueError>([] { TransformerEncoderLayer(8, 2, {.activation = "tanh"}); }, {"activation", "tanh"});
  GPT gpt({.vocab_size = 5, .context = 4, .layers = 1, .heads = 1, .width = 4});
  expect_error<ShapeError>([&] { gpt.logits(tensor_i32({0, 1, 2, 3, 4}, {5})); }, {"GPT", "context = 4"});
  expect_error<ValueError>([&] { gpt.logits(zeros({2, 3})); }, {"GPT", "int32", "float32"});
}

TEST(NnTransformer, FullyMaskedRowsGiveZeros) {
  MultiheadAttention mha(4, 1, {.batch_first = true, .dtype = DType::Float64});
  const Tensor x = randn({1, 3, 4}, 4, DType::Float64);
  const Tensor kpm = tensor_bool({true, true, true}, {1, 3});
  for (bool weights : {false, true}) {
    const AttentionOutput o = mha.forward(x, x, x, {.key_padding_mask = kpm, .need_weights = weights});
    // out_proj of zeros is its bias: zero at initialisation.
    for (double v : o.output.to_vector<double>()) EXPECT_EQ(v, 0.0);
    if (weights) {
      for (double v : o.weights.to_vector<double>()) EXPECT_EQ(v, 0.0);
    }
  }
}

}  // namespace
