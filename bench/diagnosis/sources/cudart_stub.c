/* Stands in for libcudart.so.12 at link time only: the extension built against it records
   libcudart.so.12 as a needed library, and the stub is never installed, as on a machine whose
   torch and libraries are CUDA 13 while the extension was built for CUDA 12. */
int cudaGetDeviceCount(int *count) {
  *count = 0;
  return 0;
}
