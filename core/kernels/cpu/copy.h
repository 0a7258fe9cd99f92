// Strided block copies shared by the shape and index kernels (transpose, broadcast_to, slice, strided_slice,
// pad, concat, stack, tile, flip): adjacent dimensions are merged first, contiguous rows move with memcpy,
// broadcast rows with fill, and transposes go through cache-sized tiles.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "bprop/tensor.h"
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/parallel.h"

namespace bprop::cpu {

/// Copies a block of `shape` elements of `elem_size` bytes (1, 4 or 8): the element at multi-index i is read
/// at src + sum(i[d] * src_strides[d]) and written at dst + sum(i[d] * dst_strides[d]) (strides in elements).
/// Source strides may be 0 (broadcast) or negative (reversal); destination elements must be distinct.
void strided_copy(const void* src, const std::vector<int64_t>& src_strides, void* dst,
                  const std::vector<int64_t>& dst_strides, const Shape& shape, size_t elem_size);

/// strided_copy between tensors of one dtype; offsets and strides count elements.
void copy_block(const Tensor& src, int64_t src_offset, const std::vector<int64_t>& src_strides, Tensor& dst,
                int64_t dst_offset, const std::vector<int64_t>& dst_strides, const Shape& shape);

/// Sets every element of `t` to `value` converted to its dtype (bool: value != 0).
void fill_tensor(Tensor& t, double value);

}  // namespace bprop::cpu
