// Attack (10): signal the harness: the caller's PID as seen on the host (@PARENT_PID@), our parent, everyone.
__attribute__((constructor)) static void cm_attack() {
  cm_report("kill-host-parent", cm_sys(SYS_KILL, @PARENT_PID@, 9, 0));
  long ppid = cm_sys(SYS_GETPPID, 0, 0, 0);
  cm_report("ppid", ppid);
  if (ppid > 1) cm_report("kill-ppid", cm_sys(SYS_KILL, ppid, 9, 0));
  cm_report("kill-everyone", cm_sys(SYS_KILL, -1, 9, 0));
}
