/* A program using Debian's libelf, whose own dependency libz.so.1 the
   linker must find (-rpath-link; drivers-cli.sh).  */
/* rseq-test: host-only: built by drivers-cli.sh with the host's libelf;
   the cross sysroots have no Debian libraries */
#include <libelf.h>
#include <stdio.h>
int
main (void)
{
  if (elf_version (EV_CURRENT) == EV_NONE)
    return 1;
  puts ("libelf ready");
  return 0;
}
