// bprop: automatic differentiation with MindSpore-style backward operators. The umbrella header.
#pragma once
#include "bprop/attrs.h"
#include "bprop/cell.h"
#include "bprop/dtype.h"
#include "bprop/errors.h"
#include "bprop/grad.h"
#include "bprop/ops.h"
#include "bprop/random.h"
#include "bprop/registry.h"
#include "bprop/shape.h"
#include "bprop/tensor.h"
#include "bprop/value.h"
