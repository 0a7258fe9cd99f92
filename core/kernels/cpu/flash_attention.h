// scaled_dot_product_attention on the CPU without the (L, S) score matrix: FlashAttention-2's tiling. The forward
// walks key/value tiles for each tile of query rows, keeping a running row maximum and sum (the online softmax);
// the backward recomputes each score tile from the rows' log-sum-exp. Memory beyond the operands and results is
// one tile of scores per thread, whatever L and S are.
//
// Broadcasting: every operand is addressed through per-batch offsets (stride 0 along broadcast axes), so a key
// shared by all heads or a mask shared by the batch is read in place. Gradients of broadcast operands accumulate
// into their own shape.
#pragma once
#include <cstdint>
#include <vector>

namespace bprop::cpu {

/// How one call addresses its operands: `batch` attention problems, each query (L, E), key (S, E), value (S, Ev),
/// result (L, Ev); element offsets of each problem's matrices; the mask (bool or additive) as rows of S with a
/// row stride (0 when one row serves every query row).
struct AttentionLayout {
  int64_t batch = 0, L = 0, S = 0, E = 0, Ev = 0;
  std::vector<int64_t> q_off, k_off, v_off, out_off;  // per problem, in elements
  std::vector<int64_t> mask_off;                      // per problem; empty when there is no mask
  int64_t mask_row_stride = 0, mask_col_stride = 1;    // the mask element (i, j) at mask_off + i*row + j*col
  bool mask_is_bool = false;
  bool causal = false;
  double scale = 1.0;
  /// True when no two problems share a query, key, value or mask block (their gradients can be computed in
  /// parallel without accumulating into the same memory).
  bool disjoint = true;
};

/// out = softmax(q k^T scale + mask) v per problem, and each row's log-sum-exp of its scaled, masked scores
/// (lse: batch * L values; -inf for a row with every position masked, whose output row is zero).
template <typename T>
void flash_attention_forward(const AttentionLayout& a, const T* q, const T* k, const T* v, const void* mask, T* out,
                             T* lse);

/// The rows' log-sum-exp alone (the forward without the value products).
template <typename T>
void flash_attention_lse(const AttentionLayout& a, const T* q, const T* k, const void* mask, T* lse);

/// Gradients from the forward's out and lse: dq, dk, dv accumulate (+=) into zeroed buffers of the operands' own
/// shapes at the layout's offsets (dq at q_off, ...); dmask (when not null) at mask_off, in the additive mask's
/// layout. dS = P (dP - rowsum(dout out)), dq = scale dS k, dk = scale dS^T q, dv = P^T dout, dmask = dS.
template <typename T>
void flash_attention_backward(const AttentionLayout& a, const T* q, const T* k, const T* v, const void* mask,
                              const T* out, const T* dout, const T* lse, T* dq, T* dk, T* dv, T* dmask);

}  // namespace bprop::cpu
