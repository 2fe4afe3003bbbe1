/* Links against the installed library and checks that the header and the library agree on the version. */
#include <myriad/myriad.h>
#include <stdio.h>

int main(void) {
  int v = 0;
  if (myrGetVersion(&v) != myrSuccess || v != MYRIAD_VERSION_CODE) return 1;
  printf("myriad %d\n", v);
  return 0;
}
