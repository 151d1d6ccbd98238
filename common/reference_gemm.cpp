#include "reference_gemm.hpp"

#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace mnist {

namespace {

// Rows [first, last) of C. Every element sums its K products in order p = 0, 1, ..., whatever
// the loop order and however the rows are shared out: the same bits on any number of threads.
void gemm_rows(size_t first, size_t last, size_t N, size_t K, const double* a, Op op_a,
               const double* b, Op op_b, size_t M, double* c) {
  for (size_t i = first; i < last; ++i) {
    double* c_row = c + i * N;
    if (op_a == Op::N && op_b == Op::T) {  // both operands contiguous along k: dot products
      for (size_t j = 0; j < N; ++j) {
        double sum = 0;
        for (size_t p = 0; p < K; ++p) sum += a[i * K + p] * b[j * K + p];
        c_row[j] = sum;
      }
      continue;
    }
    // Otherwise rank-1 updates along rows of B (contiguous when op_b == N).
    std::fill(c_row, c_row + N, 0.0);
    for (size_t p = 0; p < K; ++p) {
      const double a_ip = op_a == Op::N ? a[i * K + p] : a[p * M + i];
      if (op_b == Op::N) {
        const double* b_row = b + p * N;
        for (size_t j = 0; j < N; ++j) c_row[j] += a_ip * b_row[j];
      } else {
        for (size_t j = 0; j < N; ++j) c_row[j] += a_ip * b[j * K + p];
      }
    }
  }
}

// Products below this many multiply-adds a thread: starting a thread costs more than they do.
constexpr size_t kWorkPerThread = size_t(1) << 18;

}  // namespace

void reference_gemm(int m, int n, int k, const double* a, Op op_a, const double* b, Op op_b,
                    double* c) {
  const size_t M = m, N = n, K = k;
  static const size_t cores = std::max(1u, std::thread::hardware_concurrency());  // asked once
  const size_t threads = std::min({cores, M, std::max<size_t>(1, M * N * K / kWorkPerThread)});
  if (threads <= 1) return gemm_rows(0, M, N, K, a, op_a, b, op_b, M, c);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back(gemm_rows, M * t / threads, M * (t + 1) / threads, N, K, a, op_a, b, op_b,
                      M, c);
  }
  for (std::thread& thread : pool) thread.join();
}

}  // namespace mnist
