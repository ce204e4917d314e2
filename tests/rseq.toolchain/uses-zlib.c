/* A program using Debian's zlib (zlib.h, -lz) through rseq-gcc: a
   compress and uncompress round trip (drivers-cli.sh).  */
/* rseq-test: host-only: built by drivers-cli.sh with the host's zlib;
   the cross sysroots have no Debian libraries */
#include <zlib.h>
#include <stdio.h>
#include <string.h>
int
main (void)
{
  const char *text = "per-CPU per-CPU per-CPU per-CPU";
  unsigned char packed[128], back[128];
  uLongf plen = sizeof packed, blen = sizeof back;
  if (compress (packed, &plen, (const Bytef *) text, strlen (text) + 1) != Z_OK
      || uncompress (back, &blen, packed, plen) != Z_OK
      || strcmp ((const char *) back, text) != 0)
    return 1;
  puts ("zlib round trip");
  return 0;
}
