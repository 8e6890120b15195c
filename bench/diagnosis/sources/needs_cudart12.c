/* A Python extension module linked against libcudart.so.12. Importing it where no CUDA 12 runtime
   is installed fails in the dynamic loader: "libcudart.so.12: cannot open shared object file". The
   module name comes from -DMODULE_NAME so one source serves every package that needs it. */
#include <Python.h>

extern int cudaGetDeviceCount(int *count);

static PyObject *device_count(PyObject *self, PyObject *unused) {
  int count = 0;
  cudaGetDeviceCount(&count);
  return PyLong_FromLong(count);
}

static PyMethodDef methods[] = {{"device_count", device_count, METH_NOARGS, NULL}, {NULL, NULL, 0, NULL}};

#define CAT(a, b) a##b
#define INIT(name) CAT(PyInit_, name)
#define STR(x) #x
#define XSTR(x) STR(x)

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, XSTR(MODULE_NAME), NULL, -1, methods};

PyMODINIT_FUNC INIT(MODULE_NAME)(void) { return PyModule_Create(&module); }
