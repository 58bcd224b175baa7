/*
 * module_host.c - a module's side of the host table (module.c).
 *
 * Compiled into each module (parload_tiff.so, parload_hdf5.so) and into
 * nothing else: the library's functions a reader or writer calls, under
 * their usual names, each passed on to the library that opened the
 * module, which hands over its table before any other call.  (fail.c's
 * variadic failures are compiled into the module as they are, around
 * this parload__vfail.)
 */
#include "config.h"

#include "formats/formats.h"
#include "formats/tiff/tiff.h"

static const parload__host *host;

PARLOAD__MODULE_EXPORT void parload__module_init(const parload__host *h);

void parload__module_init(const parload__host *h)
{
	host = h;
}

int parload__vfail(parload_error *err, int code, int sys_errno,
		   const char *path, uint64_t view, uint64_t offset,
		   const char *fmt, va_list ap)
{
	return host->vfail(err, code, sys_errno, path, view, offset, fmt, ap);
}

void parload__error_prefix(parload_error *err, const char *prefix)
{
	host->error_prefix(err, prefix);
}

int parload__fail_open(parload_error *err, int sys_errno, const char *path)
{
	return host->fail_open(err, sys_errno, path);
}

void parload__container_free(parload__container *c)
{
	host->container_free(c);
}

int parload__h5index_walk(int fd, const parload__h5where *w,
			  parload__h5put put, void *ctx, const char *file,
			  const char *name, parload_error *err)
{
	return host->h5index_walk(fd, w, put, ctx, file, name, err);
}

int parload__chunks_put(void *ctx, const parload__chunk *c)
{
	return host->chunks_put(ctx, c);
}

int parload__chunks_finish(parload__chunks *p)
{
	return host->chunks_finish(p);
}

void parload__chunks_reset(parload__chunks *p)
{
	host->chunks_reset(p);
}

parload__codec parload__codec_of_hdf5(uint32_t id)
{
	return host->codec_of_hdf5(id);
}

const parload__codec_row *parload__codec_get(parload__codec c)
{
	return host->codec_get(c);
}

int parload__strips_add(parload__strips *t, uint64_t i, const parload__strip *s)
{
	return host->strips_add(t, i, s);
}

void parload__strips_clear(parload__strips *t)
{
	host->strips_clear(t);
}

uint64_t parload__strips_find(const parload__strips *t, uint64_t i)
{
	return host->strips_find(t, i);
}

int parload__memory_check(parload_error *err, const char *path,
			  uint64_t count, const char *things, uint64_t each)
{
	return host->memory_check(err, path, count, things, each);
}

int parload_desc_check(parload_desc *d, parload_error *err)
{
	return host->desc_check(d, err);
}

unsigned parload_pixel_size(int type)
{
	return host->pixel_size(type);
}
