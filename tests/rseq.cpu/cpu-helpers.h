/* Helpers for the CPU and node tests.  */
#include "rseq-test.h"
#include <dirent.h>

/* NUMA node of CPU according to sysfs, or 0 on kernels without NUMA
   (no nodeN link), which is what getcpu reports there too.  */
static int
sysfs_node_of_cpu (int cpu)
{
  char path[64];
  snprintf (path, sizeof path, "/sys/devices/system/cpu/cpu%d", cpu);
  DIR *dir = opendir (path);
  if (dir == NULL)
    return 0;
  int node = 0;
  struct dirent *e;
  while ((e = readdir (dir)) != NULL)
    if (strncmp (e->d_name, "node", 4) == 0
	&& e->d_name[4] >= '0' && e->d_name[4] <= '9')
      node = atoi (e->d_name + 4);
  closedir (dir);
  return node;
}

static void
pin_to_cpu (int cpu)
{
  cpu_set_t set;
  CPU_ZERO (&set);
  CPU_SET (cpu, &set);
  if (sched_setaffinity (0, sizeof set, &set) != 0)
    FAIL ("sched_setaffinity to CPU %d: %s", cpu, strerror (errno));
}
