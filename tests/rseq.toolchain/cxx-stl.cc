// A C++ program that needs libstdc++ (threads, strings, streams) and
// uses the per-CPU operations: rseq-g++ must link it.
#include <sys/rseq-percpu.h>
#include <atomic>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

int
main ()
{
  std::atomic<long> committed (0);
  std::atomic<bool> unavailable (false);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++)
    threads.emplace_back ([&committed, &unavailable] {
      intptr_t mine = 0;
      for (int i = 0; i < 1000; i++)
	for (;;)
	  {
	    int cpu = rseq_percpu_current_cpu (RSEQ_PERCPU_INDEX_CPU_ID);
	    if (cpu < 0)
	      {
		unavailable = true;
		return;
	      }
	    if (rseq_percpu_addv (RSEQ_PERCPU_INDEX_CPU_ID, &mine, 1, cpu) == 0)
	      break;
	  }
      committed += mine;
    });
  for (auto &thread : threads)
    thread.join ();
  if (unavailable)
    {
      std::cout << "per-CPU operations unavailable (rseq not registered)"
		<< std::endl;
      return 77;
    }
  std::string verdict = committed == 4000 ? "ok" : "wrong";
  std::cout << "committed=" << committed << " " << verdict << std::endl;
  return committed == 4000 ? 0 : 1;
}
