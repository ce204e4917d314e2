/* rseq._fastcpu: current_cpu() and current_node() as plain CPython
   functions.

   The lookup itself is a load from the thread's rseq area (about a
   nanosecond).  Through cffi's API mode each call also releases and
   retakes the GIL and saves and restores errno, which made
   rseq.current_cpu() cost more than os.getpid(), a system call.  A
   METH_NOARGS function reading the area under the GIL costs about as
   much as any builtin call.

   The accessors come from the patched <sys/rseq.h> and need only
   glibc 2.35's __rseq_offset and __rseq_size, so this module imports
   under a stock glibc too; when the area is not registered they fall
   back to sched_getcpu and getcpu.  */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <sys/rseq.h>

static PyObject *
fastcpu_current_cpu (PyObject *module, PyObject *unused)
{
  int cpu = rseq_area_cpu ();
  if (cpu < 0)
    return PyErr_SetFromErrno (PyExc_OSError);
  return PyLong_FromLong (cpu);
}

static PyObject *
fastcpu_current_node (PyObject *module, PyObject *unused)
{
  int node = rseq_area_node ();
  if (node < 0)
    return PyErr_SetFromErrno (PyExc_OSError);
  return PyLong_FromLong (node);
}

static PyMethodDef fastcpu_methods[] = {
  {"current_cpu", fastcpu_current_cpu, METH_NOARGS,
   "current_cpu()\n--\n\n"
   "The CPU the calling thread runs on (rseq cpu_id, else sched_getcpu)."},
  {"current_node", fastcpu_current_node, METH_NOARGS,
   "current_node()\n--\n\n"
   "The NUMA node of the calling thread (rseq node_id, else getcpu)."},
  {NULL, NULL, 0, NULL}
};

static struct PyModuleDef fastcpu_module = {
  PyModuleDef_HEAD_INIT,
  .m_name = "rseq._fastcpu",
  .m_doc = "CPU and node lookups from the rseq area, without cffi's "
	   "GIL release.",
  .m_size = 0,
  .m_methods = fastcpu_methods,
};

PyMODINIT_FUNC
PyInit__fastcpu (void)
{
  return PyModule_Create (&fastcpu_module);
}
