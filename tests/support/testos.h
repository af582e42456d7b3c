/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the tests read from the OS to check the pool from outside: thread
 * counts, names and stacks, CPU time, and a watchdog for hangs.
 * testos_posix.c (Linux and other POSIX systems) and testos_win32.c.
 */
#ifndef PP_TESTOS_H
#define PP_TESTOS_H

#include <apr_pools.h>

/* End the process with a failure if it is still running after seconds. */
void t_os_watchdog(unsigned seconds);

/* Threads of this process, or -1 when the OS will not say. */
int t_os_thread_count(void);

/* Online CPUs, as the OS counts them (what a default pool sizes itself by). */
long t_os_cpu_count(void);

/* User + system CPU seconds used by this process so far. */
double t_os_cpu_seconds(void);

/* The calling thread's name into buf; -1 when the OS cannot tell. */
int t_os_thread_name(char *buf, apr_size_t size);

/* The calling thread's stack size, 0 when unknown. */
apr_size_t t_os_stack_size(void);

/* Whether a thread created with stack size `asked` may have `got`: the
 * platforms round differently (glibc adds a guard page; Windows reserves at
 * least its 1 MiB granule or the program's default). */
int t_os_stack_fits(apr_size_t got, apr_size_t asked);

/* A digest of this process's signal dispositions: equal before and after
 * means nobody installed or removed a handler in between. */
unsigned long t_os_signal_fingerprint(void);

/* Name of this process's temporary folder (TMPDIR or the OS's), no trailing separator. */
const char *t_os_tmpdir(void);

/* This process's id, for unique file names. */
long t_os_pid(void);

/* The file name ending of a plugin built here (".so", ".dll"). */
const char *t_os_dso_suffix(void);

/* Whether the module at path is mapped in this process now (without
 * loading it). */
int t_os_module_loaded(const char *path);

/* Whether a module's file name ending counts without regard to case
 * ("X.DLL" is a module on Windows; "x.SO" is none on POSIX). */
int t_os_module_suffix_ignores_case(void);

/* Whether a file renamed over a loaded module can be loaded while that
 * module stays (the dynamic loader tells files apart by identity: glibc);
 * Windows keeps a loaded DLL's file and answers its name with it. */
int t_os_module_replaceable(void);

/* A file name in the temporary folder that holds a backslash (one the
 * hash plugin must escape): in the name on POSIX, as the separator on
 * Windows. */
const char *t_os_backslash_path(apr_pool_t *p);

/* Commands for exec.sh in the system shell's own syntax. */
typedef struct t_os_shell {
    const char *three_lines;    /* prints one, two, then three without a newline */
    const char *partial_exit3;  /* prints one line, exits 3 */
    const char *kill9;          /* dies of signal 9; NULL where there are no signals */
    const char *silent;         /* prints nothing, succeeds */
    const char *print_file;     /* followed by a path: prints the file */
    const char *copy_stdin;     /* copies its standard input out; NULL: not tested */
    const char *wait_for_file;  /* followed by a path: prints "waiting", returns once it
                                 * exists; NULL: not tested */
} t_os_shell;
const t_os_shell *t_os_shell_commands(void);

/* Run fn(arg) in a child of fork() and return what it returns (0 to 127),
 * 128 + N if signal N ended the child, 255 if it ended without an answer,
 * or -1 where there is no fork. The child is killed (SIGALRM) after
 * `seconds`: a hang fails, not blocks. */
int t_os_fork_run(int (*fn)(void *), void *arg, unsigned seconds);

/* End the calling thread at once, as a misbehaving task might:
 * pthread_exit() on POSIX, ExitThread() on Windows. */
void t_os_thread_exit(void);

/* Descriptors of this process that a child would inherit (not close-on-exec),
 * or -1 where the OS has no such thing to count. */
int t_os_inheritable_fds(void);

#endif
