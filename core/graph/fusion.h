// Elementwise fusion: a run of consecutive elementwise nodes of one shape and dtype becomes one loop over the
// data in tiles. Each node's step calls the op's own array function (OpDef::elementwise, the function its eager
// kernel runs) on a tile, reading tiles of the earlier steps from a small scratch area that stays in cache, so
// the values in between never reach memory and the results are the eager kernels' bits. Only values read after
// the group (or returned) are written out. An operand from outside may be broadcast: one element (a scalar), a
// row repeated along the leading dimensions (a bias of shape (n,) added to (batch, n)), or a column whose
// elements repeat along the trailing ones (a (batch, 1) sum of a softmax's backward); a repeated operand's tile is
// copied into the scratch area before the steps run on it. A float16 or bfloat16 loop computes in float32 tiles: each
// half operand's tile is widened as it is read, each step's result rounded to the half dtype (as its eager kernel
// rounds it) before the next step reads it, and the results stored in half.
#pragma once
#include <vector>

#include "graph/ir.h"

namespace bprop::graph {

struct FusedLoop {
  /// Where a step operand comes from: an outside value (whole, or one element repeated), or an earlier step's
  /// tile (in a scratch slot, or in the buffer of a result written out).
  struct Source {
    enum Kind : uint8_t { Outside, OutsideScalar, OutsideRow, OutsideWide, Slot, Result };
    Source() = default;
    Source(Kind k, int i) : kind(k), index(static_cast<uint32_t>(i)) {}
    uint32_t kind : 3;
    uint32_t index : 29;  // into `outside` (OutsideRow too), the scratch slots or `results`
  };
  // Small (40 bytes), as a long chain on scalars is tens of thousands of steps read at every call.
  struct Step {
    ElementFn fn;
    Source in[3];
    int32_t slot;    // scratch slot of its tile, or -1 when written out
    int32_t result;  // index into `results` when written out, else -1
    int32_t params;  // the op's attributes as numbers (ElementwiseDef::params): its first in `params`
    uint8_t arity;
    uint8_t num_params;
    bool read_in_loop;  // whether a later step of the loop reads it
  };
  DType dtype = DType::Float32;
  Shape shape;
  int64_t numel = 0;
  std::vector<int> outside;  // value ids read from outside the group
  /// Per outside value repeated by broadcasting (a row or a column, OutsideRow): its number of elements, how many
  /// consecutive elements of the loop each of them covers (1 for a row), and the scratch slot its tile is copied
  /// into. Else 0, 0 and -1.
  std::vector<int64_t> row_length;
  std::vector<int64_t> row_inner;
  std::vector<int> row_slot;
  /// Per outside value of a half loop read whole: the scratch slot its tile is widened into (else -1).
  std::vector<int> wide_slot;
  std::vector<int> last_reader;  // per outside value, the last step reading it
  std::vector<Step> steps;
  std::vector<double> params;  // the steps' attribute numbers, read once when the loop is built
  std::vector<int> results;  // value ids written out, with `result_steps` computing them
  std::vector<int> result_steps;
  /// Sums of all the elements of a value the loop computes (a float32 `sum` or `mean` node that reduces every
  /// axis, placed after the group's steps): each tile of `from` is added up leaf by leaf, in the order of
  /// ops/sum_order.h, and the one-element value `out` (the total divided by `divisor`: 1, or the count for a mean,
  /// as the kernels finish) is written after the last tile. A run's outputs are `results`, then these.
  struct Sum {
    Source from;
    int out;
    Shape shape;  // out's: () or, with keepdims, all ones
    double divisor;
  };
  std::vector<Sum> sums;
  int num_slots = 0;
};

/// Whether node n is a sum or mean that a fused loop computing its input (of shape `shape`, float32) can take in.
bool fusible_sum(const Graph& g, const GraphNode& n, const Shape& shape);

/// The loop for the nodes `group` of g (consecutive, elementwise, one shape and dtype, then the sums it takes in:
/// fusible_sum); `needed[v]` tells whether value v is read after the group or returned.
FusedLoop build_fused_loop(const Graph& g, const std::vector<int>& group, const std::vector<bool>& needed);

/// Whether a step after step `writer` reads outside operand k. Each tile's steps read their operands at the tile's
/// offset, so a result may be written over operand k's buffer (in place, or into a donated Parameter) only when
/// no later step reads k.
bool reads_outside_after(const FusedLoop& loop, size_t k, int writer);

/// Whether node n can join a fused loop over values of its shape and dtype.
bool fusible(const Graph& g, const GraphNode& n);

/// Runs the loop: reads its outside values from env[inputs[i]] and stores its results in env[outputs[i]].
class ArenaLease;  // graph/memory_plan.h
/// (results go to their planned buffers in `arena` when it has them)
void run_fused_loop(const FusedLoop& loop, std::vector<Tensor>& env, const std::vector<int>& inputs,
                    const std::vector<int>& outputs, ArenaLease* arena = nullptr);

}  // namespace bprop::graph
