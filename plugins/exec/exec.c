/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec: "exec.sh COMMAND" runs COMMAND with the system shell (/bin/sh -c;
 * %COMSPEC% /C, that is cmd.exe, on Windows), passes its standard output
 * on byte for byte as it comes (pp_task_write: whole lines, or 64 KiB
 * pieces of a longer one, so memory stays bounded), and fails the task
 * with PP_EEXIT(status) when it exits non-zero (128 + N when killed by
 * signal N). Its standard input is the null device; its standard error is
 * parkpool's. A cancel sends SIGTERM to its process group (TerminateProcess
 * on Windows); the task then fails with PP_ECANCELLED.
 */
#include "config.h"
#include "parkpool/plugin.h"

#include <apr_env.h>
#include <apr_file_io.h>
#include <apr_portable.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <signal.h>
#include <string.h>

#define BUF_SIZE ((apr_size_t)64 << 10)    /* a task's output in flight */
#define POLL     (100 * 1000)              /* us between looks for a cancel */

/* The last LF in buf[0..len), or NULL. */
static char *memrchr_lf(char *buf, apr_size_t len)
{
    while (len > 0)
        if (buf[--len] == '\n')
            return buf + len;
    return NULL;
}

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

/* A cancel: TerminateProcess (what APR's kill does here). */
static void stop_child(apr_proc_t *proc)
{
    apr_proc_kill(proc, SIGTERM);
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
 * ignored signals stay ignored, as a shell's background job wants), and a
 * process group of its own: a cancel ends the shell's children with it,
 * and a terminal's Ctrl-C reaches the host, which decides (drain first). */
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
            err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
                                                  | POSIX_SPAWN_SETPGROUP);
            if (err == 0)
                err = posix_spawnattr_setpgroup(&attr, 0);
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

/* A cancel: SIGTERM to the child's whole process group. */
static void stop_child(apr_proc_t *proc)
{
    kill(-proc->pid, SIGTERM);
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

/* Write out buf's complete lines, keep the unfinished tail; all of it
 * when it is full (a line longer than the buffer goes in pieces: memory
 * stays bounded) or at the end. */
static void write_lines(pp_task_ctx_t *ctx, char *buf, apr_size_t *len, apr_size_t cap, int end)
{
    char *last = *len ? memrchr_lf(buf, *len) : NULL;
    apr_size_t n = end || *len == cap ? *len : last ? (apr_size_t)(last - buf) + 1 : 0;

    if (n == 0)
        return;
    pp_task_write(ctx, buf, n);
    *len -= n;
    memmove(buf, buf + n, *len);
}

/* Read the child's output to its end, hearing a cancel every POLL when the
 * pipe can time out: the child is then stopped and its output still read
 * to the end. */
static apr_status_t pump(pp_task_ctx_t *ctx, apr_proc_t *proc, apr_file_t *out, apr_pool_t *p,
                         int *cancelled)
{
    char *buf = apr_palloc(p, BUF_SIZE);
    apr_size_t len = 0;
    apr_status_t rv;
    int polls = apr_file_pipe_timeout_set(out, POLL) == APR_SUCCESS;

    *cancelled = 0;
    for (;;) {
        apr_size_t n = BUF_SIZE - len;
        rv = apr_file_read(out, buf + len, &n);
        len += n;
        write_lines(ctx, buf, &len, BUF_SIZE, 0);
        if (rv == APR_TIMEUP || (polls && APR_STATUS_IS_EAGAIN(rv)) || rv == APR_SUCCESS) {
            if (!*cancelled && pp_task_cancelled(ctx)) {
                *cancelled = 1;
                stop_child(proc);
            }
            continue;
        }
        break;
    }
    write_lines(ctx, buf, &len, BUF_SIZE, 1);
    return rv == APR_EOF ? APR_SUCCESS : rv;
}

static apr_status_t run_exec(void *arg, pp_task_ctx_t *ctx)
{
    const exec_arg *e = arg;
    apr_proc_t proc;
    apr_file_t *out;
    apr_exit_why_e why;
    int code, cancelled;
    apr_status_t rv, read_rv;

    rv = spawn_shell(&proc, &out, e->command, e->p);
    if (rv != APR_SUCCESS)
        return rv;
    /* The worker only waits for the child from here: another may stand in
     * for it (unless the host bounds its tasks hard, as parkpool run -j). */
    pp_task_block_begin(ctx);
    read_rv = pump(ctx, &proc, out, e->p, &cancelled);
    apr_file_close(out);
    rv = apr_proc_wait(&proc, &code, &why, APR_WAIT);
    pp_task_block_end(ctx);
    if (rv != APR_CHILD_DONE)
        return rv;
    if (cancelled)
        return PP_ECANCELLED;
    if (read_rv != APR_SUCCESS)
        return read_rv;
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
