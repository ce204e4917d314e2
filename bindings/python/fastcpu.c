/* rseq._fastcpu: current_cpu(), current_node() and current_mm_cid()
   as plain CPython functions.

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

/* Without mm_cid, the package's hook (the module attribute
   mm_cid_unavailable) raises the exception that says why.  */
static PyObject *
fastcpu_current_mm_cid (PyObject *module, PyObject *unused)
{
  int cid = rseq_area_mm_cid ();
  if (cid >= 0)
    return PyLong_FromLong (cid);
  PyObject *hook = PyObject_GetAttrString (module, "mm_cid_unavailable");
  if (hook == NULL)
    return NULL;
  PyObject *result = PyObject_CallNoArgs (hook);
  Py_DECREF (hook);
  if (result == NULL)
    return NULL;
  Py_DECREF (result);
  PyErr_SetString (PyExc_OSError, "mm_cid is not available");
  return NULL;
}

static PyMethodDef fastcpu_methods[] = {
  {"current_cpu", fastcpu_current_cpu, METH_NOARGS,
   "current_cpu()\n--\n\n"
   "The CPU the calling thread runs on (rseq cpu_id, else sched_getcpu)."},
  {"current_node", fastcpu_current_node, METH_NOARGS,
   "current_node()\n--\n\n"
   "The NUMA node of the calling thread (rseq node_id, else getcpu)."},
  {"current_mm_cid", fastcpu_current_mm_cid, METH_NOARGS,
   "current_mm_cid()\n--\n\n"
   "The memory-map concurrency ID of the calling thread (rseq mm_cid)."},
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
