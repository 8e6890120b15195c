# A minimal CUDA extension standing in for xformers/flash-attn: built by uv from this sdist against
# the venv's torch, for the TORCH_CUDA_ARCH_LIST that gpuprep init writes into pyproject.toml.
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="gpuprep-demo-ext",
    version="0.1.0",
    ext_modules=[CUDAExtension("gpuprep_demo_ext", ["gpuprep_demo_ext.cu"])],
    cmdclass={"build_ext": BuildExtension},
)
