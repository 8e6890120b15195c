// A tiny CUDA library for calibrating validate's JIT check (issue 27): built twice by build.sh,
// once with PTX only (-gencode arch=compute_XY,code=compute_XY: the driver must JIT-compile it)
// and once with SASS only (code=sm_XY: native). jitcal_run() fills a buffer, runs two kernels and
// returns the CUDA error code (0 on success) with a checksum the Python wrapper checks.
#include <cuda_runtime.h>

__global__ void fill(int n, float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    x[i] = (float)(i % 7);
    y[i] = 1.0f;
  }
}

// Enough unrolled arithmetic that compiling its PTX takes measurable time.
__global__ void polynomial(int n, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  float acc = y[i];
#pragma unroll
  for (int k = 0; k < 512; ++k) acc = fmaf(acc, 0.5f, v * (float)(k % 3));
  y[i] = acc;
}

extern "C" int jitcal_run(float* checksum) {
  const int n = 1 << 16;
  float *x = nullptr, *y = nullptr;
  cudaError_t err = cudaMalloc(&x, n * sizeof(float));
  if (err == cudaSuccess) err = cudaMalloc(&y, n * sizeof(float));
  if (err == cudaSuccess) {
    fill<<<(n + 255) / 256, 256>>>(n, x, y);
    err = cudaGetLastError();
  }
  if (err == cudaSuccess) {
    polynomial<<<(n + 255) / 256, 256>>>(n, x, y);
    err = cudaGetLastError();
  }
  float first[8] = {0};
  if (err == cudaSuccess) err = cudaMemcpy(first, y, sizeof(first), cudaMemcpyDeviceToHost);
  float sum = 0;
  for (int i = 0; i < 8; ++i) sum += first[i];
  *checksum = sum;
  cudaFree(x);
  cudaFree(y);
  return (int)err;
}

extern "C" const char* jitcal_error(int code) { return cudaGetErrorString((cudaError_t)code); }
