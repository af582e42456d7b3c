/* SPDX-License-Identifier: Apache-2.0 */
/* The service's addresses and its listening socket (listen.h). */
#include "listen.h"
#include "parkpool/parkpool.h"

#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_general.h>
#include <apr_strings.h>
#include <apr_time.h>

#include <stdarg.h>
#include <string.h>

apr_status_t svc_address_parse(apr_sockaddr_t **sa, const char **unix_path,
                               const char *address, apr_pool_t *p)
{
    char *host, *scope;
    apr_port_t port;
    apr_status_t rv;

    *unix_path = NULL;
    if (!strncmp(address, "unix:", 5))
        address += 5;
    else if (!strncmp(address, "tcp:", 4)) {
        rv = apr_parse_addr_port(&host, &scope, &port, address + 4, p);
        if (rv != APR_SUCCESS || !port || scope)
            return APR_EINVAL;
        return apr_sockaddr_info_get(sa, host ? host : "127.0.0.1", host ? APR_UNSPEC : APR_INET,
                                     port, 0, p);
    }
    else if (!strchr(address, '/'))
        return APR_EINVAL;    /* "localhost:80"? "pp.sock"? Ambiguous: say which. */
    if (!*address)
        return APR_EINVAL;
    *unix_path = address;
    return apr_sockaddr_info_get(sa, address, APR_UNIX, 0, 0, p);
}

static int is_loopback(apr_sockaddr_t *sa)
{
    char ip[64];

    if (apr_sockaddr_ip_getbuf(ip, sizeof(ip), sa) != APR_SUCCESS)
        return 0;
    return !strncmp(ip, "127.", 4) || !strcmp(ip, "::1") || !strncmp(ip, "::ffff:127.", 11);
}

static apr_status_t fail(char *why, apr_size_t whylen, apr_status_t rv, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* why = the sentence, and for an OS error what the OS said. */
static apr_status_t fail(char *why, apr_size_t whylen, apr_status_t rv, const char *fmt, ...)
{
    char msg[256], text[512];
    va_list ap;

    va_start(ap, fmt);
    apr_vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    if (rv == APR_EEXIST || rv == APR_EBUSY || rv == APR_EACCES || rv == APR_EINVAL)
        apr_cpystrn(why, text, whylen);
    else
        apr_snprintf(why, whylen, "%s: %s", text, pp_strerror(rv, msg, sizeof(msg)));
    return rv;
}

/* What is at path now: nothing, a socket nobody listens on (replaced), or
 * something to keep. */
static apr_status_t check_path(const char *path, char *why, apr_size_t whylen, apr_pool_t *p)
{
    apr_finfo_t fi;
    apr_sockaddr_t *sa;
    apr_socket_t *probe;
    apr_status_t rv = apr_stat(&fi, path, APR_FINFO_TYPE | APR_FINFO_LINK, p);

    if (APR_STATUS_IS_ENOENT(rv))
        return APR_SUCCESS;
    if (rv != APR_SUCCESS)
        return fail(why, whylen, rv, "cannot look at %s", path);
    if (fi.filetype != APR_SOCK)
        return fail(why, whylen, APR_EEXIST,
                    "%s exists and is not a socket: not replacing it", path);
    rv = apr_sockaddr_info_get(&sa, path, APR_UNIX, 0, 0, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_create(&probe, APR_UNIX, SOCK_STREAM, 0, p);
    if (rv != APR_SUCCESS)
        return fail(why, whylen, rv, "cannot probe %s", path);
    apr_socket_timeout_set(probe, apr_time_from_sec(2));
    rv = apr_socket_connect(probe, sa);
    apr_socket_close(probe);
    if (rv == APR_SUCCESS)
        return fail(why, whylen, APR_EBUSY,
                    "a daemon is already listening on %s: stop it first", path);
    return APR_SUCCESS;    /* refused: stale */
}

static apr_status_t open_unix(apr_socket_t **out, const char *path, const svc_listen_opts_t *o,
                              int backlog, char *why, apr_size_t whylen, apr_pool_t *p)
{
    const char *slash = strrchr(path, '/');
    const char *dir = slash ? apr_pstrndup(p, path, (apr_size_t)(slash - path)) : ".";
    const char *tmpdir, *tmp;
    apr_sockaddr_t *sa;
    apr_socket_t *s = NULL;
    unsigned char rnd[6];
    int mode = o->mode >= 0 ? o->mode : o->group ? 0660 : 0600;
    apr_status_t rv;

    if ((rv = check_path(path, why, whylen, p)) != APR_SUCCESS)
        return rv;
    /* Private until renamed: nobody can connect to the socket in a 0700
     * folder, so the mode and group are in place before it is reachable. */
    if ((rv = apr_generate_random_bytes(rnd, sizeof(rnd))) != APR_SUCCESS)
        return fail(why, whylen, rv, "no random bytes for a folder beside %s", path);
    tmpdir = apr_psprintf(p, "%s/.parkpoold-%02x%02x%02x%02x%02x%02x", *dir ? dir : "",
                          rnd[0], rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
    rv = apr_dir_make(tmpdir, APR_FPROT_UREAD | APR_FPROT_UWRITE | APR_FPROT_UEXECUTE, p);
    if (rv != APR_SUCCESS)
        return fail(why, whylen, rv, "cannot make a folder in %s", *dir ? dir : "/");
    tmp = apr_pstrcat(p, tmpdir, "/s", NULL);
    rv = apr_sockaddr_info_get(&sa, tmp, APR_UNIX, 0, 0, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_create(&s, APR_UNIX, SOCK_STREAM, 0, p);
    if (rv == APR_SUCCESS)
        rv = apr_socket_bind(s, sa);
    if (rv != APR_SUCCESS) {
        fail(why, whylen, rv, "cannot bind a socket beside %s", path);
        goto out;
    }
    rv = svc_sockfile_secure(tmp, mode, o->group, p);
    if (rv != APR_SUCCESS) {
        if (o->group)
            fail(why, whylen, rv, "cannot give the socket %s the group %s", path, o->group);
        else
            fail(why, whylen, rv, "cannot set the mode of the socket %s", path);
        goto out;
    }
    rv = apr_socket_listen(s, backlog);
    if (rv == APR_SUCCESS)
        rv = apr_file_rename(tmp, path, p);
    if (rv != APR_SUCCESS)
        fail(why, whylen, rv, "cannot listen on %s", path);
out:
    if (rv != APR_SUCCESS && s)
        apr_socket_close(s);
    apr_file_remove(tmp, p);    /* gone already once renamed */
    apr_dir_remove(tmpdir, p);
    if (rv == APR_SUCCESS)
        *out = s;
    return rv;
}

static apr_status_t open_tcp(apr_socket_t **out, apr_sockaddr_t *sa, const svc_listen_opts_t *o,
                             int backlog, char *why, apr_size_t whylen, apr_pool_t *p)
{
    apr_socket_t *s;
    apr_status_t rv;

    if (!is_loopback(sa) && !o->public_ok)
        return fail(why, whylen, APR_EACCES,
                    "refusing to listen on %s: it is not a loopback address, and without "
                    "--allow anyone who can connect runs tasks (name the task types with "
                    "--allow, or listen on tcp:PORT, which is 127.0.0.1)", o->address);
    rv = apr_socket_create(&s, sa->family, SOCK_STREAM, APR_PROTO_TCP, p);
    if (rv != APR_SUCCESS)
        return fail(why, whylen, rv, "cannot make a socket for %s", o->address);
    apr_socket_opt_set(s, APR_SO_REUSEADDR, 1);
    rv = apr_socket_bind(s, sa);
    if (rv == APR_SUCCESS)
        rv = apr_socket_listen(s, backlog);
    if (rv != APR_SUCCESS) {
        apr_socket_close(s);
        return fail(why, whylen, rv, "cannot listen on %s", o->address);
    }
    *out = s;
    return APR_SUCCESS;
}

apr_status_t svc_listen_open(apr_socket_t **sock, const char **unix_path,
                             const svc_listen_opts_t *o, int backlog,
                             char *why, apr_size_t whylen, apr_pool_t *p)
{
    apr_sockaddr_t *sa;
    apr_status_t rv = svc_address_parse(&sa, unix_path, o->address, p);

    if (rv == APR_EINVAL)
        return fail(why, whylen, rv, "'%s' is not an address: unix:PATH, a PATH with a '/', "
                    "tcp:PORT or tcp:HOST:PORT", o->address);
    if (rv != APR_SUCCESS)
        return fail(why, whylen, rv, "cannot resolve %s", o->address);
    if (o->mode > 0777 || ((o->mode >= 0 || o->group) && !*unix_path))
        return fail(why, whylen, APR_EINVAL, "a socket mode (at most 0777) and group are for "
                    "Unix sockets, not %s", o->address);
    if (*unix_path)
        return open_unix(sock, *unix_path, o, backlog, why, whylen, p);
    return open_tcp(sock, sa, o, backlog, why, whylen, p);
}
