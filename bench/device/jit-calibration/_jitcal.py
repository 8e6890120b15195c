"""Loads one build of libjitcal (PTX only or SASS) and checks its result against the same
arithmetic in Python. Used by validate's JIT check as --jit-smoke jitcal_ptx:smoke / jitcal_sass:smoke."""
import ctypes
import os


def expected_checksum():
    """y = 1, then acc = fma(acc, 0.5, x * (k % 3)) 512 times for x = i % 7, summed over i < 8."""
    import struct

    def f32(value):
        return struct.unpack("f", struct.pack("f", value))[0]

    total = 0.0
    for i in range(8):
        x = float(i % 7)
        acc = 1.0
        for k in range(512):
            acc = f32(acc * 0.5 + f32(x * float(k % 3)))
        total = f32(total + acc)
    return total


def load(variant):
    lib = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libjitcal_%s.so" % variant))
    lib.jitcal_error.restype = ctypes.c_char_p

    def smoke():
        checksum = ctypes.c_float(0.0)
        code = lib.jitcal_run(ctypes.byref(checksum))
        if code != 0:
            raise RuntimeError("libjitcal_%s: CUDA error %d: %s" % (variant, code, lib.jitcal_error(code).decode()))
        want = expected_checksum()
        if abs(checksum.value - want) > 1e-3 * max(1.0, abs(want)):
            raise RuntimeError("libjitcal_%s: checksum %r, expected %r" % (variant, checksum.value, want))

    return smoke
