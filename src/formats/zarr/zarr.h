/*
 * zarr.h - Zarr stores (zarr/): the writer of parload_save's Zarr row
 * (zarr_write.c: metadata, chunks and shards, the workers that encode
 * them).
 */
#ifndef PARLOAD_ZARR_H
#define PARLOAD_ZARR_H

#include "formats/formats.h"

/* Write st as a Zarr store into tmp, an empty directory beside path (the
 * store's name in messages): v2 by default, v3 with o->zarr_format 3
 * (o->shard: sharding_indexed), chunks of o->chunks encoded by o->compress
 * on as many threads as o->threads says.  0, or the first failure naming
 * path and the chunk's key; what was written is the caller's to remove. */
int parload__zarr_write(const char *tmp, const char *path,
			const parload_stack *st, const parload_save_options *o,
			parload_error *err);
/* Whether the directory path is a Zarr store (holds .zarray, .zgroup or
 * zarr.json): one that PARLOAD_SAVE_FORCE may replace. */
bool parload__zarr_is_store(const char *path);

#endif
