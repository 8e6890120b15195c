/**
 * What the real H100 capture (test/fixtures/nvidia-smi/h100, made by bench/device/capture-raw.sh;
 * see test/fixtures/nvidia-smi/README.md) says about its one GPU, as the Facts schema holds it:
 * shared by the tests of the probe's parser and of gather/gpus.ts, which must read it alike.
 */
export const H100_CAPTURED_GPU = {
  index: 0,
  name: "NVIDIA H100 80GB HBM3",
  uuid: "GPU-b0fafdcb-5d0e-6dd2-2d49-cbbccbf3c1e8",
  computeCapability: "9.0",
  memoryTotalMiB: 81559,
  migMode: "Disabled",
  persistenceMode: "Enabled",
  pciBusId: "00000000:00:06.0",
  pcieLinkGenMax: 5,
  pcieLinkWidthMax: 16,
  pcieLinkGenCurrent: 5,
  pcieLinkWidthCurrent: 16,
};
