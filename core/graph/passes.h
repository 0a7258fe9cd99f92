// Optimisation passes over a traced graph. Each rewrites the graph in place and returns whether it changed
// anything; none changes a result's bits (a rewrite that would, such as x + 0 -> x, which turns -0 into +0, is
// applied only where it is exact). optimize() runs them to a fixed point, then groups elementwise chains into
// fused loops, and logs the node count before and after every pass that changed something.
#pragma once
#include "graph/ir.h"

namespace bprop::graph {

/// Drops nodes whose values reach no output, and constants no node reads.
bool eliminate_dead_code(Graph& g);
/// Merges nodes computing the same op with the same attributes on the same values, and small constants of the same
/// dtype, shape and bits.
bool eliminate_common_subexpressions(Graph& g);
/// Computes, once, the nodes whose inputs are all constants (when the result is not much larger than them).
bool fold_constants(Graph& g);
/// Algebraic identities the bprops produce: x * 1, 1 * x, x / 1, x - 0, x + (-0), neg(neg x), reshape,
/// broadcast_to, cast and transpose that change nothing, reshape of a reshape, transpose of a transpose.
bool simplify(Graph& g);
/// Moves elementwise nodes up past nodes they do not depend on, joining runs of one shape and dtype that another
/// node cut in two (graph/pass_cluster.cpp); fuse_elementwise runs it first.
bool cluster_elementwise(Graph& g);
/// Groups runs of consecutive elementwise nodes of one shape and dtype into fused loops.
void fuse_elementwise(Graph& g);

struct OptimizeOptions {
  bool passes = true;  // dead code, common subexpressions, folding, simplification
  bool fusion = true;
};

/// The passes to a fixed point, then fusion; records each change in g.passes.
void optimize(Graph& g, const OptimizeOptions& options = {});

/// Replaces every read of value v (node inputs and outputs) with remap[v], which must not be a later value.
void apply_remap(Graph& g, const std::vector<int>& remap);

}  // namespace bprop::graph
