/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ppservice: parkpool embedded in a Windows service, serving the same task
 * loop as the Unix daemon (src/daemon/svc.h).
 *
 *   ppservice service [OPTIONS]     what the service manager starts
 *   ppservice console [OPTIONS]     the same in a console; Ctrl-C stops it
 *   ppservice --send ADDRESS        the client: lines from stdin
 *
 *   OPTIONS: -l tcp:HOST:PORT  -A TYPES  -P DIR  -j N  -o FILE  -t SECONDS  -L LOGFILE
 *
 * -A (--allow) as parkpoold's: the task types clients may run (default:
 * every type but exec.*); a listener off loopback needs it.
 *
 * Install with the service manager's own tool, for example
 *   sc create parkpool binPath= "C:\parkpool\ppservice.exe service -l tcp:127.0.0.1:7070
 *      -P C:\parkpool\plugins -o C:\parkpool\results.txt -L C:\parkpool\ppservice.log"
 *
 * Stopping is one piece of code for both modes (stop_and_drain): stop
 * accepting, drain for at most -t seconds while reporting progress, then
 * cancel. As a service the progress is SERVICE_STOP_PENDING with a rising
 * checkpoint and a wait hint, so the service manager knows it is alive,
 * and at the end SERVICE_STOPPED with the exit code; in a console it is
 * the log.
 */
#include "svc.h"

#include <apr_general.h>
#include <apr_getopt.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <windows.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SERVICE_NAME "parkpool"

static FILE *log_file;
static CRITICAL_SECTION log_lock;

static void log_line(int level, const char *message, void *baton)
{
    SYSTEMTIME t;

    (void)baton;
    GetLocalTime(&t);
    EnterCriticalSection(&log_lock);
    fprintf(log_file, "%04d-%02d-%02d %02d:%02d:%02d ppservice: %s%s\n", t.wYear, t.wMonth,
            t.wDay, t.wHour, t.wMinute, t.wSecond,
            level <= PP_LOG_ERROR ? "error: " : level == PP_LOG_WARN ? "warning: " : "",
            message);
    fflush(log_file);
    LeaveCriticalSection(&log_lock);
}

/* ------------------------------------------------------------ options */

typedef struct host_options {
    svc_config_t cfg;
    long timeout;
    const char *log_path;
} host_options;

static int parse_options(host_options *o, int argc, const char *const *argv, apr_pool_t *p)
{
    static const apr_getopt_option_t opts[] = {
        { "listen", 'l', 1, "" }, { "plugin-dir", 'P', 1, "" }, { "jobs", 'j', 1, "" },
        { "output", 'o', 1, "" }, { "timeout", 't', 1, "" }, { "log", 'L', 1, "" },
        { "allow", 'A', 1, "" }, { NULL, 0, 0, NULL }
    };
    apr_getopt_t *os;
    svc_allow_t *allow;
    const char *optval;
    char *end;
    int opt;
    apr_status_t rv;

    memset(o, 0, sizeof(*o));
    if (svc_allow_create(&allow, p) != APR_SUCCESS)
        return -1;
    o->cfg.allow = allow;
    o->cfg.listen = "tcp:127.0.0.1:7070";
    o->cfg.plugin_dir = "plugins";
    o->cfg.log = log_line;
    o->timeout = 30;
    apr_getopt_init(&os, p, argc, argv);
    os->errfn = NULL;
    while ((rv = apr_getopt_long(os, opts, &opt, &optval)) == APR_SUCCESS) {
        switch (opt) {
        case 'l': o->cfg.listen = optval; break;
        case 'P': o->cfg.plugin_dir = optval; break;
        case 'o': o->cfg.output = optval; break;
        case 'L': o->log_path = optval; break;
        case 'A':
            if (svc_allow_add(allow, optval) != APR_SUCCESS)
                return -1;
            break;
        case 'j':
            o->cfg.threads = (apr_uint32_t)strtoul(optval, &end, 10);
            if (end == optval || *end || o->cfg.threads < 1 || o->cfg.threads > 4096)
                return -1;
            break;
        case 't':
            o->timeout = strtol(optval, &end, 10);
            if (end == optval || *end || o->timeout < 0)
                return -1;
            break;
        default:
            return -1;
        }
    }
    return rv == APR_EOF && os->ind == argc ? 0 : -1;
}

/* ------------------------------------------------------------ stopping */

typedef void (*progress_fn)(DWORD checkpoint, DWORD wait_hint_ms);

typedef struct drain_job {
    svc_t *svc;
    apr_interval_time_t timeout;
    apr_status_t rv;
    HANDLE done;
} drain_job;

static DWORD WINAPI drain_main(LPVOID arg)
{
    drain_job *job = arg;

    job->rv = svc_drain(job->svc, job->timeout, NULL);
    SetEvent(job->done);
    return 0;
}

/* Runs once svc_serve() has returned. The drain runs on a thread of its
 * own so that this one can report progress every second until it ends.
 * Returns the process exit code: 0 when everything accepted ran. */
static DWORD stop_and_drain(svc_t *svc, long timeout_s, progress_fn progress)
{
    drain_job job;
    HANDLE thread;
    DWORD checkpoint = 0;

    job.svc = svc;
    job.timeout = apr_time_from_sec(timeout_s);
    job.rv = APR_EGENERAL;
    job.done = CreateEventW(NULL, TRUE, FALSE, NULL);
    thread = job.done ? CreateThread(NULL, 0, drain_main, &job, 0, NULL) : NULL;
    if (!thread) {
        job.rv = svc_drain(svc, job.timeout, NULL);
    }
    else {
        /* The hint covers what is left of the drain plus its cancel grace:
         * the service manager gives up on a service whose checkpoint stops
         * rising for longer than its hint. */
        progress(++checkpoint, (DWORD)(timeout_s + 5) * 1000);
        while (WaitForSingleObject(job.done, 1000) == WAIT_TIMEOUT)
            progress(++checkpoint, 3000);
        WaitForSingleObject(thread, INFINITE);
        CloseHandle(thread);
    }
    if (job.done)
        CloseHandle(job.done);
    return job.rv == APR_SUCCESS ? 0 : 1;
}

/* ------------------------------------------------------------ console mode */

static svc_t *volatile console_svc;

static BOOL WINAPI console_handler(DWORD event)
{
    if (!console_svc || (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT
                         && event != CTRL_CLOSE_EVENT))
        return FALSE;
    log_line(PP_LOG_INFO, "console stop event: draining", NULL);
    svc_stop(console_svc);    /* the same call the service's STOP makes */
    return TRUE;
}

static void console_progress(DWORD checkpoint, DWORD wait_hint_ms)
{
    char msg[96];

    apr_snprintf(msg, sizeof(msg), "stopping: checkpoint %lu, wait hint %lu ms",
                 (unsigned long)checkpoint, (unsigned long)wait_hint_ms);
    log_line(PP_LOG_INFO, msg, NULL);
}

static int run_console(host_options *o, apr_pool_t *p)
{
    svc_t *svc;
    DWORD rc;

    if (svc_create(&svc, &o->cfg, p) != APR_SUCCESS)
        return 2;
    console_svc = svc;
    SetConsoleCtrlHandler(console_handler, TRUE);
    log_line(PP_LOG_INFO, "ready (console)", NULL);
    svc_serve(svc);
    rc = stop_and_drain(svc, o->timeout, console_progress);
    log_line(PP_LOG_INFO, rc == 0 ? "exit 0" : "exit 1: drain timed out", NULL);
    /* After a timed-out drain tasks may still run: leave without waiting. */
    ExitProcess(rc);
    return (int)rc;
}

/* ------------------------------------------------------------ service mode */

static host_options service_opts;
static apr_pool_t *service_pool;
static SERVICE_STATUS_HANDLE status_handle;
static SERVICE_STATUS status;
static svc_t *volatile service_svc;

static void report(DWORD state, DWORD exit_code, DWORD checkpoint, DWORD wait_hint)
{
    status.dwServiceType = SERVICE_WIN32_OWN_PROCESS;
    status.dwCurrentState = state;
    status.dwControlsAccepted = state == SERVICE_RUNNING
                                ? SERVICE_ACCEPT_STOP | SERVICE_ACCEPT_SHUTDOWN : 0;
    status.dwWin32ExitCode = exit_code ? ERROR_SERVICE_SPECIFIC_ERROR : NO_ERROR;
    status.dwServiceSpecificExitCode = exit_code;
    status.dwCheckPoint = checkpoint;
    status.dwWaitHint = wait_hint;
    SetServiceStatus(status_handle, &status);
}

static void service_progress(DWORD checkpoint, DWORD wait_hint_ms)
{
    report(SERVICE_STOP_PENDING, 0, checkpoint, wait_hint_ms);
}

static DWORD WINAPI control_handler(DWORD control, DWORD type, LPVOID data, LPVOID ctx)
{
    (void)type;
    (void)data;
    (void)ctx;
    switch (control) {
    case SERVICE_CONTROL_STOP:
    case SERVICE_CONTROL_SHUTDOWN:
        log_line(PP_LOG_INFO, control == SERVICE_CONTROL_STOP ? "SERVICE_CONTROL_STOP: draining"
                              : "SERVICE_CONTROL_SHUTDOWN: draining", NULL);
        report(SERVICE_STOP_PENDING, 0, 0, (DWORD)(service_opts.timeout + 5) * 1000);
        if (service_svc)
            svc_stop(service_svc);
        return NO_ERROR;
    case SERVICE_CONTROL_INTERROGATE:
        return NO_ERROR;
    default:
        return ERROR_CALL_NOT_IMPLEMENTED;
    }
}

static void WINAPI service_main(DWORD argc, LPSTR *argv)
{
    svc_t *svc;
    DWORD rc;

    (void)argc;
    (void)argv;
    status_handle = RegisterServiceCtrlHandlerExA(SERVICE_NAME, control_handler, NULL);
    if (!status_handle)
        return;
    report(SERVICE_START_PENDING, 0, 1, 10000);
    if (svc_create(&svc, &service_opts.cfg, service_pool) != APR_SUCCESS) {
        report(SERVICE_STOPPED, 2, 0, 0);
        return;
    }
    service_svc = svc;
    report(SERVICE_RUNNING, 0, 0, 0);
    log_line(PP_LOG_INFO, "ready (service)", NULL);
    svc_serve(svc);
    rc = stop_and_drain(svc, service_opts.timeout, service_progress);
    log_line(PP_LOG_INFO, rc == 0 ? "stopped" : "stopped: drain timed out", NULL);
    report(SERVICE_STOPPED, rc, 0, 0);
}

static int run_service(void)
{
    static SERVICE_TABLE_ENTRYA table[] = {
        { (LPSTR)SERVICE_NAME, service_main }, { NULL, NULL }
    };

    /* Returns when the service has stopped; fails at once when this
     * process was not started by the service manager. */
    if (!StartServiceCtrlDispatcherA(table)) {
        char msg[128];
        apr_snprintf(msg, sizeof(msg), "not started by the service manager (error %lu): "
                     "use 'console' to run in a console", (unsigned long)GetLastError());
        log_line(PP_LOG_ERROR, msg, NULL);
        return 2;
    }
    return (int)status.dwServiceSpecificExitCode;
}

/* ------------------------------------------------------------ main */

static void usage(FILE *f)
{
    fprintf(f, "usage: ppservice service|console [-l tcp:HOST:PORT] [-A TYPES] [-P DIR] [-j N]\n"
               "                 [-o FILE] [-t SECONDS] [-L LOGFILE]\n"
               "       ppservice --send ADDRESS [--no-wait] [--task-output] < lines\n");
}

int main(int argc, const char *const *argv)
{
    apr_pool_t *p;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS)
        return 2;
    apr_pool_create(&p, NULL);
    InitializeCriticalSection(&log_lock);
    log_file = stderr;
    if (argc >= 3 && !strcmp(argv[1], "--send")) {
        int i, flags = 0;
        for (i = 3; i < argc; i++) {
            if (!strcmp(argv[i], "--no-wait"))
                flags |= SVC_SEND_NOWAIT;
            else if (!strcmp(argv[i], "--task-output"))
                flags |= SVC_SEND_OUTPUT;
            else {
                usage(stderr);
                return 2;
            }
        }
        return svc_send(argv[2], flags, stdin, stdout, stderr, p) == APR_SUCCESS ? 0 : 1;
    }
    if (argc < 2 || (strcmp(argv[1], "service") && strcmp(argv[1], "console"))
        || parse_options(&service_opts, argc - 1, argv + 1, p) != 0) {
        usage(stderr);
        return 2;
    }
    /* A service has no console: without -L the log goes beside the program. */
    if (!service_opts.log_path && !strcmp(argv[1], "service")) {
        char exe[MAX_PATH], *slash;
        DWORD n = GetModuleFileNameA(NULL, exe, sizeof(exe));
        if (n > 0 && n < sizeof(exe) && (slash = strrchr(exe, '\\')) != NULL) {
            strcpy(slash + 1, "ppservice.log");
            service_opts.log_path = apr_pstrdup(p, exe);
        }
    }
    if (service_opts.log_path && !(log_file = fopen(service_opts.log_path, "a"))) {
        fprintf(stderr, "ppservice: cannot open %s\n", service_opts.log_path);
        return 2;
    }
    if (!strcmp(argv[1], "console"))
        return run_console(&service_opts, p);
    service_pool = p;
    return run_service();
}
