# A local stand-in for an NVIDIA NGC PyTorch image, for the init Docker e2e (no registry access):
# Debian bookworm with Debian's CPU torch, plus what NGC images have that gpuprep relies on: the
# NVIDIA_PYTORCH_VERSION marker, a pip that installs into the system Python, and a pip constraint
# file at /etc/pip/constraint.txt (NGC since 25.03). docker-e2e.sh tags it gpuprep-test/ngc-standin:TAG
# and builds the generated Dockerfile FROM it through run-container.sh's BASE_IMAGE override.
ARG ROOTFS=gpuprep-test/debian-torch:bookworm
FROM ${ROOTFS}
ARG NGC_TAG=25.12
ENV NVIDIA_PYTORCH_VERSION=${NGC_TAG}
RUN rm -f /usr/lib/python3.*/EXTERNALLY-MANAGED \
 && mkdir -p /etc/pip \
 && python3 -m pip list --format=freeze > /etc/pip/constraint.txt
CMD ["bash"]
