/* bad.c: fixture for test_layers_detects: ir/ including an upper module must be reported. */
#include "ir/ir.h"
#include "ops/shape.h"
