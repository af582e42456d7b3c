/* SPDX-License-Identifier: Apache-2.0 */
/* Windows side of testos.h. */
#include "config.h"
#include "testos.h"

#include <apr_strings.h>

#include <windows.h>
#include <tlhelp32.h>

#include <signal.h>
#include <stdio.h>
#include <string.h>

static DWORD WINAPI watchdog_main(LPVOID arg)
{
    Sleep((DWORD)(UINT_PTR)arg * 1000);
    fprintf(stderr, "test: still running after the watchdog's limit: a hang\n");
    ExitProcess(99);
    return 0;
}

void t_os_watchdog(unsigned seconds)
{
    HANDLE h = CreateThread(NULL, 0, watchdog_main, (LPVOID)(UINT_PTR)seconds, 0, NULL);

    if (h)
        CloseHandle(h);
}

int t_os_thread_count(void)
{
    HANDLE snap = CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD, 0);
    THREADENTRY32 te;
    DWORD self = GetCurrentProcessId();
    int n = 0;

    if (snap == INVALID_HANDLE_VALUE)
        return -1;
    te.dwSize = sizeof(te);
    if (Thread32First(snap, &te)) {
        do
            n += te.th32OwnerProcessID == self;
        while (Thread32Next(snap, &te));
    }
    CloseHandle(snap);
    return n;
}

long t_os_cpu_count(void)
{
    return (long)GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);
}

static double filetime_seconds(FILETIME t)
{
    ULARGE_INTEGER u;

    u.LowPart = t.dwLowDateTime;
    u.HighPart = t.dwHighDateTime;
    return (double)u.QuadPart / 1e7;    /* 100 ns units */
}

double t_os_cpu_seconds(void)
{
    FILETIME created, exited, kernel, user;

    if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user))
        return 0;
    return filetime_seconds(kernel) + filetime_seconds(user);
}

typedef HRESULT (WINAPI *get_description_fn)(HANDLE, PWSTR *);

int t_os_thread_name(char *buf, apr_size_t size)
{
    HMODULE kernel = GetModuleHandleW(L"kernel32.dll");
    FARPROC proc = kernel ? GetProcAddress(kernel, "GetThreadDescription") : NULL;
    get_description_fn get;
    PWSTR wide = NULL;
    int ok;

    if (!proc)
        return -1;
    memcpy(&get, &proc, sizeof(get));
    if (FAILED(get(GetCurrentThread(), &wide)) || !wide)
        return -1;
    ok = WideCharToMultiByte(CP_UTF8, 0, wide, -1, buf, (int)size, NULL, NULL) > 0;
    LocalFree(wide);
    return ok ? 0 : -1;
}

apr_size_t t_os_stack_size(void)
{
    ULONG_PTR low = 0, high = 0;

    GetCurrentThreadStackLimits(&low, &high);
    return (apr_size_t)(high - low);
}

int t_os_stack_fits(apr_size_t got, apr_size_t asked)
{
    /* APR hands the size to _beginthreadex as the initial commit, and
     * Windows reserves that rounded up to 1 MiB, or the program's default
     * reservation when that is larger: at least what was asked. */
    return got >= asked && got <= (asked + (1u << 20)) + 8u * (1u << 20);
}

unsigned long t_os_signal_fingerprint(void)
{
    static const int sigs[] = { SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGFPE, SIGILL, SIGBREAK };
    unsigned long h = 5381;
    size_t i;

    /* The C runtime can only be asked by setting: set, read, put back. */
    for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        void (*prev)(int) = signal(sigs[i], SIG_DFL);
        signal(sigs[i], prev);
        h = h * 33 + (unsigned long)(apr_uintptr_t)prev;
    }
    return h;
}

const char *t_os_tmpdir(void)
{
    static char dir[MAX_PATH + 1];
    DWORD n = GetTempPathA(sizeof(dir), dir);

    if (n == 0 || n >= sizeof(dir))
        return ".";
    if (dir[n - 1] == '\\' || dir[n - 1] == '/')
        dir[n - 1] = '\0';
    return dir;
}

long t_os_pid(void)
{
    return (long)GetCurrentProcessId();
}

const char *t_os_dso_suffix(void)
{
    return ".dll";
}

int t_os_module_loaded(const char *path)
{
    char win[MAX_PATH], *c;

    if (strlen(path) >= sizeof(win))
        return 0;
    strcpy(win, path);
    for (c = win; *c; c++)
        if (*c == '/')
            *c = '\\';
    return GetModuleHandleA(win) != NULL;
}

int t_os_module_suffix_ignores_case(void)
{
    return 1;
}

int t_os_module_replaceable(void)
{
    return 0;
}

const char *t_os_backslash_path(apr_pool_t *p)
{
    return apr_psprintf(p, "%s\\pp_escape.%ld", t_os_tmpdir(), t_os_pid());
}

const t_os_shell *t_os_shell_commands(void)
{
    /* cmd.exe: "set /p" with no input prints its prompt without a newline. */
    static const t_os_shell sh = {
        "echo one& echo two& <nul set /p =three", "echo partial& exit 3", NULL, "rem", "type", NULL, NULL
    };

    return &sh;
}

int t_os_inheritable_fds(void)
{
    return -1;    /* handles are inherited one by one, by CreateProcess's list */
}

int t_os_fork_run(int (*fn)(void *), void *arg, unsigned seconds)
{
    (void)fn;
    (void)arg;
    (void)seconds;
    return -1;    /* no fork() */
}

void t_os_thread_exit(void)
{
    ExitThread(0);
}
