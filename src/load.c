/*
 * load.c - the public loading interface: options, the reusable loader that
 * owns the topology and the thread pool, and parload_load() over it.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct parload_loader {
	parload_options opts;
	parload__engine engine;
};

void parload_options_init(parload_options *opts)
{
	if (!opts)
		return;
	memset(opts, 0, sizeof(*opts));
	opts->threads = 0;
	opts->strategy = PARLOAD_STRATEGY_PARALLEL;
	opts->io = PARLOAD_IO_POSIX;
	opts->buffer_size = PARLOAD_BUFFER_DEFAULT;
	opts->max_read = 0;
}

static void bind_worker(void *arg, unsigned w)
{
	parload__engine *e = arg;

	(void)parload__topology_bind_thread(e->topo, &e->places[w]);
}

static void engine_free(parload__engine *e)
{
	if (e->pool)
		parload__pool_free(e->pool);
	if (e->topo)
		parload__topology_close(e->topo);
	parload__sys_free(e->places);
	memset(e, 0, sizeof(*e));
}

static int engine_init(parload__engine *e, const parload_options *o,
		       parload_error *err)
{
	int rc;

	memset(e, 0, sizeof(*e));
	/* One explicit thread needs neither the topology nor a pool: the
	 * caller reads, and nothing is paid for discovery. */
	if (o->threads == 1) {
		e->workers = 1;
		return 0;
	}
	rc = parload__topology_open(&e->topo, err);
	if (rc)
		return rc;
	e->workers = o->threads ? o->threads :
				  PARLOAD__MAX(1u, parload__topology_cores(e->topo));
	e->places = parload__sys_calloc(e->workers, sizeof(*e->places));
	if (!e->places) {
		engine_free(e);
		return parload__fail(err, PARLOAD_ENOMEM, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	}
	parload__topology_place(e->topo, e->workers, e->places);
	if (e->workers > 1) {
		bool bind = !(o->flags & PARLOAD_OPT_NO_BIND);

		rc = parload__pool_new(&e->pool, e->workers,
				       bind ? bind_worker : NULL, e, err);
		if (rc) {
			engine_free(e);
			return rc;
		}
	}
	return 0;
}

static int check_options(const parload_options *o, parload_error *err)
{
	if ((unsigned)o->strategy > PARLOAD_STRATEGY_MMAP)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "unknown strategy %d",
				     (int)o->strategy);
	if ((unsigned)o->io > PARLOAD_IO_STDIO)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "unknown I/O API %d",
				     (int)o->io);
	if (o->flags & ~(PARLOAD_OPT_NO_BIND | PARLOAD_OPT_NO_HUGEPAGES |
			 PARLOAD_OPT_VERIFY_CRC | PARLOAD_OPT_KEEP_GOING |
			 PARLOAD_OPT_ALLOW_TRUNCATED))
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, "unknown option flags 0x%x",
				     o->flags);
	return 0;
}

int parload_loader_new(parload_loader **out, const parload_options *opts,
		       parload_error *err)
{
	parload_loader *l;
	int rc;

	if (!out)
		return parload__fail(err, PARLOAD_EINVAL, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	*out = NULL;
	l = parload__sys_calloc(1, sizeof(*l));
	if (!l)
		return parload__fail(err, PARLOAD_ENOMEM, 0, NULL, PARLOAD_NONE,
				     PARLOAD_NONE, NULL);
	if (opts)
		l->opts = *opts;
	else
		parload_options_init(&l->opts);
	l->opts.error = NULL;
	rc = check_options(&l->opts, err);
	if (rc == 0 && l->opts.strategy == PARLOAD_STRATEGY_PARALLEL)
		rc = engine_init(&l->engine, &l->opts, err);
	if (rc) {
		parload__sys_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

unsigned parload_loader_threads(const parload_loader *l)
{
	if (!l)
		return 0;
	return l->opts.strategy == PARLOAD_STRATEGY_PARALLEL ? l->engine.workers :
							      1;
}

static int run_strategy(parload_loader *loader, const parload__load *l)
{
	switch (loader->opts.strategy) {
	case PARLOAD_STRATEGY_PARALLEL:
		return parload__load_parallel(&loader->engine, l);
	case PARLOAD_STRATEGY_BULK:
		return parload__load_bulk(l);
	case PARLOAD_STRATEGY_SEQUENTIAL:
		return parload__load_sequential(l);
	case PARLOAD_STRATEGY_TWO_PASS:
		return parload__load_two_pass(l);
	case PARLOAD_STRATEGY_MMAP:
		return parload__load_mmap(l);
	}
	return parload__fail(l->err, PARLOAD_EINVAL, 0, l->path, PARLOAD_NONE,
			     PARLOAD_NONE, "unknown strategy");
}

static int load(parload_loader *loader, const char *path,
		const parload_buffers *into, parload_dataset *out,
		parload_error *err)
{
	parload__load l = { path, NULL, out, err, into, -1 };

	if (!out)
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE, "no dataset to load into");
	memset(out, 0, sizeof(*out));
	if (!loader || !path)
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE,
				     loader ? "no file given" : "no loader");
	l.opts = &loader->opts;
	return run_strategy(loader, &l);
}

int parload_loader_load_fd(parload_loader *loader, int fd, const char *name,
			   parload_dataset *out, parload_error *err)
{
	parload__load l = { name, NULL, out, err, NULL, fd };
	char label[32];
	struct stat st;
	off_t pos;
	int rc;

	if (!name) {
		snprintf(label, sizeof(label), "fd %d", fd);
		l.path = name = label;
	}
	if (!out)
		return parload__fail(err, PARLOAD_EINVAL, 0, name, PARLOAD_NONE,
				     PARLOAD_NONE, "no dataset to load into");
	memset(out, 0, sizeof(*out));
	if (!loader)
		return parload__fail(err, PARLOAD_EINVAL, 0, name, PARLOAD_NONE,
				     PARLOAD_NONE, "no loader");
	if (fd < 0 || parload__sys_fstat(fd, &st) != 0)
		return parload__fail(err, PARLOAD_EOPEN, fd < 0 ? EBADF : errno,
				     name, PARLOAD_NONE, PARLOAD_NONE,
				     "not an open file descriptor");
	if (S_ISDIR(st.st_mode))
		return parload__fail(err, PARLOAD_ENOTREG, 0, name,
				     PARLOAD_NONE, PARLOAD_NONE,
				     "not a file or a stream (a directory)");
	l.opts = &loader->opts;
	if (!S_ISREG(st.st_mode))
		return parload__load_stream(&l);
	/* The strategies read with pread where they can; those that read
	 * with read() move the descriptor's offset, which is put back. */
	pos = parload__sys_lseek(fd, 0, SEEK_CUR);
	rc = run_strategy(loader, &l);
	if (pos >= 0)
		(void)parload__sys_lseek(fd, pos, SEEK_SET);
	return rc;
}

int parload_loader_load(parload_loader *loader, const char *path,
			parload_dataset *out, parload_error *err)
{
	return load(loader, path, NULL, out, err);
}

int parload_loader_load_into(parload_loader *loader, const char *path,
			     const parload_buffers *into, parload_dataset *out,
			     parload_error *err)
{
	if (!into) {
		if (out)
			memset(out, 0, sizeof(*out));
		return parload__fail(err, PARLOAD_EINVAL, 0, path, PARLOAD_NONE,
				     PARLOAD_NONE, "no buffers to load into");
	}
	return load(loader, path, into, out, err);
}

void parload_loader_free(parload_loader *loader)
{
	if (!loader)
		return;
	engine_free(&loader->engine);
	parload__sys_free(loader);
}

int parload_load(const char *path, const parload_options *opts,
		 parload_dataset *out)
{
	parload_error *err = opts ? opts->error : NULL;
	parload_loader *l;
	int rc;

	if (out)
		memset(out, 0, sizeof(*out));
	rc = parload_loader_new(&l, opts, err);
	if (rc)
		return rc;
	rc = parload_loader_load(l, path, out, err);
	parload_loader_free(l);
	return rc;
}
