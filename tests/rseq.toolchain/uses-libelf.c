/* A program using Debian's libelf, whose own dependency libz.so.1 the
   linker must find (-rpath-link; drivers-cli.sh).  */
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
