// Attack (6): connect to the database (PostgreSQL, 127.0.0.1:5432) and to the service's port (@PORT@).
struct cm_sockaddr_in { unsigned short family; unsigned short port; unsigned int addr; char zero[8]; };
static long cm_connect(unsigned short port) {
  long fd = cm_sys(SYS_SOCKET, 2 /* AF_INET */, 1 /* SOCK_STREAM */, 0);
  if (fd < 0) return fd;
  cm_sockaddr_in a = {2, (unsigned short)((port >> 8) | (port << 8)), 0x0100007f /* 127.0.0.1 */, {0}};
  long rc = cm_sys(SYS_CONNECT, fd, (long)&a, sizeof a);
  if (rc == 0) cm_sys(SYS_WRITE, fd, (long)"pwned\n", 6);
  cm_sys(SYS_CLOSE, fd, 0, 0);
  return rc;
}
__attribute__((constructor)) static void cm_attack() {
  cm_report("connect-postgres", cm_connect(5432));
  cm_report("connect-service", cm_connect(@PORT@));
}
