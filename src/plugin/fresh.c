/* SPDX-License-Identifier: Apache-2.0 */
/* Loading what is on disk now (fresh.h). */
#include "config.h"
#include "fresh.h"

#include <apr_file_info.h>
#include <apr_strings.h>
#include <apr_thread_proc.h>

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Spellings a path can take at once: one per file version still loaded. */
#define MAX_SPELLINGS 32

/* One version of a plugin file that a loaded module came from. */
typedef struct version {
    char            *path;
    apr_ino_t        inode;
    apr_dev_t        device;
    unsigned         spelling;   /* how many "./" before the file name */
    unsigned         refs;       /* loads of it not yet unloaded */
    struct version  *next;
} version;

/* Every version loaded, process-wide (a module is process-wide). Loads
 * are rare and the lock is held for a list walk, so a spinlock on a C11
 * flag does: it needs no initialization, which a library has no place
 * for. Acquire on taking it, release on letting go, as any lock. */
static version *versions;
static atomic_flag versions_lock = ATOMIC_FLAG_INIT;

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&versions_lock, memory_order_acquire))
        apr_thread_yield();
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&versions_lock, memory_order_release);
}

static apr_status_t unclaim(void *data)
{
    version *v = data, **at;

    lock();
    if (--v->refs == 0) {
        for (at = &versions; *at != v; at = &(*at)->next)
            ;
        *at = v->next;
        free(v->path);
        free(v);
    }
    unlock();
    return APR_SUCCESS;
}

/* path with n "./" before its file name. */
static const char *spell(const char *path, unsigned n, apr_pool_t *p)
{
    const char *slash = strrchr(path, '/');
    apr_size_t dir = slash ? (apr_size_t)(slash - path) + 1 : 0;
    char *out, *at;

    if (n == 0)
        return path;
    out = apr_palloc(p, strlen(path) + 2 * n + 1);
    memcpy(out, path, dir);
    for (at = out + dir; n > 0; n--, at += 2)
        memcpy(at, "./", 2);
    strcpy(at, path + dir);
    return out;
}

const char *pp__fresh_name(const char *path, apr_pool_t *p)
{
    apr_finfo_t fi;
    version *v, *same = NULL;
    unsigned long used = 0;
    unsigned n;

    if (apr_stat(&fi, path, APR_FINFO_IDENT, p) != APR_SUCCESS)
        return path;
    lock();
    for (v = versions; v; v = v->next) {
        if (strcmp(v->path, path) != 0)
            continue;
        if (v->inode == fi.inode && v->device == fi.device)
            same = v;
        else
            used |= 1ul << v->spelling;
    }
    if (same) {
        same->refs++;
    }
    else {
        for (n = 0; n < MAX_SPELLINGS && (used & (1ul << n)); n++)
            ;
        same = n < MAX_SPELLINGS ? calloc(1, sizeof(*same)) : NULL;
        if (same && !(same->path = strdup(path))) {
            free(same);
            same = NULL;
        }
        if (!same) {
            /* Out of memory or of spellings: load by the path as given,
             * as a loader without this would. */
            unlock();
            return path;
        }
        same->inode = fi.inode;
        same->device = fi.device;
        same->spelling = n;
        same->refs = 1;
        same->next = versions;
        versions = same;
    }
    n = same->spelling;
    unlock();
    apr_pool_cleanup_register(p, same, unclaim, apr_pool_cleanup_null);
    return spell(path, n, p);
}
