// Written for glibc 2.35/2.36's <sys/rseq.h>: C++ code naming the
// structure without its tag, and a helper of its own named rseq in a
// namespace.
#include <sys/rseq.h>
#include <cstddef>

namespace helpers
{
  int rseq (::rseq *area) { return area != nullptr; }
}

static rseq *last_area;
static const std::size_t area_size = sizeof (rseq);

int
main ()
{
  rseq local = {};
  last_area = &local;
  return helpers::rseq (last_area) != 1 || area_size < 32;
}
