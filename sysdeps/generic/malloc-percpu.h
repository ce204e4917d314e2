/* Per-CPU cache of malloc between the thread cache and the arenas.
   Generic version: no cache.
   Copyright (C) 2026 Free Software Foundation, Inc.
   This file is part of the GNU C Library.

   The GNU C Library is free software; you can redistribute it and/or
   modify it under the terms of the GNU Lesser General Public
   License as published by the Free Software Foundation; either
   version 2.1 of the License, or (at your option) any later version.

   The GNU C Library is distributed in the hope that it will be useful,
   but WITHOUT ANY WARRANTY; without even the implied warranty of
   MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the GNU
   Lesser General Public License for more details.

   You should have received a copy of the GNU Lesser General Public
   License along with the GNU C Library; if not, see
   <https://www.gnu.org/licenses/>.  */

/* Included by malloc.c after the thread cache.  A system with per-CPU
   operations replaces this file; here the glibc.malloc.percpu tunable
   is accepted and has no effect, and every chunk takes the path it
   takes without the cache.  */

#ifndef _MALLOC_PERCPU_H
#define _MALLOC_PERCPU_H 1

struct percpu_cache_stats
{
  const char *mode;		/* "off", "mm_cid" or "cpu_id".  */
  size_t caches;		/* Per-CPU caches set up.  */
  size_t chunks;		/* Chunks held, in them and the transfer
				   cache.  */
  size_t bytes;			/* Their total size.  */
};

static inline void
percpu_cache_set_mode (const char *mode, size_t len)
{
}

static inline void
percpu_cache_set_bytes (size_t bytes)
{
}

static inline void
percpu_cache_set_local (bool local)
{
}

static inline bool
percpu_cache_enabled (void)
{
  return false;
}

static inline void *
percpu_cache_get (size_t tc_idx)
{
  return NULL;
}

static inline void
percpu_cache_check_free (tcache_entry *e, size_t tc_idx)
{
}

static inline bool
percpu_cache_put (mchunkptr p, size_t tc_idx)
{
  return false;
}

static inline void
percpu_cache_drain (void)
{
}

static inline void
percpu_cache_thread_exit (void)
{
}

static inline void
percpu_cache_fork_lock_parent (void)
{
}

static inline void
percpu_cache_fork_lock_transfer (void)
{
}

static inline void
percpu_cache_fork_unlock_parent (void)
{
}

static inline void
percpu_cache_fork_unlock_child (void)
{
}

static inline void
percpu_cache_stats (struct percpu_cache_stats *stats)
{
  stats->mode = "off";
  stats->caches = 0;
  stats->chunks = 0;
  stats->bytes = 0;
}

static inline void
percpu_cache_info (FILE *fp)
{
}

#endif /* malloc-percpu.h */
