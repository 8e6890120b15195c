/* A plain shared library (not a Python module) that needs libcudart.so.12, loaded with ctypes the
   way bitsandbytes loads libbitsandbytes_cuda<ver>.so. */
extern int cudaGetDeviceCount(int *count);

int gpuprep_bench_device_count(void) {
  int count = 0;
  cudaGetDeviceCount(&count);
  return count;
}
