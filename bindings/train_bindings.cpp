// The embind layer of the core's containers and training cells for bp.nn: SequentialCell, WithLossCell and
// TrainOneStepCell built from core cells (the core's layers, or JsCells calling back into JavaScript), so that
// web/nn.js runs the core's training step rather than a copy of it. (TrainOneStepWithLossScaleCell, which needs
// a loss scaler, is in amp_bindings.cpp.) Errors follow guard.h's convention.
#include <emscripten/bind.h>
#include <emscripten/val.h>

#include <memory>
#include <vector>

#include "bprop/bprop.h"
#include "bprop/nn/train.h"
#include "convert.h"
#include "guard.h"
#include "js_cell.h"

using emscripten::val;

namespace bprop::js {
namespace {

using CellPtr = std::shared_ptr<Cell>;

val make_js_cell(val fn) {
  return guarded([&] { return val(CellPtr(std::make_shared<JsCell>(fn))); });
}

val make_sequential_cell(val cells) {
  return guarded([&] {
    std::vector<CellPtr> list;
    const int n = cells["length"].as<int>();
    for (int i = 0; i < n; ++i) list.push_back(cells[i].as<CellPtr>());
    return val(CellPtr(std::make_shared<SequentialCell>(std::move(list))));
  });
}

val make_with_loss_cell(CellPtr backbone, CellPtr loss_fn) {
  return guarded([&] { return val(CellPtr(std::make_shared<nn::WithLossCell>(backbone, loss_fn))); });
}

val make_train_one_step_cell(CellPtr network, std::shared_ptr<optim::Optimizer> optimizer, bool has_aux) {
  return guarded([&] { return val(CellPtr(std::make_shared<nn::TrainOneStepCell>(network, optimizer, has_aux))); });
}

}  // namespace
}  // namespace bprop::js

EMSCRIPTEN_BINDINGS(bprop_train) {
  using namespace emscripten;
  namespace js = bprop::js;
  function("nnJsCell", &js::make_js_cell);
  function("nnMakeSequentialCell", &js::make_sequential_cell);
  function("nnMakeWithLossCell", &js::make_with_loss_cell);
  function("nnMakeTrainOneStepCell", &js::make_train_one_step_cell);
}
