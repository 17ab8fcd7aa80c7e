// Argument checks shared by the ops' validate functions. Each throws the SPEC 4 error with
// a message naming the op, the parameter, the value and what is allowed.
#pragma once
#include <cstdint>
#include <string>

#include "ptocpu/platform.h"
#include "ptocpu/tensor.h"

namespace pto::checks {

void check_dtype(const char* op, const char* param, DType dt, DTypeSet allowed);
void check_same_dtype(const char* op, const char* param, DType got, const char* other_param, DType expected);
void check_index_dtype(const char* op, const char* param, DType dt);  // int32 / int64
void check_rank(const char* op, const char* param, int rank, int min_rank, int max_rank);
// The platform's extent limit on every dim and the numel; its empty-input rule when is_input.
void check_extent(const char* op, const char* param, const Shape& shape, bool is_input);
// dim in [-rank, rank) (IndexError), normalised to [0, rank).
int normalize_dim(const char* op, int64_t dim, int rank);

}  // namespace pto::checks
