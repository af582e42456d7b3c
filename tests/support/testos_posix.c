/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX side of testos.h (thread facts via /proc and glibc on Linux). */
#include "config.h"
#include "testos.h"

#include <apr_strings.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

void t_os_watchdog(unsigned seconds)
{
    alarm(seconds);    /* SIGALRM's default action ends the run, failed */
}

int t_os_thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

long t_os_cpu_count(void)
{
    return sysconf(_SC_NPROCESSORS_ONLN);
}

double t_os_cpu_seconds(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6
           + (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int t_os_thread_name(char *buf, apr_size_t size)
{
#ifdef HAVE_PTHREAD_SETNAME_NP_2
    return pthread_getname_np(pthread_self(), buf, size) == 0 ? 0 : -1;
#else
    (void)buf;
    (void)size;
    return -1;
#endif
}

apr_size_t t_os_stack_size(void)
{
#ifdef __GLIBC__
    pthread_attr_t attr;
    size_t size = 0;

    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        pthread_attr_getstacksize(&attr, &size);
        pthread_attr_destroy(&attr);
    }
    return size;
#else
    return 0;
#endif
}

int t_os_stack_fits(apr_size_t got, apr_size_t asked)
{
    /* glibc reports the size asked for, plus at most a guard page. */
    return got >= asked && got <= asked + 64 * 1024;
}

unsigned long t_os_signal_fingerprint(void)
{
    unsigned long h = 5381;
    struct sigaction sa;
    int sig;

    for (sig = 1; sig < 32; sig++) {
        if (sig == SIGKILL || sig == SIGSTOP || sigaction(sig, NULL, &sa) != 0)
            continue;
        h = h * 33 + (unsigned long)(apr_uintptr_t)sa.sa_handler + (unsigned long)sa.sa_flags;
    }
    return h;
}

const char *t_os_tmpdir(void)
{
    const char *dir = getenv("TMPDIR");

    return dir && *dir ? dir : "/tmp";
}

long t_os_pid(void)
{
    return (long)getpid();
}

const char *t_os_dso_suffix(void)
{
    return ".so";    /* libtool -module, also on Darwin */
}

int t_os_module_loaded(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);

    if (!h)
        return 0;
    dlclose(h);    /* the reference RTLD_NOLOAD took */
    return 1;
}

int t_os_module_suffix_ignores_case(void)
{
    return 0;
}

int t_os_module_replaceable(void)
{
    return 1;
}

const char *t_os_backslash_path(apr_pool_t *p)
{
    return apr_psprintf(p, "%s/pp_back\\slash.%ld", t_os_tmpdir(), t_os_pid());
}

const t_os_shell *t_os_shell_commands(void)
{
    static const t_os_shell sh = {
        "echo one; echo two; printf three", "echo partial; exit 3", "kill -9 $$", "true", "cat", "cat",
        "echo waiting; exec sh -c 'while [ ! -e \"$0\" ]; do sleep 0.01; done'"
    };

    return &sh;
}

int t_os_inheritable_fds(void)
{
    long fd, max = sysconf(_SC_OPEN_MAX);
    int n = 0, flags;

    if (max < 0 || max > 65536)
        max = 65536;
    for (fd = 0; fd < max; fd++) {
        flags = fcntl((int)fd, F_GETFD);
        n += flags >= 0 && !(flags & FD_CLOEXEC);
    }
    return n;
}

int t_os_fork_run(int (*fn)(void *), void *arg, unsigned seconds)
{
    int fds[2], status, result = -1;
    pid_t pid;

    if (pipe(fds) != 0)
        return -1;
    pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (pid == 0) {
        /* The answer goes through the pipe, not the exit status: a checker
         * (valgrind) may end the child with its own status. */
        close(fds[0]);
        alarm(seconds);
        result = fn(arg);
        if (write(fds[1], &result, sizeof(result)) != (ssize_t)sizeof(result))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], &result, sizeof(result)) != (ssize_t)sizeof(result))
        result = -1;
    close(fds[0]);
    if (waitpid(pid, &status, 0) != pid)
        return -1;
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return result < 0 ? 255 : result;
}

void t_os_thread_exit(void)
{
    pthread_exit(NULL);
}
