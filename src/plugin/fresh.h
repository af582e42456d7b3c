/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Loading what is on disk now. The dynamic loader keeps one module per
 * name: while a plugin loaded from a path is still loaded (an older
 * registry holds it, its tasks still run), dlopen() of the same path
 * returns that module, even after a new file was renamed over the old
 * one: a service reloading its plugins would run the old code. So the
 * loader hands the dynamic loader another spelling of the path
 * ("dir/./name.so", "dir/././name.so", ...) when the file at path is not
 * the one a loaded module came from; glibc then opens the file and, as it
 * is a new one, maps it. The same file keeps its spelling, so it is
 * mapped once however many registries load it.
 *
 * (Windows' loader keys modules by the normalized path: there a renamed
 * DLL still answers for its old name, and this changes nothing.)
 */
#ifndef PP_PLUGIN_FRESH_H
#define PP_PLUGIN_FRESH_H

#include <apr_pools.h>

/**
 * The name to load path by. The claim on that spelling lasts until p is
 * destroyed (a cleanup registered now, so that it runs after the cleanup
 * of a module loaded into p afterwards). If path cannot be looked at, the
 * name is path and nothing is claimed: the load reports why.
 */
const char *pp__fresh_name(const char *path, apr_pool_t *p);

#endif
