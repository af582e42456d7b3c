/* SPDX-License-Identifier: Apache-2.0 */
/*
 * POSIX side of cli_os.h. SIGINT is blocked in every thread and taken by
 * sigwait in a watcher, so the callback runs as ordinary code, not in a
 * signal handler; SIGUSR1, with a handler installed without SA_RESTART,
 * makes the reader's blocked read return EINTR.
 */
#include "config.h"
#include "cli_os.h"

#include <apr_strings.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static pthread_t reader_thread;
static void (*interrupt_cb)(void);

static void wake_reader(int sig)
{
    (void)sig;    /* only here to make a blocked read return EINTR */
}

static void *signal_watcher(void *data)
{
    sigset_t set;
    int sig;

    (void)data;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    for (;;)
        if (sigwait(&set, &sig) == 0)
            interrupt_cb();
    return NULL;
}

void cli_os_init(void)
{
    signal(SIGPIPE, SIG_IGN);
}

void cli_os_watch_interrupts(void (*on_interrupt)(void))
{
    struct sigaction sa;
    sigset_t set;
    pthread_t t;

    interrupt_cb = on_interrupt;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = wake_reader;    /* no SA_RESTART: reads return EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    /* A handler, not SIG_IGN: a shell starts background jobs with SIGINT
     * ignored, and an ignored signal never reaches sigwait. */
    sigaction(SIGINT, &sa, NULL);
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    /* Blocked here before the workers exist, so they inherit the mask. */
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    reader_thread = pthread_self();
    if (pthread_create(&t, NULL, signal_watcher, NULL) == 0)
        pthread_detach(t);
}

void cli_os_wake_reader(void)
{
    pthread_kill(reader_thread, SIGUSR1);
}

const char *cli_os_self_path(apr_pool_t *p)
{
#ifdef __linux__
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n > 0)
        return apr_pstrmemdup(p, exe, (apr_size_t)n);
#else
    (void)p;
#endif
    return NULL;
}

int cli_os_stderr_is_terminal(void)
{
    return isatty(STDERR_FILENO);
}
