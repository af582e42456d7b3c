/* SPDX-License-Identifier: Apache-2.0 */
#include "config.h"
#include "task_root.h"

#include <apr_allocator.h>
#include <apr_thread_mutex.h>

apr_status_t pp__task_root_create(apr_pool_t **out, apr_pool_t *parent)
{
    apr_allocator_t *alloc;
    apr_thread_mutex_t *lock;
    apr_pool_t *root;
    apr_status_t rv;

    *out = NULL;
    rv = apr_allocator_create(&alloc);
    if (rv != APR_SUCCESS)
        return rv;
    rv = apr_pool_create_ex(&root, parent, NULL, alloc);
    if (rv != APR_SUCCESS) {
        apr_allocator_destroy(alloc);
        return rv;
    }
    apr_allocator_owner_set(alloc, root);    /* root's destruction frees it */
    apr_allocator_max_free_set(alloc, 4 * 1024 * 1024);
    rv = apr_thread_mutex_create(&lock, APR_THREAD_MUTEX_DEFAULT, root);
    if (rv != APR_SUCCESS) {
        apr_pool_destroy(root);
        return rv;
    }
    apr_allocator_mutex_set(alloc, lock);
    *out = root;
    return APR_SUCCESS;
}
