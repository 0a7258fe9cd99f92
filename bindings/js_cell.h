// A core Cell whose construct is a JavaScript function (a bp.nn.Cell written in JavaScript, or a loss function):
// what the core's containers and training cells (SequentialCell, WithLossCell, TrainOneStepCell, ...) run for a
// part that is not one of the core's own layers. The function takes and returns tensor handles, as grad's do.
#pragma once
#include <emscripten/val.h>

#include <utility>

#include "bprop/cell.h"
#include "convert.h"

namespace bprop::js {

class JsCell : public Cell {
 public:
  explicit JsCell(const emscripten::val& fn) : fn_(js_fn(fn)) {}
  Value construct(const std::vector<Tensor>& inputs) override { return fn_(inputs); }

 private:
  Fn fn_;
};

}  // namespace bprop::js
