// Attack (9): fill the disk: files of up to 64 MiB in the working directory, one after another (a new one
// whenever a write fails), @LIMIT_MIB@ MiB in all, then the private /tmp.
__attribute__((constructor)) static void cm_attack() {
  static char block[1 << 20];
  for (int i = 0; i < (1 << 20); ++i) block[i] = (char)i;
  char name[] = "fill-0000.bin";
  long written = 0, fd = -1, in_file = 0;
  for (int n = 0; written < (@LIMIT_MIB@L << 20) && n < 10000;) {
    if (fd < 0 || in_file >= (64L << 20)) {
      if (fd >= 0) cm_sys(SYS_CLOSE, fd, 0, 0);
      name[5] = (char)('0' + n / 1000 % 10); name[6] = (char)('0' + n / 100 % 10);
      name[7] = (char)('0' + n / 10 % 10); name[8] = (char)('0' + n % 10);
      ++n;
      fd = cm_sys(SYS_OPEN, (long)name, CM_O_WRONLY | CM_O_CREAT | CM_O_TRUNC, 0644);
      in_file = 0;
      if (fd < 0) { cm_report("open", fd); break; }
    }
    long w = cm_sys(SYS_WRITE, fd, (long)block, sizeof block);
    if (w <= 0) { cm_report("write", w); cm_sys(SYS_CLOSE, fd, 0, 0); fd = -1; continue; }
    written += w;
    in_file += w;
  }
  cm_report("written-mib", written >> 20);
  long t = cm_sys(SYS_OPEN, (long)"/tmp/fill.bin", CM_O_WRONLY | CM_O_CREAT | CM_O_TRUNC, 0644), tmp = 0;
  while (t >= 0 && tmp < (@LIMIT_MIB@L << 20)) { long w = cm_sys(SYS_WRITE, t, (long)block, sizeof block); if (w <= 0) break; tmp += w; }
  cm_report("tmp-written-mib", tmp >> 20);
}
