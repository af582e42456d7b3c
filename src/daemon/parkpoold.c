/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parkpoold: the parkpool task service, a Unix daemon (see svc.h for
 * what it serves, parkpoold(8) for how to run it). It runs in the
 * foreground, as systemd and other supervisors want (parkpoold.service.in
 * beside this file).
 *
 *   parkpoold [-l ADDRESS] [-A TYPES] [-P DIR] [-j N] [-o FILE] [-t SECONDS] [-s]
 *             [--socket-mode MODE] [--socket-group GROUP] [--in-process]
 *   parkpoold --worker -P DIR [-j N] [-s]     (its worker process, engine.h)
 *   parkpoold --send ADDRESS [--no-wait] [--task-output] < lines   (the client)
 *
 * Signals belong to the program, never to the library: SIGTERM and SIGINT
 * stop accepting and drain for at most -t seconds (exit 0 when everything
 * accepted ran and its results were written, 1 otherwise); SIGHUP reloads the plugin
 * folder. They are blocked in every thread and taken by a watcher with
 * sigwait, so what they do runs as ordinary code.
 */
#include "svc.h"
#include "allow.h"
#include "queue.h"
#include "listen.h"
#include "os/sigwatch.h"
#include "pp_paths.h"    /* PP_PLUGIN_DIR, PP_RUNSTATE_DIR: this build's install paths */

#include <apr_general.h>
#include <apr_file_info.h>
#include <apr_file_io.h>
#include <apr_getopt.h>
#include <apr_strings.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#define PPD_RUN_DIR PP_RUNSTATE_DIR "/parkpoold"
#define PPD_SOCKET_NAME "parkpoold.sock"
#define PPD_PLUGIN_DIR PP_PLUGIN_DIR

static int use_syslog;
/* "worker: " in the worker process, whose log is its parent's. */
static const char *who = "";

static void log_line(int level, const char *message, void *baton)
{
    (void)baton;
    if (use_syslog) {
        syslog(level, "%s%s", who, message);    /* PP_LOG_* are syslog's levels */
        return;
    }
    /* stderr: what journald and most supervisors collect. */
    fprintf(stderr, "parkpoold: %s%s%s\n", who,
            level <= PP_LOG_ERROR ? "error: " : level == PP_LOG_WARN ? "warning: " : "",
            message);
}

/* This program's file, for its worker processes: the running file itself
 * where the system names it, else argv0 as it was run (looked for in
 * PATH if it has no '/'). */
static const char *self_path(const char *argv0, apr_pool_t *p)
{
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

    if (n > 0) {
        buf[n] = '\0';
        return apr_pstrdup(p, buf);
    }
    return argv0;
}

/* The worker process's command line: this program, --worker, and what
 * it needs of ours. */
static const char *const *worker_argv(const char *argv0, const svc_config_t *cfg,
                                      apr_pool_t *p)
{
    const char **argv = apr_pcalloc(p, 8 * sizeof(*argv));
    int n = 0;

    argv[n++] = self_path(argv0, p);
    argv[n++] = "--worker";
    argv[n++] = "-P";
    argv[n++] = cfg->plugin_dir;
    if (cfg->threads) {
        argv[n++] = "-j";
        argv[n++] = apr_psprintf(p, "%u", cfg->threads);
    }
    if (use_syslog)
        argv[n++] = "-s";
    return argv;
}

/* Workers the pool runs for -j N (0: one per CPU). */
static apr_uint32_t workers(apr_uint32_t threads)
{
    long n = threads ? (long)threads : sysconf(_SC_NPROCESSORS_ONLN);

    return n > 0 ? (apr_uint32_t)n : 1;
}

/* A queue consumer's name by default: HOST-PID, unique among the live
 * ones (a restarted worker is another consumer: the old one's pending
 * entries are claimed). */
static const char *default_consumer(apr_pool_t *p)
{
    char host[APRMAXHOSTLEN + 1];

    if (apr_gethostname(host, sizeof(host), p) != APR_SUCCESS)
        apr_cpystrn(host, "parkpoold", sizeof(host));
    return apr_psprintf(p, "%s-%ld", host, (long)getpid());
}

static void on_queue_signal(int sig, void *baton)
{
    if (sig == SIGHUP) {
        log_line(PP_LOG_INFO, "SIGHUP: reloading plugins", NULL);
        svc_queue_reload(baton);
    }
    else {
        log_line(PP_LOG_INFO, sig == SIGTERM ? "SIGTERM: draining" : "SIGINT: draining", NULL);
        svc_queue_stop(baton);
    }
}

/* parkpoold --queue: a worker of a Redis Streams queue (queue.h). */
static int serve_queue(const svc_queue_config_t *qcfg, long timeout, apr_pool_t *p)
{
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    svc_queue_t *q;
    apr_status_t rv;

    if (svc_queue_create(&q, qcfg, p) != APR_SUCCESS)
        return 2;    /* it said why */
    if (pp__sigwatch_start(sigs, 3, on_queue_signal, q) != APR_SUCCESS) {
        log_line(PP_LOG_ERROR, "cannot start the signal watcher", NULL);
        return 2;
    }
    log_line(PP_LOG_INFO, "ready", NULL);
    rv = svc_queue_run(q, apr_time_from_sec(timeout));
    if (rv == APR_TIMEUP) {
        log_line(PP_LOG_WARN, "exiting with tasks still running", NULL);
        exit(1);
    }
    apr_pool_destroy(p);
    apr_terminate();
    log_line(PP_LOG_INFO, "exit", NULL);
    return rv == APR_SUCCESS ? 0 : 1;
}

/* On the signal watcher's thread (os/sigwatch.h), as ordinary code. */
static void on_signal(int sig, void *baton)
{
    svc_t *svc = baton;

    if (sig == SIGHUP) {
        log_line(PP_LOG_INFO, "SIGHUP: reloading plugins", NULL);
        svc_reload(svc);
    }
    else {
        log_line(PP_LOG_INFO, sig == SIGTERM ? "SIGTERM: draining" : "SIGINT: draining", NULL);
        svc_stop(svc);
    }
}

/* The socket when -l is not given: in systemd's RuntimeDirectory= when
 * systemd started us, else in PP_RUNSTATE_DIR/parkpoold, made if missing
 * (its parent must exist: a runstatedir that is not there is a wrong
 * prefix, not something to create). */
static const char *default_socket(apr_pool_t *p)
{
    const char *rt = getenv("RUNTIME_DIRECTORY");

    if (rt && *rt) {
        const char *colon = strchr(rt, ':');    /* several folders: the first */
        return apr_pstrcat(p, colon ? apr_pstrndup(p, rt, (apr_size_t)(colon - rt)) : rt,
                           "/" PPD_SOCKET_NAME, NULL);
    }
    apr_dir_make(PPD_RUN_DIR, APR_FPROT_OS_DEFAULT & ~(APR_FPROT_GWRITE | APR_FPROT_WWRITE), p);
    return PPD_RUN_DIR "/" PPD_SOCKET_NAME;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: parkpoold [-l ADDRESS] [-A TYPES] [-P DIR] [-j N] [-o FILE] [-t SECONDS] [-s]\n"
               "                 [--socket-mode MODE] [--socket-group GROUP]\n"
               "       parkpoold --send ADDRESS [--no-wait] [--task-output] < lines\n"
               "  -l, --listen ADDRESS   unix:PATH, a PATH with a '/', tcp:PORT (127.0.0.1) or\n"
               "                         tcp:HOST:PORT (default: %s/%s)\n"
               "  -A, --allow TYPES      the task types clients may run, comma-separated names or\n"
               "                         globs (default: every type but exec.*); needed to listen\n"
               "                         on TCP off loopback\n"
               "      --socket-mode MODE a Unix socket's mode, octal (default 0600, 0660 with a group)\n"
               "      --socket-group GROUP  a Unix socket's group\n"
               "  -P, --plugin-dir DIR   plugin folder, reloaded on SIGHUP (default %s)\n"
               "  -j, --jobs N           workers (default: one per CPU)\n"
               "  -o, --output FILE      append result lines to FILE (default: the log)\n"
               "  -t, --timeout SECONDS  drain limit on SIGTERM (default 30)\n"
               "  -s, --syslog           log to syslog (default: stderr)\n"
               "      --max-clients N    clients connected at once (default 64)\n"
               "      --max-inflight N   a client's tasks not yet ended (default 256); past it\n"
               "                         its lines wait unread\n"
               "      --idle-timeout S   close a client idle this long (default 60)\n"
               "      --in-process       run the tasks in this process, not in a worker process\n"
               "                         restarted when a task crashes it\n"
               "  --queue redis://HOST[:PORT]/STREAM  instead of listening: run the entries of a\n"
               "                         Redis stream, results to STREAM:results (parkpoold(8))\n"
               "      --group G          its consumer group (default parkpool)\n"
               "      --consumer NAME    this worker's name in it (default HOST-PID)\n"
               "      --claim-after S    claim entries idle this long (default 60)\n"
               "      --max-deliveries N then move them to STREAM:dead (default 5)\n"
               "      --results-maxlen N trim STREAM:results to about N (default 1000000)\n"
               "  --send ADDRESS         the client: send stdin's lines, print the answers, wait\n"
               "                         for every task; exit 0 if all were accepted and ok\n"
               "      --no-wait          only wait for the answers to the lines\n"
               "      --task-output      ask for the tasks' output lines too\n",
            PPD_RUN_DIR, PPD_SOCKET_NAME, PPD_PLUGIN_DIR);
}

int main(int argc, const char *const *argv)
{
    static const apr_getopt_option_t opts[] = {
        { "listen", 'l', 1, "" }, { "plugin-dir", 'P', 1, "" }, { "jobs", 'j', 1, "" },
        { "output", 'o', 1, "" }, { "timeout", 't', 1, "" }, { "syslog", 's', 0, "" },
        { "send", 'S', 1, "" }, { "help", 'h', 0, "" }, { "allow", 'A', 1, "" },
        { "socket-mode", 'M', 1, "" }, { "socket-group", 'G', 1, "" },
        { "max-clients", 'C', 1, "" }, { "max-inflight", 'F', 1, "" },
        { "idle-timeout", 'I', 1, "" }, { "no-wait", 'W', 0, "" }, { "task-output", 'T', 0, "" },
        { "worker", 'K', 0, "" }, { "in-process", 'N', 0, "" },
        { "queue", 'Q', 1, "" }, { "group", 'g', 1, "" }, { "consumer", 'c', 1, "" },
        { "claim-after", 'a', 1, "" }, { "max-deliveries", 'd', 1, "" },
        { "results-maxlen", 'r', 1, "" }, { NULL, 0, 0, NULL }
    };
    apr_pool_t *p;
    apr_getopt_t *os;
    svc_config_t cfg;
    svc_counts_t counts;
    svc_t *svc;
    svc_allow_t *allow;
    static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
    sigset_t set;
    const char *optval, *send_to = NULL;
    long timeout = 30, mode, n;
    char *end;
    int opt, rc, send_flags = 0, worker = 0, in_process = 0;
    svc_engine_config_t ecfg;
    svc_queue_config_t qcfg;
    apr_status_t rv;

    if (apr_app_initialize(&argc, &argv, NULL) != APR_SUCCESS)
        return 2;
    apr_pool_create(&p, NULL);
    memset(&cfg, 0, sizeof(cfg));
    memset(&qcfg, 0, sizeof(qcfg));
    qcfg.group = "parkpool";
    cfg.plugin_dir = PPD_PLUGIN_DIR;
    cfg.log = log_line;
    svc_allow_create(&allow, p);
    cfg.allow = allow;
    apr_getopt_init(&os, p, argc, argv);
    os->errfn = NULL;
    while ((rv = apr_getopt_long(os, opts, &opt, &optval)) == APR_SUCCESS) {
        switch (opt) {
        case 'l': cfg.listen = optval; break;
        case 'P': cfg.plugin_dir = optval; break;
        case 'o': cfg.output = optval; break;
        case 's': use_syslog = 1; break;
        case 'S': send_to = optval; break;
        case 'G': cfg.socket_group = optval; break;
        case 'A':
            if (svc_allow_add(allow, optval) != APR_SUCCESS) {
                fprintf(stderr, "parkpoold: --allow takes task types or globs separated by "
                        "commas, not '%s'\n", optval);
                return 2;
            }
            break;
        case 'M':
            mode = strtol(optval, &end, 8);
            if (end == optval || *end || mode < 1 || mode > 0777) {
                fprintf(stderr, "parkpoold: --socket-mode takes an octal mode from 1 to 0777, "
                        "not '%s'\n", optval);
                return 2;
            }
            cfg.socket_mode = (int)mode;
            break;
        case 'K': worker = 1; break;
        case 'Q': qcfg.url = optval; break;
        case 'g': qcfg.group = optval; break;
        case 'c': qcfg.consumer = optval; break;
        case 'a': case 'd': case 'r':
            n = strtol(optval, &end, 10);
            if (end == optval || *end || n < 1 || n > 1000000000) {
                fprintf(stderr, "parkpoold: %s takes a number from 1, not '%s'\n", opt == 'a'
                        ? "--claim-after" : opt == 'd' ? "--max-deliveries" : "--results-maxlen",
                        optval);
                return 2;
            }
            if (opt == 'a') qcfg.claim_after = apr_time_from_sec(n);
            if (opt == 'd') qcfg.max_deliveries = (apr_uint32_t)n;
            if (opt == 'r') qcfg.results_maxlen = (apr_uint64_t)n;
            break;
        case 'N': in_process = 1; break;
        case 'W': send_flags |= SVC_SEND_NOWAIT; break;
        case 'T': send_flags |= SVC_SEND_OUTPUT; break;
        case 'j': case 'C': case 'F': case 'I': case 't':
            n = strtol(optval, &end, 10);
            if (end == optval || *end || n < (opt == 't' ? 0 : 1) || n > 1000000
                || (opt == 'j' && n > 4096)) {
                fprintf(stderr, "parkpoold: %s takes a number%s, not '%s'\n",
                        opt == 'j' ? "-j" : opt == 'C' ? "--max-clients" : opt == 'F'
                        ? "--max-inflight" : opt == 'I' ? "--idle-timeout" : "-t",
                        opt == 'j' ? " from 1 to 4096" : opt == 't' || opt == 'I'
                        ? " of seconds" : " from 1", optval);
                return 2;
            }
            if (opt == 'j') cfg.threads = (apr_uint32_t)n;
            if (opt == 'C') cfg.max_clients = (apr_uint32_t)n;
            if (opt == 'F') cfg.max_inflight = (apr_uint32_t)n;
            if (opt == 'I') cfg.idle_timeout = apr_time_from_sec(n);
            if (opt == 't') timeout = n;
            break;
        default:
            usage(stdout);
            return 0;
        }
    }
    if (rv != APR_EOF || os->ind != argc) {
        usage(stderr);
        return 2;
    }
    if (send_to) {
        /* A daemon that goes away is an answer to report, not a death. */
        signal(SIGPIPE, SIG_IGN);
        return svc_send(send_to, send_flags, stdin, stdout, stderr, p) == APR_SUCCESS ? 0 : 1;
    }
    memset(&ecfg, 0, sizeof(ecfg));
    ecfg.plugin_dir = cfg.plugin_dir;
    ecfg.threads = cfg.threads;
    ecfg.log = log_line;
    if (use_syslog)
        openlog("parkpoold", LOG_PID, LOG_DAEMON);
    if (worker) {
        who = "worker: ";
        rc = svc_worker_main(&ecfg, p);
        apr_pool_destroy(p);
        apr_terminate();
        return rc;
    }

    if (qcfg.url && cfg.listen) {
        fprintf(stderr, "parkpoold: --queue reads a queue instead of listening: not with -l\n");
        return 2;
    }
    rv = qcfg.url ? APR_SUCCESS : svc_listen_inherited(&cfg.listener, p);
    if (rv != APR_SUCCESS) {
        fprintf(stderr, "parkpoold: the socket systemd passed is not one listening stream "
                "socket (one ListenStream= in parkpoold.socket)\n");
        return 2;
    }
    if (cfg.listener)
        cfg.listen = "the socket systemd passed";    /* -l names what it would bind */
    else if (!cfg.listen && !qcfg.url)
        cfg.listen = default_socket(p);
    /* The plugins run in a worker process, restarted when it dies
     * (engine_child.c); --in-process runs them here. */
    if ((in_process ? svc_engine_local_create(&cfg.engine, &ecfg, p)
         : svc_engine_child_create(&cfg.engine, &ecfg, worker_argv(argv[0], &cfg, p), p))
        != APR_SUCCESS)
        return 2;
    /* Blocked before any thread exists, so every thread inherits it. */
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);    /* a client that hangs up is an error, not a death */

    if (qcfg.url) {
        qcfg.engine = cfg.engine;
        qcfg.allow = cfg.allow;
        qcfg.log = log_line;
        qcfg.workers = workers(cfg.threads);
        qcfg.max_inflight = cfg.max_inflight;
        if (!qcfg.consumer)
            qcfg.consumer = default_consumer(p);
        return serve_queue(&qcfg, timeout, p);
    }

    rv = svc_create(&svc, &cfg, p);
    if (rv != APR_SUCCESS) {
        /* svc_create logged why; what it made goes with the pool (the
         * registries' and the jobs' pools are unmanaged, so only this
         * frees them). */
        apr_pool_destroy(p);
        apr_terminate();
        return 2;
    }
    /* The signals stay blocked from here: the pool's threads are made
     * with them blocked, and the watcher takes them. */
    rv = pp__sigwatch_start(sigs, 3, on_signal, svc);
    if (rv != APR_SUCCESS) {
        log_line(PP_LOG_ERROR, "cannot start the signal watcher", NULL);
        return 2;
    }
    log_line(PP_LOG_INFO, "ready", NULL);
    svc_serve(svc);
    rv = svc_drain(svc, apr_time_from_sec(timeout), &counts);
    rc = rv == APR_SUCCESS ? 0 : 1;
    if (rv == APR_TIMEUP) {
        /* Tasks that ignore cancellation may still run: leave without
         * waiting for them (destroying the pool would), the OS ends them. */
        log_line(PP_LOG_WARN, "exiting with tasks still running", NULL);
        exit(rc);
    }
    apr_pool_destroy(p);
    apr_terminate();
    log_line(PP_LOG_INFO, "exit", NULL);
    return rc;
}
