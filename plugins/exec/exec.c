/*
 * exec: "exec.sh COMMAND" runs COMMAND with the system shell (/bin/sh -c;
 * %COMSPEC% /C, that is cmd.exe, on Windows), emits each line of its
 * standard output as a result line (a CR before the LF dropped), and fails
 * the task with PP_EEXIT(status) when it exits non-zero (128 + N when killed
 * by signal N). Its standard input is the null device; its standard error
 * is parkpool's.
 */
#include "parkpool/plugin.h"

#include <apr_env.h>
#include <apr_file_io.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <string.h>

#ifdef _WIN32
#define SHELL_FLAG "/C"
static const char *shell_path(apr_pool_t *p)
{
    char *comspec;

    return apr_env_get(&comspec, "COMSPEC", p) == APR_SUCCESS ? comspec : "cmd.exe";
}
#else
#define SHELL_FLAG "-c"
static const char *shell_path(apr_pool_t *p)
{
    (void)p;
    return "/bin/sh";
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
    const char *shell = shell_path(e->p);
    const char *argv[] = { shell, SHELL_FLAG, e->command, NULL };
    apr_procattr_t *attr;
    apr_proc_t proc;
    apr_exit_why_e why;
    apr_size_t cap = 8192, len = 0;
    char *buf = apr_palloc(e->p, cap + 1);
    int code;
    apr_status_t rv;

    rv = apr_procattr_create(&attr, e->p);
    if (rv == APR_SUCCESS)
        rv = apr_procattr_io_set(attr, APR_NO_FILE, APR_FULL_BLOCK, APR_NO_PIPE);
    if (rv == APR_SUCCESS)
        /* The shell as a plain program: APR_SHELLCMD on Windows quotes a
         * command with spaces a second time and turns its '/' into '\'. */
        rv = apr_procattr_cmdtype_set(attr, APR_PROGRAM);
    if (rv == APR_SUCCESS)
        rv = apr_proc_create(&proc, shell, argv, NULL, attr, e->p);
    if (rv != APR_SUCCESS)
        return rv;
    for (;;) {
        apr_size_t n = cap - len;
        rv = apr_file_read(proc.out, buf + len, &n);
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
    apr_file_close(proc.out);
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
