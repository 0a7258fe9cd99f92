// The operator table (cann_table.h): what CANN documents for each operator's tensor arguments, read from the
// operator sources Huawei publishes (hicann/ops-math, hicann/ops-nn: each operator's op_api/aclnn_*.cpp, where
// GetWorkspaceSize checks its arguments, and its docs/aclnn*.md) at the commits named in each row. Where a source's
// checks and its documentation differ, the row follows the source, except where noted. Two columns of dtypes: the
// Atlas A2 training series (Ascend910B, and the A3 series, which shares its lists), and the Atlas training series
// (Ascend910A), which has no BFLOAT16 and, for a few operators, nothing (kNotOnTraining). COMPLEX dtypes, which
// the fake does not know, are left out. Formats (FormatRule): most operators take any plain format; the
// convolution, pooling and batch-norm rows say what they check.
#include "cann_table.h"

namespace fake_ascend {
namespace {

constexpr aclDataType F32 = ACL_FLOAT, F16 = ACL_FLOAT16, BF16 = ACL_BF16, F64 = ACL_DOUBLE, I8 = ACL_INT8,
                      I16 = ACL_INT16, I32 = ACL_INT32, I64 = ACL_INT64, U8 = ACL_UINT8, U16 = ACL_UINT16,
                      U32 = ACL_UINT32, U64 = ACL_UINT64, BOOL = ACL_BOOL;
using F = FormatRule;
// The operator does not exist on the Atlas training series (its documentation: "not supported").
const std::vector<aclDataType> kNotOnTraining = {ACL_DT_UNDEFINED};

}  // namespace

const std::vector<OperatorSpec>& operator_table() {
  static const std::vector<OperatorSpec> table = {
    {"aclnnExpm1",
     {
      {"self", {F32, F16, BF16, I64, BOOL}, {F32, F16, I64, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/expm1/op_api/aclnn_expm1.cpp @e5bba9e325; ops-math math/expm1/op_api/expm1.cpp @e5bba9e325"},
    {"aclnnExp",
     {
      {"self", {F32, F16, BF16, F64, I64, BOOL}, {F32, F16, F64, I64, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/exp/op_api/aclnn_exp.cpp @382f72f1c2; ops-math math/exp/op_api/exp.cpp @9d65d0d119"},
    {"aclnnAdd",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/add/op_api/aclnn_add.cpp @355f9ecdf4; ops-math math/add/op_api/add.cpp @355f9ecdf4"},
    {"aclnnAdds",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/add/op_api/aclnn_add.cpp @355f9ecdf4; ops-math math/add/docs/aclnnAdds.md @51815064dd"},
    {"aclnnSub",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/sub/op_api/aclnn_sub.cpp @d9032dadec; ops-math math/sub/docs/aclnnSub&aclnnInplaceSub.md @51815064dd"},
    {"aclnnSubs",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/sub/op_api/aclnn_sub.cpp @d9032dadec; ops-math math/sub/docs/aclnnSubs&aclnnInplaceSubs.md @51815064dd"},
    {"aclnnMul",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/mul/op_api/aclnn_mul.cpp @c682a083b5; ops-math math/mul/docs/aclnnMul&aclnnInplaceMul.md @51815064dd"},
    {"aclnnMuls",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/mul/op_api/aclnn_mul.cpp @c682a083b5; ops-math math/muls/docs/aclnnMuls&aclnnInplaceMuls.md @db6fb059dc"},
    {"aclnnDiv",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/div/op_api/aclnn_div.cpp @02d7c114ef; ops-math math/div/docs/aclnnDiv&aclnnInplaceDiv.md @51815064dd"},
    {"aclnnDivs",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/div/op_api/aclnn_div.cpp @02d7c114ef; ops-math math/div/docs/aclnnDivs&aclnnInplaceDivs.md @51815064dd"},
    {"aclnnNeg",
     {
      {"self", {F32, F16, BF16, F64, I8, I32, I64}, {F32, F16, F64, I8, I32, I64}},
      {"out", {F32, F16, BF16, F64, I8, I32, I64}, {F32, F16, F64, I8, I32, I64}}},
     "ops-math math/neg/op_api/aclnn_neg.cpp @9d65d0d119; ops-math math/neg/docs/aclnnNeg&aclnnInplaceNeg.md @51815064dd"},
    {"aclnnLog",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/log/op_api/aclnn_log.cpp @8e323604c6; ops-math math/log/docs/aclnnLog&aclnnInplaceLog.md @d1fc15a094"},
    {"aclnnSqrt",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/sqrt/op_api/aclnn_sqrt.cpp @d9032dadec; ops-math math/sqrt/docs/aclnnSqrt&aclnnInplaceSqrt.md @51815064dd"},
    {"aclnnTanh",
     {
      {"self", {F32, F16, BF16, I8, I16, I32, I64, U8, BOOL}, {F32, F16, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-math math/tanh/op_api/aclnn_tanh.cpp @dc29f0883c; ops-math math/tanh/docs/aclnnTanh&aclnnInplaceTanh.md @51815064dd"},
    {"aclnnAbs",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/abs/op_api/aclnn_abs.cpp @1609e565d3; ops-math math/abs/docs/aclnnAbs.md @51815064dd"},
    {"aclnnSign",
     {
      {"self", {F32, F16, BF16, F64, I32, I64, BOOL}, {F32, F16, F64, I32, I64, BOOL}},
      {"out", {F32, F16, BF16, F64, I32, I64, BOOL}, {F32, F16, F64, I32, I64, BOOL}}},
     "ops-math math/sign/op_api/aclnn_sign.cpp @9d65d0d119; ops-math math/sign/docs/aclnnSign.md @51815064dd"},
    {"aclnnSin",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/sin/op_api/aclnn_sin.cpp @dc29f0883c; ops-math math/sin/docs/aclnnSin&aclnnInplaceSin.md @416ea9e621"},
    {"aclnnCos",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/cos/op_api/aclnn_cos.cpp @382f72f1c2; ops-math math/cos/docs/aclnnCos&aclnnInplaceCos.md @51815064dd"},
    {"aclnnTan",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/tan/op_api/aclnn_tan.cpp @d383b613ac; ops-math math/tan/docs/aclnnTan&aclnnInplaceTan.md @51815064dd"},
    {"aclnnRsqrt",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/rsqrt/op_api/aclnn_rsqrt.cpp @38769109ca; ops-math math/rsqrt/docs/aclnnRsqrt&aclnnInplaceRsqrt.md @51815064dd"},
    {"aclnnReciprocal",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/reciprocal/op_api/aclnn_reciprocal.cpp @38769109ca; ops-math math/reciprocal/docs/aclnnReciprocal&aclnnInplaceReciprocal.md @51815064dd"},
    {"aclnnErf",
     {
      {"self", {F32, F16, BF16, F64, I64, BOOL}, {F32, F16, F64, I64, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/erf/op_api/aclnn_erf.cpp @e5bba9e325; ops-math math/erf/docs/aclnnErf&aclnnInplaceErf.md @416ea9e621"},
    {"aclnnLog1p",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/log1p/op_api/aclnn_log1p.cpp @d9032dadec; ops-math math/log1p/docs/aclnnLog1p&aclnnInplaceLog1p.md @e918e25990"},
    {"aclnnFloor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64}}},
     "ops-math math/floor/op_api/aclnn_floor.cpp @f1f2762dff; ops-math math/floor/docs/aclnnFloor&aclnnInplaceFloor.md @416ea9e621"},
    {"aclnnCeil",
     {
      {"self", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/ceil/op_api/aclnn_ceil.cpp @3a76074fb3; ops-math math/ceil/docs/aclnnCeil&aclnnInplaceCeil.md @51815064dd"},
    {"aclnnRound",
     {
      {"self", {F32, F16, BF16, F64, I32, I64}, {F32, F16, F64, I32, I64}},
      {"out", {F32, F16, BF16, F64, I32, I64}, {F32, F16, F64, I32, I64}}},
     "ops-math math/round/op_api/aclnn_round.cpp @38769109ca; ops-math math/round/docs/aclnnRound&aclnnInplaceRound.md @416ea9e621"},
    {"aclnnSigmoid",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-nn activation/sigmoid/op_api/aclnn_sigmoid.cpp @c82bb80151; ops-nn activation/sigmoid/docs/aclnnSigmoid&aclnnInplaceSigmoid.md @b2b7f744ed"},
    {"aclnnPowTensorScalar",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/pow/op_api/aclnn_pow.cpp @57362104f8; ops-math math/pow/docs/aclnnPowTensorScalar&aclnnInplacePowTensorScalar.md @51815064dd"},
    {"aclnnPowScalarTensor",
     {
      {"exponent", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/pow/op_api/aclnn_pow.cpp @57362104f8; ops-math math/pow/docs/aclnnPowScalarTensor.md @e918e25990"},
    {"aclnnPowTensorTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"exponent", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/pow/op_api/aclnn_pow_tensor_tensor.cpp @d9032dadec; ops-math math/pow/docs/aclnnPowTensorTensor&aclnnInplacePowTensorTensor.md @51815064dd"},
    {"aclnnCast",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"dtype", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math math/cast/op_api/aclnn_cast.cpp @5f43e19f2d; ops-math math/cast/op_api/cast.cpp @5f77cf75bc"},
    {"aclnnEqTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U32, U64, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U32, U64, BOOL}}},
     "ops-math math/equal/op_api/aclnn_eq_tensor.cpp @75ab237ab5; ops-math math/equal/docs/aclnnEqTensor&aclnnInplaceEqTensor.md @51815064dd"},
    {"aclnnNeTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/not_equal/op_api/aclnn_ne_tensor.cpp @75ab237ab5; ops-math math/not_equal/docs/aclnnNeTensor&aclnnInplaceNeTensor.md @983c21509e"},
    {"aclnnGtTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math math/greater/op_api/aclnn_gt_tensor.cpp @75ab237ab5; ops-math math/greater/docs/aclnnGtTensor&aclnnInplaceGtTensor.md @983c21509e"},
    {"aclnnGeTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math math/greater_equal/op_api/aclnn_ge_tensor.cpp @75ab237ab5; ops-math math/greater_equal/docs/aclnnGeTensor&aclnnInplaceGeTensor.md @983c21509e"},
    {"aclnnLtTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math math/less/op_api/aclnn_lt_tensor.cpp @75ab237ab5; ops-math math/less/docs/aclnnLtTensor&aclnnInplaceLtTensor.md @983c21509e"},
    {"aclnnLeTensor",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, BOOL}}},
     "ops-math math/less_equal/op_api/aclnn_le_tensor.cpp @75ab237ab5; ops-math math/less_equal/docs/aclnnLeTensor&aclnnInplaceLeTensor.md @983c21509e"},
    {"aclnnSWhere",
     {
      {"condition", {U8, BOOL}},
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math math/select/op_api/aclnn_s_where.cpp @27338be937; ops-math math/select/docs/aclnnSWhere.md @983c21509e"},
    {"aclnnMaximum",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/maximum/op_api/aclnn_maximum.cpp @75ab237ab5; ops-math math/maximum/docs/aclnnMaximum.md @51815064dd"},
    {"aclnnMinimum",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"other", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/minimum/op_api/aclnn_minimum.cpp @75ab237ab5; ops-math math/minimum/docs/aclnnMinimum.md @51815064dd"},
    {"aclnnClamp",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8}, {F32, F16, F64, I8, I16, I32, I64, U8}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8}, {F32, F16, F64, I8, I16, I32, I64, U8}}},
     "ops-math conversion/clip_by_value_v2/op_api/aclnn_clamp.cpp @a8e23ec793; ops-math conversion/clip_by_value_v2/docs/aclnnClamp.md @51815064dd"},
    {"aclnnConvolution",
     {
      {"input", {F32, F16, BF16}, {F32, F16}, F::Channels},
      {"weight", {F32, F16, BF16}, {F32, F16}, F::Channels},
      {"bias", {F32, F16, BF16}},
      {"output", {F32, F16, BF16}, {F32, F16}, F::Channels}},
     "ops-nn conv/convolution_forward/op_host/op_api/aclnn_convolution.cpp @e5c3fa9327; ops-nn matmul/common/op_host/op_api/cube_util.cpp @e5c3fa9327"},
    {"aclnnConvolutionBackward",
     {
      {"gradOutput", {F32, F16, BF16}, {F32, F16}, F::ChannelsOrNd3d},
      {"input", {F32, F16, BF16}, {F32, F16}, F::ChannelsOrNd3d},
      {"weight", {F32, F16, BF16}, {F32, F16}, F::ChannelsOrNd3d},
      {"gradInput", {F32, F16, BF16}, {F32, F16}, F::ChannelsOrNd3d},
      {"gradWeight", {F32, F16, BF16}, {F32, F16}, F::ChannelsOrNd3d},
      {"gradBias", {F32, F16, BF16}, {F32, F16}, F::Nd}},
     "ops-nn conv/convolution_backward/op_api/convolution_backward_checker.cpp @e5c3fa9327; ops-nn conv/convolution_backward/op_api/aclnn_convolution_backward.cpp @e5c3fa9327"},
    {"aclnnAvgPool2d",
     {
      {"self", {F32, F16, BF16}, {F32, F16}, F::Channels},
      {"out", {F32, F16, BF16}, {F32, F16}, F::Channels}},
     "ops-nn pooling/avg_pool3_d/op_api/aclnn_avgpool2d.cpp @e5c3fa9327; ops-nn matmul/common/op_host/op_api/cube_util.cpp @e5c3fa9327"},
    {"aclnnAvgPool2dBackward",
     {
      {"gradOutput", {F32, F16, BF16}, {F32, F16}, F::Channels},
      {"self", {F32, F16, BF16}, {F32, F16}, F::Channels},
      {"gradInput", {F32, F16, BF16}, {F32, F16}, F::Channels}},
     "ops-nn pooling/avg_pool3_d_grad/op_api/aclnn_avgpool2d_backward.cpp @e5c3fa9327; ops-nn pooling/avg_pool3_d_grad/op_api/avgpool2d_conv2d_backprop_input_util.cpp @e5c3fa9327"},
    {"aclnnMaxPool2dWithIndices",
     {
      {"self", {F32, F16, BF16}, kNotOnTraining, F::NchwOrNd},
      {"out", {F32, F16, BF16}, kNotOnTraining, F::NchwOrNd},
      {"indices", {I32, I64}, kNotOnTraining, F::NchwOrNd}},
     "ops-nn pooling/max_pool3d_with_argmax_v2/op_api/aclnn_max_pool2d_with_indices.cpp @e5c3fa9327; ops-nn pooling/max_pool3d_with_argmax_v2/docs/aclnnMaxPool2dWithIndices.md @e5c3fa9327"},
    {"aclnnMaxPool2dWithIndicesBackward",
     {
      {"gradOutput", {F32}, kNotOnTraining, F::NchwOrNd},
      {"self", {F32}, kNotOnTraining, F::NchwOrNd},
      {"indices", {I8, I32}, kNotOnTraining, F::NchwOrNd},
      {"gradInput", {F32}, kNotOnTraining, F::NchwOrNd}},
     "ops-nn pooling/max_pool3d_grad_with_argmax/op_api/aclnn_max_pool2d_with_indices_backward.cpp @e5c3fa9327; ops-nn pooling/max_pool3d_grad_with_argmax/docs/aclnnMaxPool2dWithIndicesBackward.md @e5c3fa9327"},
    {"aclnnBatchNorm",
     {
      {"input", {F32, F16, BF16}, {F32, F16}, F::NchwWhen4d},
      {"weight", {F32, F16, BF16}, {F32, F16}},
      {"bias", {F32, F16, BF16}, {F32, F16}},
      {"runningMean", {F32, F16, BF16}, {F32, F16}},
      {"runningVar", {F32, F16, BF16}, {F32, F16}},
      {"output", {F32, F16, BF16}, {F32, F16}, F::NchwWhen4d},
      {"saveMean", {F32, F16, BF16}, {F32, F16}},
      {"saveInvstd", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn norm/batch_norm_v3/op_host/op_api/aclnn_batch_norm.cpp @e5c3fa9327; ops-nn norm/batch_norm_v3/docs/aclnnBatchNorm.md @e5c3fa9327"},
    {"aclnnBatchNormBackward",
     {
      {"gradOut", {F32, F16, BF16}, {F32, F16}, F::NchwWhen4d},
      {"input", {F32, F16, BF16}, {F32, F16}, F::NchwWhen4d},
      {"weight", {F32, F16, BF16}, {F32, F16}},
      {"runningMean", {F32, F16, BF16}, {F32, F16}},
      {"runningVar", {F32, F16, BF16}, {F32, F16}},
      {"saveMean", {F32, F16, BF16}, {F32, F16}},
      {"saveInvstd", {F32, F16, BF16}, {F32, F16}},
      {"gradInput", {F32, F16, BF16}, {F32, F16}, F::NchwWhen4d},
      {"gradWeight", {F32, F16, BF16}, {F32, F16}},
      {"gradBias", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn norm/batch_norm_grad_v3/op_host/op_api/aclnn_batch_norm_backward.cpp @e5c3fa9327; ops-nn norm/batch_norm_grad_v3/docs/aclnnBatchNormBackward.md @e5c3fa9327"},
    {"aclnnMatmul",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"mat2", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn matmul/mat_mul_v3/op_host/op_api/aclnn_matmul.cpp @e5c3fa9327; ops-nn matmul/common/op_host/op_api/matmul_util.cpp @e5c3fa9327"},
    {"aclnnLayerNorm",
     {
      {"input", {F32, F16, BF16}, {F32, F16}},
      {"weightOptional", {F32, F16, BF16}, {F32, F16}},
      {"biasOptional", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}},
      {"meanOutOptional", {F32, F16, BF16}, {F32, F16}},
      {"rstdOutOptional", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn norm/layer_norm_v4/op_host/op_api/aclnn_layer_norm.cpp @e5c3fa9327; ops-nn norm/layer_norm_v4/docs/aclnnLayerNorm&aclnnLayerNormWithImplMode.md @e5c3fa9327"},
    {"aclnnSoftmax",
     {
      {"self", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-nn activation/softmax_v2/op_api/aclnn_softmax.cpp @e5c3fa9327; ops-nn activation/softmax_v2/docs/aclnnSoftmax.md @e5c3fa9327"},
    {"aclnnSoftmaxBackward",
     {
      {"gradOutput", {F32, F16, BF16}, {F32, F16}},
      {"output", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/softmax_grad/op_api/aclnn_softmax_backward.cpp @e5c3fa9327; ops-nn activation/softmax_grad/docs/aclnnSoftmaxBackward.md @e5c3fa9327"},
    {"aclnnLogSoftmax",
     {
      {"self", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-nn activation/log_softmax_v2/op_api/aclnn_log_softmax.cpp @e5c3fa9327; ops-nn activation/log_softmax_v2/docs/aclnnLogSoftmax.md @e5c3fa9327"},
    {"aclnnLogSoftmaxBackward",
     {
      {"gradOutput", {F32, F16, BF16}, {F32, F16}},
      {"output", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/log_softmax_grad/op_api/aclnn_logsoftmax_backward.cpp @e5c3fa9327; ops-nn activation/log_softmax_grad/docs/aclnnLogSoftmaxBackward.md @e5c3fa9327"},
    {"aclnnNLLLoss",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"target", {I32, I64, U8}},
      {"weight", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}},
      {"totalWeightOut", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn loss/nll_loss/op_api/aclnn_nll_loss.cpp @e5c3fa9327; ops-nn loss/nll_loss/docs/aclnnNLLLoss.md @e5c3fa9327"},
    {"aclnnNLLLossBackward",
     {
      {"gradOutput", {F32, F16, BF16}, {F32, F16}},
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"target", {I32, I64, U8}},
      {"weight", {F32, F16, BF16}, {F32, F16}},
      {"totalWeight", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn loss/nll_loss_grad/op_api/aclnn_nll_loss_backward.cpp @e5c3fa9327; ops-nn loss/nll_loss_grad/docs/aclnnNLLLossBackward.md @e5c3fa9327"},
    {"aclnnFlashAttentionScore",
     {
      {"query", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"key", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"value", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"realShiftOptional", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dropMaskOptional", {U8}, kNotOnTraining, F::Nd},
      {"paddingMaskOptional", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"attenMaskOptional", {BOOL, U8}, kNotOnTraining, F::Nd},
      {"softmaxMaxOut", {F32}, kNotOnTraining, F::Nd},
      {"softmaxSumOut", {F32}, kNotOnTraining, F::Nd},
      {"softmaxOutOut", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"attentionOutOut", {F32, F16, BF16}, kNotOnTraining, F::Nd}},
     "ops-transformer attention/flash_attention_score/docs/aclnnFlashAttentionScore.md @bbfe135e0f (Atlas A2 training series only)"},
    {"aclnnFlashAttentionScoreGrad",
     {
      {"query", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"keyIn", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"value", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dy", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"pseShiftOptional", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dropMaskOptional", {U8}, kNotOnTraining, F::Nd},
      {"paddingMaskOptional", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"attenMaskOptional", {BOOL, U8}, kNotOnTraining, F::Nd},
      {"softmaxMaxOptional", {F32}, kNotOnTraining, F::Nd},
      {"softmaxSumOptional", {F32}, kNotOnTraining, F::Nd},
      {"softmaxInOptional", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"attentionInOptional", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dqOut", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dkOut", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dvOut", {F32, F16, BF16}, kNotOnTraining, F::Nd},
      {"dpseOut", {F32, F16, BF16}, kNotOnTraining, F::Nd}},
     "ops-transformer attention/flash_attention_score_grad/docs/aclnnFlashAttentionScoreGrad.md @bbfe135e0f (Atlas A2 training series only)"},
    {"aclnnGeluV2",
     {
      {"x", {F32, F16, BF16}, {F32, F16}},
      {"y", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/gelu_v2/op_api/aclnn_gelu_v2.cpp @e5c3fa9327; ops-nn activation/gelu_v2/docs/aclnnGeluV2.md @e5c3fa9327"},
    {"aclnnGeluBackwardV2",
     {
      {"gradOutput", {F32, F16, BF16}, {F32, F16}},
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"gradInput", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/gelu_grad_v2/op_api/aclnn_gelu_backward_v2.cpp; ops-nn activation/gelu_grad_v2/docs/aclnnGeluBackwardV2.md"},
    {"aclnnGelu",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/gelu/op_api/aclnn_gelu.cpp @e5c3fa9327; ops-nn activation/gelu/docs/aclnnGelu.md @e5c3fa9327"},
    {"aclnnSilu",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/swish/op_api/aclnn_silu.cpp @e5c3fa9327; ops-nn common/inc/op_api/level2_base.h @e5c3fa9327"},
    {"aclnnSoftplus",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-nn activation/softplus_v2/op_api/aclnn_softplus.cpp @e5c3fa9327; ops-nn activation/softplus_v2/docs/aclnnSoftplus.md @e5c3fa9327"},
    {"aclnnLeakyRelu",
     {
      {"self", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"out", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-nn activation/leaky_relu/op_api/aclnn_leaky_relu.cpp @e5c3fa9327; ops-nn activation/leaky_relu/docs/aclnnLeakyRelu&aclnnInplaceLeakyRelu.md @e5c3fa9327"},
    {"aclnnElu",
     {
      {"self", {F32, F16, BF16, F64}},
      {"out", {F32, F16, BF16, F64}}},
     "ops-nn activation/elu/op_api/aclnn_elu.cpp @e5c3fa9327; ops-nn activation/elu/docs/aclnnElu&aclnnInplaceElu.md @e5c3fa9327"},
    {"aclnnRelu",
     {
      {"self", {F32, F16, BF16, I8, I32, I64, U8}, {F32, F16, I8, I32, I64, U8}},
      {"out", {F32, F16, BF16, I8, I32, I64, U8}, {F32, F16, I8, I32, I64, U8}}},
     "ops-nn activation/relu/op_api/aclnn_relu.cpp @e5c3fa9327; ops-nn activation/relu/docs/aclnnRelu&aclnnInplaceRelu.md @e5c3fa9327"},
    {"aclnnThresholdBackward",
     {
      {"gradOutput", {F32, F16, BF16, I8, I32, U8}, {F32, F16, I8, I32, U8}},
      {"self", {F32, F16, BF16, I8, I32, U8}, {F32, F16, I8, I32, U8}},
      {"gradInput", {F32, F16, BF16, I8, I32, U8}, {F32, F16, I8, I32, U8}},
      {"out", {F32, F16, BF16, I8, I32, U8}, {F32, F16, I8, I32, U8}}},
     "ops-nn activation/threshold_grad_v2_d/op_api/aclnn_threshold_backward.cpp @e5c3fa9327; ops-nn activation/threshold_grad_v2_d/docs/aclnnThresholdBackward.md @e5c3fa9327"},
    {"aclnnTanhBackward",
     {
      {"gradOutput", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"output", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"gradInput", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-math math/tanh_grad/op_api/aclnn_tanh_backward.cpp @c41933244c; ops-math math/tanh_grad/docs/aclnnTanhBackward.md @c41933244c"},
    {"aclnnSigmoidBackward",
     {
      {"gradOutput", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"output", {F32, F16, BF16, F64}, {F32, F16, F64}},
      {"gradInput", {F32, F16, BF16, F64}, {F32, F16, F64}}},
     "ops-nn activation/sigmoid_grad/op_api/aclnn_sigmoid_backward.cpp @e5c3fa9327; ops-nn activation/sigmoid_grad/docs/aclnnSigmoidBackward.md @e5c3fa9327"},
    {"aclnnReduceSum",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"dtype", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/reduce_sum/op_api/aclnn_reduce_sum.cpp @c41933244c; ops-math math/reduce_sum/docs/aclnnReduceSum.md @c41933244c"},
    {"aclnnMean",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8}, {F32, F16, F64, I8, I16, I32, I64, U8}},
      {"dtype", {F32, F16, BF16, F64, I8, I16, I32, I64, U8}, {F32, F16, F64, I8, I16, I32, I64, U8}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8}, {F32, F16, F64, I8, I16, I32, I64, U8}}},
     "ops-math math/reduce_mean/op_api/aclnn_mean.cpp @c41933244c; ops-math math/reduce_mean/op_api/reduce_mean.cpp @c41933244c"},
    {"aclnnAmax",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/reduce_max/op_api/aclnn_amax.cpp @c41933244c; ops-math math/reduce_max/docs/aclnnAmax.md @c41933244c"},
    {"aclnnAmin",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/reduce_min/op_api/aclnn_amin.cpp @c41933244c; ops-math math/reduce_min/docs/aclnnAmin.md @c41933244c"},
    {"aclnnArgMax",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8}, {F32, F16, F64, I8, I16, I32, I64, U8}},
      {"out", {I32, I64}}},
     "ops-math math/arg_max_v2/op_api/aclnn_argmax.cpp @c41933244c; ops-math math/arg_max_v2/docs/aclnnArgMax.md @c41933244c"},
    {"aclnnLogSumExp",
     {
      {"self", {F32, F16, BF16, I8, I16, I32, I64, U8, BOOL}, {F32, F16, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-math math/reduce_log_sum_exp/op_api/aclnn_logsumexp.cpp @c41933244c; ops-math math/reduce_log_sum_exp/docs/aclnnLogSumExp.md @c41933244c"},
    {"aclnnVar",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-math math/reduce_var/op_api/aclnn_var.cpp @c41933244c; ops-math math/reduce_var/docs/aclnnVar.md @c41933244c"},
    {"aclnnStd",
     {
      {"self", {F32, F16, BF16}, {F32, F16}},
      {"out", {F32, F16, BF16}, {F32, F16}}},
     "ops-math math/reduce_std_v2/op_api/aclnn_std.cpp @c41933244c; ops-math math/reduce_std_v2/docs/aclnnStd.md @c41933244c"},
    {"aclnnProd",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"dtype", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/reduce_prod/op_api/aclnn_prod.cpp @c41933244c; ops-math math/reduce_prod/docs/aclnnProd.md @c41933244c"},
    {"aclnnProdDim",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"dtype", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math math/reduce_prod/op_api/aclnn_prod.cpp @c41933244c; ops-math math/reduce_prod/docs/aclnnProdDim.md @c41933244c"},
    {"aclnnExpand",
     {
      {"self", {F32, F16, BF16, I8, I32, I64, U8, BOOL}, {F32, F16, I8, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, I8, I32, I64, U8, BOOL}, {F32, F16, I8, I32, I64, U8, BOOL}}},
     "ops-math math/expand/op_api/aclnn_expand.cpp @c41933244c; ops-math math/expand/docs/aclnnExpand.md @c41933244c"},
    {"aclnnPermute",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math conversion/transpose/op_api/aclnn_permute.cpp @c41933244c; ops-math conversion/transpose/docs/aclnnPermute.md @c41933244c"},
    {"aclnnCat",
     {
      {"tensors", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math conversion/concat_d/op_api/aclnn_cat.cpp @c41933244c; ops-math conversion/concat_d/docs/aclnnCat.md @c41933244c"},
    {"aclnnStack",
     {
      {"tensors", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math conversion/pack/op_api/aclnn_stack.cpp @c41933244c; ops-math conversion/pack/docs/aclnnStack.md @c41933244c"},
    {"aclnnFlip",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, kNotOnTraining},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, BOOL}, kNotOnTraining}},
     "ops-nn index/reverse_v2/op_api/aclnn_flip.cpp @e5c3fa9327; ops-nn index/reverse_v2/docs/aclnnFlip.md @e5c3fa9327"},
    {"aclnnRepeat",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U32, U64, BOOL}}},
     "ops-math math/tile/op_api/aclnn_repeat.cpp @c41933244c; ops-math math/tile/docs/aclnnRepeat.md @c41933244c"},
    {"aclnnConstantPadNd",
     {
      {"self", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"out", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math conversion/pad_v3/op_api/aclnn_constant_pad_nd.cpp @c41933244c; ops-math conversion/pad_v3/docs/aclnnConstantPadNd.md @c41933244c"},
    {"aclnnInplaceCopy",
     {
      {"selfRef", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}},
      {"src", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}}},
     "ops-math conversion/view_copy/op_api/aclnn_copy.cpp @c41933244c; ops-math conversion/view_copy/docs/aclnnInplaceCopy.md @c41933244c"},
    {"aclnnInplaceFillScalar",
     {
      {"selfRef", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, U32, U64, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, BOOL}}},
     "ops-math conversion/fill/op_api/aclnn_fill_scalar.cpp @c41933244c; ops-math conversion/fill/docs/aclnnInplaceFillScalar.md @c41933244c"},
    {"aclnnInplaceZero",
     {
      {"selfRef", {F32, F16, BF16, F64, I8, I16, I32, I64, U8, U16, BOOL}, {F32, F16, F64, I8, I16, I32, I64, U8, U16, BOOL}}},
     "ops-math math/zero_op/op_api/aclnn_zero.cpp @c41933244c; ops-math math/zero_op/docs/aclnnInplaceZero.md @c41933244c"},
  };
  return table;
}

}  // namespace fake_ascend
