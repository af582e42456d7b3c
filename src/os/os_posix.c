/* SPDX-License-Identifier: Apache-2.0 */
/* POSIX side of os.h. */
#include "config.h"
#include "os.h"
#include "fork.h"
#include "core/pool_private.h"

#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef HAVE_SYS_PRCTL_H
#include <sys/prctl.h>
#endif

apr_size_t pp__thread_name_max(void)
{
    /* Linux keeps 15 bytes (TASK_COMM_LEN 16); macOS allows 63, and the
     * BSDs about as many. 15 is safe everywhere and the suffix survives. */
    return 15;
}

void pp__thread_set_name(const char *name)
{
#if defined(HAVE_PTHREAD_SETNAME_NP_2)
    pthread_setname_np(pthread_self(), name);
#elif defined(HAVE_PTHREAD_SETNAME_NP_1)
    pthread_setname_np(name);
#elif defined(HAVE_PTHREAD_SET_NAME_NP)
    pthread_set_name_np(pthread_self(), name);
#elif defined(HAVE_SYS_PRCTL_H) && defined(PR_SET_NAME)
    prctl(PR_SET_NAME, name, 0, 0, 0);
#else
    (void)name;
#endif
}

apr_uint32_t pp__cpu_count(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    return n > 0 ? (apr_uint32_t)n : 1;
}

const char *pp__dso_suffix(void)
{
    /* libtool builds modules as .so on every Unix but Darwin, where
     * -module still gives .so; .dylib is for libraries, not plugins. */
    return ".so";
}

int pp__names_ignore_case(void)
{
    /* Even where a file system ignores case (macOS by default), "x.SO"
     * is nobody's plugin: libtool writes the suffix in lower case. */
    return 0;
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void install_fork_handler(void)
{
    pthread_atfork(NULL, NULL, pp__fork_child);
}

void pp__watch_forks(void)
{
    pthread_once(&fork_once, install_fork_handler);
}

/* A key whose destructor is the exit watch: glibc runs thread-specific
 * destructors after pthread_exit has unwound the thread's stack, while
 * the thread still exists. */
static pthread_key_t exit_key;
static int exit_key_status = -1;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;

static void create_exit_key(void)
{
    exit_key_status = pthread_key_create(&exit_key, pp__thread_died);
}

apr_status_t pp__exit_watch(void *data)
{
    pthread_once(&exit_once, create_exit_key);
    if (exit_key_status != 0)
        return exit_key_status;
    return pthread_setspecific(exit_key, data);
}

void *pp__pages_map(void)
{
    /* Twice the size, then the ends cut off, for the alignment that a
     * huge page needs (mmap aligns to a page only). */
    apr_size_t size = PP__PAGES_SIZE, lead;
    char *p = mmap(NULL, 2 * size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
    lead = (size - (uintptr_t)p % size) % size;
    if (lead)
        munmap(p, lead);
    munmap(p + lead + size, size - lead);
    p += lead;
#ifdef MADV_HUGEPAGE
    /* Advice only: without huge pages the region works the same. */
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

void pp__pages_unmap(void *region)
{
    munmap(region, PP__PAGES_SIZE);
}
