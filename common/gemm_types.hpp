// The vocabulary of the GEMM interface, free of CUDA so that the CPU reference shares it.
#pragma once

namespace mnist {

// BLAS notation for how an operand is stored. Every matrix is row-major and densely packed.
//   op(A) is M x K: Op::N stores A as M x K, Op::T stores it as K x M.
//   op(B) is K x N: Op::N stores B as K x N, Op::T stores it as N x K.
enum class Op { N, T };

// The three products of an MLP step, for a layer with weights W (out x in, as PyTorch stores
// them), input activations X (batch x in) and output gradients dY (batch x out):
//   forward          Y  = X  . W^T   M = batch, N = out, K = in     (A: N, B: T)
//   backward data    dX = dY . W     M = batch, N = in,  K = out    (A: N, B: N)
//   backward weight  dW = dY^T . X   M = out,   N = in,  K = batch  (A: T, B: N)
struct OperandOps {
  Op a;
  Op b;
};
constexpr OperandOps kForward{Op::N, Op::T};
constexpr OperandOps kBackwardData{Op::N, Op::N};
constexpr OperandOps kBackwardWeight{Op::T, Op::N};

inline const char* op_name(Op op) {
  return op == Op::N ? "N" : "T";
}

}  // namespace mnist
