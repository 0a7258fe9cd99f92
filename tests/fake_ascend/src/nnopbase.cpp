// libnnopbase.so (fake): aclTensor, aclScalar, aclIntArray, aclBoolArray and aclTensorList. Creation validates only
// what the object itself needs; the operators check the rest (device memory, extents) at aclnnXxxGetWorkspaceSize.
#include <cstring>
#include <string>
#include <vector>

#include "core.h"

namespace fa = fake_ascend;

namespace {
constexpr uint32_t kTensorMagic = 0x54454e53, kScalarMagic = 0x5343414c, kIntArrayMagic = 0x494e5441,
                   kBoolArrayMagic = 0x424f4f4c, kTensorListMagic = 0x544c5354, kDeadMagic = 0xdeaddead;

size_t scalar_size(aclDataType dt) {
  switch (dt) {
    case ACL_FLOAT:
    case ACL_INT32:
    case ACL_UINT32: return 4;
    case ACL_DOUBLE:
    case ACL_INT64:
    case ACL_UINT64: return 8;
    case ACL_FLOAT16:
    case ACL_BF16:
    case ACL_INT16:
    case ACL_UINT16: return 2;
    case ACL_INT8:
    case ACL_UINT8:
    case ACL_BOOL: return 1;
    default: return 0;
  }
}
}  // namespace

extern "C" {

FA_EXPORT aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum, aclDataType dataType,
                                     const int64_t* stride, int64_t offset, aclFormat format,
                                     const int64_t* storageDims, uint64_t storageDimsNum, void* tensorData) {
  if (viewDimsNum > 0 && !viewDims) {
    fa::set_error("aclCreateTensor: viewDims is nullptr but viewDimsNum is " + std::to_string(viewDimsNum));
    return nullptr;
  }
  if (viewDimsNum > 0 && !stride) {
    fa::set_error(
        "aclCreateTensor: stride is nullptr (the fake needs the strides of every tensor: pass the "
        "contiguous ones for a contiguous tensor)");
    return nullptr;
  }
  if (storageDimsNum > 0 && !storageDims) {
    fa::set_error("aclCreateTensor: storageDims is nullptr but storageDimsNum is " + std::to_string(storageDimsNum));
    return nullptr;
  }
  if (viewDimsNum > 64 || storageDimsNum > 64) {
    fa::set_error("aclCreateTensor: more than 64 dimensions");
    return nullptr;
  }
  auto* t = new aclTensor;
  t->magic = kTensorMagic;
  t->view.assign(viewDims, viewDims + viewDimsNum);
  t->strides.assign(stride, stride + (stride ? viewDimsNum : 0));
  t->storage.assign(storageDims, storageDims + storageDimsNum);
  t->offset = offset;
  t->dtype = dataType;
  t->format = format;
  t->data = tensorData;
  fa::register_object(fa::Kind::Tensor, t);
  return t;
}

FA_EXPORT aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
  if (!tensor) return ACLNN_SUCCESS;
  fa::unregister_object(fa::Kind::Tensor, tensor, "aclDestroyTensor");
  const_cast<aclTensor*>(tensor)->magic = kDeadMagic;
  delete tensor;
  return ACLNN_SUCCESS;
}

FA_EXPORT aclScalar* aclCreateScalar(void* value, aclDataType dataType) {
  if (!value) {
    fa::set_error("aclCreateScalar: value is nullptr");
    return nullptr;
  }
  const size_t n = scalar_size(dataType);
  if (!n) {
    fa::set_error("aclCreateScalar: dataType " + std::to_string(static_cast<int>(dataType)) +
                  " is not a scalar type the fake knows");
    return nullptr;
  }
  auto* s = new aclScalar;
  s->magic = kScalarMagic;
  s->dtype = dataType;
  std::memset(s->bytes, 0, sizeof s->bytes);
  std::memcpy(s->bytes, value, n);
  fa::register_object(fa::Kind::Scalar, s);
  return s;
}

FA_EXPORT aclnnStatus aclDestroyScalar(const aclScalar* scalar) {
  if (!scalar) return ACLNN_SUCCESS;
  fa::unregister_object(fa::Kind::Scalar, scalar, "aclDestroyScalar");
  const_cast<aclScalar*>(scalar)->magic = kDeadMagic;
  delete scalar;
  return ACLNN_SUCCESS;
}

FA_EXPORT aclIntArray* aclCreateIntArray(const int64_t* value, uint64_t size) {
  if (size > 0 && !value) {
    fa::set_error("aclCreateIntArray: value is nullptr but size is " + std::to_string(size));
    return nullptr;
  }
  auto* a = new aclIntArray;
  a->magic = kIntArrayMagic;
  a->values.assign(value, value + size);
  fa::register_object(fa::Kind::IntArray, a);
  return a;
}

FA_EXPORT aclnnStatus aclDestroyIntArray(const aclIntArray* array) {
  if (!array) return ACLNN_SUCCESS;
  fa::unregister_object(fa::Kind::IntArray, array, "aclDestroyIntArray");
  const_cast<aclIntArray*>(array)->magic = kDeadMagic;
  delete array;
  return ACLNN_SUCCESS;
}

FA_EXPORT aclBoolArray* aclCreateBoolArray(const bool* value, uint64_t size) {
  if (size > 0 && !value) {
    fa::set_error("aclCreateBoolArray: value is nullptr but size is " + std::to_string(size));
    return nullptr;
  }
  auto* a = new aclBoolArray;
  a->magic = kBoolArrayMagic;
  a->values.resize(size);
  // Read as bytes: a bool holding anything but 0 or 1 is undefined behaviour to load as bool.
  const unsigned char* bytes = reinterpret_cast<const unsigned char*>(value);
  for (uint64_t i = 0; i < size; ++i) a->values[i] = bytes[i] != 0;
  fa::register_object(fa::Kind::BoolArray, a);
  return a;
}

FA_EXPORT aclnnStatus aclDestroyBoolArray(const aclBoolArray* array) {
  if (!array) return ACLNN_SUCCESS;
  fa::unregister_object(fa::Kind::BoolArray, array, "aclDestroyBoolArray");
  const_cast<aclBoolArray*>(array)->magic = kDeadMagic;
  delete array;
  return ACLNN_SUCCESS;
}

// As in CANN, the list owns its tensors: aclDestroyTensorList destroys them, and they must not be destroyed on their
// own (the fake makes that, and a tensor in two lists, a violation). nullptr elements are allowed here (CANN keeps
// them); an operator refuses them.
FA_EXPORT aclTensorList* aclCreateTensorList(const aclTensor* const* value, uint64_t size) {
  if (size > 0 && !value) {
    fa::set_error("aclCreateTensorList: value is nullptr but size is " + std::to_string(size));
    return nullptr;
  }
  std::vector<const void*> members;
  for (uint64_t i = 0; i < size; ++i) {
    if (value[i] && !fa::object_live(fa::Kind::Tensor, value[i])) {
      fa::set_error("aclCreateTensorList: value[" + std::to_string(i) + "] (" + fa::hex(value[i]) +
                    ") is not a live aclTensor (destroyed, or not made by aclCreateTensor)");
      return nullptr;
    }
    members.push_back(value[i]);
  }
  auto* l = new aclTensorList;
  l->magic = kTensorListMagic;
  l->tensors.assign(value, value + size);
  fa::adopt_objects(l, members, "aclCreateTensorList");
  fa::register_object(fa::Kind::TensorList, l);
  return l;
}

FA_EXPORT aclnnStatus aclDestroyTensorList(const aclTensorList* array) {
  if (!array) return ACLNN_SUCCESS;
  fa::unregister_object(fa::Kind::TensorList, array, "aclDestroyTensorList");
  for (const aclTensor* t : array->tensors) {
    if (!t) continue;
    fa::unregister_object(fa::Kind::Tensor, t, "aclDestroyTensorList", array);
    const_cast<aclTensor*>(t)->magic = kDeadMagic;
    delete t;
  }
  const_cast<aclTensorList*>(array)->magic = kDeadMagic;
  delete array;
  return ACLNN_SUCCESS;
}

}  // extern "C"
