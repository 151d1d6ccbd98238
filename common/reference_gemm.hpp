// C = op(A) . op(B) in float64 on the CPU: the yardstick for every GPU GEMM and the arithmetic of
// the reference trainer.
#pragma once

#include "gemm_types.hpp"

namespace mnist {

// Overwrites c (m x n). Loop order is chosen per layout so the inner loop walks contiguous memory;
// large products share their rows among the CPU's cores, with the same bits as on one.
void reference_gemm(int m, int n, int k, const double* a, Op op_a, const double* b, Op op_b,
                    double* c);

}  // namespace mnist
