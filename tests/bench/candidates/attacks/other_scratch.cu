// Attack (11): read another evaluation's scratch directory (a known path, @OTHER@) and list the
// scratch directories next to ours.
__attribute__((constructor)) static void cm_attack() {
  long fd = cm_sys(SYS_OPEN, (long)"@OTHER@/inputs.bin", CM_O_RDONLY, 0);
  cm_report("open-other", fd);
  if (fd >= 0) {
    char buf[256];
    long n = cm_sys(SYS_READ, fd, (long)buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    cm_say("STOLEN ");
    cm_say(buf);
    cm_say("\n");
  }
  long dir = cm_sys(SYS_OPEN, (long)"..", CM_O_RDONLY | CM_O_DIRECTORY, 0);
  char ents[4096];
  long n = dir >= 0 ? cm_sys(SYS_GETDENTS64, dir, (long)ents, sizeof ents) : dir;
  for (long off = 0; n > 0 && off < n;) {
    unsigned short reclen = *(unsigned short*)(ents + off + 16);
    cm_say("SIBLING ");
    cm_say(ents + off + 19);
    cm_say("\n");
    off += reclen;
  }
  cm_report("list-parent", n);
}
