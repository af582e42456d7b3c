/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the tool needs from the OS beyond APR: Ctrl-C, its own file name,
 * and whether stderr is a terminal. cli_os_posix.c and cli_os_win32.c
 * implement it, so that main.c and run.c stay free of #ifdef.
 */
#ifndef PP_CLI_OS_H
#define PP_CLI_OS_H

#include <apr_pools.h>

#include <stddef.h>

/** Set stdio up for the tool: SIGPIPE ignored on POSIX, binary stdout and
 *  stderr on Windows (output lines end in LF everywhere). */
void cli_os_init(void);

/**
 * Call on_interrupt from a thread of its own at each Ctrl-C (SIGINT; the
 * console's Ctrl-C or Ctrl-Break on Windows). The calling thread is the
 * reader that cli_os_wake_reader() interrupts. Call before any other thread
 * starts: on POSIX the signal mask is inherited. When it fails, Ctrl-C
 * keeps the OS's default (the process ends).
 */
apr_status_t cli_os_watch_interrupts(void (*on_interrupt)(void));

/** Make a read blocked in the reader thread return (with an error). */
void cli_os_wake_reader(void);

/** The running program's own path, or NULL when the OS will not say. */
const char *cli_os_self_path(apr_pool_t *p);

/** Open path for reading, as a file descriptor: -1 with errno when it
 *  cannot be (binary mode on Windows). */
int cli_os_open_read(const char *path);

/** read(2): what has arrived, up to n bytes; 0 at the end; -1 with errno
 *  (EINTR when cli_os_wake_reader() interrupted it). */
long cli_os_read(int fd, void *buf, size_t n);

void cli_os_close(int fd);

/** End the process as a program killed by SIGPIPE ends (exit status 141 in
 *  a shell), the way coreutils leave a pipeline whose reader has gone;
 *  exit status 1 where there is no SIGPIPE. */
void cli_os_exit_broken_pipe(void) __attribute__((noreturn));

/** write(2) to fd, all of it (as far as the OS takes it); async-signal-safe. */
void cli_os_write(int fd, const char *data, size_t len);

/**
 * On a crash of the process (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT; on
 * Windows an unhandled exception), call report with the signal's name in
 * the crashing thread, then let the crash take its course (the default
 * action: exit status 128 + N, a core dump where enabled). report runs in
 * a signal handler: it may only call async-signal-safe functions.
 */
void cli_os_on_crash(void (*report)(const char *what));

/** Non-zero when stderr is a terminal (the progress bar's default). */
int cli_os_stderr_is_terminal(void);

/** Non-zero when stdout is a terminal (results are then flushed at once). */
int cli_os_stdout_is_terminal(void);

/** The width of stderr's terminal in columns, or 80 when it will not say. */
int cli_os_terminal_width(void);

#endif
