/* SPDX-License-Identifier: Apache-2.0 */
/*
 * POSIX side of cli_os.h. SIGINT is blocked in every thread and taken by
 * sigwait in a watcher (os/sigwatch.h), so the callback runs as ordinary
 * code, not in a signal handler; SIGUSR1, with a handler installed without SA_RESTART,
 * makes the reader's blocked read return EINTR.
 */
#include "config.h"
#include "cli_os.h"
#include "os/sigwatch.h"

#include <apr_strings.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static pthread_t reader_thread;
static int have_reader;
static void (*interrupt_cb)(void);

static void wake_reader(int sig)
{
    (void)sig;    /* only here to make a blocked read return EINTR */
}

static void on_signal(int sig, void *baton)
{
    (void)sig;
    (void)baton;
    interrupt_cb();
}

void cli_os_init(void)
{
    signal(SIGPIPE, SIG_IGN);
}

apr_status_t cli_os_watch_interrupts(void (*on_interrupt)(void))
{
    static const int sigs[] = { SIGINT };
    struct sigaction sa;

    interrupt_cb = on_interrupt;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = wake_reader;    /* no SA_RESTART: reads return EINTR */
    sigaction(SIGUSR1, &sa, NULL);
    reader_thread = pthread_self();
    have_reader = 1;
    /* Before the workers exist, so they inherit the blocked SIGINT. */
    return pp__sigwatch_start(sigs, 1, on_signal, NULL);
}

void cli_os_wake_reader(void)
{
    if (have_reader)
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

int cli_os_open_read(const char *path)
{
    int fd;

    do
        fd = open(path, O_RDONLY | O_CLOEXEC);
    while (fd < 0 && errno == EINTR);
    return fd;
}

long cli_os_read(int fd, void *buf, size_t n)
{
    return (long)read(fd, buf, n);
}

void cli_os_close(int fd)
{
    close(fd);
}

void cli_os_exit_broken_pipe(void)
{
    sigset_t set;

    fflush(stderr);
    signal(SIGPIPE, SIG_DFL);
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(SIGPIPE);
    _exit(128 + SIGPIPE);    /* not reached unless SIGPIPE could not kill */
}

void cli_os_write(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void (*crash_report)(const char *what);

static void on_crash(int sig)
{
    const char *what = sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS"
                     : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : "SIGABRT";
    int saved = errno;

    crash_report(what);
    errno = saved;
    /* SA_RESETHAND put the default action back: the crash goes on. */
    raise(sig);
}

void cli_os_on_crash(void (*report)(const char *what))
{
    static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
    struct sigaction sa;
    size_t i;

    crash_report = report;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_crash;
    sa.sa_flags = (int)SA_RESETHAND | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

int cli_os_stderr_is_terminal(void)
{
    return isatty(STDERR_FILENO);
}

int cli_os_stdout_is_terminal(void)
{
    return isatty(STDOUT_FILENO);
}

int cli_os_terminal_width(void)
{
    struct winsize ws;

    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}
