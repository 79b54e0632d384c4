// Attack (1): a constructor (runs when the driver loads, before main and before any check of the output)
// creates files outside the scratch directory through the hidden `syscall` of kit.h.
__attribute__((constructor)) static void cm_attack() {
  cm_report("create-marker", cm_create("@MARKER@", "pwned by a hidden syscall\n"));
  cm_report("create-host-tmp", cm_create("@HOST_TMP_MARKER@", "pwned\n"));
}
