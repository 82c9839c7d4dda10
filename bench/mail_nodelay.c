/* Diagnostic LD_PRELOAD shim for bench/mail.sh: sets TCP_NODELAY on every TCP socket the
 * process connects, i.e. what a one-line fix in lettre (`set_nodelay(true)` after connect) or a
 * signupd-owned SMTP connection would do. Lets the benchmark show what signupd achieves without
 * the Nagle/delayed-ACK stall, without changing src/ or the dependency tree. Not for production.
 *
 *   cc -shared -fPIC -O2 -o mail_nodelay.so bench/mail_nodelay.c -ldl
 *   LD_PRELOAD=$PWD/mail_nodelay.so signupd serve ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static connect_fn real_connect;
    if (!real_connect) {
        real_connect = (connect_fn)dlsym(RTLD_NEXT, "connect");
    }
    if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)) {
        int type = 0;
        socklen_t type_len = sizeof type;
        if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) == 0 && type == SOCK_STREAM) {
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        }
    }
    return real_connect(fd, addr, len);
}
