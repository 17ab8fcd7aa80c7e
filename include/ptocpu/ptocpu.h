// The ptocpu C++ API: PyPTO's tensor/tile operators on CPUs (namespace pto).
#pragma once
#include "ptocpu/build.h"
#include "ptocpu/dtype.h"
#include "ptocpu/error.h"
#include "ptocpu/ops.h"
#include "ptocpu/parallel.h"
#include "ptocpu/platform.h"
#include "ptocpu/tensor.h"
#include "ptocpu/tiling.h"
