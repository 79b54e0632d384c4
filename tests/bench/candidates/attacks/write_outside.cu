// Attack (7): write outside the scratch directory: a marker in the caller's directory, the repository,
// the compile cache, the scratch directory's parent, and system paths.
__attribute__((constructor)) static void cm_attack() {
  cm_report("write-marker", cm_create("@MARKER@", "pwned\n"));
  cm_report("write-repo", cm_create("@REPO@/cm-pwned.txt", "pwned\n"));
  cm_report("write-cache", cm_create("@CACHE@/cm-pwned.txt", "pwned\n"));
  cm_report("write-parent", cm_create("../cm-pwned.txt", "pwned\n"));
  cm_report("write-usr", cm_create("/usr/cm-pwned.txt", "pwned\n"));
  cm_report("write-root", cm_create("/cm-pwned.txt", "pwned\n"));
}
