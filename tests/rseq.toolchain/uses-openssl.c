/* A program using Debian's OpenSSL with pkg-config's flags (a
   multiarch opensslconf.h): the SHA-256 of "abc" (drivers-cli.sh).  */
/* rseq-test: host-only: built by drivers-cli.sh with the host's
   OpenSSL; the cross sysroots have no Debian libraries */
#include <openssl/evp.h>
#include <stdio.h>
int
main (void)
{
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len;
  if (!EVP_Digest ("abc", 3, md, &len, EVP_sha256 (), NULL) || len != 32
      || md[0] != 0xba || md[31] != 0xad)
    return 1;
  puts ("sha256 ok");
  return 0;
}
