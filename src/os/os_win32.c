/* SPDX-License-Identifier: Apache-2.0 */
/* Windows side of os.h. */
#include "config.h"
#include "os.h"
#include "core/pool_private.h"

#include <windows.h>

#include <string.h>

apr_size_t pp__thread_name_max(void)
{
    /* Thread descriptions may be long, but debuggers and tools show the
     * first few characters; the same 15 as on Linux keeps names alike. */
    return 15;
}

typedef HRESULT (WINAPI *set_description_fn)(HANDLE, PCWSTR);

void pp__thread_set_name(const char *name)
{
    /* SetThreadDescription exists from Windows 10 1607 on; found at run
     * time so that the library still loads on older systems, which then
     * simply have unnamed threads. GetProcAddress is thread-safe. */
    HMODULE kernel = GetModuleHandleW(L"kernel32.dll");
    FARPROC proc = kernel ? GetProcAddress(kernel, "SetThreadDescription") : NULL;
    set_description_fn set;
    WCHAR wide[64];
    int n;

    if (!proc)
        return;
    n = MultiByteToWideChar(CP_UTF8, 0, name, -1, wide, (int)(sizeof(wide) / sizeof(wide[0])));
    if (n <= 0)
        return;
    /* Through memcpy: a FARPROC -> function pointer cast is what the API
     * intends, but gcc's -Wcast-function-type rejects the direct cast. */
    memcpy(&set, &proc, sizeof(set));
    set(GetCurrentThread(), wide);
}

apr_uint32_t pp__cpu_count(void)
{
    /* All processor groups: a machine with more than 64 logical CPUs has
     * several, and GetSystemInfo sees only the caller's. */
    DWORD n = GetActiveProcessorCount(ALL_PROCESSOR_GROUPS);

    return n > 0 ? (apr_uint32_t)n : 1;
}

const char *pp__dso_suffix(void)
{
    return ".dll";
}

int pp__names_ignore_case(void)
{
    return 1;
}

void pp__watch_forks(void)
{
    /* no fork() */
}

/* A fiber-local slot's callback runs when a thread that set it ends, by
 * ExitThread too (thread-local slots have no such callback). */
static DWORD exit_slot = FLS_OUT_OF_INDEXES;
static INIT_ONCE exit_once = INIT_ONCE_STATIC_INIT;

static void WINAPI exit_callback(void *data)
{
    if (data)
        pp__thread_died(data);
}

static BOOL CALLBACK create_exit_slot(PINIT_ONCE once, void *param, void **ctx)
{
    (void)once;
    (void)param;
    (void)ctx;
    exit_slot = FlsAlloc(exit_callback);
    return TRUE;
}

apr_status_t pp__exit_watch(void *data)
{
    InitOnceExecuteOnce(&exit_once, create_exit_slot, NULL, NULL);
    if (exit_slot == FLS_OUT_OF_INDEXES)
        return APR_FROM_OS_ERROR(GetLastError());
    return FlsSetValue(exit_slot, data) ? APR_SUCCESS : APR_FROM_OS_ERROR(GetLastError());
}

void *pp__pages_map(void)
{
    /* VirtualAlloc aligns to 64 KiB; large pages need a privilege that a
     * service rarely has, so these are ordinary pages, committed at once
     * and zeroed on first touch. */
    return VirtualAlloc(NULL, PP__PAGES_SIZE, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
}

void pp__pages_unmap(void *region)
{
    VirtualFree(region, 0, MEM_RELEASE);
}
