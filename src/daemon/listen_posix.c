/* SPDX-License-Identifier: Apache-2.0 */
/* What listen.h needs of POSIX: a socket file's group (APR sets a file's
 * mode but not its group) and a socket passed by systemd. */
#include "listen.h"

#include <apr_portable.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* sd_listen_fds(3): passed sockets start at this descriptor. */
#define LISTEN_FDS_START 3

apr_status_t svc_listen_inherited(apr_socket_t **sock, apr_pool_t *p)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    char *end;
    long n;
    int fd = LISTEN_FDS_START, listening = 0, type = 0;
    socklen_t len;
    apr_os_sock_t os;

    *sock = NULL;
    /* Meant for us only if LISTEN_PID is our pid: a variable inherited
     * from a parent that was activated is not ours. */
    if (!pid || !fds || strtol(pid, &end, 10) != (long)getpid() || *end)
        return APR_SUCCESS;
    n = strtol(fds, &end, 10);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    if (*end || n < 0)
        return APR_EINVAL;
    if (n == 0)
        return APR_SUCCESS;
    if (n > 1)
        return APR_EINVAL;    /* one ListenStream= */
    len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening)
        return APR_EINVAL;
    len = sizeof(type);
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
        return APR_EINVAL;
    fcntl(fd, F_SETFD, FD_CLOEXEC);    /* not for the plugins' children */
    os = fd;
    return apr_os_sock_put(sock, &os, p);
}

static apr_status_t group_id(gid_t *gid, const char *group)
{
    char *end;
    unsigned long n = strtoul(group, &end, 10);
    struct group gr, *found = NULL;
    char buf[4096];
    int err;

    if (*group && !*end) {
        *gid = (gid_t)n;
        return APR_SUCCESS;
    }
    err = getgrnam_r(group, &gr, buf, sizeof(buf), &found);
    if (err)
        return APR_FROM_OS_ERROR(err);
    if (!found)
        return APR_ENOENT;
    *gid = found->gr_gid;
    return APR_SUCCESS;
}

apr_status_t svc_sockfile_secure(const char *path, int mode, const char *group,
                                 apr_pool_t *p)
{
    gid_t gid;
    apr_status_t rv;

    (void)p;
    if (group) {
        if ((rv = group_id(&gid, group)) != APR_SUCCESS)
            return rv;
        if (chown(path, (uid_t)-1, gid) != 0)
            return APR_FROM_OS_ERROR(errno);
    }
    if (chmod(path, (mode_t)mode) != 0)
        return APR_FROM_OS_ERROR(errno);
    return APR_SUCCESS;
}
