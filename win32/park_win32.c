/*
 * Windows backend of park_word.h: WaitOnAddress / WakeByAddressSingle
 * (Windows 8 and later, -lsynchronization). Like FUTEX_WAIT, WaitOnAddress
 * sleeps only while the word still holds the expected value and may return
 * spuriously; park_word.c handles both.
 */
#include "park.h"
#include "park_word.h"

#include <windows.h>

void pp__word_wait(volatile apr_uint32_t *word, apr_interval_time_t timeout)
{
    apr_uint32_t parked = PP__PARK_PARKED;
    DWORD ms = INFINITE;

    /* Milliseconds, rounded up so that a timed park never ends early. */
    if (timeout >= 0)
        ms = timeout / 1000 >= INFINITE - 1 ? INFINITE - 1 : (DWORD)((timeout + 999) / 1000);
    WaitOnAddress(word, &parked, sizeof(parked), ms);
}

void pp__word_wake(volatile apr_uint32_t *word)
{
    WakeByAddressSingle((PVOID)word);
}

apr_uint64_t pp__word_clock(void)
{
    LARGE_INTEGER freq, now;

    /* The frequency is fixed at boot and cheap to read: no cache to race on. */
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&now);
    return (apr_uint64_t)(now.QuadPart / freq.QuadPart) * APR_USEC_PER_SEC
           + (apr_uint64_t)(now.QuadPart % freq.QuadPart) * APR_USEC_PER_SEC / (apr_uint64_t)freq.QuadPart;
}

const char *pp__park_backend_name(void)
{
    return "win32";
}
