// oneDNN runs each call on the calling thread only (kernels/matmul.cpp, kernels/conv.cpp): its
// OpenMP runtime is told so for the call's lifetime. A library that split one call over threads
// could split a sum, and so make the bits depend on the thread count; ptocpu's own pool
// (pto::parallel_for) spreads calls over threads instead, in pieces set by the shapes.
#pragma once

#ifdef PTOCPU_DNNL_OPENMP
#include <omp.h>
#endif

namespace pto::kernels {

class OneThreadPerCall {
#ifdef PTOCPU_DNNL_OPENMP
 public:
  OneThreadPerCall() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~OneThreadPerCall() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  OneThreadPerCall(const OneThreadPerCall&) = delete;
  OneThreadPerCall& operator=(const OneThreadPerCall&) = delete;

 private:
  int saved_;
#endif
};

}  // namespace pto::kernels
