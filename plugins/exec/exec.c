/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec: "exec.sh COMMAND" runs COMMAND with the system shell (/bin/sh -c;
 * %COMSPEC% /C, that is cmd.exe, on Windows), emits each line of its
 * standard output as a result line (a CR before the LF dropped), and fails
 * the task with PP_EEXIT(status) when it exits non-zero (128 + N when killed
 * by signal N). Its standard input is the null device; its standard error
 * is parkpool's.
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_env.h>
#include <apr_file_io.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <string.h>

#ifdef _WIN32
/* The shell as a plain program: APR_SHELLCMD quotes a command with spaces
 * a second time and turns its '/' into '\'. APR makes the child's pipe end
 * the only handle it inherits (its CreateProcess runs under a lock). */
static apr_status_t spawn_shell(apr_proc_t *proc, apr_file_t **out, const char *command,
                                apr_pool_t *p)
{
    char *comspec;
    const char *shell = apr_env_get(&comspec, "COMSPEC", p) == APR_SUCCESS ? comspec : "cmd.exe";
    const char *argv[] = { shell, "/C", command, NULL };
    apr_procattr_t *attr;
    apr_file_t *null_in;
    apr_status_t rv;

    rv = apr_file_open(&null_in, "NUL", APR_FOPEN_READ, APR_OS_DEFAULT, p);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_create(&attr, p);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_io_set(attr, APR_NO_PIPE, APR_FULL_BLOCK, APR_NO_PIPE);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_child_in_set(attr, null_in, NULL);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_cmdtype_set(attr, APR_PROGRAM);
    if (rv == APR_SUCCESS)
        rv = apr_proc_create(proc, shell, argv, NULL, attr, p);
    if (rv == APR_SUCCESS)
        *out = proc->out;
    return rv;
}
#else
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

/* Both ends close-on-exec from birth: a child that another task spawns at
 * the same moment must not inherit this task's write end (it would hold
 * the output open until it exits). Without pipe2 there is a window
 * between pipe() and fcntl(). */
static int cloexec_pipe(int fds[2])
{
#ifdef HAVE_PIPE2
    return pipe2(fds, O_CLOEXEC);
#else
    if (pipe(fds) != 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
#endif
}

/* posix_spawn rather than APR's fork: APR's pipes are inheritable until
 * its fork returns, and its child would keep the worker's signal mask and
 * the tool's ignored SIGPIPE. The child gets /dev/null as input, the pipe
 * as output (dup2 clears close-on-exec on the copy only), an empty signal
 * mask and SIGPIPE's default action (what a shell's commands expect; other
 * ignored signals stay ignored, as a shell's background job wants). */
static apr_status_t spawn_shell(apr_proc_t *proc, apr_file_t **out, const char *command,
                                apr_pool_t *p)
{
    char *argv[] = { "/bin/sh", "-c", (char *)command, NULL };
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    sigset_t none, deflt;
    pid_t pid;
    int fds[2], err;

    if (cloexec_pipe(fds) != 0)
        return APR_FROM_OS_ERROR(errno);
    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGPIPE);
    err = posix_spawn_file_actions_init(&actions);
    if (err == 0) {
        err = posix_spawnattr_init(&attr);
        if (err == 0) {
            err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
            if (err == 0)
                err = posix_spawnattr_setsigmask(&attr, &none);
            if (err == 0)
                err = posix_spawnattr_setsigdefault(&attr, &deflt);
            if (err == 0)
                err = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
            if (err == 0)
                err = posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
            if (err == 0)
                err = posix_spawn(&pid, argv[0], &actions, &attr, argv, environ);
            posix_spawnattr_destroy(&attr);
        }
        posix_spawn_file_actions_destroy(&actions);
    }
    close(fds[1]);
    if (err != 0) {
        close(fds[0]);
        return APR_FROM_OS_ERROR(err);
    }
    memset(proc, 0, sizeof(*proc));
    proc->pid = pid;
    return apr_os_pipe_put_ex(out, &fds[0], 1, p);
}
#endif

typedef struct exec_arg {
    const char *command;
    apr_pool_t *p;    /* the task's own pool */
} exec_arg;

static apr_status_t parse_command(void **arg, const char *text, apr_pool_t *p)
{
    exec_arg *e;

    if (!text[0])
        return APR_EINVAL;
    e = apr_palloc(p, sizeof(*e));
    e->command = apr_pstrdup(p, text);
    e->p = p;
    *arg = e;
    return APR_SUCCESS;
}

/* Emit complete lines from buf[0..*len), keep the unfinished tail. */
static void emit_lines(pp_task_ctx_t *ctx, char *buf, apr_size_t *len, int flush)
{
    char *start = buf, *nl;

    while ((nl = memchr(start, '\n', *len - (apr_size_t)(start - buf))) != NULL) {
        *nl = '\0';
        if (nl > start && nl[-1] == '\r')
            nl[-1] = '\0';
        pp_task_emit(ctx, start);
        start = nl + 1;
    }
    *len -= (apr_size_t)(start - buf);
    memmove(buf, start, *len);
    if (flush && *len) {
        buf[*len] = '\0';
        pp_task_emit(ctx, buf);
        *len = 0;
    }
}

static apr_status_t run_exec(void *arg, pp_task_ctx_t *ctx)
{
    const exec_arg *e = arg;
    apr_proc_t proc;
    apr_file_t *out;
    apr_exit_why_e why;
    apr_size_t cap = 8192, len = 0;
    char *buf = apr_palloc(e->p, cap + 1);
    int code;
    apr_status_t rv;

    rv = spawn_shell(&proc, &out, e->command, e->p);
    if (rv != APR_SUCCESS)
        return rv;
    for (;;) {
        apr_size_t n = cap - len;
        rv = apr_file_read(out, buf + len, &n);
        len += n;
        if (len == cap) {
            /* A line longer than the buffer: grow it (lines stay whole). */
            char *bigger = apr_palloc(e->p, 2 * cap + 1);
            memcpy(bigger, buf, len);
            buf = bigger;
            cap *= 2;
        }
        emit_lines(ctx, buf, &len, 0);
        if (rv != APR_SUCCESS)
            break;
    }
    emit_lines(ctx, buf, &len, 1);
    apr_file_close(out);
    rv = apr_proc_wait(&proc, &code, &why, APR_WAIT);
    if (rv != APR_CHILD_DONE)
        return rv;
    if (APR_PROC_CHECK_SIGNALED(why))
        return PP_EEXIT(128 + code);
    return code == 0 ? APR_SUCCESS : PP_EEXIT(code);
}

static const pp_task_type_t exec_type = {
    "exec.sh", "run COMMAND with the system shell, its output as result lines",
    parse_command, run_exec, NULL, NULL
};

static apr_status_t exec_init(pp_registry_t *reg)
{
    return pp_registry_add(reg, &exec_type);
}

PP_PLUGIN_DEFINE("exec", "1.0.0", exec_init);
