/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the pool needs from the OS beyond APR and the parker: naming the
 * calling thread, counting CPUs, hearing of forks and mapping memory for
 * slabs. os_posix.c implements it for Unix; a Windows port adds
 * os_win32.c. The core includes no OS header and has no #ifdef of its own.
 */
#ifndef PP_OS_H
#define PP_OS_H

#include <apr.h>
#include <apr_errno.h>

/* For a thread-local the library reads on every task: the initial-exec
 * TLS model, one load off the thread pointer where a shared library would
 * otherwise call __tls_get_addr. It takes a pointer's worth of the static
 * TLS block that glibc and musl keep spare for libraries opened later with
 * dlopen. Other compilers and object formats keep their default. */
#if defined(__GNUC__) && defined(__ELF__)
#define PP__TLS_HOT __attribute__((tls_model("initial-exec")))
#else
#define PP__TLS_HOT
#endif

/** Longest thread name the OS keeps, without the terminating NUL. */
apr_size_t pp__thread_name_max(void);

/** Name the calling thread (already cut to pp__thread_name_max()); best effort. */
void pp__thread_set_name(const char *name);

/** The file name ending of loadable modules: ".so", or ".dll". */
const char *pp__dso_suffix(void);

/** Whether the OS takes file names that differ only in case for one
 *  (Windows: "GOOD.DLL" is a module as much as "good.dll"). */
int pp__names_ignore_case(void);

/** Have pp__fork_child() (fork.h) called in the child of every later
 *  fork(); the first call registers it, later ones cost a pthread_once.
 *  A no-op where processes do not fork (Windows). */
void pp__watch_forks(void);

/** Arm (data non-NULL) or disarm (NULL) the calling thread's exit watch:
 *  if the thread ends while armed, other than by returning from its
 *  function (a task called pthread_exit, ExitThread), pp__thread_died(data)
 *  (pool_private.h) runs on it as it goes. The first arm in a process
 *  creates the thread-specific key; APR_SUCCESS or why it could not. */
apr_status_t pp__exit_watch(void *data);

/** Online CPUs, at least 1. */
apr_uint32_t pp__cpu_count(void);

/** Bytes of pp__pages_map()'s regions: 2 MiB, one huge page on x86-64
 *  and arm64. */
#define PP__PAGES_SIZE ((apr_size_t)2 << 20)

/** A zeroed region of PP__PAGES_SIZE bytes straight from the OS, at
 *  least page-aligned, and backed by a huge page where the OS gives one
 *  for the asking (POSIX: aligned to its size and advised so, which
 *  Linux's transparent huge pages in "madvise" mode honour): a deep
 *  queue then takes one page fault per region instead of 512. NULL when
 *  the OS has no memory to give. */
void *pp__pages_map(void);

/** Give back a region from pp__pages_map(). */
void pp__pages_unmap(void *region);

#endif
