#include "reference_gemm.hpp"

#include <algorithm>
#include <cstddef>

namespace mnist {

void reference_gemm(int m, int n, int k, const double* a, Op op_a, const double* b, Op op_b,
                    double* c) {
  const size_t M = m, N = n, K = k;
  std::fill(c, c + M * N, 0.0);
  if (op_a == Op::N && op_b == Op::T) {  // both operands contiguous along k: dot products
    for (size_t i = 0; i < M; ++i) {
      for (size_t j = 0; j < N; ++j) {
        double sum = 0;
        for (size_t p = 0; p < K; ++p) sum += a[i * K + p] * b[j * K + p];
        c[i * N + j] = sum;
      }
    }
    return;
  }
  // Otherwise accumulate rank-1 updates along rows of B (contiguous when op_b == N).
  for (size_t p = 0; p < K; ++p) {
    for (size_t i = 0; i < M; ++i) {
      const double a_ip = op_a == Op::N ? a[i * K + p] : a[p * M + i];
      double* c_row = c + i * N;
      if (op_b == Op::N) {
        const double* b_row = b + p * N;
        for (size_t j = 0; j < N; ++j) c_row[j] += a_ip * b_row[j];
      } else {
        for (size_t j = 0; j < N; ++j) c_row[j] += a_ip * b[j * K + p];
      }
    }
  }
}

}  // namespace mnist
