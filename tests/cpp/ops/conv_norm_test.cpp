// Neural-network layer ops: conv2d max_pool2d avg_pool2d batch_norm layer_norm embedding. Expected values were
// computed with PyTorch 1.13 (torch.nn.functional, float64) on the inputs below (each built by seq(): element
// i = sin(a * i + b) * scale, the same formula in Python) and copied here. Gradients are checked against torch
// for one case per op, and everywhere with gradcheck and gradgradcheck; the ops' internal gradient ops are
// checked to second order by the op table.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bprop/bprop.h"
#include "kernels/cpu/parallel.h"
#include "expectations.h"

using namespace bprop;

namespace {

using expectations::expect_op_error;

// Expected values, from PyTorch (see each test for the call that produced them).
const std::vector<double> kConvBasicY = {  // (1, 3, 4, 4)
    -0.3662281649610917, 1.060624257513247, 2.3022770318702874, 2.336029476868393, 2.9714962946473107,
    4.604772749225996, 3.955819315350164, 1.3415316264401476, 1.4772036377500024, -0.43919832335154574,
    -2.0561950238494497, -2.61312864738103, -2.241808690398163, -3.63022358934551, -3.2976195787268017,
    -1.4794726973345544, 0.5470323782122357, -0.734857561123802, -2.0308528857285646, -2.277218652742073,
    -2.97229118386167, -4.827327340124669, -4.440444944084104, -1.8439008423110494, -2.0648989388086365,
    -0.4164920754167706, 1.2712648799705697, 2.1544092773094405, 2.0282009384974837, 3.547332938616644,
    3.3689198283075177, 1.600580134892759, -0.7179298687326007, 0.40199788494786054, 1.7351489996066654,
    2.190860924566997, 2.936321508528993, 4.988516921580394, 4.868836179850071, 2.3244695709251006,
    2.627863000303176, 1.2693114781919903, -0.4668236497525798, -1.6644670572177378, -1.7850440404955488,
    -3.414747268654952, -3.39289107285629, -1.6978092926451749};
const std::vector<double> kConvBasicDx = {  // (1, 2, 4, 4)
    0.362114530638113, 0.04982458014188118, -0.41748206523872206, -0.575501082137421, -1.1744486513690509,
    -2.0989936288759656, -1.93431079920314, -1.2218409385371787, -0.6642564184071353, -0.5912196864220396,
    0.014507406511138354, 0.5559611759406977, 0.14877866913755, 0.7348982370377155, 0.9002639878653644,
    0.7135843836909395, 0.5870367873312792, 1.0029682023992277, 0.9228983397379681, 0.4017217425937809,
    1.1818352198673603, 0.8983694578555163, 0.4037244729407673, -0.15898821928671988, -0.38402367832047857,
    -1.1068769294713727, -1.478727373233126, -0.9392928390600714, -1.007636988824906, -1.1670144935424733,
    -0.7972761853634363, -0.23043653737878866};
const std::vector<double> kConvBasicDw = {  // (3, 2, 3, 3)
    0.5686757494181769, 3.4491268359841825, 4.728777090585689, 9.376977958170276, 12.881073438354635,
    9.44544522172735, 4.906241198676669, 3.7227883957005483, 0.8631876993105336, -2.1197436416795234,
    -0.13991185985810628, 2.1727040423401736, 7.472003023519404, 11.68845074076571, 9.514876407889915,
    6.31097301952188, 6.241576515474687, 2.9420682760285706, 5.455752392145141, 7.041396770110967, 4.20040544373793,
    1.1308169330856608, -1.9209750975787585, -4.198451479007243, -6.365173335866155, -9.251434491578623,
    -7.0083811027527005, 4.725261753867378, 7.126428341916777, 4.943810133601923, 3.4702904220538766,
    1.602877502876821, -1.678732690949973, -5.282760860048445, -8.643630171761574, -7.376376541171211,
    -1.35785879212157, -4.467675796512261, -5.336372250778363, -9.540552380880131, -12.603201412005474,
    -8.838132705562606, -3.9855090064009366, -2.384554052084298, 0.15058549374316504, 1.4362272024334986,
    -0.8909370493736886, -2.8878338435754842, -7.973985913777387, -11.920309456828843, -9.272045121258033,
    -5.546813470160768, -4.991262009124527, -1.875063972228312};
const std::vector<double> kConvBasicDb = {  // (3,)
    1.335041846350991, 4.7792325731145295, -2.026365248283221};
const std::vector<double> kConvStridedY = {  // (2, 4, 3, 3)
    0.9249030885173055, 1.5081011295452784, 1.8871847575115188, -2.03806214263131, -2.3498228729860156,
    -2.3435461009994856, 2.3873508795426828, 2.21668122252882, 1.7459941609673852, -0.5810073341454172,
    -1.2446150198601091, -1.7397699013897394, 0.01697089139676078, 1.0070288807792316, 1.8607902353342725,
    -1.4667010633348125, -2.2048361641917946, -2.6445570335794377, -0.3664287025772531, -0.39643140394226234,
    -0.3727789745274739, 2.3287099577799864, 1.9966236838747746, 1.3943037609422393, -1.7193083716060584,
    -1.0087942344619372, -0.16174453015107582, 0.21360111923059405, 0.9813877789479575, 1.616348206682904,
    -1.1963832234709186, -1.8899888815873627, -2.3277934109196052, 2.149543834034059, 2.4317663690921627,
    2.3848607340253807, -0.4413247843247997, 0.298073840208934, 0.9971295687979922, -0.7596985708435477,
    -1.526764732487589, -2.0871904499665694, 1.8435265389360866, 2.2673646476192397, 2.3843255879355336,
    0.8062301322779474, 0.07843281998666854, -0.6599800065448228, -1.750981286765164, -0.8698550340453591,
    0.12900201685804058, 0.36760373497196497, -0.6395444338683862, -1.560133263823229, -0.1829466604031802,
    -0.29778363103809125, -0.3723169841781673, 2.0929644495469533, 2.3596879032859395, 2.3070386691115345,
    -2.3733690107657694, -2.1580813330226967, -1.650707470872193, -1.228599693142783, -0.49701054138462614,
    0.3018466555680914, 0.4627084951447643, -0.43988382656572256, -1.282939935938845, 0.8841690723619444,
    1.6519207936859208, 2.1960927850952827};
const std::vector<double> kMaxpoolY = {  // (1, 2, 3, 3)
    1.8712320031067717, 1.9254024654091402, 1.9254024654091402, 1.9650706837500198, 1.9254024654091402,
    1.9254024654091402, 1.9650706837500198, 1.9899378747891823, 1.3795070382412637, 1.2487542708327828,
    1.206003773826067, 1.9998167373895597, 1.9946328633803585, 1.9946328633803585, 1.9744252980037524,
    -0.1779879031017967, 1.9744252980037524, 1.9744252980037524};
const std::vector<double> kMaxpoolDx = {  // (1, 2, 5, 5)
    0.0, 0.644217687237691, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.589411912767157, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    1.6454346812662057, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.40006947759241995, 0.1212932550306302, 0.0, 0.0, 0.0, 0.0,
    -0.4425204432948521, -0.6804725691086937, -0.16761244004421788, 0.0, 0.0, 0.0, 0.0, 0.0, -1.832364236969029, 0.0,
    0.0, 0.0, 0.0, -0.9435486686359066, 0.0, -2.4160185686610194, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
const std::vector<double> kMaxpool3dY = {  // (2, 2, 2)
    1.8712320031067717, 1.9254024654091402, 1.9650706837500198, -0.12399389546649124, 1.063124786556055,
    1.9899378747891823, 1.9946328633803585, 1.1085958132328182};
const std::vector<double> kAvgpoolY = {  // (1, 2, 3, 6)
    0.2571982829126743, 0.5534777152650042, 0.5915399828850764, 0.54954008886116, 0.4331625218189832,
    0.17888298349056939, -0.06865343914246502, -0.16475444453376967, -0.20664275678193222, -0.22056294130465495,
    -0.20463096642932502, -0.0946097765152976, 0.08657109903593223, 0.27149965335784976, 0.44318535164141476,
    0.5548879916567847, 0.5914891450986525, 0.29485795076136495, -0.22611735969044566, -0.5087315527259144,
    -0.5834747141917237, -0.5792473102953047, -0.49662150032238866, -0.21823471118333893, 0.052174748523719595,
    0.13674028595834103, 0.19007631500323816, 0.21768640650074866, 0.21583366409148041, 0.10365803515934842,
    -0.035138030823982404, -0.17597010502831353, -0.3682972312185806, -0.5107770549238299, -0.5841256004086235,
    -0.3008137024990432};
const std::vector<double> kBnY = {  // (3, 2, 2, 2)
    0.06760566589135705, 0.39570383595598374, 0.6668385356318377, 0.8443129552681674, 1.0378603406061901,
    0.9070070885994481, 0.5444256235264676, -0.000810354261669777, 0.050570102674304125, -0.2894930246486181,
    -0.5937814416812621, -0.8211111386597539, -2.6208578918637433, -2.612307242106053, -2.3591621206034743,
    -1.895684531993932, -0.2669401447805351, 0.07390483669818713, 0.40134033271033037, 0.6710494849400016,
    0.9236688085510497, 1.037701952357052, 0.9023179464045453, 0.5358403807841198};
const std::vector<double> kBnDx = {  // (3, 2, 2, 2)
    0.3951288708483413, 0.33299301780854734, 0.2590209686882934, 0.18714194331119544, 0.2294294581732119,
    0.15910985441742254, 0.14291681349169783, 0.17084813131407584, 0.08055002898284826, 0.08912921156057181,
    0.0866482708109825, 0.06461489467969334, 0.20357657685228558, 0.06427232134180376, -0.12319534855970844,
    -0.3352431492270449, -0.32094677993800935, -0.38397665998783154, -0.40816710838698855, -0.38213665837764393,
    -0.6149392106724684, -0.3517461894047572, 0.012328943399258517, 0.4426417988742227};
const std::vector<double> kBnDw = {  // (2,)
    5.3417126288469055, 8.850775488698082};
const std::vector<double> kBnDb = {  // (2,)
    0.4234216989822266, 1.3668921300742554};
const std::vector<double> kBn2dY = {  // (4, 3)
    -0.5097951616417048, 0.21524121143269218, 0.7119842018783055, 1.0625619679487293, 1.0970166977792601,
    0.9643571719773881, 0.6799347574214247, 0.18866696048465714, -0.19601247477316544, -1.2327015637284493,
    -1.5009248696966095, -1.4803288990825278};
const std::vector<double> kLnY = {  // (2, 3, 4)
    0.201018036079933, 0.37212970629194503, 0.6457705983497177, 0.7676421265625503, 0.5941723600748775,
    0.20672257368147706, -0.14914953006652754, -0.25254554260844325, -0.07902402574294638, 0.17749921400927257,
    0.25172229783079525, 0.01268720721258421, 0.0931810039740791, -0.18415120160210502, -0.29435320343490645,
    -0.19070795987934297, -0.004912898003832887, 0.05765316268867085, -0.1199768815586486, -0.4703587906379073,
    -0.7851231756631897, -0.8657349008033112, -0.6681121518638128, -0.3323311426068039};
const std::vector<double> kLnDx = {  // (2, 3, 4)
    -0.06835961805540672, 0.1224130850310006, 0.27986298339498056, 0.2894415137364284, 0.12822599368891235,
    -0.11853290577473469, -0.3102647184747326, -0.33986465335019017, -0.20196351302812035, 0.002860131505381891,
    0.13086097532749447, 0.08532072599898635, 0.2036767773626873, -0.004876171459674894, -0.1509810780970257,
    -0.16241682078492048, -0.051345993778112664, 0.09548761563924582, 0.174079539283514, 0.13127604299505125,
    8.3226048882723e-05, -0.12053647760368069, -0.12873400783975358, 0.014287348233787134};
const std::vector<double> kLnDw = {  // (3, 4)
    1.009703972538785, 1.586317826998967, 1.9426670049816264, 1.9122144131761887, 1.497256112356797,
    0.8687735228965544, 0.2945653424471828, 0.02585143960272794, 0.1900572068666451, 0.7349580362970054,
    1.4478462536106405, 2.0419100426739374};
const std::vector<double> kLnDb = {  // (3, 4)
    -0.21737921307304953, -0.13474135805776777, -0.04085094920118926, 0.056451014295928026, 0.14903862663229483,
    0.22917968807451194, 0.2901814383463285, 0.3269494840911569, 0.3364132431184457, 0.3177823756280724,
    0.2726127872645058, 0.20467669193724458};
const std::vector<double> kLn1Y = {  // (3, 4)
    -1.4525088792138754, -0.33383567307423156, 0.5906166752041896, 1.1957278770839173, 1.0328021694749636,
    0.7077296935685411, -0.19301409966159677, -1.5475177633819077, 1.4162443764506414, 0.378340056242052,
    -0.5503765179830357, -1.2442079147096576};

// sin(a * i + b) * scale for i in [0, numel), shaped `shape`, float64.
Tensor seq(const Shape& shape, double a = 0.37, double b = 0.1, double scale = 1.5) {
  std::vector<double> v(static_cast<size_t>(shape_numel(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(a * static_cast<double>(i) + b) * scale;
  return tensor(v, shape, DType::Float64);
}
Tensor f64(std::vector<double> v, Shape s) { return tensor(v, s, DType::Float64); }
// The cotangent used for the torch gradients: sum(y * r) was differentiated.
Tensor cotangent(const Shape& s) { return seq(s, 0.29, 0.7, 1.0); }

void expect_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected, double tol = 1e-12) {
  ASSERT_EQ(t.shape(), shape);
  const std::vector<double> got = t.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::abs(expected[i]))) << "element " << i;
  }
}

void expect_same(const Tensor& a, const Tensor& b, double tol = 1e-12) {
  ASSERT_EQ(a.shape(), b.shape());
  expect_values(a, b.shape(), b.to_vector<double>(), tol);
}

// First and second order finite-difference checks w.r.t. every float input.
void check_grads(const Fn& fn, const std::vector<Tensor>& inputs) {
  const CheckResult first = gradcheck(fn, inputs);
  EXPECT_TRUE(first.ok) << first.message;
  const CheckResult second = gradgradcheck(fn, inputs);
  EXPECT_TRUE(second.ok) << second.message;
}

// Gradients of sum(fn(inputs) * cotangent) w.r.t. every input.
std::vector<Tensor> grads_of(const std::function<Tensor(const std::vector<Tensor>&)>& fn, std::vector<Tensor> inputs) {
  std::vector<int> positions;
  for (size_t i = 0; i < inputs.size(); ++i) positions.push_back(static_cast<int>(i));
  const Fn loss = [&fn](const std::vector<Tensor>& in) -> Value {
    const Tensor y = fn(in);
    return ops::sum(y * cotangent(y.shape()));
  };
  return grad(loss, GradPosition(positions))(inputs).flatten();
}

}  // namespace

// ---- conv2d ------------------------------------------------------------------------------------------------

TEST(Conv2d, ValuesAndGradientsMatchTorch) {
  // F.conv2d(x, w, b, padding=1), x (1, 2, 4, 4), w (3, 2, 3, 3) = seq(0.53, 0.2, 0.5), b = [0.1, -0.2, 0.3]
  const Tensor x = seq({1, 2, 4, 4}), w = seq({3, 2, 3, 3}, 0.53, 0.2, 0.5), b = f64({0.1, -0.2, 0.3}, {3});
  const auto fn = [](const std::vector<Tensor>& in) { return ops::conv2d(in[0], in[1], in[2], 1, 1); };
  expect_values(fn({x, w, b}), {1, 3, 4, 4}, kConvBasicY);
  const std::vector<Tensor> g = grads_of(fn, {x, w, b});
  expect_values(g[0], {1, 2, 4, 4}, kConvBasicDx);
  expect_values(g[1], {3, 2, 3, 3}, kConvBasicDw);
  expect_values(g[2], {3}, kConvBasicDb);
}

TEST(Conv2d, StridePaddingDilationGroupsMatchTorch) {
  // F.conv2d(x, w, stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2), x (2, 4, 5, 5), w (4, 2, 2, 2)
  const Tensor y = ops::conv2d(seq({2, 4, 5, 5}), seq({4, 2, 2, 2}, 0.53, 0.2, 0.5), {}, {2, 1}, {1, 0}, {1, 2}, 2);
  expect_values(y, {2, 4, 3, 3}, kConvStridedY);
}

TEST(Conv2d, Float32MatchesFloat64) {
  const Tensor x = seq({2, 3, 7, 6}), w = seq({4, 3, 3, 2}, 0.53, 0.2, 0.5), b = seq({4}, 1.1, 0.0, 0.2);
  const Tensor y64 = ops::conv2d(x, w, b, {2, 1}, 1);
  const Tensor y32 = ops::conv2d(ops::cast(x, DType::Float32), ops::cast(w, DType::Float32),
                                 ops::cast(b, DType::Float32), {2, 1}, 1);
  EXPECT_EQ(y32.dtype(), DType::Float32);
  expect_same(y32, y64, 1e-5);
}

TEST(Conv2d, Gradients) {
  const auto conv = [](Size2 stride, Size2 padding, Size2 dilation, int64_t groups, bool bias) -> Fn {
    return [=](const std::vector<Tensor>& in) -> Value {
      return ops::conv2d(in[0], in[1], bias ? in[2] : Tensor(), stride, padding, dilation, groups);
    };
  };
  const Tensor b3 = seq({3}, 0.7, 0.3, 1.0);
  {
    SCOPED_TRACE("plain, with bias");
    check_grads(conv(1, 0, 1, 1, true), {seq({2, 2, 4, 4}), seq({3, 2, 2, 2}, 0.53), b3});
  }
  {
    SCOPED_TRACE("stride 2, padding 1, no bias");
    check_grads(conv(2, 1, 1, 1, false), {seq({1, 2, 5, 4}), seq({3, 2, 3, 3}, 0.53)});
  }
  {
    SCOPED_TRACE("dilation (2, 1), padding (0, 1), bias");
    check_grads(conv(1, {0, 1}, {2, 1}, 1, true), {seq({1, 2, 5, 4}), seq({3, 2, 2, 2}, 0.53), b3});
  }
  {
    SCOPED_TRACE("groups 2, stride (1, 2)");
    check_grads(conv({1, 2}, 0, 1, 2, false), {seq({2, 4, 3, 4}), seq({4, 2, 2, 2}, 0.53)});
  }
  {
    SCOPED_TRACE("depthwise (groups = channels), padding 1");
    check_grads(conv(1, 1, 1, 3, true), {seq({1, 3, 3, 3}), seq({3, 1, 2, 2}, 0.53), b3});
  }
  {
    SCOPED_TRACE("1x1 kernel (the pointwise path)");
    check_grads(conv(1, 0, 1, 1, true), {seq({2, 2, 3, 3}), seq({3, 2, 1, 1}, 0.53), b3});
  }
}

TEST(Conv2d, ThreadCountDoesNotChangeResults) {
  const Tensor x = seq({20, 3, 9, 9}), w = seq({5, 3, 3, 3}, 0.53, 0.2, 0.5);
  const auto run = [&](int threads) {
    const int before = cpu::num_threads();
    cpu::set_num_threads(threads);
    const auto fn = [](const std::vector<Tensor>& in) { return ops::conv2d(in[0], in[1], {}, 2, 1); };
    std::vector<Tensor> out = grads_of(fn, {x, w});
    out.push_back(fn({x, w}));
    cpu::set_num_threads(before);
    return out;
  };
  const std::vector<Tensor> one = run(1), four = run(4);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(one[i].to_vector<double>(), four[i].to_vector<double>()) << i;
}

TEST(Conv2d, Errors) {
  const Tensor x = seq({1, 4, 5, 5});
  expect_op_error<ShapeError>([&] { ops::conv2d(seq({1, 3, 5, 5}), seq({2, 2, 3, 3})); }, "conv2d",
                           "argument 'x' of shape (1, 3, 5, 5) has 3 input channels but argument 'w' of shape "
                           "(2, 2, 3, 3) with groups 1 expects 2");
  expect_op_error<ValueError>([&] { ops::conv2d(x, seq({3, 2, 3, 3}), {}, 1, 0, 1, 3); }, "conv2d",
                           "'groups' (3) must divide the 4 input channels");
  expect_op_error<ValueError>([&] { ops::conv2d(x, seq({3, 2, 3, 3}), {}, 1, 0, 1, 2); }, "conv2d",
                           "'groups' (2) must divide the 3 output channels");
  expect_op_error<ShapeError>([&] { ops::conv2d(seq({1, 1, 2, 2}), seq({1, 1, 3, 3})); }, "conv2d",
                           "more than the padded input (2, 2)");
  expect_op_error<ShapeError>([&] { ops::conv2d(seq({1, 1, 3, 3}), seq({1, 1, 2, 2}), {}, 1, 0, 3); }, "conv2d",
                           "spans (4, 4)");
  expect_op_error<ShapeError>([&] { ops::conv2d(seq({4, 5, 5}), seq({2, 4, 3, 3})); }, "conv2d",
                           "argument 'x' of shape (4, 5, 5) must be 4-D");
  expect_op_error<ShapeError>([&] { ops::conv2d(x, seq({2, 4, 3})); }, "conv2d",
                           "argument 'w' of shape (2, 4, 3) must be 4-D");
  expect_op_error<ShapeError>([&] { ops::conv2d(x, seq({2, 4, 3, 3}), seq({3})); }, "conv2d",
                           "argument 'bias' of shape (3,) must have one entry per output channel");
  expect_op_error<ValueError>([&] { ops::conv2d(x, seq({2, 4, 3, 3}), {}, 0); }, "conv2d", "'stride' must be positive");
  expect_op_error<ValueError>([&] { ops::conv2d(x, seq({2, 4, 3, 3}), {}, 1, -1); }, "conv2d",
                           "'padding' must be non-negative");
  expect_op_error<ValueError>([&] { ops::conv2d(x, seq({2, 4, 3, 3}), {}, {1, 2, 3}); }, "conv2d",
                           "'stride' must be an int or a pair of ints");
  expect_op_error<DTypeError>([&] { ops::conv2d(ops::cast(x, DType::Int32), seq({2, 4, 3, 3})); }, "conv2d",
                           "argument 'x' must be float32 or float64, got int32");
}

// ---- pooling -----------------------------------------------------------------------------------------------

TEST(MaxPool2d, ValuesAndGradientMatchTorch) {
  // F.max_pool2d(x, 3, 2, 1), x (1, 2, 5, 5) = seq(0.91, 0.3, 2.0)
  const Tensor x = seq({1, 2, 5, 5}, 0.91, 0.3, 2.0);
  const auto fn = [](const std::vector<Tensor>& in) { return ops::max_pool2d(in[0], 3, 2, 1); };
  expect_values(fn({x}), {1, 2, 3, 3}, kMaxpoolY);
  expect_values(grads_of(fn, {x})[0], {1, 2, 5, 5}, kMaxpoolDx);
  // 3-D input, stride defaulting to the kernel size: F.max_pool2d(x, 2), x (2, 4, 5)
  expect_values(ops::max_pool2d(seq({2, 4, 5}, 0.91, 0.3, 2.0), 2), {2, 2, 2}, kMaxpool3dY);
}

TEST(MaxPool2d, PaddingIsMinusInfinityAndNaNWins) {
  const Tensor x = f64({-5.0, -6.0, -7.0, -8.0}, {1, 1, 2, 2});
  expect_values(ops::max_pool2d(x, 2, 1, 1), {1, 1, 3, 3}, {-5, -5, -6, -5, -5, -6, -7, -7, -8});
  const Tensor n = f64({1.0, NAN, 3.0, 2.0}, {1, 2, 2});
  const std::vector<double> got = ops::max_pool2d(n, 2).to_vector<double>();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(std::isnan(got[0]));
}

// 2 x 2 windows at stride 2 without padding (the pooling of most CNNs) against a plain argmax (the first maximum in
// row-major order, the last NaN) on values full of ties, -inf and NaN, odd sizes (the last row and column of x
// belong to no window), float32 and float64, values and the gradient's scatter.
TEST(MaxPool2d, TwoByTwoWindowsMatchAPlainArgmax) {
  const double pattern[] = {1.0, 3.0, 3.0, -INFINITY, 2.0, NAN, 3.0, 0.5, -INFINITY, 2.0, NAN, 1.0, 0.0};
  for (const DType dt : {DType::Float32, DType::Float64}) {
    const int64_t planes = 3, h = 7, w = 9, oh = h / 2, ow = w / 2;
    std::vector<double> xv(static_cast<size_t>(planes * h * w));
    for (size_t i = 0; i < xv.size(); ++i) xv[i] = pattern[(i * 5 + i / 7) % 13];
    const Tensor x = tensor(xv, {1, planes, h, w}, dt);
    std::vector<double> want_y(static_cast<size_t>(planes * oh * ow)), dout(want_y.size()),
        want_dx(xv.size(), 0.0);
    for (size_t i = 0; i < dout.size(); ++i) dout[i] = 1.0 + static_cast<double>(i % 5);
    for (int64_t p = 0; p < planes; ++p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t best = -1, nan = -1;
          for (int64_t ky = 0; ky < 2; ++ky) {
            for (int64_t kx = 0; kx < 2; ++kx) {
              const int64_t i = p * h * w + (2 * oy + ky) * w + 2 * ox + kx;
              const double v = xv[static_cast<size_t>(i)];
              if (std::isnan(v)) nan = i;
              else if (best < 0 || v > xv[static_cast<size_t>(best)]) best = i;
            }
          }
          const int64_t at = nan >= 0 ? nan : best;
          const size_t o = static_cast<size_t>(p * oh * ow + oy * ow + ox);
          want_y[o] = xv[static_cast<size_t>(at)];
          want_dx[static_cast<size_t>(at)] += dout[o];
        }
      }
    }
    const std::vector<double> y = ops::max_pool2d(x, 2).to_vector<double>();
    ASSERT_EQ(y.size(), want_y.size());
    for (size_t i = 0; i < y.size(); ++i) {
      if (std::isnan(want_y[i])) EXPECT_TRUE(std::isnan(y[i])) << i;
      else EXPECT_EQ(y[i], want_y[i]) << i;
    }
    const auto fn = [&](const std::vector<Tensor>& in) -> Value { return ops::max_pool2d(in[0], 2); };
    const Tensor sens = tensor(dout, {1, planes, oh, ow}, dt);
    const std::vector<double> dx = vjp(fn, {x}, sens).second[0].to_vector<double>();
    ASSERT_EQ(dx.size(), want_dx.size());
    for (size_t i = 0; i < dx.size(); ++i) EXPECT_EQ(dx[i], want_dx[i]) << i;
  }
}

TEST(MaxPool2d, Gradients) {
  // Distinct values 0.1 apart: no window has a tie, so finite differences never move the argmax.
  const auto distinct = [](const Shape& s) {
    const int64_t n = shape_numel(s);
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>((i * 7) % n) * 0.1 - 1.0;
    return f64(v, s);
  };
  const auto pool = [](Size2 k, std::optional<Size2> s, Size2 p) -> Fn {
    return [=](const std::vector<Tensor>& in) -> Value { return ops::max_pool2d(in[0], k, s, p); };
  };
  {
    SCOPED_TRACE("kernel 2");
    check_grads(pool(2, std::nullopt, 0), {distinct({2, 2, 4, 4})});
  }
  {
    SCOPED_TRACE("kernel (3, 2), stride 1 (overlapping), padding (1, 0)");
    check_grads(pool({3, 2}, 1, {1, 0}), {distinct({1, 2, 4, 5})});
  }
  {
    SCOPED_TRACE("3-D, kernel 3, stride (2, 1), padding 1");
    check_grads(pool(3, Size2{2, 1}, 1), {distinct({2, 5, 4})});
  }
}

TEST(AvgPool2d, ValuesMatchTorch) {
  // F.avg_pool2d(x, (3, 2), (2, 1), (1, 1)) (count_include_pad=True), x (1, 2, 5, 5)
  expect_values(ops::avg_pool2d(seq({1, 2, 5, 5}), {3, 2}, Size2{2, 1}, {1, 1}), {1, 2, 3, 6}, kAvgpoolY);
  // padding counts as zeros: one window of four ones, three of them padding
  expect_values(ops::avg_pool2d(ones({1, 1, 1, 1}, DType::Float64), 2, 1, 1), {1, 1, 2, 2}, {0.25, 0.25, 0.25, 0.25});
}

TEST(AvgPool2d, Gradients) {
  const auto pool = [](Size2 k, std::optional<Size2> s, Size2 p) -> Fn {
    return [=](const std::vector<Tensor>& in) -> Value { return ops::avg_pool2d(in[0], k, s, p); };
  };
  {
    SCOPED_TRACE("kernel 2");
    check_grads(pool(2, std::nullopt, 0), {seq({2, 2, 4, 5})});
  }
  {
    SCOPED_TRACE("kernel (3, 2), stride (2, 1), padding (1, 1)");
    check_grads(pool({3, 2}, Size2{2, 1}, {1, 1}), {seq({1, 2, 5, 5})});
  }
  {
    SCOPED_TRACE("3-D, overlapping");
    check_grads(pool(3, 1, 0), {seq({2, 4, 4})});
  }
}

TEST(Pool2d, Errors) {
  for (const std::string op : {"max_pool2d", "avg_pool2d"}) {
    SCOPED_TRACE(op);
    const auto call = [&](const Tensor& x, Attrs a) { return call_op(op, {x}, a); };
    expect_op_error<ShapeError>([&] { call(seq({4, 4}), {{"kernel_size", int64_t{2}}}); }, op,
                             "argument 'x' of shape (4, 4) must be 3-D (C, H, W) or 4-D (N, C, H, W)");
    expect_op_error<ShapeError>([&] { call(seq({1, 1, 3, 3}), {{"kernel_size", int64_t{4}}}); }, op,
                             "'kernel_size' (4, 4) is larger than the padded input (3, 3)");
    expect_op_error<ValueError>([&] { call(seq({1, 1, 4, 4}), {{"kernel_size", int64_t{2}}, {"padding", int64_t{2}}}); },
                             op, "'padding' [2, 2] must be at most half of 'kernel_size' [2, 2]");
    expect_op_error<ValueError>(
        [&] { call(seq({1, 1, 4, 4}), {{"kernel_size", int64_t{2}}, {"stride", IntList{1, 2, 3}}}); }, op,
        "'stride' must be an int, a pair of ints or null");
    expect_op_error<ValueError>([&] { call(seq({1, 1, 4, 4}), {{"kernel_size", int64_t{0}}}); }, op,
                             "'kernel_size' must be positive");
    expect_op_error<ValueError>([&] { call(seq({1, 1, 4, 4}), {}); }, op, "required attribute 'kernel_size'");
    expect_op_error<DTypeError>([&] { call(ops::cast(seq({1, 4, 4}), DType::Int32), {{"kernel_size", int64_t{2}}}); }, op,
                             "must be float32 or float64");
  }
}

// ---- normalisation -----------------------------------------------------------------------------------------

TEST(BatchNorm, ValuesAndGradientsMatchTorch) {
  // F.batch_norm(x, None, None, w, b, training=True), x (3, 2, 2, 2), w = [0.5, 1.5], b = [0.1, -0.3]
  const Tensor x = seq({3, 2, 2, 2}), w = f64({0.5, 1.5}, {2}), b = f64({0.1, -0.3}, {2});
  const auto fn = [](const std::vector<Tensor>& in) { return ops::batch_norm(in[0], in[1], in[2]); };
  expect_values(fn({x, w, b}), {3, 2, 2, 2}, kBnY, 1e-10);
  const std::vector<Tensor> g = grads_of(fn, {x, w, b});
  expect_values(g[0], {3, 2, 2, 2}, kBnDx, 1e-9);
  expect_values(g[1], {2}, kBnDw, 1e-10);
  expect_values(g[2], {2}, kBnDb, 1e-10);
  // 2-D (N, C), no weight or bias, eps 0.1
  expect_values(ops::batch_norm(seq({4, 3}), {}, {}, 0.1), {4, 3}, kBn2dY, 1e-10);
}

TEST(BatchNorm, Gradients) {
  const Fn affine = [](const std::vector<Tensor>& in) -> Value { return ops::batch_norm(in[0], in[1], in[2]); };
  const Fn plain = [](const std::vector<Tensor>& in) -> Value { return ops::batch_norm(in[0]); };
  const Fn bias_only = [](const std::vector<Tensor>& in) -> Value { return ops::batch_norm(in[0], {}, in[1], 0.01); };
  {
    SCOPED_TRACE("4-D with weight and bias");
    check_grads(affine, {seq({2, 3, 2, 2}), seq({3}, 0.9, 0.4, 1.0), seq({3}, 0.3)});
  }
  {
    SCOPED_TRACE("2-D, no weight or bias");
    check_grads(plain, {seq({5, 2})});
  }
  {
    SCOPED_TRACE("3-D (N, C, L), bias only");
    check_grads(bias_only, {seq({2, 2, 3}), seq({2}, 0.3)});
  }
}

TEST(BatchNorm, Errors) {
  expect_op_error<ShapeError>([] { ops::batch_norm(seq({4})); }, "batch_norm",
                           "argument 'x' of shape (4,) must have at least 2 dimensions");
  expect_op_error<ShapeError>([] { ops::batch_norm(seq({4, 3}), seq({4})); }, "batch_norm",
                           "argument 'weight' of shape (4,) must have shape (3,)");
  expect_op_error<ShapeError>([] { ops::batch_norm(seq({4, 3, 2}), {}, seq({2})); }, "batch_norm",
                           "argument 'bias' of shape (2,) must have shape (3,)");
  expect_op_error<ValueError>([] { ops::batch_norm(seq({1, 3})); }, "batch_norm", "more than 1 value per channel");
  expect_op_error<DTypeError>([] { ops::batch_norm(seq({4, 3}), ops::cast(seq({3}), DType::Int32)); }, "batch_norm",
                           "argument 'weight' must be float32 or float64");
}

TEST(LayerNorm, ValuesAndGradientsMatchTorch) {
  // F.layer_norm(x, (3, 4), w, b), x (2, 3, 4), w = seq(0.53, 0.2, 0.5), b = seq(0.41, 0.9, 0.3)
  const Tensor x = seq({2, 3, 4}), w = seq({3, 4}, 0.53, 0.2, 0.5), b = seq({3, 4}, 0.41, 0.9, 0.3);
  const auto fn = [](const std::vector<Tensor>& in) { return ops::layer_norm(in[0], in[1], in[2], 2); };
  expect_values(fn({x, w, b}), {2, 3, 4}, kLnY, 1e-10);
  const std::vector<Tensor> g = grads_of(fn, {x, w, b});
  expect_values(g[0], {2, 3, 4}, kLnDx, 1e-9);
  expect_values(g[1], {3, 4}, kLnDw, 1e-10);
  expect_values(g[2], {3, 4}, kLnDb, 1e-10);
  // F.layer_norm(x, (4,)), x (3, 4)
  expect_values(ops::layer_norm(seq({3, 4})), {3, 4}, kLn1Y, 1e-10);
}

TEST(LayerNorm, Gradients) {
  const Fn affine = [](const std::vector<Tensor>& in) -> Value { return ops::layer_norm(in[0], in[1], in[2], 2); };
  const Fn plain = [](const std::vector<Tensor>& in) -> Value { return ops::layer_norm(in[0]); };
  const Fn weight_only = [](const std::vector<Tensor>& in) -> Value {
    return ops::layer_norm(in[0], in[1], {}, 1, 0.01);
  };
  {
    SCOPED_TRACE("last two axes, weight and bias");
    check_grads(affine, {seq({2, 2, 3}), seq({2, 3}, 0.9, 0.4, 1.0), seq({2, 3}, 0.3)});
  }
  {
    SCOPED_TRACE("last axis, no weight or bias");
    check_grads(plain, {seq({3, 4})});
  }
  {
    SCOPED_TRACE("whole 1-D input, weight only");
    check_grads(weight_only, {seq({5}), seq({5}, 0.9, 0.4, 1.0)});
  }
}

TEST(LayerNorm, Errors) {
  expect_op_error<ValueError>([] { ops::layer_norm(seq({3, 4}), {}, {}, 3); }, "layer_norm",
                           "'normalized_ndim' (3) must be between 1 and the rank of argument 'x' of shape (3, 4)");
  expect_op_error<ValueError>([] { ops::layer_norm(seq({3, 4}), {}, {}, 0); }, "layer_norm", "'normalized_ndim' (0)");
  expect_op_error<ShapeError>([] { ops::layer_norm(seq({2, 3, 4}), seq({3, 4})); }, "layer_norm",
                           "argument 'weight' of shape (3, 4) must have shape (4,), the last 1 dimensions");
  expect_op_error<ShapeError>([] { ops::layer_norm(seq({2, 3, 4}), {}, seq({4}), 2); }, "layer_norm",
                           "argument 'bias' of shape (4,) must have shape (3, 4)");
}

// ---- embedding ---------------------------------------------------------------------------------------------

TEST(Embedding, ValuesAndGradient) {
  const Tensor table = f64({0.0, 0.1, 1.0, 1.1, 2.0, 2.1}, {3, 2});
  const Tensor idx = tensor_i32({2, 0, 2, 1}, {2, 2});
  expect_values(ops::embedding(idx, table), {2, 2, 2}, {2.0, 2.1, 0.0, 0.1, 2.0, 2.1, 1.0, 1.1});
  // d table = rows of dout added at their indices (row 2 twice)
  const Fn fn = [&idx](const std::vector<Tensor>& in) -> Value { return ops::embedding(idx, in[0]); };
  const Tensor dout = f64({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  const Tensor g = vjp(fn, {table}, dout).second[0];
  expect_values(g, {3, 2}, {3, 4, 7, 8, 6, 8});
  check_grads(fn, {table});
  // 0-d indices give one row; float32 tables stay float32
  expect_values(ops::embedding(tensor_i32({1}, {}), table), {2}, {1.0, 1.1});
  EXPECT_EQ(ops::embedding(idx, ops::cast(table, DType::Float32)).dtype(), DType::Float32);
}

TEST(Embedding, Errors) {
  const Tensor table = seq({3, 2});
  expect_op_error<ValueError>([&] { ops::embedding(tensor_i32({0, 3}, {2}), table); }, "embedding",
                           "index 3 (at flat position 1 of 'indices' of shape (2,)) is out of range for 'table' of "
                           "shape (3, 2)");
  expect_op_error<ValueError>([&] { ops::embedding(tensor_i32({-1}, {1}), table); }, "embedding", "index -1");
  expect_op_error<ShapeError>([&] { ops::embedding(tensor_i32({0}, {1}), seq({3})); }, "embedding",
                           "argument 'table' of shape (3,) must be 2-D");
  expect_op_error<DTypeError>([&] { ops::embedding(seq({2}), table); }, "embedding", "argument 'indices' must be int32");
}

// ---- second order through a small network ------------------------------------------------------------------

TEST(NnOps, SecondOrderThroughConvPoolNorm) {
  // A conv -> batch_norm -> avg_pool -> layer_norm chain, differentiated twice w.r.t. input and weight.
  const Fn net = [](const std::vector<Tensor>& in) -> Value {
    Tensor h = ops::conv2d(in[0], in[1], {}, 1, 1);
    h = ops::batch_norm(ops::tanh(h));
    h = ops::avg_pool2d(h, 2);
    return ops::layer_norm(ops::reshape(h, {2, -1}));
  };
  check_grads(net, {seq({2, 1, 4, 4}), seq({2, 1, 3, 3}, 0.53, 0.2, 0.5)});
}
