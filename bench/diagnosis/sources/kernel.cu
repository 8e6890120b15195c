/* One trivial kernel: built with nvcc for exactly the -gencode targets a case names, so the fatbin
   holds SASS or PTX for those architectures only (the arch-coverage cases of bench/diagnosis). */
__global__ void gpuprep_bench_write_one(int *out) { *out = 1; }

extern "C" void gpuprep_bench_launch(int *out) { gpuprep_bench_write_one<<<1, 1>>>(out); }
