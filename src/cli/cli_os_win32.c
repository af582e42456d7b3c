/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Windows side of cli_os.h. The console runs a control handler in a thread
 * of its own, which is where the callback runs; CancelSynchronousIo makes
 * the reader's blocked ReadFile (under _read) fail.
 */
#include "config.h"
#include "cli_os.h"

#include <apr_strings.h>

#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <stdlib.h>
#include <stdio.h>

static HANDLE reader_thread;
static void (*interrupt_cb)(void);

static BOOL WINAPI console_handler(DWORD event)
{
    if (event != CTRL_C_EVENT && event != CTRL_BREAK_EVENT)
        return FALSE;    /* close, logoff, shutdown: the default ends us */
    interrupt_cb();
    return TRUE;
}

void cli_os_init(void)
{
    /* Result lines are data (hash lines compare byte for byte with
     * sha1sum's): no CR added on the way out. */
    _setmode(_fileno(stdin), _O_BINARY);    /* records are bytes; CR LF is ours to handle */
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
}

apr_status_t cli_os_watch_interrupts(void (*on_interrupt)(void))
{
    interrupt_cb = on_interrupt;
    /* The pseudo-handle of GetCurrentThread means "the caller" to whoever
     * uses it: the handler thread needs a real one. Without it Ctrl-C
     * still stops the input, only a blocked read is not interrupted. */
    if (!DuplicateHandle(GetCurrentProcess(), GetCurrentThread(), GetCurrentProcess(),
                         &reader_thread, 0, FALSE, DUPLICATE_SAME_ACCESS))
        reader_thread = NULL;
    if (!SetConsoleCtrlHandler(console_handler, TRUE))
        return apr_get_os_error();
    return APR_SUCCESS;
}

void cli_os_wake_reader(void)
{
    if (reader_thread)
        CancelSynchronousIo(reader_thread);
}

const char *cli_os_self_path(apr_pool_t *p)
{
    char exe[MAX_PATH];
    DWORD n = GetModuleFileNameA(NULL, exe, sizeof(exe));

    return n > 0 && n < sizeof(exe) ? apr_pstrmemdup(p, exe, n) : NULL;
}

int cli_os_open_read(const char *path)
{
    return _open(path, _O_RDONLY | _O_BINARY);
}

long cli_os_read(int fd, void *buf, size_t n)
{
    /* _read takes an unsigned int count. */
    return _read(fd, buf, n > 0x40000000u ? 0x40000000u : (unsigned)n);
}

void cli_os_close(int fd)
{
    _close(fd);
}

void cli_os_exit_broken_pipe(void)
{
    fflush(stderr);
    _exit(1);    /* no SIGPIPE: the plain failure status */
}

void cli_os_write(int fd, const char *data, size_t len)
{
    while (len > 0) {
        int n = _write(fd, data, len > 0x40000000u ? 0x40000000u : (unsigned)len);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void (*crash_report)(const char *what);

static LONG WINAPI on_crash(EXCEPTION_POINTERS *info)
{
    DWORD code = info->ExceptionRecord->ExceptionCode;

    crash_report(code == EXCEPTION_ACCESS_VIOLATION ? "an access violation"
                 : code == EXCEPTION_STACK_OVERFLOW ? "a stack overflow"
                 : "an unhandled exception");
    return EXCEPTION_CONTINUE_SEARCH;    /* Windows ends the process as it would */
}

void cli_os_on_crash(void (*report)(const char *what))
{
    crash_report = report;
    SetUnhandledExceptionFilter(on_crash);
}

int cli_os_stderr_is_terminal(void)
{
    return _isatty(_fileno(stderr));
}

int cli_os_stdout_is_terminal(void)
{
    return _isatty(_fileno(stdout));
}

int cli_os_terminal_width(void)
{
    CONSOLE_SCREEN_BUFFER_INFO info;

    if (GetConsoleScreenBufferInfo(GetStdHandle(STD_ERROR_HANDLE), &info))
        return info.srWindow.Right - info.srWindow.Left + 1;
    return 80;
}
