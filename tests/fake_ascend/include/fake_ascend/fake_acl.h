// Declarations of the C ABI that the fake Ascend libraries export (test-only; see ../../README.md). Written for
// this project from CANN's public API documentation (acl/acl_base.h, acl/acl_rt.h, aclnn/acl_meta.h and the
// aclnnop/aclnn_*.h pages): same names, argument types and enum values, so code written against CANN calls these
// unchanged. Nothing here is needed to *use* the fakes (they are loaded with dlopen); the fakes' own sources and
// the tests include it.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int aclError;
typedef int aclnnStatus;
typedef void* aclrtStream;

typedef struct aclTensor aclTensor;
typedef struct aclScalar aclScalar;
typedef struct aclIntArray aclIntArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclTensorList aclTensorList;
typedef struct aclOpExecutor aclOpExecutor;

typedef enum {
  ACL_DT_UNDEFINED = -1,
  ACL_FLOAT = 0,
  ACL_FLOAT16 = 1,
  ACL_INT8 = 2,
  ACL_INT32 = 3,
  ACL_UINT8 = 4,
  ACL_INT16 = 6,
  ACL_UINT16 = 7,
  ACL_UINT32 = 8,
  ACL_INT64 = 9,
  ACL_UINT64 = 10,
  ACL_DOUBLE = 11,
  ACL_BOOL = 12,
  ACL_BF16 = 27,
  FAKE_ACL_DT_RANGE_ = 255  // not CANN's: makes every value up to 255 representable (UBSan -fsanitize=enum)
} aclDataType;

typedef enum {
  ACL_FORMAT_UNDEFINED = -1,
  ACL_FORMAT_NCHW = 0,
  ACL_FORMAT_NHWC = 1,
  ACL_FORMAT_ND = 2,
  ACL_FORMAT_NC1HWC0 = 3,
  ACL_FORMAT_FRACTAL_Z = 4,
  ACL_FORMAT_FRACTAL_NZ = 29,
  ACL_FORMAT_NCDHW = 30,
  ACL_FORMAT_NCL = 47,
  FAKE_ACL_FORMAT_RANGE_ = 255  // not CANN's (see aclDataType)
} aclFormat;

typedef enum {
  ACL_MEMCPY_HOST_TO_HOST = 0,
  ACL_MEMCPY_HOST_TO_DEVICE = 1,
  ACL_MEMCPY_DEVICE_TO_HOST = 2,
  ACL_MEMCPY_DEVICE_TO_DEVICE = 3,
  FAKE_ACL_MEMCPY_RANGE_ = 255  // not CANN's (see aclDataType)
} aclrtMemcpyKind;

typedef enum {
  ACL_MEM_MALLOC_HUGE_FIRST = 0,
  ACL_MEM_MALLOC_HUGE_ONLY = 1,
  ACL_MEM_MALLOC_NORMAL_ONLY = 2,
  FAKE_ACL_MEM_MALLOC_RANGE_ = 255  // not CANN's (see aclDataType)
} aclrtMemMallocPolicy;

typedef enum {
  ACL_DDR_MEM = 0,
  ACL_HBM_MEM = 1,
  ACL_DDR_MEM_HUGE = 2,
  ACL_DDR_MEM_NORMAL = 3,
  ACL_HBM_MEM_HUGE = 4,
  ACL_HBM_MEM_NORMAL = 5,
  ACL_DDR_MEM_P2P_HUGE = 6,
  ACL_DDR_MEM_P2P_NORMAL = 7,
  ACL_HBM_MEM_P2P_HUGE = 8,
  ACL_HBM_MEM_P2P_NORMAL = 9,
  FAKE_ACL_MEM_ATTR_RANGE_ = 255  // not CANN's (see aclDataType)
} aclrtMemAttr;

// Return codes (values as CANN documents them; see README.md for where each comes from).
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000
#define ACL_ERROR_UNINITIALIZE 100001
#define ACL_ERROR_REPEAT_INITIALIZE 100002
#define ACL_ERROR_INVALID_FILE 100003
#define ACL_ERROR_REPEAT_FINALIZE 100037
#define ACL_ERROR_RT_PARAM_INVALID 107000
#define ACL_ERROR_RT_INVALID_DEVICEID 107001
#define ACL_ERROR_RT_CONTEXT_NULL 107002
#define ACL_ERROR_RT_MEMORY_ALLOCATION 207001
#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002
#define ACLNN_ERR_RUNTIME_ERROR 361001
#define ACLNN_ERR_INNER 561000

// ---- libascendcl.so ----
aclError aclInit(const char* configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtGetDeviceCount(uint32_t* count);
aclError aclrtGetDevice(int32_t* deviceId);
aclError aclrtCreateStream(aclrtStream* stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtSynchronizeDevice(void);
aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void* devPtr);
aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind);
aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream);
aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count);
aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total);
aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion);
const char* aclrtGetSocName(void);
const char* aclGetRecentErrMsg(void);

// Fake-only (libascendcl.so): counters for tests. Not part of CANN.
uint64_t fake_ascend_kernel_launches(void);  // aclnn kernels run (at stream synchronisation)
uint64_t fake_ascend_live_bytes(void);       // bytes of live aclrtMalloc blocks (as requested)
uint64_t fake_ascend_syncs(void);            // aclrtSynchronizeStream / aclrtSynchronizeDevice calls
const char* fake_ascend_last_kernel(void);   // "aclnnAdd", ... of the last kernel run; "" when none
void fake_ascend_reset_counters(void);       // zeroes launches and syncs, clears the last kernel
// (libopapi.so) whether the fake's operator table (src/cann_table.cpp) has a row for the operator "aclnnXxx"
bool fake_ascend_documented(const char* op);

// ---- libnnopbase.so ----
aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t* stride,
                           int64_t offset, aclFormat format, const int64_t* storageDims, uint64_t storageDimsNum,
                           void* tensorData);
aclnnStatus aclDestroyTensor(const aclTensor* tensor);
aclScalar* aclCreateScalar(void* value, aclDataType dataType);
aclnnStatus aclDestroyScalar(const aclScalar* scalar);
aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size);
aclnnStatus aclDestroyIntArray(const aclIntArray* array);
aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size);
aclnnStatus aclDestroyBoolArray(const aclBoolArray* array);
aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size);
aclnnStatus aclDestroyTensorList(const aclTensorList* array);  // destroys its tensors too, as in CANN

// ---- libopapi.so: every operator is aclnnXxxGetWorkspaceSize(..., workspaceSize, executor) + aclnnXxx ----
#define FAKE_ACLNN_LAUNCH(name) \
  aclnnStatus name(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
#define FAKE_ACLNN_TAIL uint64_t *workspaceSize, aclOpExecutor **executor

aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                     aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnAdd)
aclnnStatus aclnnSubGetWorkspaceSize(const aclTensor* self, const aclTensor* other, const aclScalar* alpha,
                                     aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSub)
aclnnStatus aclnnMulGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnMul)
aclnnStatus aclnnDivGetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnDiv)
aclnnStatus aclnnAddsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                      aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnAdds)
aclnnStatus aclnnSubsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, const aclScalar* alpha,
                                      aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSubs)
aclnnStatus aclnnMulsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnMuls)
aclnnStatus aclnnDivsGetWorkspaceSize(const aclTensor* self, const aclScalar* other, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnDivs)
aclnnStatus aclnnNegGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnNeg)
aclnnStatus aclnnExpGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnExp)
aclnnStatus aclnnLogGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnLog)
aclnnStatus aclnnSqrtGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSqrt)
aclnnStatus aclnnTanhGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnTanh)
aclnnStatus aclnnSigmoidGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSigmoid)
aclnnStatus aclnnReluGetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnRelu)
aclnnStatus aclnnPowTensorTensorGetWorkspaceSize(const aclTensor* self, const aclTensor* exponent, aclTensor* out,
                                                 FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnPowTensorTensor)
aclnnStatus aclnnPowTensorScalarGetWorkspaceSize(const aclTensor* self, const aclScalar* exponent, aclTensor* out,
                                                 FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnPowTensorScalar)
aclnnStatus aclnnReduceSumGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim,
                                           aclDataType dtype, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnReduceSum)
aclnnStatus aclnnMeanGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, aclDataType dtype,
                                      aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnMean)
aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor* self, const aclDataType dtype, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnCast)
aclnnStatus aclnnInplaceCopyGetWorkspaceSize(aclTensor* selfRef, const aclTensor* src, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnInplaceCopy)
aclnnStatus aclnnInplaceFillScalarGetWorkspaceSize(aclTensor* selfRef, const aclScalar* value, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnInplaceFillScalar)
aclnnStatus aclnnInplaceZeroGetWorkspaceSize(aclTensor* selfRef, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnInplaceZero)
aclnnStatus aclnnMatmulGetWorkspaceSize(const aclTensor* self, const aclTensor* mat2, aclTensor* out,
                                        int8_t cubeMathType, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnMatmul)
aclnnStatus aclnnSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSoftmax)
aclnnStatus aclnnSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output, int64_t dim,
                                                 aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSoftmaxBackward)
aclnnStatus aclnnLogSoftmaxGetWorkspaceSize(const aclTensor* self, int64_t dim, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnLogSoftmax)
aclnnStatus aclnnLogSoftmaxBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output, int64_t dim,
                                                    aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnLogSoftmaxBackward)
aclnnStatus aclnnNLLLossGetWorkspaceSize(const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                                         int64_t reduction, int64_t ignoreIndex, aclTensor* out,
                                         aclTensor* totalWeightOut, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnNLLLoss)
aclnnStatus aclnnNLLLossBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                 const aclTensor* target, const aclTensor* weight, int64_t reduction,
                                                 int64_t ignoreIndex, const aclTensor* totalWeight, aclTensor* out,
                                                 FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnNLLLossBackward)
aclnnStatus aclnnConvolutionGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, const aclTensor* bias,
                                             const aclIntArray* stride, const aclIntArray* padding,
                                             const aclIntArray* dilation, bool transposed,
                                             const aclIntArray* outputPadding, const int64_t groups, aclTensor* output,
                                             int8_t cubeMathType, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnConvolution)
aclnnStatus aclnnConvolutionBackwardGetWorkspaceSize(
    const aclTensor* gradOutput, const aclTensor* input, const aclTensor* weight, const aclIntArray* biasSizes,
    const aclIntArray* stride, const aclIntArray* padding, const aclIntArray* dilation, bool transposed,
    const aclIntArray* outputPadding, int groups, const aclBoolArray* outputMask, int8_t cubeMathType,
    aclTensor* gradInput, aclTensor* gradWeight, aclTensor* gradBias, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnConvolutionBackward)
aclnnStatus aclnnMaxPool2dWithIndicesGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                                      const aclIntArray* stride, const aclIntArray* padding,
                                                      const aclIntArray* dilation, bool ceilMode, aclTensor* out,
                                                      aclTensor* indices, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnMaxPool2dWithIndices)
aclnnStatus aclnnMaxPool2dWithIndicesBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                              const aclTensor* indices, const aclIntArray* kernelSize,
                                                              const aclIntArray* stride, const aclIntArray* padding,
                                                              const aclIntArray* dilation, bool ceilMode,
                                                              aclTensor* gradInput, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnMaxPool2dWithIndicesBackward)
aclnnStatus aclnnBatchNormGetWorkspaceSize(const aclTensor* input, const aclTensor* weight, const aclTensor* bias,
                                           aclTensor* runningMean, aclTensor* runningVar, bool training,
                                           double momentum, double eps, aclTensor* output, aclTensor* saveMean,
                                           aclTensor* saveInvstd, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnBatchNorm)
aclnnStatus aclnnBatchNormBackwardGetWorkspaceSize(const aclTensor* gradOut, const aclTensor* input,
                                                   const aclTensor* weight, const aclTensor* runningMean,
                                                   const aclTensor* runningVar, const aclTensor* saveMean,
                                                   const aclTensor* saveInvstd, bool training, double eps,
                                                   const aclBoolArray* outputMask, aclTensor* gradInput,
                                                   aclTensor* gradWeight, aclTensor* gradBias, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnBatchNormBackward)
aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor* input, const aclIntArray* normalizedShape,
                                           const aclTensor* weightOptional, const aclTensor* biasOptional, double eps,
                                           aclTensor* out, aclTensor* meanOutOptional, aclTensor* rstdOutOptional,
                                           FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnLayerNorm)

// Elementwise functions (self, out).
#define FAKE_ACLNN_UNARY(Name)                                                                       \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor* self, aclTensor* out, FAKE_ACLNN_TAIL); \
  FAKE_ACLNN_LAUNCH(aclnn##Name)
FAKE_ACLNN_UNARY(Abs)
FAKE_ACLNN_UNARY(Sin)
FAKE_ACLNN_UNARY(Cos)
FAKE_ACLNN_UNARY(Rsqrt)
FAKE_ACLNN_UNARY(Reciprocal)
FAKE_ACLNN_UNARY(Sign)
FAKE_ACLNN_UNARY(Erf)
FAKE_ACLNN_UNARY(Log1p)
FAKE_ACLNN_UNARY(Expm1)
FAKE_ACLNN_UNARY(Floor)
FAKE_ACLNN_UNARY(Ceil)
FAKE_ACLNN_UNARY(Round)
FAKE_ACLNN_UNARY(Gelu)
FAKE_ACLNN_UNARY(Silu)
FAKE_ACLNN_UNARY(Tan)
#undef FAKE_ACLNN_UNARY
aclnnStatus aclnnLeakyReluGetWorkspaceSize(const aclTensor* self, const aclScalar* negativeSlope, aclTensor* out,
                                           FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnLeakyRelu)
// out = x > 0 ? scale x : alpha scale (exp(inputScale x) - 1)
aclnnStatus aclnnEluGetWorkspaceSize(const aclTensor* self, const aclScalar* alpha, const aclScalar* scale,
                                     const aclScalar* inputScale, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnElu)
// max(min(self, clipValueMax), clipValueMin); either bound may be nullptr
aclnnStatus aclnnClampGetWorkspaceSize(const aclTensor* self, const aclScalar* clipValueMin,
                                       const aclScalar* clipValueMax, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnClamp)
aclnnStatus aclnnLogSumExpGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out,
                                           FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnLogSumExp)
// sum((x - mean)^2) / max(0, N - correction) (Var: correction 1 when unbiased, else 0), Std its square root
aclnnStatus aclnnVarGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool unbiased, bool keepdim,
                                     aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnVar)
aclnnStatus aclnnStdGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, const int64_t correction,
                                     bool keepdim, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnStd)
aclnnStatus aclnnProdGetWorkspaceSize(const aclTensor* self, const aclDataType dtype, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnProd)
aclnnStatus aclnnProdDimGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepDim, const aclDataType dtype,
                                         aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnProdDim)
// aclnnGelu computes the tanh form CANN documents; approximate 0 ("none") here is the exact erf form, 1 the tanh form.
aclnnStatus aclnnGeluV2GetWorkspaceSize(const aclTensor* x, int64_t approximate, aclTensor* y, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnGeluV2)
// approximate: "none" (the erf form) or "tanh".
aclnnStatus aclnnGeluBackwardV2GetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self, char* approximate,
                                                aclTensor* gradInput, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnGeluBackwardV2)
// ops-transformer's FlashAttention pair (libopapi_transformer.so).
aclnnStatus aclnnFlashAttentionScoreGetWorkspaceSize(
    const aclTensor* query, const aclTensor* key, const aclTensor* value, const aclTensor* realShiftOptional,
    const aclTensor* dropMaskOptional, const aclTensor* paddingMaskOptional, const aclTensor* attenMaskOptional,
    const aclIntArray* prefixOptional, double scaleValueOptional, double keepProbOptional, int64_t preTokensOptional,
    int64_t nextTokensOptional, int64_t headNum, char* inputLayout, int64_t innerPreciseOptional,
    int64_t sparseModeOptional, const aclTensor* softmaxMaxOut, const aclTensor* softmaxSumOut,
    const aclTensor* softmaxOutOut, const aclTensor* attentionOutOut, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnFlashAttentionScore)
aclnnStatus aclnnFlashAttentionScoreGradGetWorkspaceSize(
    const aclTensor* query, const aclTensor* keyIn, const aclTensor* value, const aclTensor* dy,
    const aclTensor* pseShiftOptional, const aclTensor* dropMaskOptional, const aclTensor* paddingMaskOptional,
    const aclTensor* attenMaskOptional, const aclTensor* softmaxMaxOptional, const aclTensor* softmaxSumOptional,
    const aclTensor* softmaxInOptional, const aclTensor* attentionInOptional, const aclIntArray* prefixOptional,
    double scaleValue, double keepProb, int64_t preTokens, int64_t nextTokens, int64_t headNum, char* inputLayout,
    int64_t innerPrecise, int64_t sparseMode, const aclTensor* dqOut, const aclTensor* dkOut, const aclTensor* dvOut,
    const aclTensor* dpseOut, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnFlashAttentionScoreGrad)
aclnnStatus aclnnSoftplusGetWorkspaceSize(const aclTensor* self, const aclScalar* beta, const aclScalar* threshold,
                                          aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSoftplus)

// Two tensors, broadcast (self, other, out).
#define FAKE_ACLNN_BINARY(Name)                                                                            \
  aclnnStatus aclnn##Name##GetWorkspaceSize(const aclTensor* self, const aclTensor* other, aclTensor* out, \
                                            FAKE_ACLNN_TAIL);                                              \
  FAKE_ACLNN_LAUNCH(aclnn##Name)
FAKE_ACLNN_BINARY(Maximum)
FAKE_ACLNN_BINARY(Minimum)
FAKE_ACLNN_BINARY(EqTensor)
FAKE_ACLNN_BINARY(NeTensor)
FAKE_ACLNN_BINARY(GtTensor)
FAKE_ACLNN_BINARY(GeTensor)
FAKE_ACLNN_BINARY(LtTensor)
FAKE_ACLNN_BINARY(LeTensor)
#undef FAKE_ACLNN_BINARY
aclnnStatus aclnnSWhereGetWorkspaceSize(const aclTensor* condition, const aclTensor* self, const aclTensor* other,
                                        aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSWhere)

// Activation gradients.
aclnnStatus aclnnThresholdBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                   const aclScalar* threshold, aclTensor* gradInput, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnThresholdBackward)
aclnnStatus aclnnTanhBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                              aclTensor* gradInput, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnTanhBackward)
aclnnStatus aclnnSigmoidBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* output,
                                                 aclTensor* gradInput, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnSigmoidBackward)

// Shape and data movement.
aclnnStatus aclnnExpandGetWorkspaceSize(const aclTensor* self, const aclIntArray* size, aclTensor* out,
                                        FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnExpand)
aclnnStatus aclnnPermuteGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, aclTensor* out,
                                         FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnPermute)
aclnnStatus aclnnCatGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnCat)
aclnnStatus aclnnFlipGetWorkspaceSize(const aclTensor* self, const aclIntArray* dims, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnFlip)
aclnnStatus aclnnStackGetWorkspaceSize(const aclTensorList* tensors, int64_t dim, aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnStack)
aclnnStatus aclnnRepeatGetWorkspaceSize(const aclTensor* self, const aclIntArray* repeats, aclTensor* out,
                                        FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnRepeat)
// pad: (begin, end) pairs from the last dimension backwards
aclnnStatus aclnnConstantPadNdGetWorkspaceSize(const aclTensor* self, const aclIntArray* pad, const aclScalar* value,
                                               aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnConstantPadNd)

// Reductions.
aclnnStatus aclnnAmaxGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out,
                                      FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnAmax)
aclnnStatus aclnnAminGetWorkspaceSize(const aclTensor* self, const aclIntArray* dim, bool keepDim, aclTensor* out,
                                      FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnAmin)
aclnnStatus aclnnArgMaxGetWorkspaceSize(const aclTensor* self, int64_t dim, bool keepdim, aclTensor* out,
                                        FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnArgMax)

// Average pooling (CANN 8.0 signatures; 23.0's AvgPool2d had a uint64_t divisorOverride and its backward a
// uint64_t& workspaceSize).
aclnnStatus aclnnAvgPool2dGetWorkspaceSize(const aclTensor* self, const aclIntArray* kernelSize,
                                           const aclIntArray* strides, const aclIntArray* paddings, bool ceilMode,
                                           bool countIncludePad, int64_t divisorOverride, int8_t cubeMathType,
                                           aclTensor* out, FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnAvgPool2d)
aclnnStatus aclnnAvgPool2dBackwardGetWorkspaceSize(const aclTensor* gradOutput, const aclTensor* self,
                                                   const aclIntArray* kernelSize, const aclIntArray* stride,
                                                   const aclIntArray* padding, bool ceilMode, bool countIncludePad,
                                                   int64_t divisorOverride, int8_t cubeMathType, aclTensor* gradInput,
                                                   FAKE_ACLNN_TAIL);
FAKE_ACLNN_LAUNCH(aclnnAvgPool2dBackward)

#undef FAKE_ACLNN_LAUNCH
#undef FAKE_ACLNN_TAIL

#ifdef __cplusplus
}
#endif
