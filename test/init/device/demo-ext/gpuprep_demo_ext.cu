// add_one(x): one CUDA kernel, enough to prove the extension's SASS runs on the GPU.
#include <torch/extension.h>

__global__ void add_one_kernel(const float* in, float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] + 1.0f;
}

torch::Tensor add_one(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat, "a float CUDA tensor");
  auto input = x.contiguous();
  auto out = torch::empty_like(input);
  int64_t n = input.numel();
  add_one_kernel<<<(n + 255) / 256, 256>>>(input.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_one", &add_one); }
