/* SPDX-License-Identifier: Apache-2.0 */
/* A Unix socket file's mode and group (listen.h), with POSIX calls: APR
 * sets a file's mode but not its group. */
#include "listen.h"

#include <errno.h>
#include <grp.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
